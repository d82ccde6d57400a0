//! The memory browser's supersede action: `POST /ui/api/supersede` (the use case of
//! `mira_supersede`) marks and undoes, and refuses bad input and a token's missing rights with
//! a clear error, never a 500; a memory's page offers the newer memories about the same thing.
//! Then in a real headless Chromium: on a memory's page, the offered newer memory is clicked,
//! the page says the memory is superseded and links to the newer one, the undo clears the mark;
//! an id typed in the form does the same, and a wrong one is answered on the page.

use crate::mcp_common::{serial, HttpServer};
use crate::scoped_tokens::token_new;
use crate::ui_browser::{
    browser_for, click, confirm, memory_shown, run_json, runtime, session, type_into, until, Driver,
};
use serde_json::{json, Value};
use std::path::Path;

const OLD: &str = "The CLI is written in Python.";
const NEW: &str = "The CLI is written in Go.";
const UNRELATED: &str = "Releases are tagged on the main branch.";
const ADMIN: &str = "admin-s3cret";

/// The memories of the tests, by id.
struct Ids {
    old: String,
    unrelated: String,
    new: String,
    shared: String,
    team_b: String,
    team_b2: String,
}

fn stored(d: &Path, content: &str, wing: &str, at: &str) -> String {
    let v = run_json(
        d,
        &[
            "store",
            content,
            "--wing",
            wing,
            "--created-at",
            at,
            "--json",
        ],
    );
    v["id"].as_str().expect("id").to_owned()
}

/// An older fact, an unrelated memory and the fact that replaces it in `team-a`, a memory in
/// `shared` and two in `team-b`.
fn memories(d: &Path) -> Ids {
    Ids {
        old: stored(d, OLD, "team-a", "2026-02-01T09:00:00Z"),
        unrelated: stored(d, UNRELATED, "team-a", "2026-02-05T09:00:00Z"),
        new: stored(d, NEW, "team-a", "2026-02-14T09:00:00Z"),
        shared: stored(
            d,
            "The shared calendar lists every release.",
            "shared",
            "2026-02-01T09:00:00Z",
        ),
        team_b: stored(
            d,
            "Team B keeps the payroll secrets in the vault.",
            "team-b",
            "2026-02-01T09:00:00Z",
        ),
        team_b2: stored(
            d,
            "Team B moved the payroll secrets to the new vault.",
            "team-b",
            "2026-02-14T09:00:00Z",
        ),
    }
}

/// The browser's API of a server, with one token.
struct Api {
    base: String,
    token: String,
    http: reqwest::blocking::Client,
}

impl Api {
    fn new(server: &HttpServer, token: &str) -> Api {
        Api {
            base: format!("{}api", server.url),
            token: token.to_owned(),
            http: reqwest::blocking::Client::new(),
        }
    }

    fn answer(&self, req: reqwest::blocking::RequestBuilder) -> (u16, Value) {
        let r = req.bearer_auth(&self.token).send().expect("request");
        let status = r.status().as_u16();
        let body = r.text().expect("body");
        let v = serde_json::from_str(&body)
            .unwrap_or_else(|e| panic!("not JSON ({e}), status {status}: {body}"));
        (status, v)
    }

    fn supersede(&self, body: &Value) -> (u16, Value) {
        self.answer(
            self.http
                .post(format!("{}/supersede", self.base))
                .header("Content-Type", "application/json")
                .body(body.to_string()),
        )
    }

    fn page(&self, id: &str) -> Value {
        let (status, v) = self.answer(self.http.get(format!("{}/memory?id={id}", self.base)));
        assert_eq!(status, 200, "{v}");
        v
    }
}

/// The ids of one list of a memory's page.
fn ids(page: &Value, list: &str) -> Vec<String> {
    page[list]
        .as_array()
        .unwrap_or_else(|| panic!("no {list} in {page}"))
        .iter()
        .map(|l| l["id"].as_str().expect("id").to_owned())
        .collect()
}

/// A refusal with `status` whose message holds every one of `words`.
fn refused(what: &str, (status, v): (u16, Value), expected: u16, words: &[&str]) {
    assert_eq!(status, expected, "{what}: {v}");
    let message = v["error"].as_str().unwrap_or_default();
    for w in words {
        assert!(
            message.contains(w),
            "{what}: the error lacks {w:?}: {message}"
        );
    }
}

#[test]
fn the_supersede_endpoint_marks_undoes_and_refuses_bad_input_clearly() {
    let _serial = serial();
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    let m = memories(d);
    let alice = token_new(
        d,
        &[
            "alice", "--read", "team-a", "--read", "shared", "--write", "team-a",
        ],
    );
    let config = d.join("config.yaml");
    std::fs::write(
        &config,
        format!(
            "mcp:\n  http:\n    auth_token: {ADMIN}\n    tokens:\n{}",
            alice.entry
        ),
    )
    .expect("config");
    let server = HttpServer::spawn(
        d,
        &[
            "ui",
            "--addr",
            "127.0.0.1:0",
            "--config",
            config.to_str().expect("path"),
        ],
    );
    let admin = Api::new(&server, ADMIN);

    // The page of the older fact offers the newer one about the same thing first (then other
    // close ones, if any, for the reader to judge).
    assert_eq!(
        ids(&admin.page(&m.old), "may_replace").first(),
        Some(&m.new)
    );
    assert_eq!(
        ids(&admin.page(&m.new), "may_replace"),
        Vec::<String>::new()
    );

    // Marked, shown on both pages, idempotent.
    let (status, done) = admin.supersede(
        &json!({"old": m.old, "new": &m.new[..8], "reason": "  the CLI was rewritten  "}),
    );
    assert_eq!(status, 200, "{done}");
    assert_eq!(
        (&done["superseded"], &done["changed"], &done["reason"]),
        (&json!(true), &json!(true), &json!("the CLI was rewritten")),
        "{done}"
    );
    let old_page = admin.page(&m.old);
    assert_eq!(old_page["superseded_by"], json!(m.new), "{old_page}");
    assert_eq!(ids(&old_page, "later_versions"), [m.new.as_str()]);
    assert_eq!(ids(&old_page, "may_replace"), Vec::<String>::new());
    assert_eq!(
        ids(&admin.page(&m.new), "earlier_versions"),
        [m.old.as_str()]
    );
    let (status, again) = admin.supersede(&json!({"old": m.old, "new": m.new}));
    assert_eq!(status, 200, "{again}");
    assert_eq!(again["changed"], json!(false), "{again}");

    // While it is superseded: the wrong undo, and the reverse, are refused with the way out.
    refused(
        "undo by a memory that does not supersede it",
        admin.supersede(&json!({"old": m.old, "new": m.unrelated, "undo": true})),
        400,
        &["is superseded by", "undo that one instead"],
    );
    refused(
        "the reverse supersession",
        admin.supersede(&json!({"old": m.new, "new": m.old})),
        400,
        &["already replaces", "undo that first"],
    );
    refused(
        "superseded again by another",
        admin.supersede(&json!({"old": m.old, "new": m.unrelated})),
        400,
        &["already superseded by", "undo that first"],
    );

    // Undone: current again, offered again; a second undo changes nothing.
    let (status, undone) = admin.supersede(&json!({"old": m.old, "new": m.new, "undo": true}));
    assert_eq!(status, 200, "{undone}");
    assert_eq!(
        (&undone["superseded"], &undone["changed"]),
        (&json!(false), &json!(true)),
        "{undone}"
    );
    let old_page = admin.page(&m.old);
    assert_eq!(old_page["superseded_by"], Value::Null, "{old_page}");
    assert_eq!(ids(&old_page, "may_replace").first(), Some(&m.new));
    let (status, nothing) = admin.supersede(&json!({"old": m.old, "new": m.new, "undo": true}));
    assert_eq!(
        (status, &nothing["changed"]),
        (200, &json!(false)),
        "{nothing}"
    );

    // Bad input: a clear refusal each, never a 500, and nothing changed.
    let long = "x".repeat(1001);
    let cases: Vec<(&str, Value, u16, &[&str])> = vec![
        (
            "unknown short id",
            json!({"old": "deadbeef", "new": m.new}),
            404,
            &[
                "no memory has an id starting with deadbeef",
                "mira_timeline",
            ],
        ),
        (
            "unknown UUID",
            json!({"old": m.old, "new": "3f2c0d1e-0000-4000-8000-000000000000"}),
            404,
            &["no memory has id 3f2c0d1e-0000-4000-8000-000000000000"],
        ),
        (
            "malformed id",
            json!({"old": "not-an-id", "new": m.new}),
            400,
            &["invalid ID 'not-an-id'"],
        ),
        (
            "SQL in an id",
            json!({"old": m.old, "new": "' OR 1=1 --"}),
            400,
            &["invalid ID"],
        ),
        ("empty id", json!({"old": "", "new": m.new}), 400, &["ID"]),
        (
            "the same id twice",
            json!({"old": m.old, "new": m.old}),
            400,
            &["the same memory", "the one that replaces it as new"],
        ),
        (
            "the same memory by two forms of its id",
            json!({"old": m.old, "new": format!("T0:{}", m.old)}),
            400,
            &["the same memory"],
        ),
        (
            "a memory of another wing",
            json!({"old": m.old, "new": m.team_b2}),
            400,
            &["wing 'team-a'", "wing 'team-b'", "one of its own wing"],
        ),
        (
            "new missing",
            json!({"old": m.old}),
            400,
            &["missing field `new`"],
        ),
        (
            "old missing",
            json!({"new": m.new}),
            400,
            &["missing field `old`"],
        ),
        (
            "reason too long",
            json!({"old": m.old, "new": m.new, "reason": long}),
            400,
            &["reason is 1001 bytes", "longer than 1000"],
        ),
        (
            "reason is a number",
            json!({"old": m.old, "new": m.new, "reason": 42}),
            400,
            &["reason", "expected a string"],
        ),
        (
            "undo is text",
            json!({"old": m.old, "new": m.new, "undo": "yes"}),
            400,
            &["undo", "expected a boolean"],
        ),
        (
            "an unknown field",
            json!({"old": m.old, "new": m.new, "supersedes": m.old}),
            400,
            &["unknown field `supersedes`"],
        ),
        (
            "ids are numbers",
            json!({"old": 1, "new": 2}),
            400,
            &["invalid type: integer", "expected a string"],
        ),
    ];
    for (what, body, status, words) in cases {
        refused(what, admin.supersede(&body), status, words);
    }
    assert_eq!(admin.page(&m.old)["superseded_by"], Value::Null);

    // A token that may not write a wing is refused, named with the wing; in its own wing it may.
    let alice = Api::new(&server, &alice.secret);
    for (what, body, wing) in [
        (
            "old in a wing it only reads",
            json!({"old": m.shared, "new": m.new}),
            "shared",
        ),
        (
            "new in a wing it cannot see",
            json!({"old": m.old, "new": m.team_b2}),
            "team-b",
        ),
        (
            "both in a wing it cannot see",
            json!({"old": m.team_b, "new": m.team_b2}),
            "team-b",
        ),
    ] {
        refused(
            what,
            alice.supersede(&body),
            403,
            &["token 'alice'", &format!("'{wing}'")],
        );
    }
    let (status, v) = alice.supersede(&json!({"old": m.old, "new": m.new}));
    assert_eq!((status, &v["superseded"]), (200, &json!(true)), "{v}");
    assert!(server.stop().success());
}

#[test]
fn a_memory_is_superseded_and_undone_from_its_page_in_chromium() {
    let _serial = serial();
    let Some((chromium, chromedriver)) =
        browser_for("a_memory_is_superseded_and_undone_from_its_page_in_chromium")
    else {
        return;
    };
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    let m = memories(d);
    let server = HttpServer::spawn(d, &["ui", "--addr", "127.0.0.1:0"]);
    let url = server.url.clone();
    let superseded_by = |id: &str| run_json(d, &["load", id, "--json"])["superseded_by"].clone();

    let driver = Driver::start(&chromedriver);
    let profile = tempfile::tempdir().expect("profile dir");
    runtime().block_on(async {
        let c = session(&driver, &chromium, profile.path()).await;
        let (old, new) = (m.old.as_str(), m.new.as_str());

        // The older fact's page offers the newer one; one click (confirmed) marks it.
        c.goto(&format!("{url}#/memory/{old}")).await.expect("old page");
        assert_eq!(memory_shown(&c, old).await, OLD);
        let offered = until(
            &c,
            "return [...document.querySelectorAll('#supersede-candidates li')].map(l => l.dataset.id)",
            "the offered newer memories",
        )
        .await;
        assert_eq!(offered, json!([new]));
        click(&c, &format!("#supersede-candidates li[data-id='{new}'] button.supersede")).await;
        confirm(&c).await;
        let linked = until(
            &c,
            "return document.querySelector('#superseded-by a[data-id]')?.dataset.id",
            "the superseded mark",
        )
        .await;
        assert_eq!(linked, json!(new));
        let mark = until(&c, "return document.getElementById('superseded-by').innerText", "the mark's text").await;
        assert!(mark.as_str().is_some_and(|t| t.starts_with("Superseded by") && t.contains(NEW)), "{mark}");
        assert_eq!(superseded_by(old), json!(new));
        let shown = until(&c, "return document.querySelector('article.memory h1').innerText", "the title").await;
        assert!(shown.as_str().is_some_and(|t| t.contains("superseded")), "{shown}");
        assert_eq!(
            c.execute("return !!document.getElementById('supersede-form')", vec![]).await.expect("form"),
            json!(false),
            "a superseded memory is offered another successor"
        );

        // The mark links to the newer memory, whose page lists the older as its earlier version.
        click(&c, "#superseded-by a[data-id]").await;
        assert_eq!(memory_shown(&c, new).await, NEW);
        let earlier = until(&c, "return [...document.querySelectorAll('.links ol a[data-id]')].map(a => a.dataset.id)", "the earlier version").await;
        assert_eq!(earlier, json!([old]));

        // Undo from the older page: the mark is gone, the memory is current again.
        c.goto(&format!("{url}#/memory/{old}")).await.expect("old page");
        memory_shown(&c, old).await;
        click(&c, "#act-unsupersede").await;
        confirm(&c).await;
        until(
            &c,
            "return !document.getElementById('superseded-by') && !!document.getElementById('supersede-form')",
            "the mark undone",
        )
        .await;
        assert_eq!(superseded_by(old), Value::Null);

        // The same by an id typed, with a reason.
        type_into(&c, "#supersede-new", &new[..8]).await;
        type_into(&c, "#supersede-reason", "the CLI was rewritten").await;
        click(&c, "#supersede-form button[type=submit]").await;
        confirm(&c).await;
        until(&c, "return document.querySelector('#superseded-by a[data-id]')?.dataset.id", "the mark").await;
        assert_eq!(superseded_by(old), json!(new));

        // A wrong id typed is answered on the page, and changes nothing.
        c.goto(&format!("{url}#/memory/{}", m.unrelated)).await.expect("unrelated page");
        assert_eq!(memory_shown(&c, &m.unrelated).await, UNRELATED);
        type_into(&c, "#supersede-new", "deadbeef").await;
        click(&c, "#supersede-form button[type=submit]").await;
        confirm(&c).await;
        let error = until(&c, "return document.querySelector('#notice p.error')?.innerText", "the error").await;
        assert!(error.as_str().is_some_and(|e| e.contains("no memory has an id starting with deadbeef")), "{error}");
        assert_eq!(superseded_by(&m.unrelated), Value::Null);
        c.close().await.expect("close the session");
    });
    assert!(server.stop().success());
}
