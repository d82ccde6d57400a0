//! The agent in the loop, scripted over MCP stdio on each backend: a store answers with the
//! earlier memories it may update, the agent confirms with `mira_supersede`, recall shows the
//! new memory first and the old one marked, and the undo makes the old one current again.
//! The same through `mira supersede OLD NEW` on the command line.

use crate::common::{stdout, Db};
use crate::mcp_common::*;
use serde_json::{json, Value};

const OLD: &str = "The CLI is written in Python.";
const NEW: &str = "The CLI is written in Go.";
const QUESTION: &str = "What language is the CLI written in?";

/// The server, with recall's newer-first stage on (`recall.newer_first`).
fn serve(db: &Db) -> StdioClient {
    let config = db.dir.path().join("newer-first.yaml");
    std::fs::write(&config, "recall:\n  newer_first: true\n").unwrap();
    let config = config.to_string_lossy().into_owned();
    let mut cmd = mira_command(db.dir.path(), &["--config", &config, "serve"]);
    cmd.envs(db.env());
    let mut c = StdioClient::spawn_command(cmd);
    c.initialize();
    c
}

fn ok(r: Value) -> Value {
    assert!(!is_error(&r), "{r}");
    r
}

fn section<'a>(body: &'a str, id: &str) -> Option<&'a str> {
    let at = body.find(&format!("[{}]", &id[..8]))?;
    Some(body[at..].lines().next().unwrap_or_default())
}

backend_test! {
    fn store_offers_candidates_the_agent_confirms_and_undoes_over_mcp(db) {
        let _serial = serial();
        agent_loop(db);
    }
}

backend_test! {
    fn a_change_in_other_words_months_later_is_offered_to_the_agent(db) {
        let _serial = serial();
        let mut c = serve(db);
        let store = |c: &mut StdioClient, content: &str, at: &str| {
            ok(c.call_tool(
                "mira_store",
                json!({"content": content, "wing": "me", "created_at": at}),
            ))
        };
        // Beyond the recent memories relating reads (30 days, 50 memories), and sharing no
        // word with the new one: only closeness offers it.
        let old = stored_id(&store(&mut c, "I'm vegetarian.", "2026-01-10T09:00:00Z"));
        store(&mut c, "The team standup is at 9:30.", "2026-02-01T09:00:00Z");
        let stored = store(&mut c, "I went fully vegan in January.", "2026-06-01T09:00:00Z");
        let body = text(&stored);
        assert!(
            body.contains(&format!("May update: [{}] I'm vegetarian.", &old[..8])),
            "{body}"
        );
        assert!(!body.contains("standup"), "{body}");
        // The memory a store says it replaces is not offered again.
        let vegan = stored_id(&stored);
        let again = ok(c.call_tool(
            "mira_store",
            json!({"content": "I eat fish again since March.", "wing": "me",
                   "created_at": "2026-07-01T09:00:00Z", "supersedes": vegan}),
        ));
        let body = text(&again);
        assert!(body.contains(&format!("Supersedes: {}", &vegan[..8])), "{body}");
        assert!(!body.contains(&format!("May update: [{}]", &vegan[..8])), "{body}");
    }
}

fn agent_loop(db: &Db) {
    let mut c = serve(db);
    let old = stored_id(&ok(c.call_tool(
        "mira_store",
        json!({"content": OLD, "wing": "cli", "created_at": "2026-02-01T09:00:00Z"}),
    )));
    c.call_tool(
        "mira_store",
        json!({"content": "Releases are tagged on the main branch.", "wing": "cli", "created_at": "2026-02-05T09:00:00Z"}),
    );
    let stored = ok(c.call_tool(
        "mira_store",
        json!({"content": NEW, "wing": "cli", "created_at": "2026-02-14T09:00:00Z"}),
    ));
    let new = stored_id(&stored);
    // The store answers with the candidate and how to confirm.
    let body = text(&stored);
    assert!(
        body.contains(&format!("May update: [{}] {OLD}", &old[..8])),
        "{body}"
    );
    assert!(
        body.contains(&format!(
            "mira_supersede old={} new={}",
            &old[..8],
            &new[..8]
        )),
        "{body}"
    );
    assert_eq!(
        stored["structuredContent"]["may_update"][0]["id"],
        json!(old),
        "{stored}"
    );
    assert_eq!(
        stored["structuredContent"]["may_update"]
            .as_array()
            .map(Vec::len),
        Some(1),
        "only the memory about the same thing: {stored}"
    );
    // Before confirming, recall already shows the newer first, the older marked.
    let r = ok(c.call_tool("mira_recall", json!({"query": QUESTION, "wing": "cli"})));
    let body = text(&r).to_owned();
    let old_line = section(&body, &old).expect("old shown");
    assert!(
        old_line.contains(&format!("earlier statement; newer: {}", &new[..8])),
        "{body}"
    );
    assert!(body.find(&new[..8]) < body.find(&old[..8]), "{body}");
    // The agent confirms.
    let s = ok(c.call_tool(
        "mira_supersede",
        json!({"old": &old[..8], "new": &new[..8], "reason": "the CLI was rewritten"}),
    ));
    assert!(
        text(&s).contains(&format!("Superseded: {} by {}", &old[..8], &new[..8])),
        "{s}"
    );
    assert!(text(&s).contains("Reason: the CLI was rewritten"), "{s}");
    assert_eq!(s["structuredContent"]["superseded"], json!(true));
    let again = ok(c.call_tool("mira_supersede", json!({"old": &old, "new": &new})));
    assert!(text(&again).starts_with("Already superseded"), "{again}");
    let r = ok(c.call_tool("mira_recall", json!({"query": QUESTION, "wing": "cli"})));
    let body = text(&r).to_owned();
    let old_line = section(&body, &old).expect("old shown as a header");
    assert!(
        old_line.contains(&format!("superseded by {}", &new[..8])) && !old_line.contains(OLD),
        "{body}"
    );
    assert!(body.find(&new[..8]) < body.find(&old[..8]), "{body}");
    // Undo: the old memory is current again (shown in full, marked only as an earlier
    // statement).
    let u = ok(c.call_tool(
        "mira_supersede",
        json!({"old": &old, "new": &new, "undo": true}),
    ));
    assert!(text(&u).starts_with("Undone"), "{u}");
    assert_eq!(u["structuredContent"]["superseded"], json!(false));
    let r = ok(c.call_tool("mira_recall", json!({"query": QUESTION, "wing": "cli"})));
    let body = text(&r).to_owned();
    let old_line = section(&body, &old).expect("old shown");
    assert!(
        !old_line.contains("superseded by") && old_line.contains("earlier statement"),
        "{body}"
    );
    // Mistakes are explained, nothing is changed.
    for (args, says) in [
        (json!({"old": &old, "new": &old}), "the same memory"),
        (json!({"old": &old}), "needs `old`"),
        (json!({"old": &old, "new": "00000000"}), "no memory"),
        (
            json!({"old": &old, "new": &new, "undo": "maybe"}),
            "undo must be",
        ),
    ] {
        let r = c.call_tool("mira_supersede", args);
        assert!(is_error(&r) && text(&r).contains(says), "{says}: {r}");
    }
    let other = stored_id(&ok(c.call_tool(
        "mira_store",
        json!({"content": "The CLI is written in Rust.", "wing": "other"}),
    )));
    let r = c.call_tool("mira_supersede", json!({"old": &old, "new": &other}));
    assert!(is_error(&r) && text(&r).contains("its own wing"), "{r}");
    drop(c);
    // The command line: supersede, then undo.
    let out = stdout(db.mira().args(["supersede", &old[..8], &new[..8]]));
    assert!(out.starts_with("Superseded"), "{out}");
    let out = stdout(
        db.mira()
            .args(["supersede", &old[..8], &new[..8], "--undo", "--json"]),
    );
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        (v["superseded"].clone(), v["changed"].clone()),
        (json!(false), json!(true))
    );
}
