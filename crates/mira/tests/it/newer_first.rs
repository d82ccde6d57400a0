//! Newer first within a subject: of two memories of the block about the same thing, recall shows
//! the newer first and marks the older as an earlier statement; another subject is never
//! displaced or marked. Driven through the crate API with the real model.

use crate::common::{config_in, model};
use chrono::{DateTime, Duration, TimeZone, Utc};
use mira::usecases::access::Access;
use mira::usecases::recall::{recall, Order, RecallOutcome, RecallRequest};
use mira::usecases::store::{store, StoreRequest};
use mira::App;
use uuid::Uuid;

/// An app on a fresh store in `dir` with the real model, the stage on or off.
fn app(dir: &std::path::Path, newer_first: bool) -> App {
    let mut cfg = config_in(dir);
    cfg.recall.newer_first = newer_first;
    App::open_with_embedder(cfg, model()).unwrap()
}

fn day(n: i64) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 1, 5, 9, 0, 0).unwrap() + Duration::days(n)
}

fn put(app: &App, content: &str, wing: &str, at: DateTime<Utc>) -> Uuid {
    store(
        app,
        &Access::local(),
        StoreRequest {
            content: content.into(),
            wing: wing.into(),
            created_at: Some(at),
            ..StoreRequest::default()
        },
    )
    .unwrap()
    .id
}

fn ask(app: &App, query: &str, wing: &str, order: Order) -> RecallOutcome {
    recall(
        app,
        &Access::local(),
        &RecallRequest {
            query: query.into(),
            wing: Some(wing.into()),
            order,
            ..RecallRequest::default()
        },
    )
    .unwrap()
}

fn position(out: &RecallOutcome, id: Uuid) -> usize {
    out.items
        .iter()
        .position(|i| i.id == id)
        .unwrap_or_else(|| panic!("{id} not shown:\n{}", out.text))
}

/// The day line above memory `id` in the block.
fn day_of(out: &RecallOutcome, id: Uuid) -> &str {
    let at = out.text.find(&id.to_string()[..8]).expect("shown");
    out.text[..at]
        .lines()
        .rev()
        .find(|l| l.ends_with(" 2026:"))
        .expect("a day line above")
}

/// Pairs (earlier, later) that change one thing, without a word that announces it, and the
/// question; each stored in a wing of its own with unrelated memories around.
const UPDATES: [(&str, &str, &str); 3] = [
    (
        "The CLI is written in Python.",
        "The CLI is written in Go.",
        "What language is the CLI written in?",
    ),
    (
        "Vera's mentor is Dr. Osei.",
        "Vera's mentor is Professor Lindqvist.",
        "Who is Vera's mentor?",
    ),
    (
        "Team members work core hours from 10 to 4.",
        "Team members work core hours from 9 to 3.",
        "What are the core hours?",
    ),
];

const AROUND: [&str; 3] = [
    "The staging database is backed up every night at 2am.",
    "I prefer tabs over spaces in every Go file.",
    "Meeting notes: we talked about the onboarding of the new intern.",
];

#[test]
fn the_newer_statement_comes_first_and_the_older_is_marked_with_both_dates() {
    let dir = tempfile::tempdir().unwrap();
    let app = app(dir.path(), true);
    for (n, (old_text, new_text, question)) in UPDATES.iter().enumerate() {
        let wing = format!("w{n}");
        let old = put(&app, old_text, &wing, day(0));
        // Another memory of the older one's day: the newer's day comes up above that day.
        put(
            &app,
            "The office plants are watered on Mondays.",
            &wing,
            day(0) + Duration::hours(2),
        );
        for (k, t) in AROUND.iter().enumerate() {
            put(&app, t, &wing, day(10 + k as i64));
        }
        let new = put(&app, new_text, &wing, day(40));
        let out = ask(&app, question, &wing, Order::Relevance);
        let (pn, po) = (position(&out, new), position(&out, old));
        assert!(pn < po, "the newer first:\n{}", out.text);
        let days: Vec<&str> = out.text.lines().filter(|l| l.ends_with(" 2026:")).collect();
        let distinct: std::collections::HashSet<&&str> = days.iter().collect();
        assert_eq!(
            days.len(),
            distinct.len(),
            "one line per day:\n{}",
            out.text
        );
        let marked = &out.items[po];
        assert_eq!(marked.newer, Some(new), "{}", out.text);
        assert_eq!(marked.superseded_by, None, "a mark, not a supersession");
        let short_new = &new.to_string()[..8];
        assert!(
            marked
                .text
                .contains(&format!("(earlier statement; newer: {short_new})")),
            "{}",
            out.text
        );
        // Both dates are on the day lines above the two (the mark does not repeat them).
        assert!(day_of(&out, old).contains("5 January 2026"), "{}", out.text);
        assert!(
            day_of(&out, new).contains("14 February 2026"),
            "{}",
            out.text
        );
        assert!(marked.why.contains("earlier statement"), "{}", marked.why);
        assert_eq!(out.items[pn].newer, None);
        assert!(out.used <= out.budget, "the mark is paid for");
        // Nothing else is marked, and in time order the older stays first, still marked.
        assert_eq!(out.items.iter().filter(|i| i.newer.is_some()).count(), 1);
        let by_time = ask(&app, question, &wing, Order::Time);
        assert!(position(&by_time, old) < position(&by_time, new));
        assert_eq!(by_time.items[position(&by_time, old)].newer, Some(new));
    }
}

#[test]
fn another_subject_or_an_addition_is_neither_displaced_nor_marked() {
    let dir = tempfile::tempdir().unwrap();
    let app = app(dir.path(), true);
    for (n, (first, later, question)) in [
        (
            "Alice lives in Lyon.",
            "Bob lives in Porto.",
            "Where does Alice live?",
        ),
        (
            "The billing database runs PostgreSQL 14.",
            "The analytics database runs ClickHouse.",
            "What does the billing database run?",
        ),
        (
            "I like sushi.",
            "I also like ramen.",
            "What food do I like?",
        ),
    ]
    .into_iter()
    .enumerate()
    {
        let wing = format!("c{n}");
        let a = put(&app, first, &wing, day(0));
        put(&app, later, &wing, day(40));
        let out = ask(&app, question, &wing, Order::Relevance);
        assert!(
            out.items.iter().all(|i| i.newer.is_none()),
            "nothing marked:\n{}",
            out.text
        );
        let shown: Vec<Uuid> = out.items.iter().map(|i| i.id).collect();
        assert!(shown.contains(&a));
        assert_eq!(
            shown,
            out.ranking[..shown.len()].to_vec(),
            "not displaced: the relevance order:\n{}",
            out.text
        );
    }
}

#[test]
fn switched_off_by_default_the_block_keeps_the_relevance_order_and_marks_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let app = App::open_with_embedder(config_in(dir.path()), model()).unwrap();
    let (old_text, new_text, question) = UPDATES[0];
    put(&app, old_text, "w", day(0));
    put(&app, new_text, "w", day(40));
    let out = ask(&app, question, "w", Order::Relevance);
    assert_eq!(out.items.len(), 2);
    assert!(out.items.iter().all(|i| i.newer.is_none()), "{}", out.text);
    assert!(!out.text.contains("earlier statement"), "{}", out.text);
    let ranking: Vec<Uuid> = out.items.iter().map(|i| i.id).collect();
    assert_eq!(ranking, out.ranking[..2].to_vec(), "relevance order");
}

/// `mira eval updates` through the binary, with the stage on: the update's new value comes
/// first and the old one is marked; the control is neither marked nor moved above by the
/// block's order (the report tells that from a control the ranking itself puts first).
#[test]
fn eval_updates_reports_new_values_first_and_controls_left_in_place() {
    let dir = tempfile::tempdir().unwrap();
    let cases = dir.path().join("cases.jsonl");
    let (old, new, question) = UPDATES[0];
    let lines = [
        serde_json::json!({"kind": "stack", "relation": "update", "cue": false, "voice": "name",
            "old": old, "new": new, "question": question}),
        serde_json::json!({"kind": "people", "relation": "other_subject",
            "old": "Vera's mentor is Professor Lindqvist.", "new": "Oskar's mentor is Dr. Osei.",
            "question": "Who is Vera's mentor?"}),
    ];
    let text: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
    std::fs::write(&cases, text.join("\n")).unwrap();
    let config = dir.path().join("config.yaml");
    std::fs::write(&config, "recall:\n  newer_first: true\n").unwrap();
    let run = |json: bool| {
        let mut cmd = crate::common::mira(dir.path());
        cmd.args(["eval", "updates"])
            .arg(&cases)
            .arg("--config")
            .arg(&config);
        if json {
            cmd.arg("--json");
        }
        crate::common::stdout(&mut cmd)
    };
    let report: serde_json::Value = serde_json::from_str(&run(true)).unwrap();
    assert_eq!(report["updates"]["n"], 1, "{report}");
    assert_eq!(report["updates"]["new_first"], 1, "{report}");
    assert_eq!(report["updates"]["marked"], 1, "{report}");
    assert_eq!(report["controls"]["n"], 1, "{report}");
    assert_eq!(report["controls"]["marked"], 0, "{report}");
    assert_eq!(report["controls"]["moved_first"], 0, "{report}");
    let table = run(false);
    assert!(
        table.contains("new value shown first 1/1 (100.0%)"),
        "{table}"
    );
    assert!(table.contains("(by the block's order 0, "), "{table}");
}

/// `mira eval updates --confirm-offers` through the binary, with the stage off (the default):
/// a change in other words is offered to the agent when stored, and once confirmed recall shows
/// the new value first and the old one superseded; without confirming, nothing is marked. An
/// offered control is not confirmed.
#[test]
fn eval_updates_confirms_offered_updates_as_a_right_judging_agent() {
    let dir = tempfile::tempdir().unwrap();
    let cases = dir.path().join("cases.jsonl");
    let lines = [
        serde_json::json!({"kind": "diet", "relation": "update", "cue": false, "voice": "first",
            "old": "I'm vegetarian.", "new": "I went fully vegan in January.",
            "question": "What is my diet?"}),
        serde_json::json!({"kind": "people", "relation": "other_subject",
            "old": "Vera's mentor is Professor Lindqvist.", "new": "Oskar's mentor is Dr. Osei.",
            "question": "Who is Vera's mentor?"}),
    ];
    let text: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
    std::fs::write(&cases, text.join("\n")).unwrap();
    let run = |confirm: bool| {
        let mut cmd = crate::common::mira(dir.path());
        cmd.args(["eval", "updates", "--json"]).arg(&cases);
        if confirm {
            cmd.arg("--confirm-offers");
        }
        let report: serde_json::Value =
            serde_json::from_str(&crate::common::stdout(&mut cmd)).unwrap();
        report
    };
    let asked = run(false);
    assert_eq!(asked["updates"]["offered"], 1, "{asked}");
    assert_eq!(asked["updates"]["marked"], 0, "{asked}");
    let confirmed = run(true);
    assert_eq!(confirmed["confirm_offers"], true, "{confirmed}");
    assert_eq!(confirmed["updates"]["offered"], 1, "{confirmed}");
    assert_eq!(confirmed["updates"]["new_first"], 1, "{confirmed}");
    assert_eq!(confirmed["updates"]["marked"], 1, "{confirmed}");
    assert_eq!(confirmed["controls"]["marked"], 0, "{confirmed}");
}
