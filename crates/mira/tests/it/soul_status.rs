//! SOUL's state as a client sees it, on both backends: in `mira_status` (enabled, agents, last
//! capture), when it cannot start (its tools say why instead of being unknown), one round trip
//! over the HTTP transport, and concurrent captures for one agent.

use crate::common::Db;
use crate::mcp_common::*;
use crate::soul_mcp::{capture, err, names, ok, session, tools, SOUL_TOOLS};
use serde_json::{json, Value};

const REPLY: &str = "Assistant: I would recommend that we analyze the schema. Therefore, the index must change. Honestly, to be transparent, I might be wrong about the cache.";

/// The `soul` part of a `mira_status` result.
fn soul_state(status: &Value) -> &Value {
    &status["structuredContent"]["soul"]
}

backend_test! {
    fn mira_status_shows_soul(db) {
        let _serial = serial();
        status_shows_soul(db);
    }
}

fn status_shows_soul(db: &Db) {
    let mut plain = session(db, &["serve"]);
    let s = ok(&mut plain, "mira_status", json!({}));
    assert_eq!(soul_state(&s)["enabled"], false, "{s}");
    assert!(
        text(&s).contains("SOUL: disabled (soul.enabled or --with-soul)"),
        "{}",
        text(&s)
    );
    plain.close();

    let mut c = session(db, &["serve", "--with-soul"]);
    let s = ok(&mut c, "mira_status", json!({}));
    let state = soul_state(&s);
    assert_eq!(state["enabled"], true, "{s}");
    assert_eq!(state["agents"], 0);
    assert!(state["error"].is_null(), "{state}");
    assert!(
        text(&s).contains("SOUL: enabled, 0 agents, no capture yet"),
        "{}",
        text(&s)
    );
    capture(&mut c, "ada", "m", REPLY);
    capture(&mut c, "bob", "m", REPLY);
    let s = ok(&mut c, "mira_status", json!({}));
    let state = soul_state(&s);
    assert_eq!(state["agents"], 2, "{state}");
    assert_eq!(state["last_agent"], "bob");
    let at = state["last_capture"].as_str().expect("last capture");
    assert!(
        chrono::DateTime::parse_from_rfc3339(at).is_ok(),
        "{at} is not RFC 3339"
    );
    assert!(
        text(&s).contains(&format!("SOUL: enabled, 2 agents, last capture {at} (bob)")),
        "{}",
        text(&s)
    );
    c.close();
}

backend_test! {
    fn a_soul_that_cannot_start_says_why(db) {
        let _serial = serial();
        cannot_start(db);
    }
}

fn cannot_start(db: &Db) {
    let mut first = session(db, &["serve"]);
    let mira_tools = names(&tools(&mut first));
    first.close();
    // A database whose SOUL tables come from a newer mira.
    db.execute(
        "CREATE TABLE soul_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
         INSERT INTO soul_meta VALUES ('schema_version', '99');",
    );
    let mut c = session(db, &["serve", "--with-soul"]);
    // The soul tools are listed and answer with the cause, not "unknown tool".
    let listed = names(&tools(&mut c));
    assert_eq!(
        listed.len(),
        mira_tools.len() + SOUL_TOOLS.len(),
        "{listed:?}"
    );
    let e = err(&mut c, "soul_status", json!({"agent_id": "ada"}));
    assert!(
        e.contains("SOUL cannot start")
            && e.contains("schema version 99")
            && e.contains("upgrade mira"),
        "{e}"
    );
    // The mira tools work, and mira_status shows SOUL's error.
    let s = ok(&mut c, "mira_status", json!({}));
    let state = soul_state(&s);
    assert_eq!(state["enabled"], true);
    assert!(
        state["error"]
            .as_str()
            .is_some_and(|m| m.contains("schema version 99")),
        "{state}"
    );
    assert!(
        text(&s).contains("SOUL: enabled but cannot start (SOUL storage: the SOUL tables are at schema version 99"),
        "{}",
        text(&s)
    );
    let stderr = c.stderr_with("SOUL failed to initialise");
    assert!(
        stderr.contains("SOUL failed to initialise") && stderr.contains("schema version 99"),
        "{stderr}"
    );
    c.close();
}

backend_test! {
    fn soul_over_http(db) {
        let _serial = serial();
        over_http(db);
    }
}

fn over_http(db: &Db) {
    let mut cmd = mira_command(
        db.dir.path(),
        &["serve", "--http", "127.0.0.1:0", "--with-soul"],
    );
    cmd.envs(db.env());
    let server = HttpServer::spawn_command(cmd);
    let mut c = HttpClient::new(&server.url);
    let init = c.initialize();
    assert!(
        init["instructions"]
            .as_str()
            .is_some_and(|i| i.contains("soul_recall")),
        "{init}"
    );
    let r = c.call_tool(
        "soul_capture",
        json!({"agent_id": "ada", "model_id": "m", "conversation": REPLY}),
    );
    assert!(!is_error(&r), "{r}");
    assert_eq!(r["structuredContent"]["version"], 1);
    let r = c.call_tool("soul_recall", json!({"agent_id": "ada", "budget": 120}));
    assert!(!is_error(&r), "{r}");
    let prompt = r["structuredContent"]["prompt"].as_str().expect("prompt");
    assert!(prompt.contains("(confidence"), "{prompt}");
    assert!(
        text(&r).starts_with("=== SOUL IDENTITY CONTEXT ("),
        "{}",
        text(&r)
    );
    let s = c.call_tool("mira_status", json!({}));
    assert_eq!(s["structuredContent"]["soul"]["agents"], 1, "{s}");
    let e = c.call_tool("soul_recall", json!({"agent_id": "ghost"}));
    assert!(
        is_error(&e) && text(&e).contains("no identity found for agent ghost"),
        "{e}"
    );
    assert!(server.stop().success());
}

backend_test! {
    /// Two servers capturing for one agent at the same moment, on a fresh database: every capture
    /// makes a version of its own, the versions are consecutive, and each builds on the one before
    /// (on PostgreSQL the second writer waits for the agent's advisory lock, then reads what the
    /// first wrote).
    fn concurrent_captures_for_one_agent_make_consecutive_versions(db) {
        let _serial = serial();
        concurrent_captures(db);
    }
}

fn concurrent_captures(db: &Db) {
    use mira::usecases::soul;
    use mira_soul::service::CaptureRequest;
    const EACH: i64 = 15;
    let (a, b) = (db.hash_app(), db.hash_app());
    let barrier = std::sync::Barrier::new(2);
    let run = |app: &mira::App, model: &str| {
        barrier.wait();
        (0..EACH)
            .map(|_| {
                let req = CaptureRequest {
                    agent_id: "ada".into(),
                    conversation: REPLY.into(),
                    model_id: Some(model.into()),
                    ..CaptureRequest::default()
                };
                soul::capture(app, &req)
                    .unwrap_or_else(|e| panic!("{}: capture on {model}: {e:#}", db.name()))
                    .version
            })
            .collect::<Vec<i64>>()
    };
    let (x, y) = std::thread::scope(|s| {
        let x = s.spawn(|| run(&a, "model-a"));
        let y = s.spawn(|| run(&b, "model-b"));
        (x.join().expect("server a"), y.join().expect("server b"))
    });
    let mut all: Vec<i64> = x.iter().chain(&y).copied().collect();
    all.sort_unstable();
    assert_eq!(
        all,
        (1..=2 * EACH).collect::<Vec<_>>(),
        "a: {x:?}, b: {y:?}"
    );
    let h = soul::history(&b, "ada", Some(1000)).expect("history");
    assert_eq!(h.total, 2 * EACH);
    // Each version's parent is the version before it: none was built on a stale one.
    let chained = h.versions.iter().filter(|v| v.changes.is_some()).count();
    assert_eq!(chained as i64, 2 * EACH - 1, "{:#?}", h.versions);
    let status = soul::status(&a, "ada").expect("status");
    let mut models = status.models.clone();
    models.sort();
    assert_eq!(
        models,
        vec![("model-a".to_owned(), EACH), ("model-b".to_owned(), EACH)]
    );
}
