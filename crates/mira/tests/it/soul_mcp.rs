//! SOUL, the identity extension, end to end on both backends (SQLite, and PostgreSQL when a
//! test server runs): the real binary with `--with-soul`, every soul tool over MCP stdio, the
//! tools' absence without it, drift that is not confidence, the recall order under a budget,
//! and `mira soul` on the command line.

use crate::common::{self, Db};
use crate::mcp_common::*;
use serde_json::{json, Value};

const FORMAL_1: &str = "User: Could you review the database design for the orders service?
Assistant: Certainly. I would recommend that we analyze the schema systematically before changing it. Furthermore, the index on the orders table is not appropriate for the reporting query. Therefore, I would suggest a composite index on customer and date. Please note that the migration must be verified on a copy of the production data. It is important to ensure that the transaction isolation level is correct.
User: What about the cache?
Assistant: Regarding the cache, I would advise caution. Consequently, the invalidation strategy should be documented. Moreover, the configuration parameters ought to be reviewed with the operations team.";

const FORMAL_2: &str = "User: Please assess the deployment plan.
Assistant: Certainly. I would recommend that we examine each stage of the deployment in turn. Furthermore, the rollback procedure is not documented adequately. Therefore, I would suggest a written runbook for every release. Please note that the configuration must be verified in the staging environment. It is essential to ensure that monitoring is in place before the change.
User: And the database migration?
Assistant: Regarding the migration, I would advise a rehearsal. Consequently, the schema change should be reviewed. Moreover, the backup must be tested beforehand.";

const CASUAL: &str = "User: can u look at my db thing?
Assistant: hey, sure thing! lol that schema is kinda wild 😄 gonna be honest, the index thing is totally off. yeah just slap a combo index on it and you're good! haha.
User: and the cache?
Assistant: oh the cache? nah don't sweat it, it's super easy! just nuke it when stuff changes lol. awesome project btw, love it! 🎉 you got this, no worries!";

/// A conversation whose repeated capture once reported drift while nothing changed (growing
/// confidence in an unchanged trait was counted as drift).
const STEADY: &str = "Assistant: I am analytical and methodical. I double-check every step.";

/// A reply with two evidenced traits (curious, patient), which a budgeted `soul_recall` once
/// dropped before the defaults.
const CURIOUS: &str =
    "Hello! I am curious and love digging into puzzles. Let me explain step by step.";

pub const SOUL_TOOLS: [&str; 8] = [
    "soul_capture",
    "soul_recall",
    "soul_drift",
    "soul_swap",
    "soul_status",
    "soul_history",
    "soul_update",
    "soul_patch",
];

/// `mira ARGS` on `db` (its session not initialised).
pub fn spawn(db: &Db, args: &[&str]) -> StdioClient {
    let mut cmd = mira_command(db.dir.path(), args);
    cmd.envs(db.env());
    StdioClient::spawn_command(cmd)
}

/// `mira ARGS` on `db`, its session initialised.
pub fn session(db: &Db, args: &[&str]) -> StdioClient {
    let mut c = spawn(db, args);
    c.initialize();
    c
}

pub fn tools(c: &mut StdioClient) -> Vec<Value> {
    let r = c.request("tools/list", json!({}));
    r["result"]["tools"].as_array().expect("tools").clone()
}

pub fn names(tools: &[Value]) -> Vec<String> {
    tools
        .iter()
        .map(|t| t["name"].as_str().unwrap_or_default().to_owned())
        .collect()
}

/// Calls a tool that must succeed; returns its result.
pub fn ok(c: &mut StdioClient, name: &str, args: Value) -> Value {
    let r = c.call_tool(name, args);
    assert!(!is_error(&r), "{name}: {}", text(&r));
    r
}

/// Calls a tool that must fail; returns its message.
pub fn err(c: &mut StdioClient, name: &str, args: Value) -> String {
    let r = c.call_tool(name, args);
    assert!(is_error(&r), "{name} should fail: {}", text(&r));
    text(&r).to_owned()
}

pub fn capture(c: &mut StdioClient, agent: &str, model: &str, conversation: &str) -> Value {
    ok(
        c,
        "soul_capture",
        json!({"agent_id": agent, "model_id": model, "conversation": conversation}),
    )
}

/// The drift report's entry for `dimension`.
fn dimension<'a>(report: &'a Value, dimension: &str) -> &'a Value {
    report["dimensions"]
        .as_array()
        .expect("dimensions")
        .iter()
        .find(|d| d["dimension"] == dimension)
        .unwrap_or_else(|| panic!("no {dimension} in {report}"))
}

backend_test! {
    fn soul_tools_are_served_only_when_soul_is_enabled(db) {
        let _serial = serial();
        served_only_when_enabled(db);
    }
}

fn served_only_when_enabled(db: &Db) {
    let mut plain = spawn(db, &["serve"]);
    let info = plain.initialize();
    assert!(
        !info["instructions"]
            .as_str()
            .unwrap_or("soul_")
            .contains("soul_"),
        "{info}"
    );
    let mira_tools = names(&tools(&mut plain));
    assert!(
        mira_tools.iter().all(|n| n.starts_with("mira_")),
        "{mira_tools:?}"
    );
    let r = plain.request(
        "tools/call",
        json!({"name": "soul_status", "arguments": {"agent_id": "ada"}}),
    );
    assert!(
        r["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("unknown tool: soul_status")),
        "{r}"
    );
    plain.close();

    let mut with = spawn(db, &["serve", "--with-soul"]);
    let info = with.initialize();
    assert!(
        info["instructions"]
            .as_str()
            .is_some_and(|i| i.contains("mira_recall") && i.contains("call soul_recall")),
        "{info}"
    );
    let all = tools(&mut with);
    let listed = names(&all);
    assert_eq!(listed.len(), mira_tools.len() + 8, "{listed:?}");
    for name in SOUL_TOOLS {
        let t = all
            .iter()
            .find(|t| t["name"] == name)
            .unwrap_or_else(|| panic!("{name} missing from {listed:?}"));
        assert!(
            t["description"].as_str().is_some_and(|d| d.len() > 120),
            "{name}: short description"
        );
        let schema = &t["inputSchema"];
        assert_eq!(schema["type"], "object", "{name}");
        assert_eq!(schema["additionalProperties"], false, "{name}: {schema}");
        assert_eq!(schema["required"][0], "agent_id", "{name}: {schema}");
        for (arg, p) in schema["properties"].as_object().expect("properties") {
            assert!(
                p["description"].as_str().is_some_and(|d| d.len() > 15),
                "{name}.{arg}: no description"
            );
            assert!(
                !p["type"]
                    .as_array()
                    .is_some_and(|t| t.contains(&json!("null"))),
                "{name}.{arg}: nullable {p}"
            );
        }
        let a = &t["annotations"];
        let read_only = matches!(
            name,
            "soul_recall" | "soul_drift" | "soul_status" | "soul_history"
        );
        assert_eq!(a["readOnlyHint"], json!(read_only), "{name}: {a}");
        assert_eq!(a["destructiveHint"], json!(false), "{name}: {a}");
        assert_eq!(a["openWorldHint"], json!(false), "{name}: {a}");
    }
    let patch = &all
        .iter()
        .find(|t| t["name"] == "soul_patch")
        .expect("patch")["inputSchema"];
    assert_eq!(patch["properties"]["formality_level"]["maximum"], 1.0);
    assert_eq!(
        patch["properties"]["sentence_structure"]["enum"],
        json!(["concise", "elaborate", "balanced", "punchy", "flowing"])
    );
    with.close();

    // `soul.enabled: true` in the config file does the same as --with-soul.
    let config = db.dir.path().join("soul.yaml");
    std::fs::write(
        &config,
        "soul:\n  enabled: true\n  recall:\n    default_budget_tokens: 50\n  drift_detection:\n    threshold: 0.9\n",
    )
    .expect("config");
    let mut configured = session(db, &["--config", config.to_str().expect("path"), "serve"]);
    assert_eq!(names(&tools(&mut configured)), listed);
    // … and its soul settings apply.
    capture(&mut configured, "cfg", "m1", FORMAL_1);
    capture(&mut configured, "cfg", "m2", CASUAL);
    let r = ok(&mut configured, "soul_recall", json!({"agent_id": "cfg"}));
    assert_eq!(r["structuredContent"]["budget"], 50);
    assert!(r["structuredContent"]["tokens"].as_u64().expect("tokens") <= 50);
    let r = ok(&mut configured, "soul_drift", json!({"agent_id": "cfg"}));
    assert_eq!(r["structuredContent"]["report"]["threshold"], 0.9);
    configured.close();
}

backend_test! {
    fn every_soul_tool_over_mcp(db) {
        let _serial = serial();
        every_soul_tool(db);
    }
}

fn every_soul_tool(db: &Db) {
    let mut c = session(db, &["serve", "--with-soul"]);

    // Capture: traits with confidences, above the configured threshold (0.3).
    let r = ok(
        &mut c,
        "soul_capture",
        json!({"agent_id": "ada", "model_id": "model-formal", "session_id": "s1",
               "conversation": FORMAL_1, "behavioral_metrics": "{\"response_time_ms\": 850}"}),
    );
    let t = text(&r);
    assert!(t.starts_with("Identity captured successfully.\nAgent:     ada\nVersion:   1\nModel:     model-formal\n"), "{t}");
    let traits = r["structuredContent"]["traits"].as_array().expect("traits");
    assert!(!traits.is_empty(), "{t}");
    for tr in traits {
        let conf = tr["confidence"].as_f64().expect("confidence");
        assert!((0.3..=1.0).contains(&conf), "{tr}");
        let name = tr["name"].as_str().expect("name");
        assert!(
            t.contains(&format!("{name:<22} confidence {conf:.2}")),
            "{name}: {t}"
        );
    }
    assert_eq!(
        capture(&mut c, "ada", "model-casual", CASUAL)["structuredContent"]["version"],
        2
    );
    capture(&mut c, "ada", "model-formal-2", FORMAL_2);

    // Drift between a formal and a casual model: above the threshold on the voice.
    let r = ok(
        &mut c,
        "soul_drift",
        json!({"agent_id": "ada", "from_model": "model-formal", "to_model": "model-casual"}),
    );
    let report = &r["structuredContent"]["report"];
    let voice = dimension(report, "voice");
    let threshold = report["threshold"].as_f64().expect("threshold");
    assert_eq!(threshold, 0.3);
    assert!(
        voice["distance"].as_f64().expect("distance") > threshold,
        "{voice}"
    );
    assert_eq!(voice["significant"], true);
    assert!(
        text(&r).contains("SIGNIFICANT DRIFT DETECTED"),
        "{}",
        text(&r)
    );
    assert!(
        text(&r)
            .lines()
            .any(|l| l.trim_start().starts_with("voice") && l.contains("[!]")),
        "{}",
        text(&r)
    );
    // … and none between two captures of the same style.
    let r = ok(
        &mut c,
        "soul_drift",
        json!({"agent_id": "ada", "from_model": "model-formal", "to_model": "model-formal-2"}),
    );
    let report = &r["structuredContent"]["report"];
    assert_eq!(report["significant"], false, "{}", text(&r));
    assert!(report["dimensions"]
        .as_array()
        .expect("dimensions")
        .iter()
        .all(|d| d["distance"].as_f64().unwrap_or(1.0) <= threshold));
    assert!(text(&r).contains("Status:     stable"), "{}", text(&r));
    // Between versions by default.
    let r = ok(
        &mut c,
        "soul_drift",
        json!({"agent_id": "ada", "window": 5}),
    );
    assert!(text(&r).contains("Versions:   v1 -> v3"), "{}", text(&r));
    let e = err(
        &mut c,
        "soul_drift",
        json!({"agent_id": "ada", "from_model": "model-formal"}),
    );
    assert!(e.contains("both from_model and to_model"), "{e}");

    // Recall: within the budget, counted in cl100k tokens.
    for budget in [60, 200, 1000] {
        let r = ok(
            &mut c,
            "soul_recall",
            json!({"agent_id": "ada", "budget": budget, "context": "database review"}),
        );
        let prompt = r["structuredContent"]["prompt"].as_str().expect("prompt");
        let tokens = mira_core::tokens::count(prompt);
        assert!(tokens <= budget, "{budget}: {tokens} tokens\n{prompt}");
        assert!(tokens > 0);
        assert_eq!(r["structuredContent"]["tokens"], tokens);
        assert!(text(&r).starts_with(&format!(
            "=== SOUL IDENTITY CONTEXT ({tokens} tokens) ===\n\n"
        )));
        assert!(text(&r).ends_with("=== END SOUL IDENTITY ===\n"));
    }
    let e = err(&mut c, "soul_recall", json!({"agent_id": "ghost"}));
    assert!(e.contains("no identity found for agent ghost"), "{e}");
    let e = err(
        &mut c,
        "soul_recall",
        json!({"agent_id": "ada", "budget": 5}),
    );
    assert!(e.contains("from 30 to 100000"), "{e}");

    // Model swap: a reinforcement prompt naming the strongest traits.
    let r = ok(
        &mut c,
        "soul_swap",
        json!({"agent_id": "ada", "from_model": "model-formal-2", "to_model": "claude-next"}),
    );
    let s = &r["structuredContent"];
    let strongest = s["strongest_traits"].as_array().expect("strongest");
    assert!(!strongest.is_empty(), "{}", text(&r));
    let prompt = s["prompt"].as_str().expect("prompt");
    for name in strongest {
        let name = name.as_str().expect("name");
        assert!(prompt.contains(name), "{name}: {prompt}");
    }
    assert!(
        text(&r).contains("Transition: model-formal-2 -> claude-next"),
        "{}",
        text(&r)
    );
    assert_eq!(s["version"], 4, "the reinforced version is stored");
    let e = err(
        &mut c,
        "soul_swap",
        json!({"agent_id": "ada", "from_model": "x"}),
    );
    assert!(e.contains("to_model is required"), "{e}");
    let e = err(
        &mut c,
        "soul_swap",
        json!({"agent_id": "ada", "to_model": "claude-next"}),
    );
    assert_eq!(
        e,
        "from_model is required: give the model's name, e.g. \"gpt-4o\""
    );

    // Status and history.
    let r = ok(&mut c, "soul_status", json!({"agent_id": "ada"}));
    let t = text(&r);
    assert!(t.starts_with("=== SOUL STATUS: ada ===\n"), "{t}");
    assert!(t.contains("Version:    v4 (4 stored)"), "{t}");
    assert!(
        t.contains("Last model swap: model-formal-2 -> claude-next"),
        "{t}"
    );
    let r = ok(
        &mut c,
        "soul_history",
        json!({"agent_id": "ada", "limit": 2}),
    );
    let versions: Vec<i64> = r["structuredContent"]["versions"]
        .as_array()
        .expect("versions")
        .iter()
        .filter_map(|v| v["version"].as_i64())
        .collect();
    assert_eq!(versions, vec![4, 3]);
    assert_eq!(r["structuredContent"]["total"], 4);
    assert!(text(&r).contains("Snapshots (2 of 4):"), "{}", text(&r));

    // Update from a directive, then an explicit patch.
    let r = ok(
        &mut c,
        "soul_update",
        json!({"agent_id": "ada", "directive": "be more concise"}),
    );
    assert_eq!(r["structuredContent"]["version"], 5);
    assert!(
        text(&r).contains("Directive:    be more concise"),
        "{}",
        text(&r)
    );
    assert!(!r["structuredContent"]["changes"]
        .as_array()
        .expect("changes")
        .is_empty());
    let e = err(
        &mut c,
        "soul_update",
        json!({"agent_id": "ada", "directive": "qwerty zxcv"}),
    );
    assert!(!e.is_empty());
    let r = ok(
        &mut c,
        "soul_patch",
        json!({"agent_id": "ada", "reason": "house style", "formality_level": 0.9,
               "uses_emojis": false, "add_catch_phrases": ["Let us be precise."],
               "traits": [{"name": "meticulous", "intensity": 0.8, "confidence": 0.9}]}),
    );
    let t = text(&r);
    assert!(
        t.starts_with("=== SOUL PATCH: ada ===\nNew version:  v6\n"),
        "{t}"
    );
    assert!(
        t.contains("formality_level:") && t.contains("→ 0.90"),
        "{t}"
    );
    assert!(t.contains("Reason:       house style"), "{t}");
    // Invalid patches change nothing.
    let e = err(
        &mut c,
        "soul_patch",
        json!({"agent_id": "ada", "formality_level": 1.5}),
    );
    assert!(e.contains("formality_level 1.5 is out of range"), "{e}");
    let e = err(
        &mut c,
        "soul_patch",
        json!({"agent_id": "ada", "formality": 0.5}),
    );
    assert!(e.contains("unknown field `formality`"), "{e}");
    let e = err(&mut c, "soul_patch", json!({"agent_id": "ada"}));
    assert!(e.contains("the patch is empty"), "{e}");
    let r = ok(&mut c, "soul_status", json!({"agent_id": "ada"}));
    assert!(
        text(&r).contains("Version:    v6 (6 stored)"),
        "{}",
        text(&r)
    );
    let recalled = ok(&mut c, "soul_recall", json!({"agent_id": "ada"}));
    assert!(
        text(&recalled).contains("Let us be precise."),
        "{}",
        text(&recalled)
    );

    // Argument errors say what to send.
    let e = err(&mut c, "soul_capture", json!({"conversation": FORMAL_1}));
    assert!(e.contains("agent_id is required"), "{e}");
    let e = err(&mut c, "soul_capture", json!({"agent_id": "ada"}));
    assert!(e.contains("conversation is required"), "{e}");
    let e = err(
        &mut c,
        "soul_capture",
        json!({"agent_id": "ada", "conversation": FORMAL_1, "behavioral_metrics": "{oops"}),
    );
    assert!(e.contains("behavioral_metrics must be valid JSON"), "{e}");
    // Text stored as given has no NUL (PostgreSQL cannot store one): refused on both backends.
    let e = err(
        &mut c,
        "soul_capture",
        json!({"agent_id": "ada", "conversation": FORMAL_1, "session_id": "s\u{0}1"}),
    );
    assert_eq!(e, "session_id contains a NUL character (U+0000): remove it");
    let e = err(
        &mut c,
        "soul_patch",
        json!({"agent_id": "ada", "reason": "why\u{0}", "humor_level": 0.2}),
    );
    assert_eq!(e, "reason contains a NUL character (U+0000): remove it");
    let e = err(
        &mut c,
        "soul_history",
        json!({"agent_id": "ada", "limit": "many"}),
    );
    assert!(e.contains("limit 'many' is not a number"), "{e}");
    c.close();
}

backend_test! {
    fn the_same_conversation_captured_three_times_is_no_drift(db) {
        let _serial = serial();
        same_conversation_no_drift(db);
    }
}

fn same_conversation_no_drift(db: &Db) {
    let mut c = session(db, &["serve", "--with-soul"]);
    for version in 1..=3 {
        let r = capture(&mut c, "steady", "m", STEADY);
        assert_eq!(r["structuredContent"]["version"], version);
        assert!(
            !text(&r).contains("Drift from the previous version"),
            "{}",
            text(&r)
        );
    }
    let r = ok(&mut c, "soul_drift", json!({"agent_id": "steady"}));
    let report = &r["structuredContent"]["report"];
    let score = report["score"].as_f64().expect("score");
    assert!(
        score < report["threshold"].as_f64().expect("threshold"),
        "{}",
        text(&r)
    );
    assert_eq!(report["significant"], false);
    assert!(text(&r).contains("Status:     stable"), "{}", text(&r));
    let r = ok(&mut c, "soul_history", json!({"agent_id": "steady"}));
    let t = text(&r);
    assert_eq!(t.matches("Changes:    no change").count(), 2, "{t}");
    // Formal then casual, for one agent: above the threshold.
    capture(&mut c, "shifty", "m", FORMAL_1);
    let r = capture(&mut c, "shifty", "m", CASUAL);
    assert!(
        text(&r).contains("Drift from the previous version"),
        "{}",
        text(&r)
    );
    let r = ok(&mut c, "soul_drift", json!({"agent_id": "shifty"}));
    assert_eq!(
        r["structuredContent"]["report"]["significant"],
        true,
        "{}",
        text(&r)
    );
    c.close();
}

backend_test! {
    fn recall_under_a_budget_keeps_the_observed_traits_first(db) {
        let _serial = serial();
        observed_traits_first(db);
    }
}

fn observed_traits_first(db: &Db) {
    let mut c = session(db, &["serve", "--with-soul"]);
    let r = capture(&mut c, "ada", "m", CURIOUS);
    let traits: Vec<String> = r["structuredContent"]["traits"]
        .as_array()
        .expect("traits")
        .iter()
        .filter_map(|t| t["name"].as_str().map(str::to_owned))
        .collect();
    assert!(traits.contains(&"curious".to_owned()), "{traits:?}");
    for budget in [60, 100, 200] {
        let r = ok(
            &mut c,
            "soul_recall",
            json!({"agent_id": "ada", "budget": budget}),
        );
        let statements = r["structuredContent"]["statements"]
            .as_array()
            .expect("statements");
        let sources: Vec<&str> = statements
            .iter()
            .filter_map(|s| s["source"].as_str())
            .collect();
        let first_default = sources
            .iter()
            .position(|s| *s == "default")
            .unwrap_or(sources.len());
        assert!(
            sources[..first_default].iter().all(|s| *s != "default"),
            "{sources:?}"
        );
        for name in &traits {
            let at = statements
                .iter()
                .position(|s| {
                    s["source"] == "trait"
                        && s["line"]
                            .as_str()
                            .is_some_and(|l| l.contains(name.as_str()))
                })
                .unwrap_or_else(|| panic!("{budget}: no {name} in {}", text(&r)));
            assert!(at < first_default, "{budget}: {}", text(&r));
        }
        let prompt = r["structuredContent"]["prompt"].as_str().expect("prompt");
        assert!(
            mira_soul::coherence::contradictions(prompt).is_empty(),
            "{prompt}"
        );
        for absent in ["rarely joke", "without metaphors", "matter-of-fact"] {
            assert!(!prompt.contains(absent), "{budget}: {prompt}");
        }
    }
    c.close();
}

backend_test! {
    fn mira_soul_on_the_command_line(db) {
        soul_on_the_command_line(db);
    }
}

fn soul_on_the_command_line(db: &Db) {
    let conversation = db.dir.path().join("conversation.txt");
    std::fs::write(&conversation, FORMAL_1).expect("write");
    let out = common::stdout(db.mira().args([
        "soul",
        "capture",
        "--agent",
        "ada",
        "--model",
        "gpt-4",
        "--conversation",
        conversation.to_str().expect("path"),
    ]));
    assert!(out.starts_with("Identity captured successfully."), "{out}");
    let out = common::stdout(db.mira().args(["soul", "status", "--agent", "ada"]));
    assert!(out.starts_with("=== SOUL STATUS: ada ===\n"), "{out}");
    let status = common::stdout(db.mira().args(["status"]));
    assert!(
        status.contains("SOUL: disabled (1 agent stored; soul.enabled or --with-soul serves them)"),
        "{status}"
    );
    assert!(out.contains("Version:    v1 (1 stored)"), "{out}");
    assert!(out.contains("model: gpt-4"), "{out}");
    let out = common::stdout(
        db.mira()
            .args(["soul", "history", "--agent", "ada", "--json"]),
    );
    let h: Value = serde_json::from_str(&out).expect("JSON");
    assert_eq!(h["total"], 1);
    let bad = db
        .mira()
        .args(["soul", "patch", "--agent", "ada", r#"{"humor_level": 2}"#])
        .output()
        .expect("run");
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("humor_level 2 is out of range"));
    // The arguments a message names, as the command line spells them.
    for (args, said) in [
        (
            &["update", "--agent", "ada", "  "][..],
            "error: DIRECTIVE is required",
        ),
        (
            &["recall", "--agent", "ada", "--budget", "5"],
            "error: --budget 5 is out of range",
        ),
        (
            &["history", "--agent", "ada", "--limit", "0"],
            "error: --limit 0 is out of range",
        ),
        (
            &["drift", "--agent", "ada", "--window", "0"],
            "error: --window 0 is out of range",
        ),
    ] {
        let bad = db.mira().arg("soul").args(args).output().expect("run");
        let err = String::from_utf8_lossy(&bad.stderr);
        assert_eq!(bad.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(said), "{args:?}: {err}");
    }
    let missing = db.mira().args(["soul", "status"]).output().expect("run");
    assert_eq!(missing.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&missing.stderr).contains("--agent NAME"));
}
