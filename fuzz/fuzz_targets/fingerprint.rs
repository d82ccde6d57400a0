//! Fingerprint (T1) and tag extraction on any text, for every memory type.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mira_core::memory::MemoryType;
use mira_core::{fingerprint, tags};

fuzz_target!(|data: &[u8]| {
    let Some((&first, rest)) = data.split_first() else {
        return;
    };
    let Ok(text) = std::str::from_utf8(rest) else {
        return;
    };
    let ty = MemoryType::ALL[first as usize % MemoryType::ALL.len()];
    let fp = fingerprint::extract(text, ty, 1 + (first as usize >> 4));
    let _ = fp.fact_count();
    let _ = tags::extract_tags(text, &fp);
});
