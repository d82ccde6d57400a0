//! Causal cue detection on any text, and linking against candidates decoded from the input:
//! links never exceed `max_links`, point at candidates, and have a confidence in [0, 1].
#![no_main]

use libfuzzer_sys::fuzz_target;
use mira_core::causal::{self, CausalCandidate, CausalParams};

fuzz_target!(|data: &[u8]| {
    let n = data.first().copied().unwrap_or(0) as usize % 8;
    let Some(head) = data.get(1..1 + n * 6) else {
        return;
    };
    let Ok(text) = std::str::from_utf8(&data[1 + n * 6..]) else {
        return;
    };
    let candidates: Vec<CausalCandidate> = head
        .chunks(6)
        .enumerate()
        .map(|(i, c)| CausalCandidate {
            id: uuid::Uuid::from_u128(i as u128 + 1),
            similarity: f32::from_le_bytes([c[0], c[1], c[2], c[3]]),
            age_days: f64::from(c[4]) * 3.0,
            shared_entities: usize::from(c[5] % 4),
        })
        .collect();
    let cues = causal::detect_cues(text);
    let params = CausalParams::default();
    let links = causal::link(&cues, &candidates, &params);
    assert!(links.len() <= params.max_links);
    for l in &links {
        assert!(candidates.iter().any(|c| c.id == l.target));
        assert!((0.0..=1.0).contains(&l.confidence), "{}", l.confidence);
    }
});
