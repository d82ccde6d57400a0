//! How the model is run: precision, threads, texts per forward pass.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// Numeric precision of the model's matrix multiplications.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Precision {
    /// The model's own f32 weights: the reference vectors (cosine ≥ 0.9999 with the fixture).
    #[default]
    F32,
    /// Weights quantised to int8 per output channel, activations quantised on the fly:
    /// about twice as fast, vectors at cosine ~0.99 of the f32 ones.
    Int8,
}

impl Precision {
    /// Every precision, for listings and error messages.
    pub const ALL: [Precision; 2] = [Precision::F32, Precision::Int8];

    /// The name used in configuration files (`f32`, `int8`).
    pub fn as_str(self) -> &'static str {
        match self {
            Precision::F32 => "f32",
            Precision::Int8 => "int8",
        }
    }

    /// The name of the model run at this precision, recorded with the vectors it computes
    /// (`all-MiniLM-L6-v2`, `all-MiniLM-L6-v2-int8`).
    pub fn model_name(self) -> String {
        match self {
            Precision::F32 => crate::DEFAULT_MODEL_NAME.to_owned(),
            p => format!("{}-{p}", crate::DEFAULT_MODEL_NAME),
        }
    }

    /// The ONNX graph file of this precision in the model directory.
    pub fn graph_file(self) -> &'static str {
        match self {
            Precision::F32 => "model.onnx",
            Precision::Int8 => "model_int8.onnx",
        }
    }
}

impl fmt::Display for Precision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Precision {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Precision::ALL
            .into_iter()
            .find(|p| p.as_str().eq_ignore_ascii_case(s.trim()))
            .ok_or_else(|| format!("unknown precision '{s}': use f32 or int8"))
    }
}

/// Default number of texts per forward pass: on the 2-core machines measured, passes of 4–8
/// short texts cost 10–20% less CPU per text than passes of 32 (their activations stay in the
/// cache), and more passes cost little.
pub const DEFAULT_BATCH_SIZE: usize = 8;

/// How [`MiniLm`](crate::MiniLm) runs the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ModelOptions {
    /// Which graph to run.
    pub precision: Precision,
    /// Model threads, each running its own forward passes; 0: one per core.
    pub threads: usize,
    /// Most texts per forward pass (at least 1).
    pub batch_size: usize,
}

impl Default for ModelOptions {
    fn default() -> Self {
        ModelOptions {
            precision: Precision::F32,
            threads: 0,
            batch_size: DEFAULT_BATCH_SIZE,
        }
    }
}

impl ModelOptions {
    /// The number of model threads: `threads`, or the number of cores when 0.
    pub(crate) fn effective_threads(&self) -> usize {
        if self.threads > 0 {
            return self.threads;
        }
        std::thread::available_parallelism().map_or(1, |n| n.get())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn precision_names_round_trip() {
        for p in Precision::ALL {
            assert_eq!(p.as_str().parse::<Precision>().unwrap(), p);
            assert_eq!(p.to_string(), p.as_str());
        }
        assert_eq!(" INT8 ".parse::<Precision>().unwrap(), Precision::Int8);
        let err = "fp16".parse::<Precision>().unwrap_err();
        assert!(err.contains("f32 or int8"), "{err}");
        assert_ne!(Precision::F32.graph_file(), Precision::Int8.graph_file());
    }

    #[test]
    fn zero_threads_means_every_core() {
        let o = ModelOptions::default();
        assert!(o.effective_threads() >= 1);
        let o = ModelOptions { threads: 3, ..o };
        assert_eq!(o.effective_threads(), 3);
    }
}
