//! What `mira eval` and `mira bench` share: the configuration, the model and the embedding cache.

use super::args::Cli;
use crate::config::Config;
use crate::usecases;
use anyhow::Result;

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
