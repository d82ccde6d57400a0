//! Secret redaction on any text: idempotent, and the count matches the markers it added.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mira_core::redact::redact;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let once = redact(text);
    let twice = redact(&once.text);
    assert_eq!(twice.text, once.text);
    assert!(twice.is_clean());
    let before = text.matches("[REDACTED:").count();
    let after = once.text.matches("[REDACTED:").count();
    assert!(
        after <= before + once.total(),
        "{text:?} -> {:?}",
        once.text
    );
});
