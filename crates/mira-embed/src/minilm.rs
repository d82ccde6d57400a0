//! all-MiniLM-L6-v2 on CPU with candle.

use std::fmt;
use std::path::{Path, PathBuf};

use candle_core::{DType, Device, Tensor};
use candle_nn::VarBuilder;
use candle_transformers::models::bert::{BertModel, Config, DTYPE};
use tokenizers::{Tokenizer, TruncationParams};

use crate::{EmbedError, Embedder, DEFAULT_MODEL_NAME, DIMENSION};

/// Maximum number of tokens per text, `[CLS]` and `[SEP]` included
/// (`max_seq_length` of the model's `sentence_bert_config.json`); longer texts are
/// truncated.
pub const MAX_TOKENS: usize = 256;

/// Default number of texts per forward pass in [`MiniLm::embed_batch`](Embedder::embed_batch).
pub const DEFAULT_BATCH_SIZE: usize = 32;

const WEIGHTS_FILE: &str = "model.safetensors";
const TOKENIZER_FILE: &str = "tokenizer.json";
const CONFIG_FILE: &str = "config.json";

/// The all-MiniLM-L6-v2 sentence embedder (384 dimensions, CPU).
///
/// Embeddings are masked mean-pooled last hidden states, L2-normalised; see the
/// crate docs for the full pipeline. `MiniLm` is `Send + Sync`: share it behind an
/// `Arc` and call it from several threads (each call runs its own forward pass).
pub struct MiniLm {
    model: BertModel,
    tokenizer: Tokenizer,
    pad_id: u32,
    batch_size: usize,
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
            .field("batch_size", &self.batch_size)
            .finish_non_exhaustive()
    }
}

fn invalid(path: &Path, reason: impl fmt::Display) -> EmbedError {
    EmbedError::InvalidModel {
        path: path.to_path_buf(),
        reason: reason.to_string(),
    }
}

fn inference(err: candle_core::Error) -> EmbedError {
    EmbedError::Inference(err.to_string())
}

impl MiniLm {
    /// Loads the model from `dir` (see [`resolve_model_dir`](crate::resolve_model_dir)),
    /// which must hold `model.safetensors`, `tokenizer.json` and `config.json`.
    ///
    /// Returns [`EmbedError::ModelMissing`] when the directory or one of these files
    /// is absent, and [`EmbedError::InvalidModel`] when a file cannot be parsed or
    /// does not describe a 384-dimensional BERT model.
    pub fn load(dir: &Path) -> Result<Self, EmbedError> {
        let weights = dir.join(WEIGHTS_FILE);
        let tokenizer_path = dir.join(TOKENIZER_FILE);
        let config_path = dir.join(CONFIG_FILE);
        if ![&weights, &tokenizer_path, &config_path]
            .iter()
            .all(|p| p.is_file())
        {
            return Err(EmbedError::ModelMissing {
                dir: dir.to_path_buf(),
            });
        }

        let config_text =
            std::fs::read_to_string(&config_path).map_err(|e| invalid(&config_path, e))?;
        let config: Config = serde_json::from_str(&config_text)
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
        // use no fixed padding (batches are padded here, with a mask) and 256 tokens.
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
        let pad_id = tokenizer.token_to_id("[PAD]").unwrap_or(0);

        // SAFETY: the file is memory-mapped read-only and must not be modified or
        // truncated while the model is alive. mira only reads model files, and
        // scripts/fetch-model.sh never rewrites an installed file in place (it renames
        // a fully written directory into place), so the mapping stays valid.
        let vb = unsafe { VarBuilder::from_mmaped_safetensors(&[&weights], DTYPE, &Device::Cpu) }
            .map_err(|e| invalid(&weights, e))?;
        let model = BertModel::load(vb, &config).map_err(|e| invalid(&weights, e))?;

        tracing::info!(dir = %dir.display(), "loaded embedding model {DEFAULT_MODEL_NAME}");
        Ok(Self {
            model,
            tokenizer,
            pad_id,
            batch_size: DEFAULT_BATCH_SIZE,
            dir: dir.to_path_buf(),
        })
    }

    /// Sets how many texts go through one forward pass (at least 1).
    pub fn with_batch_size(mut self, batch_size: usize) -> Self {
        self.batch_size = batch_size.max(1);
        self
    }

    /// Number of texts per forward pass.
    pub fn batch_size(&self) -> usize {
        self.batch_size
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

    /// Runs one padded batch through BERT and pools it into unit vectors.
    fn forward(&self, batch: &[&[u32]]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let max_len = batch.iter().map(|ids| ids.len()).max().unwrap_or(0);
        if max_len == 0 || batch.iter().any(|ids| ids.is_empty()) {
            return Err(EmbedError::Tokenize(
                "a text produced no tokens (tokenizer.json lacks its [CLS]/[SEP] template?)".into(),
            ));
        }
        let mut ids = Vec::with_capacity(batch.len() * max_len);
        let mut mask = Vec::with_capacity(batch.len() * max_len);
        for seq in batch {
            ids.extend_from_slice(seq);
            ids.resize(ids.len() + max_len - seq.len(), self.pad_id);
            mask.extend(std::iter::repeat_n(1u32, seq.len()));
            mask.resize(mask.len() + max_len - seq.len(), 0);
        }
        let shape = (batch.len(), max_len);
        let input_ids = Tensor::from_vec(ids, shape, &Device::Cpu).map_err(inference)?;
        let mask = Tensor::from_vec(mask, shape, &Device::Cpu).map_err(inference)?;
        let token_type_ids = input_ids.zeros_like().map_err(inference)?;

        let pooled = (|| {
            let hidden = self
                .model
                .forward(&input_ids, &token_type_ids, Some(&mask))?;
            // Masked mean over the sequence: padding contributes nothing.
            let mask = mask.to_dtype(DType::F32)?.unsqueeze(2)?;
            let summed = hidden.broadcast_mul(&mask)?.sum(1)?;
            let mean = summed.broadcast_div(&mask.sum(1)?)?;
            let norm = mean
                .sqr()?
                .sum_keepdim(1)?
                .sqrt()?
                .clamp(1e-12f32, f32::MAX)?;
            mean.broadcast_div(&norm)?.to_vec2::<f32>()
        })()
        .map_err(inference)?;
        Ok(pooled)
    }
}

impl Embedder for MiniLm {
    /// Embeds `texts` in chunks of at most [`batch_size`](MiniLm::batch_size) texts.
    /// Texts are sorted by token count first so that each chunk needs little padding;
    /// results are returned in input order.
    fn embed_batch(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let encoded = texts
            .iter()
            .map(|t| self.token_ids(t))
            .collect::<Result<Vec<_>, _>>()?;
        let mut order: Vec<usize> = (0..encoded.len()).collect();
        order.sort_by_key(|&i| encoded[i].len());

        let mut out = vec![Vec::new(); texts.len()];
        for chunk in order.chunks(self.batch_size) {
            let batch: Vec<&[u32]> = chunk.iter().map(|&i| encoded[i].as_slice()).collect();
            let vectors = self.forward(&batch)?;
            if vectors.len() != chunk.len() {
                return Err(EmbedError::Inference(format!(
                    "model returned {} vectors for {} texts",
                    vectors.len(),
                    chunk.len()
                )));
            }
            for (&i, v) in chunk.iter().zip(vectors) {
                out[i] = v;
            }
        }
        Ok(out)
    }

    fn dimension(&self) -> usize {
        DIMENSION
    }

    fn model_name(&self) -> &str {
        DEFAULT_MODEL_NAME
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
    fn incomplete_dir_is_model_missing() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(CONFIG_FILE), "{}").unwrap();
        std::fs::write(dir.path().join(TOKENIZER_FILE), "{}").unwrap();
        let err = MiniLm::load(dir.path()).unwrap_err();
        assert!(matches!(err, EmbedError::ModelMissing { .. }), "{err:?}");
    }

    #[test]
    fn corrupt_files_are_invalid_model() {
        let dir = tempfile::tempdir().unwrap();
        for f in [WEIGHTS_FILE, TOKENIZER_FILE, CONFIG_FILE] {
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
