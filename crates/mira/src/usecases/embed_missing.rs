//! Vectors for the memories stored while no model was installed (they are ranked by BM25
//! alone until then) or embedded by another model than the configured one (after a change of
//! `embeddings.precision`: the vectors of both precisions are close but not the same):
//! `mira index embed-missing`, and a background pass when a server starts with the model.

use super::{UseCaseError, UseCaseResult};
use crate::App;
use anyhow::Context;
use std::sync::Arc;

/// Embeds every memory that has no embedding of the configured model, a batch
/// (`embeddings.batch_size`) per model call and transaction, and brings the index in step. `progress` is called with the memories
/// embedded so far and the total. Returns how many were embedded. Without the model, nothing
/// is done and the error says how to install it.
pub fn embed_missing(app: &App, progress: &mut dyn FnMut(u64, u64)) -> UseCaseResult<u64> {
    let Some(embedder) = app.embedder_if_installed()? else {
        return Err(UseCaseError::Invalid(format!(
            "no embedding model in {}: install it with scripts/fetch-model.sh (or point embeddings.model_dir at it), then run this again",
            app.model_dir().display()
        ).into()));
    };
    let total = app.store.count_without_embedding(app.model_name(), None)?;
    let batch_size = app.config.embeddings.batch_size.max(1);
    let mut done = 0u64;
    progress(done, total);
    loop {
        let batch = app.store.without_embedding(app.model_name(), batch_size)?;
        if batch.is_empty() {
            break;
        }
        let texts: Vec<&str> = batch.iter().map(|m| m.content.as_str()).collect();
        let vectors = embedder.embed_batch(&texts).context("embedding failed")?;
        let pairs: Vec<_> = batch.iter().map(|m| m.id).zip(vectors).collect();
        let written = app.store.set_embeddings(embedder.model_name(), &pairs)?;
        if written == 0 {
            // Nothing could be written (the model returned no vector): stop rather than loop.
            break;
        }
        done += written as u64;
        progress(done, total.max(done));
    }
    app.sync_index();
    Ok(done)
}

/// At a server's start: when the model is installed and some memories lack a vector of it,
/// embeds them on a background thread (the server answers meanwhile; recall ranks them by words
/// until then).
pub fn spawn_at_start(app: Arc<App>) {
    if app.store.is_read_only() || !app.model_installed() {
        return;
    }
    match app.store.count_without_embedding(app.model_name(), None) {
        Ok(0) => return,
        Ok(n) => tracing::info!(
            "{n} memories have no vector of {} yet: embedding them in the background",
            app.model_name()
        ),
        Err(e) => {
            tracing::warn!("cannot count the memories without a vector: {e}");
            return;
        }
    }
    let spawned = std::thread::Builder::new()
        .name("mira-embed-missing".into())
        .spawn(move || match embed_missing(&app, &mut |_, _| {}) {
            Ok(n) => tracing::info!("embedded {n} memories that had no vector of the model"),
            Err(e) => tracing::warn!("memories without a vector not embedded: {e}"),
        });
    if let Err(e) = spawned {
        tracing::warn!("cannot start embedding the memories without a vector: {e}");
    }
}
