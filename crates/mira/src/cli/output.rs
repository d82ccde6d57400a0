//! What a command writes: standard output that tolerates a closed pipe, JSON, and use-case
//! errors as messages and exit codes.

use crate::usecases::UseCaseError;
use anyhow::Result;
use mira_core::message::Term;
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
/// options of the command line ([`cli_name`]), not the MCP tools and arguments.
pub(super) fn use_case<T>(r: Result<T, UseCaseError>) -> Result<Result<T, ExitCode>> {
    match r {
        Ok(v) => Ok(Ok(v)),
        Err(UseCaseError::Invalid(m) | UseCaseError::Forbidden(m)) => {
            eprintln!("error: {}", m.render(cli_name));
            Ok(Err(ExitCode::from(2)))
        }
        Err(UseCaseError::NotFound(m)) => {
            eprintln!("error: {}", m.render(cli_name));
            Ok(Err(ExitCode::from(3)))
        }
        Err(UseCaseError::Internal(e)) => Err(e),
    }
}

/// What the command line calls a tool or argument that a use case's message names.
pub(super) fn cli_name(term: Term) -> &'static str {
    match term {
        Term::Recall => "`mira recall`",
        Term::Timeline => "`mira timeline`",
        Term::Load => "`mira load`",
        Term::Status => "`mira status`",
        Term::CausalChain => "`mira causal`",
        Term::Store => "`mira store`",
        Term::SoulCapture => "`mira soul capture`",
        Term::SoulUpdate => "`mira soul update`",
        Term::SoulPatch => "`mira soul patch`",
        Term::IncludeConsequences => "--consequences",
        Term::IncludeArchived => "--include-archived",
        Term::OlderThanDays => "--older-than",
        Term::MaxDepth => "--max-depth",
        Term::CreatedAt => "--created-at",
        Term::SessionId => "--session",
        Term::FromModel => "--from",
        Term::ToModel => "--to",
        Term::AgentId => "--agent",
        Term::ModelId => "--model",
        Term::Wing => "--wing",
        Term::Room => "--room",
        Term::FallbackWings => "--fallback-wings",
        Term::Budget => "--budget",
        Term::Content => "TEXT",
        Term::Limit => "--limit",
        Term::Cursor => "--cursor",
        Term::Since => "--since",
        Term::Until => "--until",
        Term::Relation => "--relation",
        Term::Reason => "--reason",
        Term::Directive => "DIRECTIVE",
        Term::Window => "--window",
    }
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
