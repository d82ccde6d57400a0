//! One line of a `mira export` file read and checked as `mira import` does: any bytes give a
//! checked record or an error message, never a panic, and a record that passes is consistent
//! (non-blank content, a canonical fingerprint whose fact count is the stored one).
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
    assert!(!parsed.record.content.trim().is_empty());
    assert_eq!(parsed.record.fact_count, {
        let fp: mira_core::fingerprint::Fingerprint =
            serde_json::from_str(&parsed.record.fingerprint).expect("canonical fingerprint");
        fp.fact_count()
    });
});
