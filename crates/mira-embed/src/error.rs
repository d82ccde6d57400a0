//! Errors of the embedding crate.

use std::path::PathBuf;

/// Why an embedding could not be produced.
#[derive(Debug, thiserror::Error)]
pub enum EmbedError {
    /// The model directory does not exist or lacks one of the required files.
    #[error(
        "embedding model not found: {} is missing: run scripts/fetch-model.sh (or set MIRA_MODEL_DIR)",
        file.display()
    )]
    ModelMissing {
        /// Directory that was searched.
        dir: PathBuf,
        /// The first required file that is absent.
        file: PathBuf,
    },

    /// A model file exists but cannot be used (corrupt, truncated or a different model).
    #[error(
        "invalid embedding model file {}: {reason} (re-run scripts/fetch-model.sh)",
        path.display()
    )]
    InvalidModel {
        /// The offending file.
        path: PathBuf,
        /// What is wrong with it.
        reason: String,
    },

    /// The tokenizer failed on an input.
    #[error("tokenization failed: {0}")]
    Tokenize(String),

    /// The forward pass or pooling failed.
    #[error("embedding inference failed: {0}")]
    Inference(String),
}
