//! Rendering a memory made of any text in every mode, and the context block around it.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mira_core::memory::{Memory, MemoryType};
use mira_core::render::{self, Frame, Placed, RenderMode};
use mira_core::{fingerprint, sanitize, tokens};

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
    let (header, _) = render::section(RenderMode::Header, &memory);
    assert!(!header.trim_end_matches('\n').contains('\n'), "{header:?}");
    let _ = render::fingerprint_text(&memory);
    let costs = render::mode_costs(&memory);
    let sections: Vec<Placed> = [
        RenderMode::Header,
        RenderMode::Fingerprint,
        RenderMode::Verbatim,
    ]
    .into_iter()
    .map(|mode| {
        let (text, cost) = render::section(mode, &memory);
        Placed {
            at: memory.created_at,
            text,
            cost,
        }
    })
    .collect();
    assert_eq!(sections[0].cost, costs.header);
    let notices = [content.to_owned()];
    let frame = Frame {
        query,
        budget: 4000,
        wing: Some(query),
        fallback: false,
        instructions: Some(render::Surface::Mcp),
        notices: &notices,
    };
    let (block, _) = render::context_block(&frame, &sections);
    assert!(
        block.starts_with("=== MIRA CONTEXT · 3 memories · "),
        "{block:?}"
    );
    let _ = sanitize::sanitize(content);
});
