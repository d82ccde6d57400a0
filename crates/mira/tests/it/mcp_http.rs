//! MCP over streamable HTTP, end to end: `mira serve --http` with concurrent clients.

use crate::mcp_common::*;
use serde_json::{json, Value};
use std::io::Read;
use std::thread;
use std::time::Instant;

const CLIENTS: [(&str, &str); 2] = [
    (
        "alpha",
        "The alpha billing service listens on port 8101 and stores invoices in PostgreSQL.",
    ),
    (
        "beta",
        "The beta search service listens on port 9202 and keeps its index in Elasticsearch.",
    ),
];

#[test]
fn two_http_clients_share_one_store() {
    let _serial = serial();
    let dir = tempfile::tempdir().expect("tempdir");
    let mut server = HttpServer::start(dir.path());
    assert!(
        server.url.starts_with("http://127.0.0.1:") && server.url.ends_with("/mcp"),
        "{}",
        server.url
    );
    let mut stdout = server.stdout();

    // Two sessions at once: handshake, tool list, then stores.
    let started = Instant::now();
    let workers: Vec<_> = CLIENTS
        .iter()
        .map(|&(who, fact)| {
            let url = server.url.clone();
            thread::spawn(move || {
                let mut c = HttpClient::new(&url);
                let init = c.initialize();
                assert_eq!(init["serverInfo"]["name"], "mira");
                assert!(init["instructions"].as_str().is_some_and(|i| i.contains("mira_recall")));
                let list = c.request("tools/list", json!({}));
                let names: Vec<&str> = list["result"]["tools"].as_array().expect("tools").iter().filter_map(|t| t["name"].as_str()).collect();
                for n in ["mira_store", "mira_recall", "mira_load", "mira_status"] {
                    assert!(names.contains(&n), "{n} not in {names:?}");
                }
                let status = c.call_tool("mira_status", json!({}));
                let status_ms = started.elapsed().as_millis();
                assert!(!is_error(&status), "{status}");
                let ids: Vec<String> = (0..3)
                    .map(|i| {
                        let r = c.call_tool("mira_store", json!({"content": format!("{fact} (note {i} from {who})"), "wing": "shared"}));
                        assert!(!is_error(&r), "{r}");
                        stored_id(&r)
                    })
                    .collect();
                eprintln!("{who}: status answered after {status_ms} ms, 3 stores done after {} ms", started.elapsed().as_millis());
                (c, ids)
            })
        })
        .collect();
    let mut sessions: Vec<(HttpClient, Vec<String>)> = workers
        .into_iter()
        .map(|w| w.join().expect("client thread"))
        .collect();

    // Each client recalls, concurrently, what the *other* one stored.
    let other_ids: Vec<Vec<String>> = vec![sessions[1].1.clone(), sessions[0].1.clone()];
    let queries = [
        "Which port does the beta search service listen on?",
        "Which port does the alpha billing service listen on?",
    ];
    thread::scope(|s| {
        for (((c, _), want), query) in sessions.iter_mut().zip(&other_ids).zip(queries) {
            s.spawn(move || {
                let r = c.call_tool(
                    "mira_recall",
                    json!({"query": query, "wing": "shared", "budget": 2000}),
                );
                assert!(!is_error(&r), "{r}");
                let block = text(&r);
                assert!(
                    want.iter()
                        .any(|id| block.contains(&format!("[{}]", &id[..8]))),
                    "{query}: none of {want:?} in\n{block}"
                );
                let id = &want[0];
                let l = c.call_tool("mira_load", json!({"id": format!("T0:{id}")}));
                assert!(
                    text(&l).starts_with(&format!("[ID: {} | Wing: shared |", &id[..8])),
                    "{l}"
                );
            });
        }
    });

    let (c, _) = &mut sessions[0];
    let s = c.call_tool("mira_status", json!({}));
    assert_eq!(s["structuredContent"]["memories"], 6, "{s}");

    // Errors: a tool error, an unknown tool, a malformed body, a missing session.
    let e = c.call_tool("mira_recall", json!({"query": "ports", "budget": "abc"}));
    assert!(is_error(&e) && text(&e).contains("1 to 100000"), "{e}");
    let unknown = c.request("tools/call", json!({"name": "mira_nope", "arguments": {}}));
    assert_eq!(unknown["error"]["code"], -32602, "{unknown}");
    let bad = c.post_raw("{not json".into());
    assert_eq!(bad.status, 400, "{}", bad.body);
    let v: Value = serde_json::from_str(&bad.body).expect("JSON-RPC error body");
    assert_eq!(v["error"]["code"], -32700, "{v}");
    let not_rpc = c.post_raw(r#"{"jsonrpc":"2.0","id":5,"params":[]}"#.into());
    assert_eq!(not_rpc.status, 400, "{}", not_rpc.body);
    assert!(not_rpc.body.contains("-32600"), "{}", not_rpc.body);
    let stranger = HttpClient::new(&server.url);
    let no_session =
        stranger.post_raw(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}).to_string());
    assert!(
        no_session.status >= 400,
        "a request without a session must be refused: {}",
        no_session.status
    );
    assert!(
        c.request("ping", json!({}))["result"].is_object(),
        "still serving after bad requests"
    );

    let stderr = server.stderr();
    let status = server.stop();
    assert!(
        status.success(),
        "exit {status} after SIGTERM; stderr:\n{}",
        stderr
    );
    let mut out = String::new();
    stdout.read_to_string(&mut out).expect("read stdout");
    assert_eq!(out, "", "mira serve --http wrote to stdout");
}

#[test]
fn the_http_transport_can_require_a_token() {
    let _serial = serial();
    let dir = tempfile::tempdir().expect("tempdir");
    let config = dir.path().join("config.yaml");
    std::fs::write(&config, "mcp:\n  http:\n    auth_token: s3cret\n").expect("write config");
    let server = HttpServer::start_with(
        dir.path(),
        &["--config", config.to_str().expect("utf-8 path")],
    );
    let anonymous = HttpClient::new(&server.url);
    let refused = anonymous.post_raw(
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": initialize_params()})
            .to_string(),
    );
    assert_eq!(refused.status, 401, "{}", refused.body);
    let wrong = HttpClient::new(&server.url).with_token("guess");
    let refused = wrong.post_raw(
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": initialize_params()})
            .to_string(),
    );
    assert_eq!(refused.status, 401, "{}", refused.body);
    let mut c = HttpClient::new(&server.url).with_token("s3cret");
    assert_eq!(c.initialize()["serverInfo"]["name"], "mira");
    let s = c.call_tool("mira_status", json!({}));
    assert_eq!(s["structuredContent"]["memories"], 0, "{s}");
    assert!(server.stop().success());
}

/// Over HTTP: errors in HTTP terms (a malformed body gets 400 and advice about
/// the request body, not lines), requests for features mira does not offer get "method not
/// found" without a warning in the log, and ending a session answers 204 (clients read 202 as
/// a failure).
#[test]
fn http_speaks_http_and_probes_stay_quiet() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let server = HttpServer::start(dir.path());
    let mut client = HttpClient::new(&server.url);
    client.initialize();

    let bad = client.post_raw("{not json".into());
    assert_eq!(bad.status, 400, "{}", bad.body);
    let error: Value = serde_json::from_str(&bad.body).unwrap();
    let message = error["error"]["message"].as_str().unwrap();
    assert_eq!(error["error"]["code"], -32700, "{error}");
    assert!(
        message.contains("request body") && !message.contains("per line"),
        "{message}"
    );
    let batch = client.post_raw("[]".into());
    assert_eq!(batch.status, 400, "{}", batch.body);
    assert!(
        batch.body.contains("per request") && !batch.body.contains("line"),
        "{}",
        batch.body
    );

    for method in ["prompts/list", "resources/list", "resources/templates/list"] {
        let r = client.request(method, json!({}));
        assert_eq!(r["error"]["code"], -32601, "{method}: {r}");
        assert!(
            r["error"]["message"]
                .as_str()
                .is_some_and(|m| m.contains(method)),
            "{r}"
        );
    }
    let tools = client.request("tools/list", json!({}));
    assert!(tools["result"]["tools"]
        .as_array()
        .is_some_and(|t| !t.is_empty()));

    assert_eq!(client.end_session(), 204, "DELETE of the session");
    let log = server.stderr();
    assert!(
        !log.contains("WARN"),
        "the probes or the session's end warned:\n{log}"
    );
    assert!(server.stop().success());
}
