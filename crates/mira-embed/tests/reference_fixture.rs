//! Checks `MiniLm` against reference embeddings computed by an independent float64
//! forward pass (`shared/fixtures/minilm_reference.json`): the f32 graph matches them, the
//! int8 graph stays close, and batching (within a call and across concurrent calls) does not
//! change a vector.
//!
//! The model is loaded from `resolve_model_dir(None)`; the test fails (it does not
//! skip) when the model is missing: install it with `scripts/fetch-model.sh`. The
//! fixture is read from the project's data folder: `$MIRA_SHARED_DIR/fixtures/` when that
//! variable is set, else `../shared/fixtures/` beside the checkout (`mira_testkit::shared_path`).

use std::path::PathBuf;
use std::sync::OnceLock;

use mira_embed::{
    cosine, resolve_model_dir, EmbedError, Embedder, MiniLm, ModelOptions, Precision, DIMENSION,
    LIBRARY_FILE, MAX_TOKENS,
};
use serde::Deserialize;

#[derive(Deserialize)]
struct Fixture {
    max_tokens: usize,
    cases: Vec<Case>,
}

#[derive(Deserialize)]
struct Case {
    text: String,
    token_ids: Vec<u32>,
    embedding: Vec<f32>,
}

fn fixture_path() -> PathBuf {
    mira_testkit::shared_path("fixtures/minilm_reference.json")
}

fn fixture() -> &'static Fixture {
    static FIXTURE: OnceLock<Fixture> = OnceLock::new();
    FIXTURE.get_or_init(|| {
        let path = fixture_path();
        let text = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("cannot read fixture {}: {e}", path.display()));
        serde_json::from_str(&text)
            .unwrap_or_else(|e| panic!("cannot parse fixture {}: {e}", path.display()))
    })
}

fn model() -> &'static MiniLm {
    static MODEL: OnceLock<MiniLm> = OnceLock::new();
    MODEL.get_or_init(|| MiniLm::load(&resolve_model_dir(None)).unwrap_or_else(|e| panic!("{e}")))
}

fn int8_model() -> &'static MiniLm {
    static MODEL: OnceLock<MiniLm> = OnceLock::new();
    MODEL.get_or_init(|| {
        let options = ModelOptions {
            precision: Precision::Int8,
            ..ModelOptions::default()
        };
        MiniLm::load_with(&resolve_model_dir(None), &options).unwrap_or_else(|e| panic!("{e}"))
    })
}

#[test]
fn token_ids_match_reference() {
    let fx = fixture();
    assert_eq!(fx.max_tokens, MAX_TOKENS);
    assert!(
        fx.cases.iter().any(|c| c.token_ids.len() == MAX_TOKENS),
        "fixture should exercise truncation"
    );
    for case in &fx.cases {
        let ids = model().token_ids(&case.text).unwrap();
        assert_eq!(ids, case.token_ids, "token ids of {:?}", case.text);
    }
}

#[test]
fn embeddings_match_reference() {
    let fx = fixture();
    let mut min = f64::INFINITY;
    for case in &fx.cases {
        let v = model().embed(&case.text).unwrap();
        assert_eq!(v.len(), DIMENSION);
        let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        assert!((norm - 1.0).abs() < 1e-4, "norm {norm} for {:?}", case.text);
        let c = cosine64(&v, &case.embedding);
        println!("cosine {c:.9} for {:?}", truncate(&case.text));
        assert!(c >= 0.9999, "cosine {c} < 0.9999 for {:?}", case.text);
        min = min.min(c);
    }
    println!(
        "minimum cosine over {} cases: {min:.9} (1 - min = {:.2e})",
        fx.cases.len(),
        1.0 - min
    );
}

#[test]
fn batching_matches_single_texts() {
    let fx = fixture();
    let texts: Vec<&str> = fx.cases.iter().map(|c| c.text.as_str()).collect();
    let singles: Vec<Vec<f32>> = texts.iter().map(|t| model().embed(t).unwrap()).collect();

    // One padded batch with every case, and small batches (batch size 3 splits the
    // length-sorted texts into several chunks).
    let batched = model().embed_batch(&texts).unwrap();
    assert_eq!(batched.len(), texts.len());
    let mut min = f64::INFINITY;
    for ((text, single), batch) in texts.iter().zip(&singles).zip(&batched) {
        let c = cosine64(single, batch);
        assert!(c >= 0.99999, "batched cosine {c} for {text:?}");
        min = min.min(c);
    }
    println!(
        "minimum batch-vs-single cosine: {min:.9} (1 - min = {:.2e})",
        1.0 - min
    );

    let options = ModelOptions {
        batch_size: 3,
        ..ModelOptions::default()
    };
    let small = MiniLm::load_with(model().dir(), &options).unwrap();
    let chunked = small.embed_batch(&texts).unwrap();
    for ((text, single), chunk) in texts.iter().zip(&singles).zip(&chunked) {
        let c = cosine64(single, chunk);
        assert!(c >= 0.99999, "chunked cosine {c} for {text:?}");
    }
    assert!(model().embed_batch(&[]).unwrap().is_empty());
}

#[test]
fn empty_text_has_an_embedding() {
    let v = model().embed("").unwrap();
    assert_eq!(model().token_ids("").unwrap(), vec![101, 102]);
    assert!(v.iter().any(|x| *x != 0.0));
}

#[test]
fn related_texts_are_closer() {
    let m = model();
    let q = m.embed("Which database did we pick?").unwrap();
    let near = m.embed("We decided to migrate to PostgreSQL.").unwrap();
    let far = m.embed("The user likes dark mode in the editor.").unwrap();
    assert!(cosine(&q, &near) > cosine(&q, &far));
}

#[test]
fn odd_inputs_do_not_panic() {
    let long = "word ".repeat(5000);
    let texts = [
        "\u{0}\u{1}\u{7f}",
        "🦀🦀🦀 emoji only",
        "日本語のテキスト",
        "   \n\t  ",
        long.as_str(),
    ];
    for v in model().embed_batch(&texts).unwrap() {
        assert_eq!(v.len(), DIMENSION);
        assert!(v.iter().all(|x| x.is_finite()));
    }
    assert_eq!(model().token_ids(&long).unwrap().len(), MAX_TOKENS);
}

#[test]
fn int8_stays_close_to_the_reference() {
    let fx = fixture();
    assert_eq!(int8_model().model_name(), "all-MiniLM-L6-v2-int8");
    assert_eq!(model().model_name(), "all-MiniLM-L6-v2");
    let texts: Vec<&str> = fx.cases.iter().map(|c| c.text.as_str()).collect();
    let vectors = int8_model().embed_batch(&texts).unwrap();
    let cosines: Vec<f64> = vectors
        .iter()
        .zip(&fx.cases)
        .map(|(v, c)| cosine64(v, &c.embedding))
        .collect();
    let mean = cosines.iter().sum::<f64>() / cosines.len() as f64;
    let min = cosines.iter().copied().fold(f64::INFINITY, f64::min);
    println!("int8 against the reference: mean cosine {mean:.4}, minimum {min:.4}");
    assert!(mean >= 0.98 && min >= 0.95, "mean {mean}, min {min}");
    assert!(
        cosines.iter().any(|&c| c < 0.9999),
        "int8 should not be the f32 graph"
    );
}

#[test]
fn concurrent_callers_get_their_own_vectors() {
    let fx = fixture();
    let m = model();
    let expected: Vec<Vec<f32>> = fx.cases.iter().map(|c| m.embed(&c.text).unwrap()).collect();
    // Eight threads submit at once, so the model thread batches texts of several callers
    // (and one caller's batch of every case) into shared passes.
    std::thread::scope(|s| {
        for t in 0..8 {
            let expected = &expected;
            s.spawn(move || {
                for round in 0..3 {
                    let i = (t + round) % fx.cases.len();
                    let v = m.embed(&fx.cases[i].text).unwrap();
                    assert!(cosine64(&v, &expected[i]) > 0.99999, "case {i}");
                }
                if t == 0 {
                    let texts: Vec<&str> = fx.cases.iter().map(|c| c.text.as_str()).collect();
                    for (v, e) in m.embed_batch(&texts).unwrap().iter().zip(expected) {
                        assert!(cosine64(v, e) > 0.99999);
                    }
                }
            });
        }
    });
}

#[test]
fn corrupt_graph_or_library_is_reported() {
    let src = resolve_model_dir(None);
    let dir = tempfile::tempdir().unwrap();
    for f in ["tokenizer.json", "config.json", LIBRARY_FILE] {
        std::fs::copy(src.join(f), dir.path().join(f))
            .unwrap_or_else(|e| panic!("{e}: {}", MiniLm::load(&src).unwrap_err()));
    }
    // Not an ONNX file at all, then a truncated one.
    let graph = dir.path().join("model.onnx");
    std::fs::write(&graph, b"not a model").unwrap();
    assert_invalid(MiniLm::load(dir.path()).unwrap_err(), "model.onnx");

    let full = std::fs::read(src.join("model.onnx")).unwrap();
    std::fs::write(&graph, &full[..full.len() / 2]).unwrap();
    assert_invalid(MiniLm::load(dir.path()).unwrap_err(), "model.onnx");

    // The same directory with the whole graph loads.
    std::fs::write(&graph, &full).unwrap();
    assert!(MiniLm::load(dir.path()).is_ok());
}

#[allow(clippy::print_stdout, reason = "the message, shown with --nocapture")]
fn assert_invalid(err: EmbedError, file: &str) {
    match &err {
        EmbedError::InvalidModel { path, .. } => assert!(path.ends_with(file), "{err}"),
        other => panic!("expected InvalidModel, got {other:?}"),
    }
    println!("{err}");
}

/// Cosine in f64 (the crate's `cosine` returns f32, too coarse to report 1 - cos).
fn cosine64(a: &[f32], b: &[f32]) -> f64 {
    assert_eq!(a.len(), b.len());
    let dot: f64 = a
        .iter()
        .zip(b)
        .map(|(&x, &y)| f64::from(x) * f64::from(y))
        .sum();
    let na: f64 = a.iter().map(|&x| f64::from(x).powi(2)).sum::<f64>().sqrt();
    let nb: f64 = b.iter().map(|&x| f64::from(x).powi(2)).sum::<f64>().sqrt();
    dot / (na * nb)
}

fn truncate(text: &str) -> String {
    text.chars().take(40).collect()
}
