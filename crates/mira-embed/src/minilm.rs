//! all-MiniLM-L6-v2 on CPU with ONNX Runtime.

use std::fmt;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use tokenizers::{Tokenizer, TruncationParams};

use crate::runtime::{shared_weights, Runtime, LIBRARY_FILE};
use crate::worker::Worker;
use crate::{EmbedError, Embedder, ModelOptions, Precision, DEFAULT_MODEL_NAME, DIMENSION};

/// Maximum number of tokens per text, `[CLS]` and `[SEP]` included
/// (`max_seq_length` of the model's `sentence_bert_config.json`); longer texts are
/// truncated.
pub const MAX_TOKENS: usize = 256;

const TOKENIZER_FILE: &str = "tokenizer.json";
const CONFIG_FILE: &str = "config.json";

/// The part of the model's `config.json` checked before loading.
#[derive(Deserialize)]
struct BertConfig {
    hidden_size: usize,
    max_position_embeddings: usize,
    vocab_size: usize,
}

/// The all-MiniLM-L6-v2 sentence embedder (384 dimensions, CPU).
///
/// Embeddings are masked mean-pooled last hidden states, L2-normalised; see the crate docs
/// for the full pipeline. `MiniLm` is `Send + Sync`: share it behind an `Arc` and call it from
/// several threads. Texts are tokenized on the calling thread; the forward passes run on the
/// model threads (one per [`threads`](ModelOptions::threads)), which batch the texts of
/// concurrent calls together.
pub struct MiniLm {
    tokenizer: Tokenizer,
    worker: Worker,
    options: ModelOptions,
    name: String,
    dir: PathBuf,
}

// `MiniLm` is used from `spawn_blocking` and shared between requests.
const _: () = {
    const fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<MiniLm>();
};

impl fmt::Debug for MiniLm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MiniLm")
            .field("dir", &self.dir)
            .field("options", &self.options)
            .finish_non_exhaustive()
    }
}

fn invalid(path: &Path, reason: impl fmt::Display) -> EmbedError {
    EmbedError::InvalidModel {
        path: path.to_path_buf(),
        reason: reason.to_string(),
    }
}

/// The first file [`MiniLm::load_with`] needs in `dir` for `precision` that is not there, if
/// any: `tokenizer.json`, `config.json`, the graph, ONNX Runtime ([`LIBRARY_FILE`]).
pub fn missing_file(dir: &Path, precision: Precision) -> Option<PathBuf> {
    [
        TOKENIZER_FILE,
        CONFIG_FILE,
        precision.graph_file(),
        LIBRARY_FILE,
    ]
    .into_iter()
    .map(|f| dir.join(f))
    .find(|p| !p.is_file())
}

impl MiniLm {
    /// Loads the f32 model from `dir` with the default options (see [`load_with`](Self::load_with)).
    pub fn load(dir: &Path) -> Result<Self, EmbedError> {
        Self::load_with(dir, &ModelOptions::default())
    }

    /// Loads the model from `dir` (see [`resolve_model_dir`](crate::resolve_model_dir)),
    /// which must hold `tokenizer.json`, `config.json`, the graph of the chosen precision
    /// (`model.onnx` or `model_int8.onnx`) and ONNX Runtime ([`LIBRARY_FILE`]), as
    /// `scripts/fetch-model.sh` installs them.
    ///
    /// Returns [`EmbedError::ModelMissing`] when the directory or one of these files is absent,
    /// and [`EmbedError::InvalidModel`] when a file cannot be parsed or loaded or does not
    /// describe a 384-dimensional BERT model.
    pub fn load_with(dir: &Path, options: &ModelOptions) -> Result<Self, EmbedError> {
        if let Some(file) = missing_file(dir, options.precision) {
            return Err(EmbedError::ModelMissing {
                dir: dir.to_path_buf(),
                file,
            });
        }
        let tokenizer_path = dir.join(TOKENIZER_FILE);
        let config_path = dir.join(CONFIG_FILE);
        let graph = dir.join(options.precision.graph_file());
        let library = dir.join(LIBRARY_FILE);

        let config_text =
            std::fs::read_to_string(&config_path).map_err(|e| invalid(&config_path, e))?;
        let config: BertConfig = serde_json::from_str(&config_text)
            .map_err(|e| invalid(&config_path, format!("not a BERT config: {e}")))?;
        if config.hidden_size != DIMENSION {
            return Err(invalid(
                &config_path,
                format!(
                    "hidden_size is {}, expected {DIMENSION} ({DEFAULT_MODEL_NAME})",
                    config.hidden_size
                ),
            ));
        }
        if config.max_position_embeddings < MAX_TOKENS {
            return Err(invalid(
                &config_path,
                format!(
                    "max_position_embeddings is {}, expected at least {MAX_TOKENS}",
                    config.max_position_embeddings
                ),
            ));
        }

        let mut tokenizer =
            Tokenizer::from_file(&tokenizer_path).map_err(|e| invalid(&tokenizer_path, e))?;
        // The packaged tokenizer pads and truncates to 128 tokens: sentence embeddings
        // use no fixed padding (batches are padded with a mask) and 256 tokens.
        tokenizer.with_padding(None);
        tokenizer
            .with_truncation(Some(TruncationParams {
                max_length: MAX_TOKENS,
                ..TruncationParams::default()
            }))
            .map_err(|e| invalid(&tokenizer_path, e))?;
        if tokenizer.get_vocab_size(true) > config.vocab_size {
            return Err(invalid(
                &tokenizer_path,
                format!(
                    "vocabulary of {} tokens does not fit the model's {}",
                    tokenizer.get_vocab_size(true),
                    config.vocab_size
                ),
            ));
        }

        let weights = shared_weights(&library)?;
        let runtimes = (0..options.effective_threads())
            .map(|_| Runtime::load(&library, &graph, &weights))
            .collect::<Result<Vec<_>, _>>()?;
        let worker = Worker::start(runtimes, options.batch_size)?;
        let name = options.precision.model_name();
        tracing::info!(
            dir = %dir.display(),
            precision = %options.precision,
            threads = options.effective_threads(),
            "loaded embedding model {DEFAULT_MODEL_NAME}"
        );
        Ok(Self {
            tokenizer,
            worker,
            options: *options,
            name,
            dir: dir.to_path_buf(),
        })
    }

    /// The options the model runs with.
    pub fn options(&self) -> &ModelOptions {
        &self.options
    }

    /// Directory the model was loaded from.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Token ids of `text` as fed to the model: `[CLS] … [SEP]`, truncated to
    /// [`MAX_TOKENS`].
    pub fn token_ids(&self, text: &str) -> Result<Vec<u32>, EmbedError> {
        let encoding = self
            .tokenizer
            .encode_fast(text, true)
            .map_err(|e| EmbedError::Tokenize(e.to_string()))?;
        Ok(encoding.get_ids().to_vec())
    }
}

impl Embedder for MiniLm {
    /// Tokenizes `texts`, sorts them by token count (so that each forward pass needs little
    /// padding) and embeds them on the model thread, in passes of at most
    /// [`batch_size`](ModelOptions::batch_size) texts; results are in input order.
    fn embed_batch(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let mut encoded = texts
            .iter()
            .map(|t| self.token_ids(t))
            .collect::<Result<Vec<_>, _>>()?;
        let mut order: Vec<usize> = (0..encoded.len()).collect();
        order.sort_by_key(|&i| encoded[i].len());
        let sorted = order
            .iter()
            .map(|&i| std::mem::take(&mut encoded[i]))
            .collect();
        let vectors = self.worker.embed(sorted)?;
        if vectors.len() != texts.len() {
            return Err(EmbedError::Inference(format!(
                "model returned {} vectors for {} texts",
                vectors.len(),
                texts.len()
            )));
        }
        let mut out = vec![Vec::new(); texts.len()];
        for (i, v) in order.into_iter().zip(vectors) {
            out[i] = v;
        }
        Ok(out)
    }

    fn dimension(&self) -> usize {
        DIMENSION
    }

    fn model_name(&self) -> &str {
        &self.name
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_dir_is_model_missing() {
        let dir = tempfile::tempdir().unwrap();
        let err = MiniLm::load(dir.path()).unwrap_err();
        assert!(matches!(err, EmbedError::ModelMissing { .. }), "{err:?}");
        let msg = err.to_string();
        assert!(!msg.contains('\n'), "one line: {msg}");
        assert!(msg.contains(&dir.path().display().to_string()), "{msg}");
        assert!(msg.contains("scripts/fetch-model.sh"), "{msg}");

        let absent = dir.path().join("does-not-exist");
        let err = MiniLm::load(&absent).unwrap_err();
        assert!(matches!(err, EmbedError::ModelMissing { .. }), "{err:?}");
    }

    #[test]
    fn incomplete_dir_names_the_missing_file() {
        let dir = tempfile::tempdir().unwrap();
        for f in [CONFIG_FILE, TOKENIZER_FILE, "model.onnx"] {
            std::fs::write(dir.path().join(f), "{}").unwrap();
        }
        let err = MiniLm::load(dir.path()).unwrap_err();
        match &err {
            EmbedError::ModelMissing { file, .. } => assert!(file.ends_with(LIBRARY_FILE)),
            other => panic!("unexpected error: {other:?}"),
        }
        assert!(err.to_string().contains(LIBRARY_FILE), "{err}");
        let int8 = ModelOptions {
            precision: Precision::Int8,
            ..ModelOptions::default()
        };
        std::fs::write(dir.path().join(LIBRARY_FILE), "").unwrap();
        let err = MiniLm::load_with(dir.path(), &int8).unwrap_err();
        assert!(err.to_string().contains("model_int8.onnx"), "{err}");
    }

    #[test]
    fn corrupt_files_are_invalid_model() {
        let dir = tempfile::tempdir().unwrap();
        for f in ["model.onnx", LIBRARY_FILE, TOKENIZER_FILE, CONFIG_FILE] {
            std::fs::write(dir.path().join(f), b"\x00garbage").unwrap();
        }
        let err = MiniLm::load(dir.path()).unwrap_err();
        match &err {
            EmbedError::InvalidModel { path, .. } => assert!(path.ends_with(CONFIG_FILE)),
            other => panic!("unexpected error: {other:?}"),
        }
        assert!(err.to_string().contains("fetch-model.sh"));
    }
}
