//! The hooks' figures of `mira bench`, on each store size: the briefing a session starts with
//! (the use case alone, and `mira hook session-start` as the client runs it: a new process,
//! the payload on standard input), and `mira hook user-prompt` (a new process that loads the
//! model, reads the index and recalls). The wing is given a project's memories for the
//! measurement (pinned ones, decisions, errors with and without a fix, a captured session),
//! forgotten afterwards so that the stored benchmark store stays as it was built.

use super::{timed, Latency, WING};
use crate::usecases::access::Access;
use crate::usecases::briefing::{briefing, BriefingRequest};
use crate::usecases::capture::{capture, Candidate, CaptureRequest, Kind};
use crate::usecases::clear::forget;
use crate::usecases::store::{store, StoreRequest};
use crate::App;
use anyhow::{bail, Context, Result};
use mira_core::memory::MemoryType;
use serde::Serialize;
use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

/// Runs of the briefing use case.
const BRIEFINGS: usize = 20;
/// Runs of `mira hook session-start`.
const SESSION_STARTS: usize = 10;
/// Runs of `mira hook user-prompt` (each loads the model).
const PROMPTS: usize = 5;

/// The hooks' figures at one store size (milliseconds).
#[derive(Debug, Clone, Serialize)]
pub struct HookReport {
    /// The briefing use case on the open store (no process, no model, no index).
    pub briefing: Latency,
    /// `mira hook session-start`, a process from start to exit (the model is never loaded).
    pub session_start: Option<Latency>,
    /// `mira hook user-prompt`, a process that loads the model and the index and recalls.
    pub user_prompt: Option<Latency>,
}

/// Measures the hooks on the store `app` opened from `config`; the processes run `binary`
/// (this `mira`), none when it is `None`.
pub fn measure(
    app: &App,
    config: &crate::Config,
    binary: Option<&Path>,
    question: &str,
) -> Result<HookReport> {
    let seeded = seed(app)?;
    let result = measure_seeded(app, config, binary, question);
    for id in seeded {
        forget(app, &Access::local(), &id.to_string()).map_err(|e| anyhow::anyhow!("{e}"))?;
    }
    result
}

fn measure_seeded(
    app: &App,
    config: &crate::Config,
    binary: Option<&Path>,
    question: &str,
) -> Result<HookReport> {
    let req = BriefingRequest {
        wing: WING.into(),
        budget: app.config.hooks.session_start_budget,
        session_id: None,
    };
    let b = briefing(app, &req).map_err(|e| anyhow::anyhow!("{e}"))?;
    if b.items.is_empty() {
        bail!("the benchmark's briefing is empty");
    }
    let briefing_ms = (0..BRIEFINGS)
        .map(|_| timed(|| briefing(app, &req).map_err(|e| anyhow::anyhow!("{e}"))))
        .collect::<Result<Vec<_>>>()?;
    let Some(binary) = binary else {
        return Ok(HookReport {
            briefing: Latency::of(briefing_ms),
            session_start: None,
            user_prompt: None,
        });
    };
    // The store's configuration, as the hook processes read it (then removed).
    let mut file = tempfile::Builder::new()
        .suffix(".yaml")
        .tempfile()
        .context("cannot write the hooks' configuration")?;
    file.write_all(serde_norway::to_string(config)?.as_bytes())?;
    let cwd = tempfile::tempdir()?;
    // Milliseconds of one run of `mira hook <event>`; `answers`: it must print the context.
    let run = |event: &str, payload: &serde_json::Value, answers: bool| -> Result<f64> {
        timed(|| {
            let mut child = Command::new(binary)
                .args(["--config"])
                .arg(file.path())
                .args(["hook", event])
                .current_dir(cwd.path())
                .env("MIRA_WING", WING)
                .env_remove("MIRA_CONFIG")
                .env_remove("MIRA_STORAGE_PATH")
                .env_remove("MIRA_DATA_PATH")
                .env_remove("MIRA_STORAGE_BACKEND")
                .env_remove("MIRA_DATABASE_URL")
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::null())
                .spawn()
                .with_context(|| format!("cannot run {}", binary.display()))?;
            if let Some(mut stdin) = child.stdin.take() {
                stdin.write_all(payload.to_string().as_bytes())?;
            }
            let out = child.wait_with_output()?;
            if answers && out.stdout.is_empty() {
                bail!("mira hook {event} printed nothing on the benchmark store");
            }
            Ok(())
        })
    };
    let start = serde_json::json!({"session_id": "bench", "cwd": cwd.path(),
        "hook_event_name": "SessionStart", "source": "startup"});
    let session_start = (0..SESSION_STARTS)
        .map(|_| run("session-start", &start, true))
        .collect::<Result<Vec<_>>>()?;
    let prompt = serde_json::json!({"session_id": "bench", "cwd": cwd.path(),
        "hook_event_name": "UserPromptSubmit", "prompt": question});
    // Whether something stands out for the question or not, the work is the same.
    let user_prompt = (0..PROMPTS)
        .map(|_| run("user-prompt", &prompt, false))
        .collect::<Result<Vec<_>>>()?;
    Ok(HookReport {
        briefing: Latency::of(briefing_ms),
        session_start: Some(Latency::of(session_start)),
        user_prompt: Some(Latency::of(user_prompt)),
    })
}

/// What a project's wing holds besides its notes: pinned memories, decisions, errors (one
/// fixed) and a captured session. Returns their ids.
fn seed(app: &App) -> Result<Vec<mira_core::memory::MemoryId>> {
    let stored = |content: &str, memory_type: MemoryType, pinned: bool| {
        store(
            app,
            &Access::local(),
            StoreRequest {
                content: content.into(),
                wing: WING.into(),
                memory_type: Some(memory_type.as_str().into()),
                pinned,
                ..StoreRequest::default()
            },
        )
        .map(|o| o.id)
        .map_err(|e| anyhow::anyhow!("{e}"))
    };
    let mut ids = vec![
        stored(
            "Never deploy on Fridays: the on-call rotation changes on Saturday.",
            MemoryType::Preference,
            true,
        )?,
        stored(
            "All amounts are integer cents in a Money(i64) newtype; never f64.",
            MemoryType::Decision,
            true,
        )?,
    ];
    for d in [
        "We decided to use Redis streams for the job queue instead of Kafka.",
        "We chose sqlx over diesel because it checks SQL at compile time.",
        "We decided to retry payment calls three times with exponential backoff.",
        "We went with OpenTelemetry for traces, exported to Tempo.",
    ] {
        ids.push(stored(d, MemoryType::Decision, false)?);
    }
    ids.push(stored(
        "`cargo test -p billing` failed: thread 'ledger::refund' panicked: connection refused",
        MemoryType::DebugLog,
        false,
    )?);
    let session: Vec<Candidate> = [
        (Kind::Request, "Request: add retries to the payment client"),
        (
            Kind::Outcome,
            "Outcome: added exponential backoff with jitter to PaymentClient::charge; tests pass.",
        ),
        (
            Kind::Request,
            "Request: route refunds through the payment client too",
        ),
        (
            Kind::Outcome,
            "Outcome: refunds use PaymentClient::refund with the same backoff.",
        ),
    ]
    .into_iter()
    .map(|(kind, text)| Candidate {
        kind,
        content: text.into(),
        at: chrono::Utc::now(),
        memory_type: None,
        resolves: None,
    })
    .collect();
    let o = capture(
        app,
        CaptureRequest {
            wing: WING.into(),
            session_id: Some("bench-earlier-session".into()),
            candidates: session,
        },
    )
    .map_err(|e| anyhow::anyhow!("{e}"))?;
    ids.extend(o.ids);
    Ok(ids)
}
