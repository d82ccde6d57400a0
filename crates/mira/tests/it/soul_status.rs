//! SOUL's state as a client sees it: in `mira_status` (enabled, agents, last capture), when it
//! cannot start (its tools say why instead of being unknown), and one round trip over the HTTP
//! transport.

use crate::mcp_common::*;
use crate::soul_mcp::{capture, err, names, ok, session, tools, SOUL_TOOLS};
use serde_json::{json, Value};

const REPLY: &str = "Assistant: I would recommend that we analyze the schema. Therefore, the index must change. Honestly, to be transparent, I might be wrong about the cache.";

/// The `soul` part of a `mira_status` result.
fn soul_state(status: &Value) -> &Value {
    &status["structuredContent"]["soul"]
}

#[test]
fn mira_status_shows_soul() {
    let _g = serial();
    let dir = tempfile::tempdir().expect("tempdir");
    let mut plain = session(dir.path(), &["serve"]);
    let s = ok(&mut plain, "mira_status", json!({}));
    assert_eq!(soul_state(&s)["enabled"], false, "{s}");
    assert!(
        text(&s).contains("SOUL: disabled (soul.enabled or --with-soul)"),
        "{}",
        text(&s)
    );
    plain.close();

    let mut c = session(dir.path(), &["serve", "--with-soul"]);
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

#[test]
fn a_soul_that_cannot_start_says_why() {
    let _g = serial();
    let dir = tempfile::tempdir().expect("tempdir");
    let mut first = session(dir.path(), &["serve"]);
    let mira_tools = names(&tools(&mut first));
    first.close();
    // A database whose SOUL tables come from a newer mira.
    let db = rusqlite::Connection::open(dir.path().join("store").join("mira.db")).expect("db");
    db.execute_batch(
        "CREATE TABLE soul_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
         INSERT INTO soul_meta VALUES ('schema_version', '99');",
    )
    .expect("newer soul schema");
    drop(db);
    let mut c = session(dir.path(), &["serve", "--with-soul"]);
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
    assert!(
        c.stderr().contains("SOUL failed to initialise")
            && c.stderr().contains("schema version 99"),
        "{}",
        c.stderr()
    );
    c.close();
}

#[test]
fn soul_over_http() {
    let _g = serial();
    let dir = tempfile::tempdir().expect("tempdir");
    let server = HttpServer::start_with(dir.path(), &["--with-soul"]);
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
