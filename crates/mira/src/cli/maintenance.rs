//! Upkeep of a store: `mira index` and `mira webhooks`.

use super::actions::{IndexAction, WebhooksAction};
use super::args::Cli;
use super::output::{print_json, print_outcome, use_case, write_stdout};
use super::transfer::persist_index;
use crate::usecases;
use anyhow::Result;
use std::process::ExitCode;

/// `mira webhooks …`; a replay that leaves letters undelivered exits 1.
pub(super) fn webhooks(cli: &Cli, action: &WebhooksAction) -> Result<ExitCode> {
    use crate::usecases::replay;
    let app = existing_store!(cli);
    match action {
        WebhooksAction::DeadLetters { json } => {
            print_outcome(replay::list(&app), *json, |l| replay::render_list(l))
        }
        WebhooksAction::Replay { id, json, .. } => {
            let results = match use_case(replay::replay(&app, id.as_deref()))? {
                Ok(r) => r,
                Err(code) => return Ok(code),
            };
            if *json {
                print_json(&results)?;
            } else {
                write_stdout(&replay::render_replay(&results));
            }
            Ok(if results.iter().all(|r| r.delivered) {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            })
        }
    }
}

/// `mira index rebuild` and `mira index embed-missing`, with a progress bar on a terminal.
pub(super) fn run_index(cli: &Cli, action: &IndexAction) -> Result<ExitCode> {
    let app = existing_store!(cli);
    let progress = crate::progress::Progress::new();
    match action {
        IndexAction::Rebuild => {
            let index = app.index()?;
            let bar = progress.bar("index", Some(index.len() as u64), "vectors");
            let built = std::thread::scope(|s| {
                let job = s.spawn(|| index.rebuild_blocking());
                while !job.is_finished() {
                    if let Some((done, total)) = index.build_progress() {
                        bar.set_length(total as u64);
                        bar.set_position(done as u64);
                    }
                    std::thread::sleep(std::time::Duration::from_millis(100));
                }
                job.join()
                    .map_err(|_| anyhow::anyhow!("the index build stopped unexpectedly"))
            });
            bar.finish_and_clear();
            let n = built??;
            index.save()?;
            let state = index.state();
            write_stdout(&format!(
                "Index rebuilt: {n} vectors ({}, saved in {})\n",
                state.kind,
                index.dir().display()
            ));
        }
        IndexAction::EmbedMissing => {
            let bar = progress.bar("embed", Some(0), "memories");
            let embedded = usecases::embed_missing::embed_missing(&app, &mut |done, total| {
                bar.set_length(total);
                bar.set_position(done);
            });
            bar.finish_and_clear();
            let n = match use_case(embedded)? {
                Ok(n) => n,
                Err(code) => return Ok(code),
            };
            persist_index(&app);
            write_stdout(&format!(
                "Embedded {} that had no vector of {} ({} left without one)\n",
                mira_core::text::plural(n, "memory", "memories"),
                app.model_name(),
                app.store.count_without_embedding(app.model_name(), None)?
            ));
        }
    }
    Ok(ExitCode::SUCCESS)
}
