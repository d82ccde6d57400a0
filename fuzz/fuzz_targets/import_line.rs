//! One line of a `mira export` file read and checked as `mira import` does: any bytes give a
//! checked memory or an error message, never a panic, and a memory that passes is consistent
//! (non-blank content, a fingerprint that reads back from its canonical JSON unchanged).
#![no_main]

use libfuzzer_sys::fuzz_target;
use mira::usecases::transfer::line::Line;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(line) = Line::parse(text) else {
        return;
    };
    let Ok(parsed) = line.check(1_700_000_000_000, 2) else {
        return;
    };
    let m = &parsed.memory.memory;
    assert!(!m.content.trim().is_empty());
    let back: mira_core::memory::Fingerprint =
        serde_json::from_str(&m.fingerprint.to_json()).expect("canonical fingerprint");
    assert_eq!(back, m.fingerprint);
});
