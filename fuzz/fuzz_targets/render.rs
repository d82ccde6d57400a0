//! Rendering a memory made of any text in every mode, and the context block around it.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mira_core::allocate::RenderMode;
use mira_core::memory::{Memory, MemoryType};
use mira_core::{fingerprint, render, tokens};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let (query, content) = text.split_once('\u{1}').unwrap_or(("query", text));
    let ty = MemoryType::ALL[content.len() % MemoryType::ALL.len()];
    let memory = Memory {
        id: uuid::Uuid::from_u128(7),
        wing: query.chars().take(64).collect(),
        room: "room".into(),
        memory_type: ty,
        token_count: tokens::count(content) as u32,
        content: content.to_owned(),
        fingerprint: fingerprint::extract(content, ty, 2),
        created_at: chrono::DateTime::from_timestamp(1_700_000_000, 0).unwrap_or_default(),
        session_id: None,
        archived: false,
        superseded_by: None,
    };
    let header = render::header_text(&memory);
    assert!(!header.contains('\n'), "{header:?}");
    let _ = render::fingerprint_text(&memory);
    let _ = render::mode_costs(&memory);
    let sections: Vec<String> = [
        RenderMode::Header,
        RenderMode::Fingerprint,
        RenderMode::Verbatim,
    ]
    .into_iter()
    .enumerate()
    .map(|(i, mode)| render::section(i + 1, mode, &memory).0)
    .collect();
    let block = render::context_block(query, 4000, Some(query), &sections, 10);
    assert!(block.starts_with("=== MIRA CONTEXT ===\n"));
    let _ = render::sanitize(content);
});
