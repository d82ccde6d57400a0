//! Tool arguments: any JSON object parsed as each tool's arguments, then the value helpers and
//! the use-case validators on what came through. None may panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mira::mcp::args::{
    self, ArchiveArgs, CausalArgs, ClearArgs, ForgetArgs, LinkArgs, LoadArgs, RecallArgs,
    StatusArgs, StoreArgs, SupersedeArgs, TimelineArgs,
};
use mira::usecases::{supersede, validate};
use mira_core::message::Term;
use serde_json::Value;

fuzz_target!(|data: &[u8]| {
    let Ok(Value::Object(obj)) = serde_json::from_slice::<Value>(data) else {
        return;
    };
    if let Ok(a) = args::parse::<StoreArgs>("mira_store", obj.clone()) {
        if let Some(c) = &a.content {
            let _ = validate::content(c);
        }
        for (term, name) in [(Term::Wing, &a.wing), (Term::Room, &a.room)] {
            if let Some(name) = name {
                let _ = validate::name(term, name);
            }
        }
        if let Some(t) = &a.memory_type {
            let _ = validate::memory_type(t);
        }
        if let Some(id) = &a.supersedes {
            let _ = mira_core::memory::parse_id_ref(id);
        }
    }
    if let Ok(a) = args::parse::<RecallArgs>("mira_recall", obj.clone()) {
        let _ = args::budget(a.budget.as_ref(), 4000);
        let _ = args::string_list("fallback_wings", a.fallback_wings.as_ref());
    }
    let _ = args::parse::<LoadArgs>("mira_load", obj.clone());
    if let Ok(a) = args::parse::<TimelineArgs>("mira_timeline", obj.clone()) {
        let _ = args::integer("limit", a.limit.as_ref(), "1 to 1000");
        let _ = args::flag("include_archived", a.include_archived.as_ref());
    }
    if let Ok(a) = args::parse::<CausalArgs>("mira_causal_chain", obj.clone()) {
        let _ = args::integer("max_depth", a.max_depth.as_ref(), "1 to 10");
        let _ = args::flag("include_consequences", a.include_consequences.as_ref());
    }
    if let Ok(a) = args::parse::<ArchiveArgs>("mira_archive", obj.clone()) {
        let _ = args::string_list("ids", a.ids.as_ref());
        let _ = args::string_list("restore", a.restore.as_ref());
    }
    let _ = args::parse::<ClearArgs>("mira_clear_memory", obj.clone());
    let _ = args::parse::<ForgetArgs>("mira_forget", obj.clone());
    if let Ok(a) = args::parse::<LinkArgs>("mira_link", obj.clone()) {
        for id in [&a.from, &a.to].into_iter().flatten() {
            let _ = mira_core::memory::parse_id_ref(id);
        }
    }
    if let Ok(a) = args::parse::<SupersedeArgs>("mira_supersede", obj.clone()) {
        for id in [a.old, a.new].into_iter().flatten() {
            let _ = mira_core::memory::parse_id_ref(&id);
        }
        let _ = supersede::reason(a.reason.as_deref());
        let _ = args::flag("undo", a.undo.as_ref());
    }
    let _ = args::parse::<StatusArgs>("mira_status", obj);
});
