//! The one dispatch of a parsed command line.

use super::actions::EvalBench;
use super::args::{Cli, Command};
use super::input::read_text;
use super::output::{print_json, use_case, write_stdout};
use super::stores::open;
use crate::config::Config;
use crate::serving::Exposure;
use crate::usecases::access::Access;
use crate::usecases::{self, store::StoreRequest};
use crate::App;
use anyhow::Result;
use std::path::PathBuf;
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
        } => {
            return super::serve::serve(
                &cli,
                http.as_ref().map(Option::as_deref),
                *with_soul,
                metrics.as_ref().map(Option::as_deref),
                Exposure {
                    insecure_no_auth: *insecure_no_auth,
                },
            )
        }
        Command::Ui {
            addr,
            with_soul,
            insecure_no_auth,
        } => {
            return super::serve::browse(
                &cli,
                addr,
                *with_soul,
                Exposure {
                    insecure_no_auth: *insecure_no_auth,
                },
            )
        }
        Command::Token { action } => return super::serve::token(action),
        Command::Hook { action } => return crate::hooks::command(action, cli.config.as_deref()),
        Command::Soul {
            agent,
            json,
            action,
        } => return super::soul::run_soul(&cli, agent.as_deref(), *json, action),
        Command::Migrate => {
            let app = open(&cli)?;
            write_stdout(&format!(
                "Database {} is at schema version {}\n",
                app.store.location(),
                app.store.schema_version()?
            ));
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
        }
        Command::Eval {
            bench:
                EvalBench::Locomo {
                    paths,
                    budget,
                    max_questions,
                    k,
                    per_conversation,
                    loco,
                    no_embedding_cache,
                    json,
                    questions,
                    text_ranks,
                },
        } => {
            let (config, model) = super::measure::measuring(&cli, *budget)?;
            let cache = super::measure::eval_cache(model, *no_embedding_cache);
            let opts = crate::eval::EvalOptions {
                paths: paths.clone(),
                budget: *budget,
                max_questions: *max_questions,
                k: k.map(usize::from),
                loco: *loco,
                questions: questions.clone(),
                text_ranks: *text_ranks,
            };
            let report = crate::eval::run(&config, cache.clone(), &opts)?;
            if let Err(e) = cache.save() {
                tracing::warn!("embedding cache not saved: {e}");
            }
            if *json {
                print_json(&report)?;
            } else {
                write_stdout(&crate::eval::render_table(&report, *per_conversation));
            }
        }
        Command::Eval {
            bench:
                EvalBench::Updates {
                    path,
                    budget,
                    failures,
                    no_embedding_cache,
                    json,
                },
        } => {
            let (config, model) = super::measure::measuring(&cli, *budget)?;
            let cache = super::measure::eval_cache(model, *no_embedding_cache);
            let opts = crate::eval::updates::UpdatesOptions {
                path: path.clone(),
                budget: *budget,
            };
            let report = crate::eval::updates::run(&config, cache.clone(), &opts)?;
            if let Err(e) = cache.save() {
                tracing::warn!("embedding cache not saved: {e}");
            }
            if *json {
                print_json(&report)?;
            } else {
                write_stdout(&crate::eval::updates::render_table(&report, *failures));
            }
        }
        Command::Bench {
            sizes,
            data,
            queries,
            budget,
            cache_dir,
            json,
        } => {
            let (config, model) = super::measure::measuring(&cli, *budget)?;
            let cache_dir = match cache_dir {
                Some(d) => d.clone(),
                None => std::env::var_os("HOME")
                    .map(|h| PathBuf::from(h).join(".cache/mira/bench"))
                    .ok_or_else(|| anyhow::anyhow!("HOME is not set: give --cache-dir DIR"))?,
            };
            let opts = crate::bench::BenchOptions {
                sizes: sizes.clone(),
                data: data.clone(),
                queries: *queries as usize,
                budget: *budget,
                cache_dir,
                hook_binary: std::env::current_exe().ok(),
            };
            let report = crate::bench::run(&config, model, &opts)?;
            if *json {
                print_json(&report)?;
            } else {
                write_stdout(&crate::bench::render_table(&report));
            }
        }
        Command::Index { action } => return super::maintenance::run_index(&cli, action),
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
        }
        Command::Export {
            wing,
            embeddings,
            output,
        } => {
            return super::transfer::run_export(
                &cli,
                wing.as_deref(),
                *embeddings,
                output.as_deref(),
            )
        }
        Command::Import {
            file,
            format,
            wing,
            json,
        } => return super::transfer::run_import(&cli, file, *format, wing.as_deref(), *json),
        Command::Webhooks { action } => return super::maintenance::webhooks(&cli, action),
        Command::Timeline { .. }
        | Command::Causal { .. }
        | Command::Archive { .. }
        | Command::Restore { .. }
        | Command::Clear { .. }
        | Command::Forget { .. }
        | Command::Link { .. }
        | Command::Unlink { .. }
        | Command::Pin { .. }
        | Command::Supersede { .. }
        | Command::Unpin { .. } => {
            return super::lifecycle::run_lifecycle(&cli);
        }
    }
    Ok(ExitCode::SUCCESS)
}
