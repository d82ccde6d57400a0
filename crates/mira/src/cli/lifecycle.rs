//! The lifecycle commands.

use super::args::{Cli, Command};
use super::output::{emit, use_case};
use crate::usecases;
use crate::usecases::access::Access;
use anyhow::Result;
use std::process::ExitCode;

/// The lifecycle commands: timeline, causal, archive, restore, clear, forget, link, unlink,
/// pin, unpin (each on a store that exists).
pub(super) fn run_lifecycle(cli: &Cli) -> Result<ExitCode> {
    use usecases::{archive, causal, clear, link, timeline};
    let app = existing_store!(cli);
    let Some(command) = &cli.command else {
        anyhow::bail!("not a lifecycle command")
    };
    match command {
        Command::Timeline {
            wing,
            room,
            memory_type,
            since,
            until,
            limit,
            cursor,
            order,
            include_archived,
            include_superseded,
            source,
            pinned,
            json,
        } => {
            let req = timeline::TimelineRequest {
                wing: wing.clone(),
                room: room.clone(),
                memory_type: memory_type.clone(),
                since: since.clone(),
                until: until.clone(),
                limit: *limit,
                cursor: cursor.clone(),
                order: order.clone(),
                include_archived: *include_archived,
                include_superseded: *include_superseded,
                source: source.clone(),
                pinned_only: *pinned,
                now: None,
            };
            emit(
                timeline::timeline(&app, &Access::local(), &req),
                *json,
                timeline::render_text,
            )
        }
        Command::Causal {
            id,
            max_depth,
            consequences,
            json,
        } => {
            let req = causal::CausalRequest {
                id: id.clone(),
                max_depth: *max_depth,
                include_consequences: *consequences,
            };
            emit(
                causal::causal_chain(&app, &Access::local(), &req),
                *json,
                causal::render_text,
            )
        }
        Command::Archive { restore, json, .. } if !restore.is_empty() => emit(
            archive::unarchive(&app, &Access::local(), restore),
            *json,
            archive::render_unarchive_text,
        ),
        Command::Restore { ids, json } => emit(
            archive::unarchive(&app, &Access::local(), ids),
            *json,
            archive::render_unarchive_text,
        ),
        Command::Archive {
            older_than,
            ids,
            dry_run,
            yes,
            json,
            ..
        } => {
            // Without arguments, the thresholds' archive is shown before it is done.
            let ask_first = !*yes && older_than.is_none() && ids.is_empty();
            let req = archive::ArchiveRequest {
                older_than_days: *older_than,
                ids: ids.clone(),
                dry_run: *dry_run || ask_first,
                now: None,
            };
            emit(
                archive::archive(&app, &Access::local(), &req),
                *json,
                |o: &archive::ArchiveOutcome| {
                    let mut text = archive::render_text(o);
                    if ask_first && !*dry_run && !o.items.is_empty() {
                        text.push_str("Run `mira archive --yes` to archive them.\n");
                    }
                    text
                },
            )
        }
        Command::Clear {
            all,
            wing,
            room,
            yes,
            json,
        } => {
            let scope = match (all, wing, room) {
                (true, _, _) => clear::ClearScope::All,
                (false, Some(w), None) => clear::ClearScope::Wing { wing: w.clone() },
                (false, Some(w), Some(r)) => clear::ClearScope::Room {
                    wing: w.clone(),
                    room: r.clone(),
                },
                (false, None, _) => anyhow::bail!("give --all or --wing WING"),
            };
            if !*yes {
                // A preview is what was asked for, not an error.
                return emit(
                    clear::preview(&app, &scope),
                    *json,
                    clear::render_preview_text,
                );
            }
            emit(
                clear::clear(
                    &app,
                    &Access::local(),
                    &clear::ClearRequest {
                        scope,
                        confirm: true,
                    },
                ),
                *json,
                clear::render_text,
            )
        }
        Command::Forget { id, yes, json } => {
            let what = match use_case(clear::forget_preview(&app, &Access::local(), id))? {
                Ok(w) => w,
                Err(code) => return Ok(code),
            };
            if !*yes {
                if let Some(refused) = confirm_forget(&what, id)? {
                    return Ok(refused);
                }
            }
            emit(
                clear::forget(&app, &Access::local(), &what.id.to_string()),
                *json,
                clear::render_forget_text,
            )
        }
        Command::Link {
            from,
            to,
            relation,
            json,
        } => {
            let req = link::LinkRequest {
                from: from.clone(),
                to: to.clone(),
                relation: relation.clone(),
            };
            emit(
                link::link(&app, &Access::local(), &req),
                *json,
                link::render_link_text,
            )
        }
        Command::Unlink {
            a,
            b,
            relation,
            json,
        } => {
            let req = link::LinkRequest {
                from: a.clone(),
                to: b.clone(),
                relation: relation.clone(),
            };
            emit(
                link::unlink(&app, &Access::local(), &req),
                *json,
                link::render_unlink_text,
            )
        }
        Command::Supersede {
            old,
            new,
            reason,
            undo,
            json,
        } => emit(
            usecases::supersede::supersede(
                &app,
                &Access::local(),
                &usecases::supersede::SupersedeRequest {
                    old: old.clone(),
                    new: new.clone(),
                    reason: reason.clone(),
                    undo: *undo,
                },
            ),
            *json,
            usecases::supersede::render_text,
        ),
        Command::Pin { id, json } | Command::Unpin { id, json } => {
            let pinned = matches!(command, Command::Pin { .. });
            emit(
                usecases::pin::set_pinned(&app, &Access::local(), id, pinned),
                *json,
                usecases::pin::render_text,
            )
        }
        _ => anyhow::bail!("not a lifecycle command"),
    }
}

/// Asks on the terminal whether to forget `what` (given as `raw_id`); off a terminal, says how
/// to confirm instead. `None` when the user said yes; else the exit code: 2 off a terminal (the
/// caller must add --yes), 1 when the answer was no. Nothing is deleted then.
pub(super) fn confirm_forget(
    what: &usecases::clear::ForgetOutcome,
    raw_id: &str,
) -> Result<Option<ExitCode>> {
    use std::io::{BufRead as _, IsTerminal as _, Write as _};
    let target = usecases::clear::render_forget_target(what);
    if !std::io::stdin().is_terminal() {
        eprintln!(
            "error: nothing was deleted: `mira forget` asks before deleting {target} for good, and standard input is not a terminal; run `mira forget {raw_id} --yes` to confirm"
        );
        return Ok(Some(ExitCode::from(2)));
    }
    let mut err = std::io::stderr().lock();
    write!(err, "Forget {target} for good? [y/N] ")?;
    err.flush()?;
    let mut answer = String::new();
    std::io::stdin().lock().read_line(&mut answer)?;
    if matches!(answer.trim().to_ascii_lowercase().as_str(), "y" | "yes") {
        return Ok(None);
    }
    writeln!(err, "Nothing was deleted.")?;
    Ok(Some(ExitCode::FAILURE))
}
