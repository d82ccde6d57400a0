//! ONNX Runtime: the library loaded once per process, one session per model.

use std::path::Path;
use std::sync::OnceLock;

use ort::environment::Environment;
use ort::session::builder::{GraphOptimizationLevel, PrepackedWeights};
use ort::session::Session;
use ort::value::Tensor;

use crate::{EmbedError, DIMENSION};

/// Name of the ONNX Runtime library in the model directory, the platform's name for it
/// (scripts/fetch-model.sh copies it there from the pinned onnxruntime wheel under this name).
pub const LIBRARY_FILE: &str = if cfg!(target_os = "macos") {
    "libonnxruntime.dylib"
} else {
    "libonnxruntime.so"
};

/// The environment variable ONNX Runtime reads when it loads: `1` turns its telemetry off.
pub const TELEMETRY_VARIABLE: &str = "ORT_DISABLE_TELEMETRY";

/// Turns ONNX Runtime's telemetry off for this process, before the library is loaded: without
/// it the library records a device id and usage events under
/// `~/.cache/Microsoft/DeveloperTools/.onnxruntime/` and may try to send them (the API's
/// `DisableTelemetryEvents`, also called, stops none of that). Sets
/// [`TELEMETRY_VARIABLE`]`=1` unless it already is.
///
/// Call it first thing in `main`, before any thread starts: changing the environment while
/// another thread reads it is undefined behaviour in the C library. The model loader calls it
/// too, for programs that did not; it then changes nothing when `main` did.
pub fn disable_telemetry() {
    if std::env::var_os(TELEMETRY_VARIABLE).as_deref() != Some(std::ffi::OsStr::new("1")) {
        std::env::set_var(TELEMETRY_VARIABLE, "1");
    }
}

/// The process's ONNX Runtime environment: the library can be loaded only once, and `ort`
/// allows one environment per process.
static ENVIRONMENT: OnceLock<Result<Environment, String>> = OnceLock::new();

fn environment(library: &Path) -> Result<&'static Environment, EmbedError> {
    ENVIRONMENT
        .get_or_init(|| {
            disable_telemetry();
            ort::init_from(library)
                .map_err(|e| e.to_string())?
                .with_name("mira")
                // A second lock: the variable already kept the library from starting it.
                .with_telemetry(false)
                .build()
                .map_err(|e| e.to_string())
        })
        .as_ref()
        .map_err(|reason| EmbedError::InvalidModel {
            path: library.to_path_buf(),
            reason: format!("cannot load ONNX Runtime: {reason}"),
        })
}

/// Weights prepared once for ONNX Runtime's kernels, shared by the sessions of one model.
pub(crate) fn shared_weights(library: &Path) -> Result<PrepackedWeights, EmbedError> {
    environment(library)?;
    Ok(PrepackedWeights::new())
}

/// One session of a graph, running each forward pass on the calling thread. `run` needs
/// `&mut self`: ONNX Runtime's `Run` is not safe to call from several threads at once, so
/// each model thread owns a session; sessions of one model share `weights`.
pub(crate) struct Runtime {
    session: Session,
}

impl Runtime {
    /// Loads `graph` with the library at `library`.
    pub(crate) fn load(
        library: &Path,
        graph: &Path,
        weights: &PrepackedWeights,
    ) -> Result<Self, EmbedError> {
        let env = environment(library)?;
        let invalid = |e: ort::Error| EmbedError::InvalidModel {
            path: graph.to_path_buf(),
            reason: e.to_string(),
        };
        // One thread per session: the model threads run passes side by side instead of
        // splitting each operator (and waiting for each other after it).
        let session = Session::builder(env)
            .and_then(|b| Ok(b.with_optimization_level(GraphOptimizationLevel::All)?))
            .and_then(|b| Ok(b.with_intra_threads(1)?))
            .and_then(|b| Ok(b.with_inter_threads(1)?))
            .and_then(|b| Ok(b.with_prepacked_weights(weights)?))
            .and_then(|mut b| b.commit_from_file(graph))
            .map_err(invalid)?;
        let names = |list: &[ort::value::Outlet]| -> Vec<String> {
            list.iter().map(|o| o.name().to_owned()).collect()
        };
        let (inputs, outputs) = (names(session.inputs()), names(session.outputs()));
        if inputs != ["input_ids", "attention_mask"] || outputs != ["embeddings"] {
            return Err(EmbedError::InvalidModel {
                path: graph.to_path_buf(),
                reason: format!(
                    "expected inputs [input_ids, attention_mask] and output [embeddings], found {inputs:?} and {outputs:?}"
                ),
            });
        }
        Ok(Runtime { session })
    }

    /// Embeds one batch of token sequences (each `[CLS] … [SEP]`), padded to the longest:
    /// one unit vector per sequence, in order.
    pub(crate) fn forward(&mut self, batch: &[&[u32]]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let longest = batch.iter().map(|s| s.len()).max().unwrap_or(0);
        if longest == 0 || batch.iter().any(|s| s.is_empty()) {
            return Err(EmbedError::Tokenize(
                "a text produced no tokens (tokenizer.json lacks its [CLS]/[SEP] template?)".into(),
            ));
        }
        let mut ids = Vec::with_capacity(batch.len() * longest);
        let mut mask = Vec::with_capacity(batch.len() * longest);
        for seq in batch {
            ids.extend(seq.iter().map(|&t| i64::from(t)));
            ids.resize(ids.len() + longest - seq.len(), 0);
            mask.extend(std::iter::repeat_n(1i64, seq.len()));
            mask.resize(mask.len() + longest - seq.len(), 0);
        }
        let shape = [batch.len(), longest];
        let failed = |e: ort::Error| EmbedError::Inference(e.to_string());
        let ids = Tensor::from_array((shape, ids)).map_err(failed)?;
        let mask = Tensor::from_array((shape, mask)).map_err(failed)?;
        let outputs = self
            .session
            .run(ort::inputs!["input_ids" => ids, "attention_mask" => mask])
            .map_err(failed)?;
        let (out_shape, data) = outputs["embeddings"]
            .try_extract_tensor::<f32>()
            .map_err(failed)?;
        if out_shape.len() != 2
            || out_shape[0] as usize != batch.len()
            || out_shape[1] as usize != DIMENSION
        {
            return Err(EmbedError::Inference(format!(
                "the model returned shape {out_shape:?} for {} texts",
                batch.len()
            )));
        }
        Ok(data.chunks_exact(DIMENSION).map(<[f32]>::to_vec).collect())
    }
}
