//! The one dispatch of a parsed command line.

use super::args::{Cli, Command};
use super::input::read_text;
use super::output::{print_json, print_outcome, use_case, write_stdout};
use super::stores::open;
use crate::config::Config;
use crate::serving::Exposure;
use crate::usecases::access::Access;
use crate::usecases::{self, archive, causal, clear, link, store::StoreRequest, timeline};
use crate::App;
use anyhow::Result;
use std::process::ExitCode;

/// Runs a parsed command line.
pub fn run(cli: Cli) -> Result<ExitCode> {
    let Some(command) = &cli.command else {
        if std::io::IsTerminal::is_terminal(&std::io::stdin()) {
            eprintln!(
                "mira: serving MCP over stdio, waiting for a client on standard input (Ctrl-D ends; `mira --help` lists the commands)"
            );
        }
        return super::serve::serve(&cli, None, false, None, Exposure::default());
    };
    match command {
        Command::Serve {
            http,
            with_soul,
            metrics,
            insecure_no_auth,
        } => super::serve::serve(
            &cli,
            http.as_ref().map(Option::as_deref),
            *with_soul,
            metrics.as_ref().map(Option::as_deref),
            Exposure {
                insecure_no_auth: *insecure_no_auth,
            },
        ),
        Command::Ui {
            addr,
            with_soul,
            insecure_no_auth,
        } => super::serve::browse(
            &cli,
            addr,
            *with_soul,
            Exposure {
                insecure_no_auth: *insecure_no_auth,
            },
        ),
        Command::Token { action } => super::serve::token(action),
        Command::Hook { action } => crate::hooks::command(action, cli.config.as_deref()),
        Command::Soul {
            agent,
            json,
            action,
        } => super::soul::run_soul(&cli, agent.as_deref(), *json, action),
        Command::Migrate => {
            let app = open(&cli)?;
            write_stdout(&format!(
                "Database {} is at schema version {}\n",
                app.store.location(),
                app.store.schema_version()?
            ));
            Ok(ExitCode::SUCCESS)
        }
        Command::Status { json } => {
            let (config, source) = Config::load(cli.config.as_deref())?;
            if !config.store_exists() {
                for w in config.retired_key_warnings() {
                    tracing::warn!("{w}");
                }
                let s = usecases::status::no_store(&config, &source);
                if *json {
                    print_json(&s)?;
                } else {
                    write_stdout(&usecases::status::render_no_store_text(&s));
                }
                return Ok(ExitCode::SUCCESS);
            }
            let app = App::open(config, source)?;
            // The index as it will serve (loaded from its files, or built), not mid-load; and
            // no uptime: there is no server.
            app.index()?.wait_idle(std::time::Duration::from_secs(30));
            let mut status = match use_case(usecases::status::status(&app, &Access::local()))? {
                Ok(s) => s,
                Err(code) => return Ok(code),
            };
            status.uptime_secs = None;
            if *json {
                print_json(&status)?;
            } else {
                write_stdout(&usecases::status::render_text(&status));
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Store {
            text,
            file,
            wing,
            room,
            memory_type,
            supersedes,
            pinned,
            created_at,
            session,
            json,
        } => {
            let when = created_at.as_deref().map(usecases::validate::created_at);
            let created_at = match use_case(when.transpose())? {
                Ok(t) => t,
                Err(code) => return Ok(code),
            };
            let content = match (text, file) {
                (Some(t), _) => t.clone(),
                (None, Some(f)) => read_text(f)?,
                (None, None) => anyhow::bail!("give the text to store, or --file FILE"),
            };
            let app = open(&cli)?;
            let req = StoreRequest {
                content,
                wing: wing.clone(),
                room: room.clone(),
                memory_type: memory_type.clone(),
                supersedes: supersedes.clone(),
                pinned: *pinned,
                created_at,
                session_id: session.clone(),
                ..StoreRequest::default()
            };
            let outcome = match use_case(usecases::store::store(&app, &Access::local(), req))? {
                Ok(o) => o,
                Err(code) => return Ok(code),
            };
            if *json {
                print_json(&outcome)?;
            } else {
                write_stdout(&usecases::store::render_text(&outcome));
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Recall {
            query,
            budget,
            wing,
            room,
            fallback_wings,
            order,
            json,
        } => {
            let app = existing_store!(&cli);
            let req = usecases::recall::RecallRequest {
                query: query.clone(),
                budget: *budget,
                wing: wing.clone(),
                room: room.clone(),
                fallback_wings: fallback_wings
                    .iter()
                    .map(|w| w.trim().to_owned())
                    .filter(|w| !w.is_empty())
                    .collect(),
                order: *order,
                surface: usecases::recall::Surface::Cli,
                ..usecases::recall::RecallRequest::default()
            };
            let outcome = match use_case(usecases::recall::recall(&app, &Access::local(), &req))? {
                Ok(o) => o,
                Err(code) => return Ok(code),
            };
            if *json {
                print_json(&outcome)?;
            } else {
                write_stdout(&format!("{}\n", outcome.text));
            }
            if outcome.items.is_empty() && req.wing.is_some() && outcome.candidates == 0 {
                let wings = app.store.wings()?;
                eprintln!(
                    "note: nothing in that wing. {}",
                    usecases::validate::wings_hint(&wings)
                );
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Eval { bench } => super::measure::eval(&cli, bench),
        Command::Bench {
            sizes,
            data,
            queries,
            budget,
            cache_dir,
            json,
        } => super::measure::bench(
            &cli,
            sizes,
            data.as_ref(),
            *queries,
            *budget,
            cache_dir.as_ref(),
            *json,
        ),
        Command::Index { action } => super::maintenance::run_index(&cli, action),
        Command::Load { id, json } => {
            let app = existing_store!(&cli);
            let loaded = match use_case(usecases::load::load(&app, &Access::local(), id))? {
                Ok(m) => m,
                Err(code) => return Ok(code),
            };
            if *json {
                print_json(&usecases::load::to_json(&loaded))?;
            } else {
                let slot = usecases::load::replaced_slot(&app, &Access::local(), &loaded)?;
                write_stdout(&usecases::load::render_text(&loaded, slot.as_deref()));
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Export {
            wing,
            embeddings,
            output,
        } => super::transfer::run_export(&cli, wing.as_deref(), *embeddings, output.as_deref()),
        Command::Import {
            file,
            format,
            wing,
            json,
        } => super::transfer::run_import(&cli, file, *format, wing.as_deref(), *json),
        Command::Webhooks { action } => super::maintenance::webhooks(&cli, action),
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
            let app = existing_store!(&cli);
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
            print_outcome(
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
            let app = existing_store!(&cli);
            let req = causal::CausalRequest {
                id: id.clone(),
                max_depth: *max_depth,
                include_consequences: *consequences,
            };
            print_outcome(
                causal::causal_chain(&app, &Access::local(), &req),
                *json,
                causal::render_text,
            )
        }
        Command::Archive { restore, json, .. } if !restore.is_empty() => {
            let app = existing_store!(&cli);
            print_outcome(
                archive::unarchive(&app, &Access::local(), restore),
                *json,
                archive::render_unarchive_text,
            )
        }
        Command::Restore { ids, json } => {
            let app = existing_store!(&cli);
            print_outcome(
                archive::unarchive(&app, &Access::local(), ids),
                *json,
                archive::render_unarchive_text,
            )
        }
        Command::Archive {
            older_than,
            ids,
            dry_run,
            yes,
            json,
            ..
        } => {
            let app = existing_store!(&cli);
            // Without arguments, the thresholds' archive is shown before it is done.
            let ask_first = !*yes && older_than.is_none() && ids.is_empty();
            let req = archive::ArchiveRequest {
                older_than_days: *older_than,
                ids: ids.clone(),
                dry_run: *dry_run || ask_first,
                now: None,
            };
            print_outcome(
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
            let app = existing_store!(&cli);
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
                return print_outcome(
                    clear::preview(&app, &scope),
                    *json,
                    clear::render_preview_text,
                );
            }
            print_outcome(
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
            let app = existing_store!(&cli);
            let what = match use_case(clear::forget_preview(&app, &Access::local(), id))? {
                Ok(w) => w,
                Err(code) => return Ok(code),
            };
            if !*yes {
                if let Some(refused) = confirm_forget(&what, id)? {
                    return Ok(refused);
                }
            }
            print_outcome(
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
            let app = existing_store!(&cli);
            let req = link::LinkRequest {
                from: from.clone(),
                to: to.clone(),
                relation: relation.clone(),
            };
            print_outcome(
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
            let app = existing_store!(&cli);
            let req = link::LinkRequest {
                from: a.clone(),
                to: b.clone(),
                relation: relation.clone(),
            };
            print_outcome(
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
        } => {
            let app = existing_store!(&cli);
            print_outcome(
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
            )
        }
        Command::Pin { id, json } | Command::Unpin { id, json } => {
            let app = existing_store!(&cli);
            let pinned = matches!(command, Command::Pin { .. });
            print_outcome(
                usecases::pin::set_pinned(&app, &Access::local(), id, pinned),
                *json,
                usecases::pin::render_text,
            )
        }
    }
}

/// Asks on the terminal whether to forget `what` (given as `raw_id`); off a terminal, says how
/// to confirm instead. `None` when the user said yes; else the exit code: 2 off a terminal (the
/// caller must add --yes), 1 when the answer was no. Nothing is deleted then.
pub(super) fn confirm_forget(
    what: &clear::ForgetOutcome,
    raw_id: &str,
) -> Result<Option<ExitCode>> {
    use std::io::{BufRead as _, IsTerminal as _, Write as _};
    let target = clear::render_forget_target(what);
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
