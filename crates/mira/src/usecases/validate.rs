//! Validation of inputs from outside (tool arguments, CLI), with messages that say how to fix them.

use super::{UseCaseError, UseCaseResult};
use mira_core::memory::{parse_id_ref, IdRef, MemoryId, MemoryType};
use mira_core::message::{Message, Term};
use mira_store::MemoryStore;

/// Largest content accepted, in bytes of UTF-8.
pub const MAX_CONTENT_BYTES: usize = 64 * 1024;
/// Longest wing or room name, in characters.
pub const MAX_NAME_CHARS: usize = 64;

fn invalid(msg: impl Into<Message>) -> UseCaseError {
    UseCaseError::Invalid(msg.into())
}

/// A memory that is not there: `lead` (ending in "take ids from "), the tools that list ids,
/// then `tail`.
pub(crate) fn unknown_id(lead: String, tail: &str) -> UseCaseError {
    UseCaseError::NotFound(
        Message::from(lead)
            .then(Term::Recall)
            .then(" or ")
            .then(Term::Timeline)
            .then(tail),
    )
}

/// Checks a memory's content: not blank, at most 64 KiB, no NUL or control characters
/// other than tab, newline and carriage return.
pub fn content(text: &str) -> UseCaseResult<()> {
    if text.trim().is_empty() {
        return Err(invalid(
            Term::Content.then(" is empty: give the text to remember"),
        ));
    }
    if text.len() > MAX_CONTENT_BYTES {
        return Err(invalid(Term::Content.then(format!(
            " is {} bytes; the limit is {MAX_CONTENT_BYTES} bytes (64 KiB): split it into several memories",
            text.len()
        ))));
    }
    if let Some(c) = text
        .chars()
        .find(|c| c.is_control() && !matches!(c, '\n' | '\r' | '\t'))
    {
        return Err(invalid(Term::Content.then(format!(
            " contains the control character U+{:04X}: remove it (only tab, newline and carriage return are allowed)",
            c as u32
        ))));
    }
    Ok(())
}

/// Whether `value` is a valid name of a wing, room or token: 1-64 letters, digits, `-`, `_`,
/// `.`, not only dots.
pub fn is_name(value: &str) -> bool {
    let n = value.chars().count();
    (1..=MAX_NAME_CHARS).contains(&n)
        && value
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        && !value.chars().all(|c| c == '.')
}

/// Checks the name given as argument `what` (a wing or a room): see [`is_name`].
pub fn name(what: Term, value: &str) -> UseCaseResult<()> {
    if is_name(value) {
        Ok(())
    } else {
        Err(invalid(what.then(format!(
            " '{}' is invalid: use 1-{MAX_NAME_CHARS} ASCII letters, digits, '-', '_' or '.' (for example 'my-project')",
            value.escape_debug()
        ))))
    }
}

/// Parses when a memory happened: RFC 3339 (`2024-03-01T12:00:00Z`, `2024-03-01T13:00:00+01:00`).
pub fn created_at(value: &str) -> UseCaseResult<chrono::DateTime<chrono::Utc>> {
    chrono::DateTime::parse_from_rfc3339(value.trim())
        .map(|t| t.with_timezone(&chrono::Utc))
        .map_err(|e| {
            invalid(Term::CreatedAt.then(format!(
                " '{value}' is not an RFC 3339 time ({e}): write it like 2024-03-01T12:00:00Z"
            )))
        })
}

/// Checks a memory's time and session: not more than a day in the future; a session id of
/// 1-200 characters without control characters.
pub fn when_and_session(
    created_at: Option<chrono::DateTime<chrono::Utc>>,
    session_id: Option<&str>,
) -> UseCaseResult<()> {
    if let Some(t) = created_at {
        if t > chrono::Utc::now() + chrono::Duration::days(1) {
            return Err(invalid(Term::CreatedAt.then(format!(
                " {t} is in the future: give when it happened (default: now)"
            ))));
        }
    }
    if let Some(s) = session_id {
        let n = s.chars().count();
        if n == 0 || n > 200 || s.chars().any(char::is_control) {
            return Err(invalid(
                Term::SessionId.then(" must be 1-200 characters without control characters"),
            ));
        }
    }
    Ok(())
}

/// "Existing wings: …" (at most 30 named) for messages about a wing, from the store's wings.
pub fn wings_hint(wings: &[String]) -> String {
    if wings.is_empty() {
        return "No wing exists yet: choose a short project name such as 'my-project'.".into();
    }
    let shown: Vec<&str> = wings.iter().take(30).map(String::as_str).collect();
    let more = if wings.len() > shown.len() {
        format!(" (and {} more)", wings.len() - shown.len())
    } else {
        String::new()
    };
    format!(
        "Existing wings: {}{more}; or choose a new short name such as 'my-project'.",
        shown.join(", ")
    )
}

/// Parses a memory type name; the error lists the valid ones.
pub fn memory_type(value: &str) -> UseCaseResult<MemoryType> {
    value
        .parse::<MemoryType>()
        .map_err(|e| invalid(e.to_string()))
}

/// Parses a memory id in any printed form (`<uuid>`, `T0:<uuid>`, the short id or any
/// prefix of at least 8 hex digits) and resolves a prefix against `store`, like git: a prefix
/// that no memory or several memories start with is an error that says so. A whole id is
/// returned as it is (the caller checks that it exists).
pub fn memory_id(store: &dyn MemoryStore, value: &str) -> UseCaseResult<MemoryId> {
    let prefix = match parse_id_ref(value).map_err(invalid)? {
        IdRef::Full(id) => return Ok(id),
        IdRef::Prefix(p) => p,
    };
    match store.ids_with_prefix(&prefix, 3)?.as_slice() {
        [] => Err(unknown_id(
            format!("no memory has an id starting with {prefix}: take ids from "),
            " (it may have been forgotten)",
        )),
        [id] => Ok(*id),
        many => Err(invalid(format!(
            "id {prefix} is ambiguous: {} memories start with it ({}…): give more of its digits",
            if many.len() > 2 { "several" } else { "two" },
            many.iter()
                .take(2)
                .map(|id| id.to_string()[..13].to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_rules() {
        assert!(content("ok").is_ok());
        assert!(content("line\nline\ttab").is_ok());
        for bad in ["", "   \n\t", "a\0b", "bell\u{7}"] {
            assert!(
                matches!(content(bad), Err(UseCaseError::Invalid(_))),
                "{bad:?}"
            );
        }
        assert!(content(&"x".repeat(MAX_CONTENT_BYTES)).is_ok());
        let err = content(&"x".repeat(MAX_CONTENT_BYTES + 1))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("65537 bytes") && err.contains("64 KiB"),
            "{err}"
        );
    }

    #[test]
    fn name_rules() {
        for ok in ["a", "my-project", "v1.2_x", &"a".repeat(64)] {
            assert!(name(Term::Wing, ok).is_ok(), "{ok}");
        }
        for bad in [
            "",
            "bad wing",
            "a/b",
            "../x",
            "..",
            "x;DROP",
            "é",
            &"a".repeat(65),
        ] {
            let err = name(Term::Wing, bad).unwrap_err().to_string();
            assert!(err.starts_with("wing '"), "{err}");
        }
    }

    #[test]
    fn type_errors_list_valid_types() {
        let err = memory_type("bogus").unwrap_err().to_string();
        assert!(
            err.contains("decision, fact, preference, session_note, debug_log"),
            "{err}"
        );
    }
}
