//! The SOUL operations end to end on an in-memory database.

use mira_soul::service::{self, CaptureRequest, DriftRequest, RecallRequest};
use mira_soul::storage::{SoulStore, SqliteSoul};
use mira_soul::{Dimension, Patch, Settings};
use rusqlite::Connection;

pub const FORMAL_1: &str = "User: Could you review the database design for the orders service?
Assistant: Certainly. I would recommend that we analyze the schema systematically before changing it. Furthermore, the index on the orders table is not appropriate for the reporting query. Therefore, I would suggest a composite index on customer and date. Please note that the migration must be verified on a copy of the production data. It is important to ensure that the transaction isolation level is correct.
User: What about the cache?
Assistant: Regarding the cache, I would advise caution. Consequently, the invalidation strategy should be documented. Moreover, the configuration parameters ought to be reviewed with the operations team.";

pub const FORMAL_2: &str = "User: Please assess the deployment plan.
Assistant: Certainly. I would recommend that we examine each stage of the deployment in turn. Furthermore, the rollback procedure is not documented adequately. Therefore, I would suggest a written runbook for every release. Please note that the configuration must be verified in the staging environment. It is essential to ensure that monitoring is in place before the change.
User: And the database migration?
Assistant: Regarding the migration, I would advise a rehearsal. Consequently, the schema change should be reviewed. Moreover, the backup must be tested beforehand.";

pub const CASUAL: &str = "User: can u look at my db thing?
Assistant: hey, sure thing! lol that schema is kinda wild 😄 gonna be honest, the index thing is totally off. yeah just slap a combo index on it and you're good! haha.
User: and the cache?
Assistant: oh the cache? nah don't sweat it, it's super easy! just nuke it when stuff changes lol. awesome project btw, love it! 🎉 you got this, no worries!";

/// A fresh in-memory database with SOUL's tables.
pub fn db() -> Connection {
    let c = Connection::open_in_memory().expect("db");
    let store: &mut dyn SoulStore = &mut SqliteSoul::new(&c);
    store.init().expect("init");
    c
}

/// Captures `text` for `agent` under `model`.
pub fn capture(
    c: &mut dyn SoulStore,
    s: &Settings,
    agent: &str,
    model: &str,
    text: &str,
    now: i64,
) -> service::CaptureOutcome {
    service::capture(
        c,
        s,
        &CaptureRequest {
            agent_id: agent.into(),
            conversation: text.into(),
            model_id: Some(model.into()),
            ..CaptureRequest::default()
        },
        now,
    )
    .expect("capture")
}

fn model_drift(
    c: &mut dyn SoulStore,
    s: &Settings,
    agent: &str,
    a: &str,
    b: &str,
) -> mira_soul::drift::DriftReport {
    service::drift(
        c,
        s,
        &DriftRequest {
            agent_id: agent.into(),
            from_model: Some(a.into()),
            to_model: Some(b.into()),
            ..DriftRequest::default()
        },
    )
    .expect("drift")
    .report
    .expect("report")
}

#[test]
fn formal_and_casual_drift_on_the_voice_and_same_style_does_not() {
    let conn = db();
    let c = &mut SqliteSoul::new(&conn);
    let s = Settings::default();
    capture(c, &s, "a", "model-formal", FORMAL_1, 1000);
    capture(c, &s, "a", "model-casual", CASUAL, 2000);
    capture(c, &s, "a", "model-formal-2", FORMAL_2, 3000);
    let r = model_drift(c, &s, "a", "model-formal", "model-casual");
    let voice = r
        .dimensions
        .iter()
        .find(|d| d.dimension == Dimension::Voice)
        .expect("voice");
    assert!(
        voice.distance > s.drift_threshold && voice.significant,
        "{voice:?}"
    );
    assert!(r.significant);
    let same = model_drift(c, &s, "a", "model-formal", "model-formal-2");
    assert!(!same.significant, "{same:#?}");
    assert!(same
        .dimensions
        .iter()
        .all(|d| d.distance <= s.drift_threshold));
    // The threshold comes from the settings.
    let lax = Settings {
        drift_threshold: 0.6,
        ..Settings::default()
    };
    let r = model_drift(c, &lax, "a", "model-formal", "model-casual");
    let voice = r
        .dimensions
        .iter()
        .find(|d| d.dimension == Dimension::Voice)
        .expect("voice");
    assert!(!voice.significant, "{voice:?}");
}

#[test]
fn versions_grow_and_recall_fits_the_budget() {
    let conn = db();
    let c = &mut SqliteSoul::new(&conn);
    let s = Settings::default();
    let first = capture(c, &s, "a", "m", FORMAL_1, 1000);
    assert_eq!(first.version, 1);
    assert!(!first.traits.is_empty());
    assert!(first
        .traits
        .iter()
        .all(|t| t.confidence >= s.min_trait_confidence));
    assert_eq!(capture(c, &s, "a", "m", FORMAL_2, 2000).version, 2);
    assert_eq!(capture(c, &s, "a", "m", FORMAL_1, 3000).version, 3);
    for budget in [30, 80, 200, 1000] {
        let r = service::recall(
            c,
            &s,
            &RecallRequest {
                agent_id: "a".into(),
                budget: Some(budget),
                context: None,
            },
        )
        .expect("recall");
        assert!(r.tokens as i64 <= budget, "{budget}: {}", r.tokens);
        assert_eq!(r.tokens, mira_core::tokens::count(&r.prompt));
    }
    let e = service::recall(
        c,
        &s,
        &RecallRequest {
            agent_id: "a".into(),
            budget: Some(5),
            context: None,
        },
    )
    .unwrap_err();
    assert!(e.to_string().contains("from 30 to 100000"), "{e}");
    let e = service::recall(
        c,
        &s,
        &RecallRequest {
            agent_id: "ghost".into(),
            ..RecallRequest::default()
        },
    )
    .unwrap_err();
    assert!(
        e.to_string().contains("no identity found for agent ghost"),
        "{e}"
    );
    let h = service::history(c, &s, "a", Some(2)).expect("history");
    assert_eq!(
        h.versions.iter().map(|v| v.version).collect::<Vec<_>>(),
        vec![3, 2]
    );
    assert!(h.versions.iter().all(|v| v.changes.is_some()));
    assert_eq!(h.total, 3);
}

#[test]
fn stricter_threshold_stores_fewer_traits() {
    let conn = db();
    let c = &mut SqliteSoul::new(&conn);
    let loose = capture(c, &Settings::default(), "a", "m", FORMAL_1, 1);
    let strict = Settings {
        min_trait_confidence: 0.6,
        ..Settings::default()
    };
    let tight = capture(c, &strict, "b", "m", FORMAL_1, 1);
    assert!(
        tight.traits.len() < loose.traits.len(),
        "{} vs {}",
        tight.traits.len(),
        loose.traits.len()
    );
    assert!(!tight.dropped.is_empty());
}

#[test]
fn swap_reinforces_and_names_the_strongest_traits() {
    let conn = db();
    let c = &mut SqliteSoul::new(&conn);
    let s = Settings::default();
    capture(c, &s, "a", "gpt-4", FORMAL_1, 1);
    let o = service::swap(c, &s, "a", "gpt-4", "claude-3", 2).expect("swap");
    assert_eq!(o.version, 2);
    assert!(o.reinforced);
    assert!(!o.strongest_traits.is_empty());
    for t in &o.strongest_traits {
        assert!(o.prompt.contains(&format!("**{t}**")), "{t}: {}", o.prompt);
    }
    assert!(o.prompt.contains("Previous model: gpt-4"));
    let last = c.latest_swap("a").expect("swap row").expect("a swap");
    assert_eq!(
        (last.from_model.as_str(), last.to_model.as_str()),
        ("gpt-4", "claude-3")
    );
    assert!(service::swap(c, &s, "a", "x", "x", 3).is_err());
    assert!(service::swap(c, &s, "nobody", "x", "y", 3)
        .unwrap_err()
        .to_string()
        .contains("cannot reinforce"));
    let off = Settings {
        auto_reinforce: false,
        ..Settings::default()
    };
    let o = service::swap(c, &off, "a", "claude-3", "gpt-5", 4).expect("swap");
    assert_eq!(o.version, 2, "no new version without auto_reinforce");
}

#[test]
fn update_and_patch_make_versions_from_nothing() {
    let conn = db();
    let c = &mut SqliteSoul::new(&conn);
    let s = Settings::default();
    let u = service::update(c, &s, "u1", "be more formal", None, 1).expect("update");
    assert_eq!(u.version, 1);
    assert_eq!(u.changes, vec!["formality_level: 0.50 → 0.85"]);
    let p = service::patch(
        c,
        &s,
        "u1",
        &Patch {
            humor_level: Some(0.9),
            ..Patch::default()
        },
        Some("test"),
        2,
    )
    .expect("patch");
    assert_eq!(p.version, 2);
    assert!(service::patch(c, &s, "u1", &Patch::default(), None, 3)
        .unwrap_err()
        .to_string()
        .contains("empty"));
    assert!(service::update(c, &s, "u1", "blah", None, 3).is_err());
    let st = service::status(c, &s, "u1").expect("status");
    assert_eq!(st.versions, 2);
    assert!(st.summary.expect("summary").contains("professional"));
    let none = service::status(c, &s, "ghost").expect("status");
    assert_eq!(
        mira_soul::render::status(&none),
        "=== SOUL STATUS: ghost ===\n\nNo identity captured yet.\n\nDrift: 0.000 (stable)\n"
    );
}

#[test]
fn history_length_is_enforced_and_evolution_can_be_off() {
    let conn = db();
    let c = &mut SqliteSoul::new(&conn);
    let s = Settings {
        max_history_versions: 2,
        ..Settings::default()
    };
    for i in 0..4 {
        capture(c, &s, "a", "m", FORMAL_1, i);
    }
    assert_eq!(c.version_count("a").expect("count"), 2);
    let off = Settings {
        evolution_enabled: false,
        ..Settings::default()
    };
    capture(c, &off, "b", "m", FORMAL_1, 1);
    capture(c, &off, "b", "m", CASUAL, 2);
    assert_eq!(c.version_count("b").expect("count"), 1);
}

#[test]
fn capture_validation() {
    let conn = db();
    let c = &mut SqliteSoul::new(&conn);
    let s = Settings::default();
    let req = |agent: &str, text: &str| CaptureRequest {
        agent_id: agent.into(),
        conversation: text.into(),
        ..CaptureRequest::default()
    };
    assert!(service::capture(c, &s, &req(" ", "hi there"), 1)
        .unwrap_err()
        .to_string()
        .starts_with("agent_id is required"));
    assert!(service::capture(c, &s, &req("a", "  "), 1)
        .unwrap_err()
        .to_string()
        .starts_with("conversation is required"));
    assert!(
        service::capture(c, &s, &req("a", "User: only the user talks here"), 1)
            .unwrap_err()
            .to_string()
            .contains("nothing about the agent")
    );
    let nul = CaptureRequest {
        session_id: Some("s\u{0}1".into()),
        ..req("a", FORMAL_1)
    };
    assert_eq!(
        service::capture(c, &s, &nul, 1).unwrap_err().to_string(),
        "session_id contains a NUL character (U+0000): remove it"
    );
    assert_eq!(
        service::update(c, &s, "a", "be more formal\u{0}", None, 1)
            .unwrap_err()
            .to_string(),
        "directive contains a NUL character (U+0000): remove it"
    );
    assert_eq!(c.version_count("a").expect("count"), 0, "nothing stored");
}

/// One steady personality's conversation, captured three times.
const STEADY: &str = "Assistant: I am analytical and methodical. I double-check every step.";

#[test]
fn capturing_one_conversation_again_is_no_drift() {
    let conn = db();
    let c = &mut SqliteSoul::new(&conn);
    let s = Settings::default();
    let outs: Vec<service::CaptureOutcome> = (1..=3)
        .map(|i| capture(c, &s, "a", "m", STEADY, i))
        .collect();
    for o in &outs[1..] {
        let d = o.drift.as_ref().expect("checked after capture");
        assert!(!d.significant && d.score < s.drift_threshold, "{d:#?}");
    }
    // More evidence for the same trait …
    let conf = |o: &service::CaptureOutcome| o.confidence;
    assert!(conf(&outs[2]) > conf(&outs[0]));
    // … is not drift, and the history says so.
    let r = service::drift(
        c,
        &s,
        &DriftRequest {
            agent_id: "a".into(),
            ..DriftRequest::default()
        },
    )
    .expect("drift");
    let report = r.report.expect("report");
    assert!(
        report.score < s.drift_threshold && !report.significant,
        "{report:#?}"
    );
    let h = service::history(c, &s, "a", None).expect("history");
    let text = mira_soul::render::history(&h);
    for v in &h.versions[..2] {
        assert!(
            v.changes.as_ref().expect("changes").is_unchanged(),
            "{text}"
        );
    }
    assert_eq!(text.matches("Changes:    no change").count(), 2, "{text}");
}

#[test]
fn a_new_style_between_versions_is_drift() {
    let conn = db();
    let c = &mut SqliteSoul::new(&conn);
    let s = Settings::default();
    capture(c, &s, "a", "m", FORMAL_1, 1);
    let o = capture(c, &s, "a", "m", CASUAL, 2);
    let d = o.drift.expect("checked after capture");
    assert!(d.significant && d.score > s.drift_threshold, "{d:#?}");
    let traits = d
        .dimensions
        .iter()
        .find(|x| x.dimension == Dimension::Traits)
        .expect("traits");
    assert!(
        traits.details.iter().any(|x| x.ends_with("gained")),
        "{traits:?}"
    );
}
