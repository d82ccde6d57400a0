//! What a command writes: standard output that tolerates a closed pipe, JSON, and use-case
//! errors as messages and exit codes.

use crate::usecases::UseCaseError;
use anyhow::Result;
use std::process::ExitCode;

/// Writes `text` to stdout. A closed pipe (`mira timeline | head`) ends the command quietly
/// with success, as `head` asked for no more; any other write error ends it with code 1.
pub(super) fn write_stdout(text: &str) {
    use std::io::Write as _;
    let mut out = std::io::stdout().lock();
    if let Err(e) = out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            std::process::exit(0);
        }
        eprintln!("error: cannot write to stdout: {e}");
        std::process::exit(1);
    }
}

pub(super) fn print_json<T: serde::Serialize>(value: &T) -> Result<()> {
    write_stdout(&format!("{}\n", serde_json::to_string_pretty(value)?));
    Ok(())
}

/// Exit code 2 for invalid input (and a refused right, which the command line's local user
/// never meets), 3 for not found, 1 for internal errors. Messages name the commands and
/// options of the command line, not the MCP tools and arguments.
pub(super) fn use_case<T>(r: Result<T, UseCaseError>) -> Result<Result<T, ExitCode>> {
    match r {
        Ok(v) => Ok(Ok(v)),
        Err(UseCaseError::Invalid(m) | UseCaseError::Forbidden(m)) => {
            eprintln!("error: {}", in_cli_terms(&m));
            Ok(Err(ExitCode::from(2)))
        }
        Err(UseCaseError::NotFound(m)) => {
            eprintln!("error: {}", in_cli_terms(&m));
            Ok(Err(ExitCode::from(3)))
        }
        Err(UseCaseError::Internal(e)) => Err(e),
    }
}

/// The MCP tools and arguments that the use cases' messages name, with what the command line
/// calls them.
const CLI_TERMS: &[(&str, &str)] = &[
    ("mira_recall", "`mira recall`"),
    ("mira_timeline", "`mira timeline`"),
    ("mira_load", "`mira load`"),
    ("mira_status", "`mira status`"),
    ("mira_causal_chain", "`mira causal`"),
    ("include_consequences", "--consequences"),
    ("mira_store", "`mira store`"),
    ("soul_capture", "`mira soul capture`"),
    ("soul_update", "`mira soul update`"),
    ("soul_patch", "`mira soul patch`"),
    ("include_archived", "--include-archived"),
    ("older_than_days", "--older-than"),
    ("max_depth", "--max-depth"),
    ("created_at", "--created-at"),
    ("session_id", "--session"),
    ("from_model", "--from"),
    ("to_model", "--to"),
];

/// `message` with the MCP names of [`CLI_TERMS`] replaced by the command line's.
pub(super) fn in_cli_terms(message: &str) -> String {
    CLI_TERMS
        .iter()
        .fold(message.to_owned(), |m, (mcp, cli)| m.replace(mcp, cli))
}

/// Prints a use case's outcome as JSON or as its text form; invalid input and unknown ids
/// become exit codes 2 and 3.
pub(super) fn print_outcome<T: serde::Serialize>(
    r: Result<T, UseCaseError>,
    json: bool,
    text: impl FnOnce(&T) -> String,
) -> Result<ExitCode> {
    let value = match use_case(r)? {
        Ok(v) => v,
        Err(code) => return Ok(code),
    };
    if json {
        print_json(&value)?;
    } else {
        write_stdout(&text(&value));
    }
    Ok(ExitCode::SUCCESS)
}
