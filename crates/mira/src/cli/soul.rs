//! `mira soul …`: its arguments and the SOUL use cases they call.

use super::actions::SoulAction;
use super::args::Cli;
use super::input::read_text;
use super::output::print_outcome;
use super::stores::open;
use crate::usecases::{self, UseCaseError};
use anyhow::Result;
use std::process::ExitCode;

/// `mira soul …`: the SOUL use cases (its tables are created on first use).
pub(super) fn run_soul(
    cli: &Cli,
    agent: Option<&str>,
    json: bool,
    action: &SoulAction,
) -> Result<ExitCode> {
    use mira_soul::{render, service};
    use usecases::soul;
    let Some(agent) = agent.map(str::to_owned) else {
        eprintln!("error: give the agent whose identity this is: mira soul <command> --agent NAME");
        return Ok(ExitCode::from(2));
    };
    let reads = matches!(
        action,
        SoulAction::Recall { .. }
            | SoulAction::Drift { .. }
            | SoulAction::Status
            | SoulAction::History { .. }
    );
    let app = if reads {
        existing_store!(cli)
    } else {
        open(cli)?
    };
    fn json_arg<T: serde::de::DeserializeOwned>(what: &str, raw: &str) -> Result<T, UseCaseError> {
        serde_json::from_str(raw).map_err(|e| {
            UseCaseError::Invalid(
                format!("{what} is not valid JSON ({e}): give a JSON object").into(),
            )
        })
    }
    match action {
        SoulAction::Capture {
            conversation,
            model,
            session,
            metrics,
        } => {
            let conversation = read_text(conversation)?;
            let r = metrics
                .as_deref()
                .map(|m| json_arg("--metrics", m))
                .transpose()
                .and_then(|behavioral_metrics| {
                    let req = service::CaptureRequest {
                        agent_id: agent,
                        conversation,
                        model_id: model.clone(),
                        session_id: session.clone(),
                        behavioral_metrics,
                    };
                    soul::capture(&app, &req)
                });
            print_outcome(r, json, render::capture)
        }
        SoulAction::Recall { context, budget } => {
            let req = service::RecallRequest {
                agent_id: agent,
                context: context.clone(),
                budget: *budget,
            };
            print_outcome(soul::recall(&app, &req), json, render::recall)
        }
        SoulAction::Drift { window, from, to } => {
            let req = service::DriftRequest {
                agent_id: agent,
                window: *window,
                from_model: from.clone(),
                to_model: to.clone(),
            };
            print_outcome(soul::drift(&app, &req), json, render::drift)
        }
        SoulAction::Swap { from, to } => {
            print_outcome(soul::swap(&app, &agent, from, to), json, render::swap)
        }
        SoulAction::Status => print_outcome(soul::status(&app, &agent), json, render::status),
        SoulAction::History { limit } => {
            print_outcome(soul::history(&app, &agent, *limit), json, render::history)
        }
        SoulAction::Update { directive, reason } => print_outcome(
            soul::update(&app, &agent, directive, reason.as_deref()),
            json,
            render::edit,
        ),
        SoulAction::Patch { patch, reason } => print_outcome(
            json_arg("the patch", patch)
                .and_then(|p| soul::patch(&app, &agent, &p, reason.as_deref())),
            json,
            render::edit,
        ),
    }
}
