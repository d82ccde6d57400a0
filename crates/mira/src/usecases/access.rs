//! Who is calling, and what it may do: the rights every use case a client can reach is given
//! ([`Access`]), checked where the use case learns which wing it touches.
//!
//! The machine's own user (the command line, a stdio server, a loopback server without
//! tokens) has every right. A client of an HTTP server that presents one of the scoped tokens
//! of `mcp.http.tokens` has that token's rights: the wings it may read, the wings it may write
//! (`*`: every wing) and whether it may remove memories (archive, clear, forget). A call outside
//! them fails with [`UseCaseError::Forbidden`], naming the token and the wing; lists (recall,
//! timeline, status, export, the wings named in hints) show only the wings it may read, so a
//! token never learns what another wing holds, nor its name. SOUL's identities belong to no
//! wing: only a token that may read (and, to change them, write) every wing reaches them.

use super::{UseCaseError, UseCaseResult};
use std::collections::BTreeSet;
use std::fmt;

/// A set of wings: every wing, or these.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Wings {
    /// Every wing, present and future (`*`).
    All,
    /// These wings only (possibly none).
    Only(BTreeSet<String>),
}

impl Wings {
    /// The set a configuration list names: `*` anywhere in it means every wing.
    pub fn from_list(list: &[String]) -> Wings {
        if list.iter().any(|w| w.trim() == "*") {
            Wings::All
        } else {
            Wings::Only(list.iter().map(|w| w.trim().to_owned()).collect())
        }
    }

    /// Whether `wing` is in the set.
    pub fn contains(&self, wing: &str) -> bool {
        match self {
            Wings::All => true,
            Wings::Only(set) => set.contains(wing),
        }
    }

    /// Whether the set holds no wing at all.
    pub fn is_empty(&self) -> bool {
        matches!(self, Wings::Only(set) if set.is_empty())
    }
}

impl fmt::Display for Wings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Wings::All => f.write_str("every wing"),
            Wings::Only(set) if set.is_empty() => f.write_str("no wing"),
            Wings::Only(set) => {
                let names: Vec<&str> = set.iter().map(String::as_str).collect();
                f.write_str(&names.join(", "))
            }
        }
    }
}

/// Who a caller is.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Caller {
    /// The machine's own user: the command line, a stdio server, a server without tokens.
    Local,
    /// The holder of `mcp.http.auth_token`.
    AuthToken,
    /// The holder of the scoped token of this name.
    Token(String),
}

/// What a caller may do. Cheap to clone; carried by each request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Access {
    caller: Caller,
    read: Wings,
    write: Wings,
    destructive: bool,
}

impl Access {
    /// Every right: the machine's own user (the command line, a stdio server, a loopback
    /// server without tokens).
    pub fn local() -> Access {
        Access {
            caller: Caller::Local,
            read: Wings::All,
            write: Wings::All,
            destructive: true,
        }
    }

    /// No right at all: a request that reached a use case without credentials (it cannot
    /// happen behind [`crate::bearer::authenticate`]; this is the closed default).
    pub fn nobody() -> Access {
        Access {
            caller: Caller::Token("(no token)".into()),
            read: Wings::Only(BTreeSet::new()),
            write: Wings::Only(BTreeSet::new()),
            destructive: false,
        }
    }

    /// Every right, for the holder of `mcp.http.auth_token`.
    pub fn auth_token() -> Access {
        Access {
            caller: Caller::AuthToken,
            ..Access::local()
        }
    }

    /// The rights of the scoped token `name`.
    pub fn token(name: &str, read: Wings, write: Wings, destructive: bool) -> Access {
        Access {
            caller: Caller::Token(name.to_owned()),
            read,
            write,
            destructive,
        }
    }

    /// Who is calling, for messages and the log: `token 'ci-bot'`.
    pub fn who(&self) -> String {
        match &self.caller {
            Caller::Local => "the local user".into(),
            Caller::AuthToken => "the auth_token".into(),
            Caller::Token(name) => format!("token '{name}'"),
        }
    }

    /// The wings it may read.
    pub fn reads(&self) -> &Wings {
        &self.read
    }

    /// Whether it may read every wing (nothing to hide from it).
    pub fn reads_all(&self) -> bool {
        self.read == Wings::All
    }

    /// Whether it may read `wing`.
    pub fn may_read(&self, wing: &str) -> bool {
        self.read.contains(wing)
    }

    /// Whether it may read some wing.
    pub fn reads_any(&self) -> bool {
        !self.read.is_empty()
    }

    /// Whether it may write to some wing.
    pub fn writes_any(&self) -> bool {
        !self.write.is_empty()
    }

    /// Whether it may remove memories (archive, clear, forget) in the wings it writes.
    pub fn destructive(&self) -> bool {
        self.destructive
    }

    /// Refuses unless it may read `wing`.
    pub fn check_read(&self, wing: &str) -> UseCaseResult<()> {
        if self.may_read(wing) {
            return Ok(());
        }
        Err(self.refusal(&format!("read wing '{wing}'"), "reads", &self.read))
    }

    /// Refuses unless it may write to `wing`.
    pub fn check_write(&self, wing: &str) -> UseCaseResult<()> {
        if self.write.contains(wing) {
            return Ok(());
        }
        Err(self.refusal(&format!("write to wing '{wing}'"), "writes", &self.write))
    }

    /// Refuses unless it may remove memories of `wing` (`what`: "archive", "forget", …).
    pub fn check_remove(&self, what: &str, wing: &str) -> UseCaseResult<()> {
        self.check_write(wing)?;
        self.check_destructive(&format!("{what} memories of wing '{wing}'"))
    }

    /// Refuses unless it may make destructive calls (`what`: what it was asked to do).
    pub fn check_destructive(&self, what: &str) -> UseCaseResult<()> {
        if self.destructive {
            return Ok(());
        }
        Err(UseCaseError::Forbidden(format!(
            "{} may not {what}: it is not allowed destructive calls (archive, clear, forget). Use a token with `destructive: true` in mcp.http.tokens.",
            self.who()
        ).into()))
    }

    /// The wings it may write to as a list for a store query: `None` when it writes every
    /// wing.
    pub fn writable_list(&self) -> Option<Vec<String>> {
        match &self.write {
            Wings::All => None,
            Wings::Only(set) => Some(set.iter().cloned().collect()),
        }
    }

    /// Refuses unless it may write to every wing (a change of every wing at once, SOUL's
    /// identities, which belong to no wing).
    pub fn check_write_all(&self, what: &str) -> UseCaseResult<()> {
        if self.write == Wings::All {
            return Ok(());
        }
        let what = format!("{what} (that takes writing every wing)");
        Err(self.refusal(&what, "writes", &self.write))
    }

    /// Refuses unless it may read every wing (`what`: the thing that belongs to no wing).
    pub fn check_read_all(&self, what: &str) -> UseCaseResult<()> {
        if self.reads_all() {
            return Ok(());
        }
        let what = format!("{what} (that takes reading every wing)");
        Err(self.refusal(&what, "reads", &self.read))
    }

    fn refusal(&self, what: &str, verb: &str, wings: &Wings) -> UseCaseError {
        UseCaseError::Forbidden(format!(
            "{} may not {what}: it {verb} {wings}. Use a token with that right (mcp.http.tokens on the server).",
            self.who()
        ).into())
    }

    /// The wings it may write to.
    pub fn writes(&self) -> &Wings {
        &self.write
    }

    /// The wings it may read as a list for a store query: `None` when it reads every wing.
    pub fn readable_list(&self) -> Option<Vec<String>> {
        match &self.read {
            Wings::All => None,
            Wings::Only(set) => Some(set.iter().cloned().collect()),
        }
    }

    /// The wings of `wings` it may read, in their order.
    pub fn visible(&self, wings: Vec<String>) -> Vec<String> {
        wings.into_iter().filter(|w| self.may_read(w)).collect()
    }

    /// Logs a removal (archive, clear, forget) with who asked for it: a warning for a token
    /// (a shared server's owner wants to see it), information for the local user.
    pub fn audit(&self, what: &str) {
        match self.caller {
            Caller::Local => tracing::info!("{what} (by {})", self.who()),
            Caller::AuthToken | Caller::Token(_) => {
                tracing::warn!("{what} (by {})", self.who())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wings(names: &[&str]) -> Wings {
        Wings::from_list(&names.iter().map(|s| s.to_string()).collect::<Vec<_>>())
    }

    #[test]
    fn rights_and_refusals() {
        let t = Access::token("ci", wings(&["a", "b"]), wings(&["a"]), false);
        assert!(t.check_read("a").is_ok() && t.check_read("b").is_ok());
        let e = t.check_read("c").unwrap_err().to_string();
        assert!(
            e.contains("token 'ci'") && e.contains("wing 'c'") && e.contains("a, b"),
            "{e}"
        );
        assert!(t.check_write("a").is_ok());
        assert!(t
            .check_write("b")
            .unwrap_err()
            .to_string()
            .contains("writes a"));
        let e = t.check_remove("forget", "a").unwrap_err().to_string();
        assert!(e.contains("destructive"), "{e}");
        assert!(t.check_read_all("see identities").is_err());
        assert_eq!(
            t.visible(vec!["a".into(), "c".into(), "b".into()]),
            ["a", "b"]
        );
        let all = Access::token("admin", wings(&["*"]), wings(&["x", "*"]), true);
        assert!(all.check_remove("clear", "anything").is_ok() && all.check_write_all("x").is_ok());
        assert!(!Access::token("none", wings(&[]), wings(&[]), false).reads_any());
        assert!(Access::local().check_remove("clear", "w").is_ok());
    }
}
