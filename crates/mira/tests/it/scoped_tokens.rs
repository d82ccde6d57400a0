//! Scoped tokens on a shared server (`mcp.http.tokens`), through the public surfaces: two
//! clients whose tokens hold different wings cannot see or change each other's memories
//! through any MCP tool (every listed tool is tried: a tool added later fails this test until
//! it is), the browser's API or its export; a read-only token is refused `mira_store`; a token
//! that may not read every wing reaches no SOUL identity; refusals name the token and the wing;
//! destructive calls are logged with the token's name. On SQLite and on PostgreSQL. The tokens
//! are made by `mira token new`, as a user would.

use crate::common::Db;
use crate::mcp_common::{is_error, mira_command, stored_id, text, HttpClient, HttpServer};
use serde_json::{json, Value};
use std::collections::BTreeSet;
use std::path::Path;

/// A token made by `mira token new`: the secret, and its config entry (YAML lines).
pub(crate) struct Made {
    pub(crate) secret: String,
    pub(crate) entry: String,
}

/// `mira token new ARGS` in `dir`, as a user makes a token.
pub(crate) fn token_new(dir: &Path, args: &[&str]) -> Made {
    let mut all = vec!["token", "new"];
    all.extend_from_slice(args);
    let out = mira_command(dir, &all).output().unwrap();
    assert!(
        out.status.success(),
        "mira token new: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8(out.stdout).unwrap();
    let secret = stdout
        .lines()
        .find_map(|l| l.strip_prefix("token: "))
        .unwrap_or_else(|| panic!("no token in: {stdout}"))
        .to_owned();
    let entry: String = stdout
        .split("    tokens:\n")
        .nth(1)
        .unwrap_or_else(|| panic!("no entry in: {stdout}"))
        .to_owned();
    Made { secret, entry }
}

/// The shared server's tokens: alice (reads team-a and shared, writes team-a, may remove), bob
/// (reads and writes team-b, may not remove), reader (reads team-a only), and the auth_token.
struct Tokens {
    alice: String,
    bob: String,
    reader: String,
    admin: String,
    config: String,
}

fn tokens(dir: &Path) -> Tokens {
    let alice = token_new(
        dir,
        &[
            "alice",
            "--read",
            "team-a",
            "--read",
            "shared",
            "--write",
            "team-a",
            "--destructive",
        ],
    );
    let bob = token_new(dir, &["bob", "--read", "team-b", "--write", "team-b"]);
    let reader = token_new(dir, &["reader", "--read", "team-a"]);
    let admin = "admin-secret-for-tests".to_owned();
    let config = format!(
        "mcp:\n  http:\n    auth_token: {admin}\n    tokens:\n{}{}{}",
        alice.entry, bob.entry, reader.entry
    );
    assert!(
        !config.contains(&alice.secret),
        "the config keeps no secret"
    );
    Tokens {
        alice: alice.secret,
        bob: bob.secret,
        reader: reader.secret,
        admin,
        config,
    }
}

fn client(server: &HttpServer, token: &str) -> HttpClient {
    let mut c = HttpClient::new(&server.url).with_token(token);
    c.initialize();
    c
}

/// A refusal of `token` that names it, and the wing when there is one.
fn refused(r: &Value, token: &str, wing: Option<&str>, what: &str) {
    assert!(is_error(r), "{what}: not refused: {r}");
    let t = text(r);
    assert!(t.contains(&format!("token '{token}'")), "{what}: {t}");
    if let Some(w) = wing {
        assert!(t.contains(&format!("'{w}'")), "{what}: {t}");
    }
}

fn ok(r: Value, what: &str) -> Value {
    assert!(!is_error(&r), "{what}: {r}");
    r
}

/// The wings of a timeline or recall result's items.
fn wings_of(r: &Value) -> BTreeSet<String> {
    r["structuredContent"]["items"]
        .as_array()
        .unwrap_or_else(|| panic!("no items: {r}"))
        .iter()
        .map(|i| i["wing"].as_str().unwrap().to_owned())
        .collect()
}

/// The browser API of the server, with a token.
struct Api<'a> {
    base: String,
    token: Option<&'a str>,
    http: reqwest::blocking::Client,
}

impl<'a> Api<'a> {
    fn new(server: &HttpServer, token: Option<&'a str>) -> Api<'a> {
        Api {
            base: server.url.trim_end_matches("/mcp").to_owned() + "/ui/api",
            token,
            http: reqwest::blocking::Client::new(),
        }
    }

    fn send(&self, req: reqwest::blocking::RequestBuilder) -> (u16, String) {
        let req = match self.token {
            Some(t) => req.bearer_auth(t),
            None => req,
        };
        let r = req.send().unwrap();
        (r.status().as_u16(), r.text().unwrap())
    }

    fn get(&self, path: &str) -> (u16, String) {
        self.send(self.http.get(format!("{}{path}", self.base)))
    }

    fn post(&self, path: &str, body: Value) -> (u16, String) {
        self.send(
            self.http
                .post(format!("{}{path}", self.base))
                .header("Content-Type", "application/json")
                .body(body.to_string()),
        )
    }
}

/// A 403 of the API naming the token and the wing.
fn api_refused((status, body): (u16, String), token: &str, wing: &str, what: &str) {
    assert_eq!(status, 403, "{what}: {body}");
    assert!(
        body.contains(&format!("token '{token}'")) && body.contains(&format!("'{wing}'")),
        "{what}: {body}"
    );
}

const OLD: &str = "2020-01-01T10:00:00Z";

backend_test! {
    fn two_clients_with_different_wings_cannot_see_or_change_each_other(db) {
        let _serial = crate::mcp_common::serial();
        scenario(db);
    }
}

fn scenario(db: &Db) {
    let dir = tempfile::tempdir().unwrap();
    let t = tokens(dir.path());
    let config = dir.path().join("config.yaml");
    std::fs::write(&config, &t.config).unwrap();
    let mut cmd = mira_command(
        dir.path(),
        &["serve", "--http", "127.0.0.1:0", "--with-soul", "--config"],
    );
    // Health and metrics on the server's port (the helpers turn them off by default).
    cmd.arg(&config)
        .envs(db.env())
        .env_remove("MIRA_METRICS_ENABLED");
    let server = HttpServer::spawn_command(cmd);
    let name = db.name();

    let unauthenticated = HttpClient::new(&server.url).post_raw(
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
               "params": crate::mcp_common::initialize_params()})
        .to_string(),
    );
    assert_eq!(unauthenticated.status, 401, "{}", unauthenticated.body);
    // Health and metrics beside /mcp take any of the server's tokens; the probes stay open.
    let ops = |path: &str, token: Option<&str>| {
        let base = server.url.trim_end_matches("/mcp").to_owned();
        let req = reqwest::blocking::Client::new().get(format!("{base}{path}"));
        let req = match token {
            Some(t) => req.bearer_auth(t),
            None => req,
        };
        req.send().unwrap().status().as_u16()
    };
    assert_eq!(ops("/metrics", None), 401, "{name}");
    assert_eq!(ops("/metrics", Some("not-a-token")), 401, "{name}");
    assert_eq!(ops("/metrics", Some(&t.bob)), 200, "{name}");
    assert_eq!(ops("/health/live", None), 200, "{name}");
    let mut admin = client(&server, &t.admin);
    let mut alice = client(&server, &t.alice);
    let mut bob = client(&server, &t.bob);
    let mut reader = client(&server, &t.reader);

    // Each writes its own wing; the admin writes the shared one.
    let a1 = stored_id(&ok(
        alice.call_tool(
            "mira_store",
            json!({"content": "Team A deploys the billing service on Tuesdays.", "wing": "team-a"}),
        ),
        "alice stores",
    ));
    let b1 = stored_id(&ok(
        bob.call_tool(
            "mira_store",
            json!({"content": "Team B keeps the payroll secrets in the vault.", "wing": "team-b"}),
        ),
        "bob stores",
    ));
    let b_old = stored_id(&ok(
        bob.call_tool(
            "mira_store",
            json!({"content": "Team B debugged the payroll export timeout.", "wing": "team-b",
                   "type": "debug_log", "created_at": OLD}),
        ),
        "bob stores an old debug log",
    ));
    ok(
        admin.call_tool(
            "mira_store",
            json!({"content": "The shared calendar lists every release.", "wing": "shared"}),
        ),
        "admin stores",
    );

    // Every listed tool, tried across wings. A tool missing here fails the test.
    let listed: BTreeSet<String> = admin.request("tools/list", json!({}))["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect();
    let mut tried = BTreeSet::new();
    let mut attempt = |tool: &str, c: &mut HttpClient, args: Value| {
        tried.insert(tool.to_owned());
        c.call_tool(tool, args)
    };

    refused(
        &attempt(
            "mira_store",
            &mut alice,
            json!({"content": "Alice writes into B.", "wing": "team-b"}),
        ),
        "alice",
        Some("team-b"),
        "store into another wing",
    );
    refused(
        &attempt(
            "mira_store",
            &mut reader,
            json!({"content": "A read-only token writes.", "wing": "team-a"}),
        ),
        "reader",
        Some("team-a"),
        "a read-only token stores",
    );
    refused(
        &attempt(
            "mira_store",
            &mut alice,
            json!({"content": "Alice replaces B's fact.", "wing": "team-a", "supersedes": b1}),
        ),
        "alice",
        Some("team-b"),
        "supersede a memory of another wing",
    );
    refused(
        &attempt(
            "mira_recall",
            &mut alice,
            json!({"query": "payroll secrets", "wing": "team-b"}),
        ),
        "alice",
        Some("team-b"),
        "recall another wing",
    );
    refused(
        &attempt(
            "mira_recall",
            &mut alice,
            json!({"query": "payroll", "wing": "team-a", "fallback_wings": "team-b"}),
        ),
        "alice",
        Some("team-b"),
        "fall back to another wing",
    );
    let r = attempt(
        "mira_recall",
        &mut alice,
        json!({"query": "payroll secrets"}),
    );
    assert!(
        is_error(&r) && text(&r).contains("token 'alice' reads shared, team-a"),
        "{r}"
    );
    let r = ok(
        attempt(
            "mira_recall",
            &mut bob,
            json!({"query": "deploys billing service"}),
        ),
        "bob recalls",
    );
    assert_eq!(
        wings_of(&r),
        BTreeSet::from(["team-b".to_owned()]),
        "{name}: {r}"
    );
    assert!(
        !r.to_string().contains("Tuesdays"),
        "{name}: bob sees A: {r}"
    );
    refused(
        &attempt("mira_load", &mut alice, json!({"id": b1})),
        "alice",
        Some("team-b"),
        "load",
    );
    refused(
        &attempt("mira_load", &mut bob, json!({"id": a1})),
        "bob",
        Some("team-a"),
        "load",
    );
    let r = ok(
        attempt("mira_status", &mut alice, json!({})),
        "alice status",
    );
    let wings = r["structuredContent"]["by_wing"].as_object().unwrap();
    assert_eq!(
        wings.keys().collect::<Vec<_>>(),
        ["shared", "team-a"],
        "{name}: {r}"
    );
    assert!(!text(&r).contains("team-b"), "{name}: {}", text(&r));
    assert_eq!(r["structuredContent"]["memories"], 2, "{name}");
    let r = ok(
        attempt(
            "mira_timeline",
            &mut alice,
            json!({"include_archived": true}),
        ),
        "timeline",
    );
    assert_eq!(
        wings_of(&r),
        BTreeSet::from(["shared".to_owned(), "team-a".to_owned()])
    );
    refused(
        &attempt("mira_timeline", &mut alice, json!({"wing": "team-b"})),
        "alice",
        Some("team-b"),
        "timeline of another wing",
    );
    refused(
        &attempt("mira_causal_chain", &mut alice, json!({"id": b1})),
        "alice",
        Some("team-b"),
        "causal",
    );
    refused(
        &attempt("mira_archive", &mut alice, json!({"ids": [b1]})),
        "alice",
        Some("team-b"),
        "archive",
    );
    refused(
        &attempt("mira_archive", &mut bob, json!({"ids": [b1]})),
        "bob",
        None,
        "archive without the right",
    );
    // Archiving by age touches only the wings it writes: B's old debug log stays.
    let r = ok(
        attempt("mira_archive", &mut alice, json!({"older_than_days": 30})),
        "alice archives by age",
    );
    assert!(!r.to_string().contains(&b_old), "{name}: {r}");
    refused(
        &attempt(
            "mira_clear_memory",
            &mut alice,
            json!({"mode": "wing", "wing": "team-b", "confirm": true}),
        ),
        "alice",
        Some("team-b"),
        "clear another wing",
    );
    refused(
        &attempt(
            "mira_clear_memory",
            &mut alice,
            json!({"mode": "global", "confirm": true}),
        ),
        "alice",
        None,
        "clear every wing",
    );
    refused(
        &attempt(
            "mira_clear_memory",
            &mut bob,
            json!({"mode": "wing", "wing": "team-b", "confirm": true}),
        ),
        "bob",
        None,
        "clear without the right",
    );
    // Links: made in the wings a token writes; removed only with the right to remove.
    let link = json!({"from": b_old, "to": b1});
    refused(
        &attempt("mira_link", &mut alice, link.clone()),
        "alice",
        Some("team-b"),
        "link",
    );
    ok(
        attempt("mira_link", &mut bob, link.clone()),
        "bob links in his wing",
    );
    refused(
        &attempt("mira_unlink", &mut bob, link.clone()),
        "bob",
        None,
        "unlink without the right",
    );
    refused(
        &attempt("mira_unlink", &mut alice, link.clone()),
        "alice",
        Some("team-b"),
        "unlink",
    );
    // Supersession: both memories in wings the token writes.
    refused(
        &attempt(
            "mira_supersede",
            &mut alice,
            json!({"old": b_old, "new": b1}),
        ),
        "alice",
        Some("team-b"),
        "supersede in another wing",
    );
    refused(
        &attempt("mira_supersede", &mut alice, json!({"old": a1, "new": b1})),
        "alice",
        Some("team-b"),
        "supersede by a memory of another wing",
    );
    refused(
        &attempt(
            "mira_supersede",
            &mut reader,
            json!({"old": b_old, "new": b1}),
        ),
        "reader",
        None,
        "a read-only token supersedes",
    );
    let r = ok(
        attempt("mira_supersede", &mut bob, json!({"old": b_old, "new": b1})),
        "bob supersedes in his wing",
    );
    assert_eq!(
        r["structuredContent"]["superseded"],
        json!(true),
        "{name}: {r}"
    );
    ok(
        attempt(
            "mira_supersede",
            &mut bob,
            json!({"old": b_old, "new": b1, "undo": true}),
        ),
        "bob undoes it",
    );
    refused(
        &attempt("mira_forget", &mut alice, json!({"id": b1})),
        "alice",
        Some("team-b"),
        "forget",
    );
    refused(
        &attempt("mira_forget", &mut bob, json!({"id": b1})),
        "bob",
        None,
        "forget without the right",
    );
    for tool in listed.iter().filter(|t| t.starts_with("soul_")) {
        let r = attempt(tool, &mut alice, json!({"agent_id": "ada"}));
        refused(&r, "alice", None, tool);
        assert!(text(&r).contains("every wing"), "{tool}: {}", text(&r));
    }
    assert_eq!(
        tried, listed,
        "every tool must be tried across wings: add the new ones to this test"
    );

    // Nothing of B changed, and the admin still sees everything.
    let all = ok(
        admin.call_tool("mira_timeline", json!({"include_archived": true})),
        "admin",
    );
    assert_eq!(
        all["structuredContent"]["items"].as_array().unwrap().len(),
        4,
        "{name}: {all}"
    );
    let b_left = ok(
        bob.call_tool("mira_timeline", json!({"wing": "team-b"})),
        "bob",
    );
    assert_eq!(
        b_left["structuredContent"]["items"]
            .as_array()
            .unwrap()
            .len(),
        2,
        "{name}"
    );
    // A token that may remove does, and the log names it.
    ok(
        alice.call_tool("mira_forget", json!({"id": a1})),
        "alice forgets her own",
    );
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while !server.stderr().contains("(by token 'alice')") {
        assert!(
            std::time::Instant::now() < deadline,
            "not logged: {}",
            server.stderr()
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }

    browser_api(&server, &t, &b1, name);
    server.stop();
}

/// The browser's API and its export, with the same tokens.
fn browser_api(server: &HttpServer, t: &Tokens, b1: &str, name: &str) {
    let alice = Api::new(server, Some(&t.alice));
    let (status, body) = alice.get("/status");
    assert_eq!(status, 200, "{body}");
    let v: Value = serde_json::from_str(&body).unwrap();
    assert!(
        v["status"]["by_wing"].get("team-b").is_none(),
        "{name}: {body}"
    );
    api_refused(
        alice.get("/recall?query=payroll&wing=team-b"),
        "alice",
        "team-b",
        "recall",
    );
    let (status, body) = alice.get("/timeline?archived=true");
    assert_eq!(status, 200, "{body}");
    assert!(
        !body.contains("team-b") && body.contains("shared"),
        "{name}: {body}"
    );
    api_refused(
        alice.get(&format!("/memory?id={b1}")),
        "alice",
        "team-b",
        "memory",
    );
    api_refused(
        alice.get(&format!("/graph?id={b1}")),
        "alice",
        "team-b",
        "graph",
    );
    let (status, body) = alice.get("/soul?agent=ada");
    assert!(
        status == 403 && body.contains("token 'alice'"),
        "{status} {body}"
    );
    let (status, body) = alice.get("/export");
    assert_eq!(status, 200, "{body}");
    let exported: Vec<Value> = body
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert!(!exported.is_empty());
    assert!(
        exported.iter().all(|l| l["wing"] != "team-b"),
        "{name}: {body}"
    );
    api_refused(
        alice.get("/export?wing=team-b"),
        "alice",
        "team-b",
        "export",
    );
    api_refused(
        alice.post(
            "/store",
            json!({"content": "Alice writes into B again.", "wing": "team-b"}),
        ),
        "alice",
        "team-b",
        "store",
    );
    api_refused(
        alice.post("/forget", json!({"id": b1})),
        "alice",
        "team-b",
        "forget",
    );
    api_refused(
        alice.post("/archive", json!({"id": b1})),
        "alice",
        "team-b",
        "archive",
    );
    api_refused(
        alice.post("/restore", json!({"id": b1})),
        "alice",
        "team-b",
        "restore",
    );
    api_refused(
        alice.post("/pin", json!({"id": b1, "pinned": true})),
        "alice",
        "team-b",
        "pin",
    );
    api_refused(
        alice.post("/edit", json!({"id": b1, "room": "mine"})),
        "alice",
        "team-b",
        "edit",
    );
    let bob = Api::new(server, Some(&t.bob));
    let (status, body) = bob.get("/export");
    assert_eq!(status, 200);
    assert!(
        body.lines().count() == 2 && !body.contains("team-a"),
        "{name}: {body}"
    );
    // Moving B's memory into A needs both wings.
    api_refused(
        bob.post("/edit", json!({"id": b1, "wing": "team-a"})),
        "bob",
        "team-a",
        "edit",
    );
    for token in [None, Some("not-a-token")] {
        let (status, body) = Api::new(server, token).get("/status");
        assert_eq!(status, 401, "{token:?}: {body}");
        assert!(body.contains("mcp.http.tokens"), "{body}");
    }
}

#[test]
fn a_listener_on_the_network_needs_a_token() {
    let dir = tempfile::tempdir().unwrap();
    let refusal = |args: &[&str], setting: &str| {
        let out = mira_command(dir.path(), args).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{args:?} started");
        assert!(
            stderr.contains(setting) && stderr.contains("--insecure-no-auth"),
            "{args:?}: {stderr}"
        );
    };
    refusal(
        &["serve", "--http", "0.0.0.0:0"],
        "mcp.http.auth_token or mcp.http.tokens",
    );
    refusal(
        &["ui", "--addr", "0.0.0.0:0"],
        "mcp.http.auth_token or mcp.http.tokens",
    );
    refusal(
        &["serve", "--http", "127.0.0.1:0", "--metrics", "0.0.0.0:0"],
        "metrics.auth_token",
    );
    // With a token, or when the user says so (loudly), it starts.
    let config = dir.path().join("config.yaml");
    std::fs::write(&config, "mcp:\n  http:\n    auth_token: secret\n").unwrap();
    let mut cmd = mira_command(dir.path(), &["serve", "--http", "0.0.0.0:0", "--config"]);
    cmd.arg(&config);
    HttpServer::spawn_command(cmd).stop();
    let server = HttpServer::spawn(
        dir.path(),
        &["ui", "--addr", "0.0.0.0:0", "--insecure-no-auth"],
    );
    assert!(
        server
            .stderr()
            .contains("without a token (--insecure-no-auth)"),
        "{}",
        server.stderr()
    );
    server.stop();
}

#[test]
fn token_hash_prints_the_digest_of_standard_input() {
    let dir = tempfile::tempdir().unwrap();
    let out = mira_command(dir.path(), &["token", "hash"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .and_then(|mut c| {
            use std::io::Write;
            c.stdin.take().unwrap().write_all(b"abc\n")?;
            c.wait_with_output()
        })
        .unwrap();
    assert!(out.status.success());
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad\n"
    );
    let bad = mira_command(dir.path(), &["token", "new", "ci", "--read", "not a wing"])
        .output()
        .unwrap();
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("not a wing"));
}
