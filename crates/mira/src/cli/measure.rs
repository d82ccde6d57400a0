//! `mira eval` and `mira bench`, and what they share: the configuration, the model and the
//! embedding cache.

use super::actions::EvalBench;
use super::args::Cli;
use super::output::{print_json, write_stdout};
use crate::config::Config;
use crate::usecases;
use anyhow::{Context, Result};
use std::path::PathBuf;
use std::process::ExitCode;

/// The configuration and the real model for `mira eval` and `mira bench`, with `--budget`
/// checked.
pub(super) fn measuring(
    cli: &Cli,
    budget: u32,
) -> Result<(Config, std::sync::Arc<dyn mira_embed::Embedder>)> {
    let (config, _) = Config::load(cli.config.as_deref())?;
    if !(1..=usecases::recall::MAX_BUDGET).contains(&budget) {
        anyhow::bail!(
            "--budget must be between 1 and {}",
            usecases::recall::MAX_BUDGET
        );
    }
    let model = std::sync::Arc::new(crate::app::load_model(&config.embeddings)?);
    Ok((config, model))
}

/// The model behind the evaluations' embedding cache (`~/.cache/mira/eval/`, unless `fresh`).
pub(super) fn eval_cache(
    model: std::sync::Arc<dyn mira_embed::Embedder>,
    fresh: bool,
) -> std::sync::Arc<crate::eval::EmbeddingCache> {
    let path = (!fresh)
        .then(|| crate::eval::EmbeddingCache::default_path(model.model_name()))
        .flatten();
    std::sync::Arc::new(crate::eval::EmbeddingCache::open(model, path))
}

/// `mira eval …`: a benchmark's report as a table or JSON (the embedding cache saved after).
pub(super) fn eval(cli: &Cli, bench: &EvalBench) -> Result<ExitCode> {
    match bench {
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
        } => {
            let (config, model) = measuring(cli, *budget)?;
            let cache = eval_cache(model, *no_embedding_cache);
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
            Ok(ExitCode::SUCCESS)
        }
        EvalBench::Updates {
            path,
            budget,
            one_wing,
            confirm_offers,
            failures,
            no_embedding_cache,
            json,
        } => {
            let (config, model) = measuring(cli, *budget)?;
            let cache = eval_cache(model, *no_embedding_cache);
            let opts = crate::eval::updates::UpdatesOptions {
                path: path.clone(),
                budget: *budget,
                one_wing: *one_wing,
                confirm_offers: *confirm_offers,
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
            Ok(ExitCode::SUCCESS)
        }
        EvalBench::Types {
            heldout,
            train,
            train_set,
            out,
            wrong,
            no_embedding_cache,
            json,
        } => {
            let (_, model) = measuring(cli, 1)?;
            let cache = eval_cache(model, *no_embedding_cache);
            let opts = crate::eval::types::TypesOptions {
                heldout: heldout.clone(),
                train: train.then(|| train_set.clone()),
            };
            let (report, trained) = crate::eval::types::run(&*cache, &opts)?;
            if let Err(e) = cache.save() {
                tracing::warn!("embedding cache not saved: {e}");
            }
            if let Some(model) = trained {
                std::fs::write(out, model.to_json()? + "\n")
                    .with_context(|| format!("cannot write {}", out.display()))?;
                eprintln!("wrote the trained weights to {}", out.display());
            }
            if *json {
                print_json(&report)?;
            } else {
                write_stdout(&crate::eval::types::render_table(&report, *wrong));
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// `mira bench`: the speed report of stores of each size.
pub(super) fn bench(
    cli: &Cli,
    sizes: &[usize],
    data: Option<&PathBuf>,
    queries: u32,
    budget: u32,
    cache_dir: Option<&PathBuf>,
    json: bool,
) -> Result<ExitCode> {
    let (config, model) = measuring(cli, budget)?;
    let cache_dir = match cache_dir {
        Some(d) => d.clone(),
        None => std::env::var_os("HOME")
            .map(|h| PathBuf::from(h).join(".cache/mira/bench"))
            .ok_or_else(|| anyhow::anyhow!("HOME is not set: give --cache-dir DIR"))?,
    };
    let opts = crate::bench::BenchOptions {
        sizes: sizes.to_vec(),
        data: data.cloned(),
        queries: queries as usize,
        budget,
        cache_dir,
        hook_binary: std::env::current_exe().ok(),
    };
    let report = crate::bench::run(&config, model, &opts)?;
    if json {
        print_json(&report)?;
    } else {
        write_stdout(&crate::bench::render_table(&report));
    }
    Ok(ExitCode::SUCCESS)
}
