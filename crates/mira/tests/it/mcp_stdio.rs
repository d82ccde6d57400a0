//! MCP over stdio, end to end: the real binary, JSON-RPC over its stdin/stdout. The tool
//! sessions run on each backend (SQLite, and PostgreSQL when a test server can be had).

use crate::common::Db;
use crate::mcp_common::*;
use serde_json::{json, Value};
use std::collections::HashSet;

const DECISION: &str =
    "We decided to use PostgreSQL for the main database because we need ACID transactions.";
const FACT: &str = "The database connection pool max is 100 connections.";

fn tool<'a>(tools: &'a [Value], name: &str) -> &'a Value {
    tools
        .iter()
        .find(|t| t["name"] == name)
        .unwrap_or_else(|| panic!("no tool {name}"))
}

fn check_tool_list(tools: &[Value]) {
    let names: HashSet<&str> = tools.iter().filter_map(|t| t["name"].as_str()).collect();
    for n in ["mira_store", "mira_recall", "mira_load", "mira_status"] {
        assert!(names.contains(n), "{n} missing from {names:?}");
    }
    for t in tools {
        let name = t["name"].as_str().unwrap_or_default();
        assert!(name.starts_with("mira_"), "{name}");
        assert!(
            t["description"].as_str().is_some_and(|d| d.len() > 80),
            "{name}: short description"
        );
        let schema = &t["inputSchema"];
        assert_eq!(schema["type"], "object", "{name}");
        assert_eq!(schema["additionalProperties"], false, "{name}");
        for (arg, p) in schema["properties"]
            .as_object()
            .unwrap_or_else(|| panic!("{name}: no properties"))
        {
            assert!(
                p["description"].as_str().is_some_and(|d| d.len() > 15),
                "{name}.{arg}: no description"
            );
        }
        let a = &t["annotations"];
        let read_only = matches!(
            name,
            "mira_recall" | "mira_load" | "mira_status" | "mira_timeline" | "mira_causal_chain"
        );
        assert_eq!(a["readOnlyHint"], json!(read_only), "{name}: {a}");
        if matches!(
            name,
            "mira_archive" | "mira_clear_memory" | "mira_forget" | "mira_unlink"
        ) {
            assert_eq!(a["destructiveHint"], json!(true), "{name}: {a}");
        }
        assert_eq!(a["openWorldHint"], json!(false), "{name}: {a}");
    }
    let required = |n: &str| tool(tools, n)["inputSchema"]["required"].clone();
    assert_eq!(required("mira_store"), json!(["content", "wing"]));
    assert_eq!(required("mira_recall"), json!(["query"]));
    assert_eq!(required("mira_load"), json!(["id"]));
    assert_eq!(
        tool(tools, "mira_store")["annotations"]["destructiveHint"],
        json!(false)
    );
    let types = &tool(tools, "mira_store")["inputSchema"]["properties"]["type"]["enum"];
    assert_eq!(
        types,
        &json!([
            "decision",
            "fact",
            "preference",
            "session_note",
            "debug_log"
        ])
    );
    let budget = &tool(tools, "mira_recall")["inputSchema"]["properties"]["budget"];
    assert_eq!(
        (budget["minimum"].as_i64(), budget["maximum"].as_i64()),
        (Some(1), Some(100_000))
    );
}

/// Asserts an `isError` result whose text contains every one of `parts`.
/// `mira serve` on `db`.
fn serve(db: &Db) -> StdioClient {
    let mut cmd = mira_command(db.dir.path(), &["serve"]);
    cmd.envs(db.env());
    StdioClient::spawn_command(cmd)
}

fn assert_tool_error(result: &Value, parts: &[&str]) {
    assert!(is_error(result), "expected a tool error, got {result}");
    let t = text(result);
    for p in parts {
        assert!(t.contains(p), "error text lacks {p:?}: {t}");
    }
}

backend_test! {
    fn stdio_session_covers_every_tool_and_error(db) {
        let _serial = serial();
        every_tool_and_error(db);
    }
}

/// One session calling every tool, with their errors.
fn every_tool_and_error(db: &Db) {
    let mut c = serve(db);

    // Handshake.
    let init = c.initialize();
    let version = init["protocolVersion"].as_str().expect("protocolVersion");
    assert!(version >= "2025-06-18", "{version}");
    assert_eq!(init["serverInfo"]["name"], "mira");
    assert_eq!(init["serverInfo"]["version"], env!("CARGO_PKG_VERSION"));
    assert!(init["capabilities"]["tools"].is_object(), "{init}");
    let instructions = init["instructions"].as_str().expect("instructions");
    assert!(
        instructions.contains("mira_recall") && instructions.contains("mira_store"),
        "{instructions}"
    );

    // Tool list.
    let list = c.request("tools/list", json!({}));
    let tools = list["result"]["tools"].as_array().expect("tools").clone();
    check_tool_list(&tools);

    // Store → recall → load → status.
    let a = c.call_tool("mira_store", json!({"content": DECISION, "wing": "infra"}));
    assert!(!is_error(&a), "{a}");
    let id_a = stored_id(&a);
    assert_eq!(a["structuredContent"]["id"], json!(id_a));
    assert_eq!(a["structuredContent"]["wing"], "infra");
    let b = c.call_tool(
        "mira_store",
        json!({"content": FACT, "wing": "infra", "type": "fact", "room": null}),
    );
    assert!(!is_error(&b), "{b}");
    assert_eq!(b["structuredContent"]["memory_type"], "fact");
    assert_eq!(b["structuredContent"]["room"], "facts");
    let again = c.call_tool(
        "mira_store",
        json!({"content": FACT, "wing": "infra", "metrics": "{\"confidence\":0.9}"}),
    );
    assert!(
        text(&again).starts_with("Duplicate (already stored): "),
        "{again}"
    );

    let r = c.call_tool(
        "mira_recall",
        json!({"query": "which database do we use?", "wing": "infra"}),
    );
    assert!(!is_error(&r), "{r}");
    let block = text(&r);
    assert!(
        block.starts_with("=== MIRA CONTEXT · 2 memories · ")
            && block
                .contains("/4000 tokens · wing infra ===\nQuery: which database do we use?\n\n"),
        "{block}"
    );
    assert!(block.contains(&format!("\n[{}] ", &id_a[..8])), "{block}");
    assert_eq!(r["structuredContent"]["budget"], 4000);
    assert!(
        r["structuredContent"]["items"]
            .as_array()
            .is_some_and(|i| !i.is_empty()),
        "{r}"
    );

    let r = c.call_tool(
        "mira_recall",
        json!({"query": "database", "budget": "1500"}),
    );
    assert!(text(&r).contains("/1500 tokens"), "{r}");
    let r = c.call_tool("mira_recall", json!({"query": "database", "budget": 800.7}));
    assert!(text(&r).contains("/800 tokens"), "{r}");
    let r = c.call_tool(
        "mira_recall",
        json!({"query": "database", "wing": "nowhere", "fallback_wings": " empty2 , infra,"}),
    );
    assert!(
        text(&r).contains(" · wing infra (fallback) ===") && text(&r).contains(&id_a[..8]),
        "{r}"
    );
    assert_eq!(r["structuredContent"]["fallback_wing"], "infra");
    let r = c.call_tool(
        "mira_recall",
        json!({"query": "database", "wing": "nowhere"}),
    );
    assert!(
        !is_error(&r) && text(&r).starts_with("=== MIRA CONTEXT · 0 memories · "),
        "{r}"
    );
    assert!(
        r["content"][1]["text"]
            .as_str()
            .is_some_and(|t| t.contains("Existing wings: infra")),
        "{r}"
    );

    for form in [
        format!("T0:{id_a}"),
        id_a.clone(),
        format!("  ID: T0:{id_a} "),
    ] {
        let l = c.call_tool("mira_load", json!({"id": form}));
        assert!(!is_error(&l), "{l}");
        assert!(
            text(&l).starts_with(&format!(
                "[ID: {} | Wing: infra |",
                &id_a.replace('-', "")[..8]
            )),
            "{l}"
        );
        assert!(text(&l).contains(DECISION), "{l}");
        assert_eq!(l["structuredContent"]["content"], DECISION);
    }

    let s = c.call_tool("mira_status", json!({}));
    assert!(text(&s).starts_with("MIRA System Status:"), "{s}");
    assert_eq!(s["structuredContent"]["memories"], 2);
    assert_eq!(s["structuredContent"]["by_wing"]["infra"], 2);
    let s = c.request("tools/call", json!({"name": "mira_status"}));
    assert!(!is_error(&s["result"]), "status without arguments: {s}");

    // Invalid arguments: tool errors that say how to fix the call.
    let e = c.call_tool("mira_store", json!({"wing": "infra"}));
    assert_tool_error(&e, &["needs `content`"]);
    let e = c.call_tool("mira_store", json!({"content": "Something to keep."}));
    assert_tool_error(&e, &["needs `wing`", "Existing wings: infra"]);
    let e = c.call_tool(
        "mira_store",
        json!({"content": "Something to keep.", "wing": "bad wing"}),
    );
    assert_tool_error(&e, &["wing 'bad wing' is invalid", "Existing wings: infra"]);
    let e = c.call_tool(
        "mira_store",
        json!({"content": "Something to keep.", "wing": "infra", "type": "bogus"}),
    );
    assert_tool_error(&e, &["decision, fact, preference, session_note, debug_log"]);
    let e = c.call_tool(
        "mira_store",
        json!({"content": "Something to keep.", "wing": "infra", "colour": "red"}),
    );
    assert_tool_error(&e, &["unknown field `colour`", "`content`"]);
    let e = c.call_tool("mira_store", json!({"content": 5, "wing": "infra"}));
    assert_tool_error(&e, &["argument `content`", "expected a string"]);
    let e = c.call_tool(
        "mira_store",
        json!({"content": "x".repeat(70_000), "wing": "infra"}),
    );
    assert_tool_error(&e, &["64 KiB"]);
    let e = c.call_tool(
        "mira_store",
        json!({"content": "Something.", "wing": "infra", "supersedes": "T0:abc"}),
    );
    assert_tool_error(&e, &["invalid ID 'T0:abc'"]);
    let e = c.call_tool("mira_recall", json!({"query": "database", "budget": 0}));
    assert_tool_error(&e, &["budget 0 is out of range", "1 to 100000"]);
    let e = c.call_tool("mira_recall", json!({"query": "database", "budget": "abc"}));
    assert_tool_error(&e, &["budget 'abc' is not a number", "1 to 100000"]);
    let e = c.call_tool(
        "mira_recall",
        json!({"query": "database", "budget": 200_000}),
    );
    assert_tool_error(&e, &["out of range", "1 to 100000"]);
    let e = c.call_tool("mira_recall", json!({"budget": 100}));
    assert_tool_error(&e, &["needs `query`"]);
    let e = c.call_tool("mira_recall", json!({"query": "   "}));
    assert_tool_error(&e, &["query is empty"]);
    let e = c.call_tool("mira_recall", json!({"query": "q".repeat(10_001)}));
    assert_tool_error(&e, &["10000"]);
    let e = c.call_tool("mira_recall", json!({"query": "database", "wing": "a/b"}));
    assert_tool_error(&e, &["wing 'a/b' is invalid", "Existing wings: infra"]);
    let e = c.call_tool("mira_load", json!({"id": "T0:abc"}));
    assert_tool_error(&e, &["invalid ID 'T0:abc'", "mira_recall"]);
    let e = c.call_tool("mira_load", json!({"id": uuid::Uuid::new_v4().to_string()}));
    assert_tool_error(&e, &["no memory has id", "mira_recall"]);
    let e = c.call_tool("mira_load", json!({}));
    assert_tool_error(&e, &["needs `id`"]);
    let e = c.call_tool("mira_status", json!({"verbose": true}));
    assert_tool_error(&e, &["unknown field `verbose`"]);

    // Protocol errors; the server keeps serving after each.
    let unknown = c.request("tools/call", json!({"name": "mira_nope", "arguments": {}}));
    assert_eq!(unknown["error"]["code"], -32602, "{unknown}");
    assert!(
        unknown["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("unknown tool: mira_nope") && m.contains("mira_recall")),
        "{unknown}"
    );
    c.send_raw("{not json");
    let (_, parse) = c.wait_for("parse error", |v| v["error"]["code"] == -32700);
    assert!(parse["id"].is_null(), "{parse}");
    assert!(c.request("ping", json!({}))["result"].is_object());
    c.send_raw(r#"{"jsonrpc":"2.0","id":"x1","params":{}}"#);
    let (_, invalid) = c.wait_for("invalid request", |v| v["id"] == "x1");
    assert_eq!(invalid["error"]["code"], -32600, "{invalid}");
    let deep = format!("{}1{}", "[".repeat(500), "]".repeat(500));
    c.send_raw(&format!(r#"{{"jsonrpc":"2.0","id":77,"method":"tools/call","params":{{"name":"mira_store","arguments":{{"content":{deep},"wing":"infra"}}}}}}"#));
    let (_, deep_err) = c.wait_for("error for a deeply nested frame", |v| {
        v.get("error").is_some() && (v["id"].is_null() || v["id"] == 77)
    });
    assert!(
        deep_err["error"]["code"]
            .as_i64()
            .is_some_and(|code| code <= -32600),
        "{deep_err}"
    );
    c.send_raw(&format!(
        r#"{{"jsonrpc":"2.0","id":78,"method":"ping","params":{{"pad":"{}"}}}}"#,
        "p".repeat(5 * 1024 * 1024)
    ));
    let (_, big) = c.wait_for("error for an oversized frame", |v| {
        v["error"]["code"] == -32600 && v["id"].is_null()
    });
    assert!(
        big["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("limit")),
        "{big}"
    );
    let method = c.request("no/such/method", json!({}));
    assert_eq!(method["error"]["code"], -32601, "{method}");
    let s = c.call_tool("mira_status", json!({}));
    assert_eq!(
        s["structuredContent"]["memories"], 2,
        "still serving after bad frames"
    );

    // The whole session's stdout: JSON-RPC 2.0 messages and nothing else, one answer per request.
    let stderr = c.stderr();
    let (status, lines) = c.close();
    assert!(status.success(), "exit {status}; stderr:\n{stderr}");
    assert!(!lines.is_empty());
    let mut ids = HashSet::new();
    for l in &lines {
        assert_json_rpc(l);
        let v: Value = serde_json::from_str(l).unwrap_or_default();
        if v["id"].is_number() || v["id"].is_string() {
            assert!(
                ids.insert(v["id"].to_string()),
                "two answers to request {}",
                v["id"]
            );
        }
    }
}

backend_test! {
    fn lifecycle_tools_timeline_causal_archive_forget_clear(db) {
        let _serial = serial();
        lifecycle_tools(db);
    }
}

/// Timeline, causal chain, archive, forget and clear through MCP.
fn lifecycle_tools(db: &Db) {
    let mut c = serve(db);
    c.initialize();
    let list = c.request("tools/list", json!({}));
    let tools = list["result"]["tools"].as_array().expect("tools").clone();
    for n in [
        "mira_timeline",
        "mira_causal_chain",
        "mira_archive",
        "mira_clear_memory",
        "mira_forget",
    ] {
        assert!(
            tools.iter().any(|t| t["name"] == n),
            "{n} is not registered"
        );
    }
    let a = stored_id(&c.call_tool(
        "mira_store",
        json!({"content": "We decided to use PostgreSQL for the main database.", "wing": "db"}),
    ));
    let b = stored_id(&c.call_tool(
        "mira_store",
        json!({"content": "Following the PostgreSQL decision, we chose pgAdmin to monitor the database.", "wing": "db"}),
    ));

    let t = c.call_tool("mira_timeline", json!({"wing": "db"}));
    assert!(text(&t).starts_with("=== TIMELINE: db ===\n"), "{t}");
    assert!(
        text(&t).contains(&format!("] {} decision: ", &a.replace('-', "")[..8]))
            && text(&t).contains(&format!("] {} ", &b.replace('-', "")[..8])),
        "{t}"
    );
    assert_eq!(
        t["structuredContent"]["items"].as_array().map(Vec::len),
        Some(2)
    );
    let page = c.call_tool(
        "mira_timeline",
        json!({"wing": "db", "limit": "1", "order": "oldest"}),
    );
    assert!(
        text(&page).contains(&a[..8]) && !text(&page).contains(&b[..8]),
        "{page}"
    );
    let cursor = page["structuredContent"]["next_cursor"]
        .as_str()
        .expect("next_cursor")
        .to_owned();
    let next = c.call_tool(
        "mira_timeline",
        json!({"wing": "db", "limit": 1, "order": "oldest", "cursor": cursor}),
    );
    assert!(text(&next).contains(&b[..8]), "{next}");
    assert_tool_error(
        &c.call_tool("mira_timeline", json!({"limit": "abc"})),
        &["limit 'abc' is not a number", "1 to 1000"],
    );
    assert_tool_error(
        &c.call_tool("mira_timeline", json!({"wing": "db", "limit": 0})),
        &["1 to 1000"],
    );
    assert_tool_error(
        &c.call_tool("mira_timeline", json!({"wing": "no wing"})),
        &["Existing wings: db"],
    );

    let chain = c.call_tool(
        "mira_causal_chain",
        json!({"id": format!("T0:{b}"), "include_consequences": true}),
    );
    assert!(
        text(&chain).starts_with("=== CAUSAL CHAIN (Upstream) ===\n"),
        "{chain}"
    );
    assert!(
        text(&chain).contains("=== CONSEQUENCES (Downstream) ==="),
        "{chain}"
    );
    assert_eq!(chain["structuredContent"]["start"]["id"], json!(b));
    assert_tool_error(
        &c.call_tool("mira_causal_chain", json!({"id": a, "max_depth": 11})),
        &["1 to 10"],
    );
    assert_tool_error(
        &c.call_tool(
            "mira_causal_chain",
            json!({"id": a, "include_consequences": 3}),
        ),
        &["true or false"],
    );
    assert_tool_error(
        &c.call_tool("mira_causal_chain", json!({})),
        &["needs `id`"],
    );

    let dry = c.call_tool("mira_archive", json!({"dry_run": true}));
    assert!(text(&dry).starts_with("Archive dry run"), "{dry}");
    let arch = c.call_tool("mira_archive", json!({"ids": [format!("T0:{a}")]}));
    assert!(
        text(&arch).starts_with("Archiving complete:") && text(&arch).contains(&a[..8]),
        "{arch}"
    );
    let t = c.call_tool(
        "mira_timeline",
        json!({"wing": "db", "include_archived": true}),
    );
    assert!(text(&t).contains("[archived]"), "{t}");
    let back = c.call_tool("mira_archive", json!({"restore": [a.clone()]}));
    assert!(text(&back).starts_with("Unarchived 1 memory:"), "{back}");
    assert_tool_error(
        &c.call_tool(
            "mira_archive",
            json!({"restore": [a.clone()], "dry_run": true}),
        ),
        &["restore takes no other argument"],
    );

    let f = c.call_tool("mira_forget", json!({"id": format!("T0:{b}")}));
    assert!(
        text(&f).starts_with(&format!("Forgot {} (", &b.replace('-', "")[..8])),
        "{f}"
    );
    assert_tool_error(
        &c.call_tool("mira_load", json!({"id": b})),
        &["no memory has id"],
    );

    let e = c.call_tool("mira_clear_memory", json!({"mode": "wing", "wing": "db"}));
    assert_tool_error(&e, &["would permanently delete 1 memory", "confirm: true"]);
    assert_tool_error(
        &c.call_tool("mira_clear_memory", json!({"mode": "x"})),
        &["mode is required"],
    );
    assert_tool_error(
        &c.call_tool(
            "mira_clear_memory",
            json!({"mode": "room", "wing": "bad wing"}),
        ),
        &["Existing wings: db"],
    );
    let cleared = c.call_tool(
        "mira_clear_memory",
        json!({"mode": "wing", "wing": "db", "confirm": true}),
    );
    assert!(
        text(&cleared).starts_with("Cleared 1 memory in wing 'db'"),
        "{cleared}"
    );
    let s = c.call_tool("mira_status", json!({}));
    assert_eq!(s["structuredContent"]["memories"], 0);
    let (status, lines) = c.close();
    assert!(status.success());
    lines.iter().for_each(|l| assert_json_rpc(l));
}

backend_test! {
    fn superseded_facts_and_forgotten_memories_through_mcp_and_a_restart(db) {
        let _serial = serial();
        superseded_and_forgotten(db);
    }
}

/// Supersession and forgetting, then a restart on the same store.
fn superseded_and_forgotten(db: &Db) {
    let mut c = serve(db);
    c.initialize();
    let old = stored_id(&c.call_tool(
        "mira_store",
        json!({"content": "The API rate limit is 100 requests per minute.", "wing": "api"}),
    ));
    let new = stored_id(&c.call_tool(
        "mira_store",
        json!({"content": "Update: the API rate limit is now 500 requests per minute.", "wing": "api"}),
    ));
    let r = c.call_tool(
        "mira_recall",
        json!({"query": "what is the API rate limit?", "wing": "api"}),
    );
    let body = text(&r).to_owned();
    let first = body
        .find(&format!("[{}]", &new[..8]))
        .expect("the update is recalled");
    if let Some(p) = body.find(&format!("[{}]", &old[..8])) {
        assert!(p > first, "{body}");
        let old_section = &body[p..];
        assert!(
            old_section.contains(&format!("superseded by {}", &new[..8]))
                && !old_section.contains("100 requests"),
            "{body}"
        );
    }
    assert!(body.contains("500 requests"), "{body}");
    let loaded = c.call_tool("mira_load", json!({"id": format!("T0:{old}")}));
    assert!(
        text(&loaded).contains(&format!("Superseded by: {}", &new[..8])),
        "load names the successor: {loaded}"
    );
    let t = c.call_tool(
        "mira_timeline",
        json!({"wing": "api", "include_superseded": true}),
    );
    assert!(
        text(&t).contains(&old[..8]) && text(&t).contains(&new[..8]),
        "{t}"
    );

    let secret = stored_id(&c.call_tool(
        "mira_store",
        json!({"content": "The staging password rotation happens every Friday at noon.", "wing": "api"}),
    ));
    let f = c.call_tool("mira_forget", json!({"id": secret}));
    assert!(!is_error(&f), "{f}");
    let (status, _) = c.close();
    assert!(status.success());

    // A new process on the same store: the forgotten memory is gone from every tool.
    let mut c = serve(db);
    c.initialize();
    let r = c.call_tool(
        "mira_recall",
        json!({"query": "staging password rotation Friday", "wing": "api"}),
    );
    assert!(
        !text(&r).contains(&secret) && !text(&r).contains("every Friday at noon"),
        "{r}"
    );
    assert!(is_error(&c.call_tool("mira_load", json!({"id": secret}))));
    let t = c.call_tool(
        "mira_timeline",
        json!({"wing": "api", "include_superseded": true, "include_archived": true}),
    );
    assert!(!text(&t).contains(&secret), "{t}");
    let chain = c.call_tool("mira_causal_chain", json!({"id": secret}));
    assert!(!text(&chain).contains("every Friday"), "{chain}");
    let (status, lines) = c.close();
    assert!(status.success());
    lines.iter().for_each(|l| assert_json_rpc(l));
}

#[test]
fn bare_mira_serves_stdio_with_a_clean_stdout() {
    let _serial = serial();
    let dir = tempfile::tempdir().expect("tempdir");
    let mut c = StdioClient::spawn(dir.path(), &[]);
    c.send_raw("{not json");
    c.send_raw("");
    let init = c.initialize();
    assert_eq!(init["serverInfo"]["name"], "mira");
    let list = c.request("tools/list", json!({}));
    check_tool_list(list["result"]["tools"].as_array().expect("tools"));
    let s = c.call_tool("mira_status", json!({}));
    assert_eq!(s["structuredContent"]["memories"], 0);
    let stored = c.call_tool("mira_store", json!({"content": FACT, "wing": "w1"}));
    let id = stored_id(&stored);
    let r = c.call_tool(
        "mira_recall",
        json!({"query": "connection pool size", "wing": "w1", "budget": 1000}),
    );
    assert!(text(&r).contains(&format!("[{}] ", &id[..8])), "{r}");
    let (status, lines) = c.close();
    assert!(status.success(), "exit {status}");
    // The parse error, then the answers to initialize, tools/list and the three calls.
    assert_eq!(lines.len(), 6, "{lines:#?}");
    for l in &lines {
        assert_json_rpc(l);
    }
}

/// Start-up latency with the model cached: start → `initialize` answered, start →
/// `tools/list` answered (median of 5 runs) and start → first `mira_recall` answered.
#[test]
fn startup_timings() {
    let _serial = serial();
    let (mut init, mut list, mut recall) = (vec![], vec![], vec![]);
    for _ in 0..5 {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut c = StdioClient::spawn(dir.path(), &["serve"]);
        let id = c.send_request("initialize", initialize_params());
        let (at, _) = c.response(id);
        init.push(at - c.started);
        c.notify("notifications/initialized");
        let id = c.send_request("tools/list", json!({}));
        let (at, _) = c.response(id);
        list.push(at - c.started);
        let id = c.send_request("tools/call", json!({"name": "mira_recall", "arguments": {"query": "what did we decide about the database?"}}));
        let (at, r) = c.response(id);
        assert!(!is_error(&r["result"]), "{r}");
        recall.push(at - c.started);
        let (status, _) = c.close();
        assert!(status.success());
    }
    eprintln!(
        "mcp stdio start-up (median of 5): initialize {:.1} ms, tools/list {:.1} ms, first recall {:.1} ms",
        median_ms(init),
        median_ms(list),
        median_ms(recall)
    );
}

#[test]
fn history_keeps_its_dates_and_sessions() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut c = StdioClient::spawn(dir.path(), &["serve"]);
    c.initialize();
    let a = c.call_tool(
        "mira_store",
        json!({"content": "We picked Rust for the ingest service.", "wing": "hist",
               "created_at": "2024-03-01T12:00:00+01:00", "session_id": "kickoff"}),
    );
    let id = stored_id(&a);
    let l = c.call_tool("mira_load", json!({"id": &id[..8]}));
    assert!(text(&l).contains("Date: 2024-03-01T11:00:00Z"), "{l}");
    let r = c.call_tool(
        "mira_recall",
        json!({"query": "ingest service language", "wing": "hist"}),
    );
    assert!(
        text(&r).contains(&format!("1 March 2024:\n[{}] We picked Rust", &id[..8])),
        "{r}"
    );
    let e = c.call_tool(
        "mira_store",
        json!({"content": "x y z", "wing": "hist", "created_at": "yesterday"}),
    );
    assert_tool_error(
        &e,
        &[
            "created_at 'yesterday' is not an RFC 3339 time",
            "2024-03-01T12:00:00Z",
        ],
    );
    let e = c.call_tool(
        "mira_store",
        json!({"content": "x y z", "wing": "hist", "created_at": "2999-01-01T00:00:00Z"}),
    );
    assert_tool_error(&e, &["is in the future"]);
    let e = c.call_tool(
        "mira_store",
        json!({"content": "x y z", "wing": "hist", "session_id": "a\u{7}b"}),
    );
    assert_tool_error(&e, &["session_id must be 1-200 characters"]);
    drop(c);
    let cli = crate::common::mira(&dir.path().join("store"))
        .args(["store", "x", "--wing", "hist", "--created-at", "soon"])
        .output()
        .unwrap();
    assert_eq!(cli.status.code(), Some(2));
}

/// Over stdio: a client probing prompts and resources (mira offers tools only)
/// gets "method not found", and the server's log (at its default level) stays quiet.
#[test]
fn probes_for_prompts_and_resources_get_method_not_found_quietly() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let mut client = StdioClient::spawn(dir.path(), &["serve"]);
    client.initialize();
    for method in [
        "prompts/list",
        "resources/list",
        "resources/templates/list",
        "completion/complete",
    ] {
        let r = client.request(method, json!({}));
        assert_eq!(r["error"]["code"], -32601, "{method}: {r}");
    }
    let r = client.request("tools/list", json!({}));
    assert!(
        r["result"]["tools"]
            .as_array()
            .is_some_and(|t| !t.is_empty()),
        "{r}"
    );
    let log = client.stderr();
    assert!(client.close().0.success());
    assert!(!log.contains("WARN"), "{log}");
}
