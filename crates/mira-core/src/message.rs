//! The text of an error for the caller, with the tools and arguments it names kept as data so
//! that each surface names them in its own words (MCP: `max_depth`; the command line:
//! `--max-depth`) while the caller's own values, whatever they spell, come back unchanged.

use std::fmt;

/// A tool or argument that an error message names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Term {
    /// The recall tool.
    Recall,
    /// The timeline tool.
    Timeline,
    /// The tool that loads one memory.
    Load,
    /// The status tool.
    Status,
    /// The causal-chain tool.
    CausalChain,
    /// The store tool.
    Store,
    /// The SOUL capture tool.
    SoulCapture,
    /// The SOUL update tool.
    SoulUpdate,
    /// The SOUL patch tool.
    SoulPatch,
    /// The causal chain's switch that adds the consequences.
    IncludeConsequences,
    /// The timeline's switch that lists archived memories too.
    IncludeArchived,
    /// The archive's age in days.
    OlderThanDays,
    /// The causal chain's depth.
    MaxDepth,
    /// When a stored memory happened.
    CreatedAt,
    /// The session a memory belongs to.
    SessionId,
    /// The model a SOUL comparison or swap starts from.
    FromModel,
    /// The model a SOUL comparison or swap goes to.
    ToModel,
    /// The agent a SOUL identity belongs to.
    AgentId,
    /// The model a SOUL capture was made on.
    ModelId,
    /// The wing (project) a call is about.
    Wing,
    /// The room (topic) of a wing.
    Room,
    /// The wings a recall falls back to.
    FallbackWings,
    /// A token budget.
    Budget,
    /// The text of a memory to store.
    Content,
    /// The largest number of entries on a page.
    Limit,
    /// Where the next page of the timeline starts.
    Cursor,
    /// The timeline's earliest time.
    Since,
    /// The timeline's latest time.
    Until,
    /// The relation of a causal link.
    Relation,
    /// Why a change was made.
    Reason,
    /// The SOUL update's natural-language directive.
    Directive,
    /// How many SOUL versions the drift report reads.
    Window,
}

impl Term {
    /// The name the MCP tools give it (the reference's tool or argument name).
    pub fn mcp_name(self) -> &'static str {
        match self {
            Term::Recall => "mira_recall",
            Term::Timeline => "mira_timeline",
            Term::Load => "mira_load",
            Term::Status => "mira_status",
            Term::CausalChain => "mira_causal_chain",
            Term::Store => "mira_store",
            Term::SoulCapture => "soul_capture",
            Term::SoulUpdate => "soul_update",
            Term::SoulPatch => "soul_patch",
            Term::IncludeConsequences => "include_consequences",
            Term::IncludeArchived => "include_archived",
            Term::OlderThanDays => "older_than_days",
            Term::MaxDepth => "max_depth",
            Term::CreatedAt => "created_at",
            Term::SessionId => "session_id",
            Term::FromModel => "from_model",
            Term::ToModel => "to_model",
            Term::AgentId => "agent_id",
            Term::ModelId => "model_id",
            Term::Wing => "wing",
            Term::Room => "room",
            Term::FallbackWings => "fallback_wings",
            Term::Budget => "budget",
            Term::Content => "content",
            Term::Limit => "limit",
            Term::Cursor => "cursor",
            Term::Since => "since",
            Term::Until => "until",
            Term::Relation => "relation",
            Term::Reason => "reason",
            Term::Directive => "directive",
            Term::Window => "window",
        }
    }

    /// A message that starts with this term, followed by `part`.
    pub fn then(self, part: impl Part) -> Message {
        Message::from(self).then(part)
    }
}

/// Text with marked [`Term`]s. It reads (and derefs) as its MCP wording; [`Message::render`]
/// words it for another surface.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Message {
    /// The text in MCP words.
    text: String,
    /// Where each term's MCP name starts in `text`, in order.
    terms: Vec<(usize, Term)>,
}

/// A part of a [`Message`]: literal text or a [`Term`].
pub trait Part {
    /// Appends this part to `message`.
    fn append_to(self, message: &mut Message);
}

impl Part for Term {
    fn append_to(self, message: &mut Message) {
        message.terms.push((message.text.len(), self));
        message.text.push_str(self.mcp_name());
    }
}

impl Part for &str {
    fn append_to(self, message: &mut Message) {
        message.text.push_str(self);
    }
}

impl Part for String {
    fn append_to(self, message: &mut Message) {
        message.text.push_str(&self);
    }
}

impl Message {
    /// This message followed by `part`.
    #[must_use]
    pub fn then(mut self, part: impl Part) -> Message {
        part.append_to(&mut self);
        self
    }

    /// The text with each term named by `name`; the rest, values included, unchanged.
    pub fn render(&self, name: impl Fn(Term) -> &'static str) -> String {
        let mut out = String::with_capacity(self.text.len());
        let mut at = 0;
        for &(start, term) in &self.terms {
            out.push_str(&self.text[at..start]);
            out.push_str(name(term));
            at = start + term.mcp_name().len();
        }
        out.push_str(&self.text[at..]);
        out
    }
}

impl From<Term> for Message {
    fn from(term: Term) -> Message {
        Message::default().then(term)
    }
}

impl From<String> for Message {
    fn from(text: String) -> Message {
        Message {
            text,
            terms: Vec::new(),
        }
    }
}

impl From<&str> for Message {
    fn from(text: &str) -> Message {
        Message::from(text.to_owned())
    }
}

impl std::ops::Deref for Message {
    type Target = str;

    fn deref(&self) -> &str {
        &self.text
    }
}

impl fmt::Display for Message {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_marked_terms_are_renamed() {
        let m = Term::CreatedAt
            .then(" 'created_at max_depth' is not a time; see ")
            .then(Term::Timeline)
            .then(" (created_at)");
        assert_eq!(
            &*m,
            "created_at 'created_at max_depth' is not a time; see mira_timeline (created_at)"
        );
        let cli = m.render(|t| match t {
            Term::CreatedAt => "--created-at",
            Term::Timeline => "`mira timeline`",
            _ => "?",
        });
        assert_eq!(
            cli,
            "--created-at 'created_at max_depth' is not a time; see `mira timeline` (created_at)"
        );
        assert_eq!(Message::from("plain").render(|_| "?"), "plain");
    }
}
