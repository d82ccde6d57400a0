//! The memory browser's server without a browser: its API behind the token, the refusal of
//! cross-site and foreign-host requests, its security headers, `/ui` beside `/mcp`, and the
//! edit use case its "edit wing, room or type" action runs.

use crate::common::hash_app;
use crate::mcp_common::{mira_command, serial, HttpServer};
use mira::usecases::access::Access;
use mira::usecases::edit::{edit, EditRequest};
use mira::usecases::recall::{recall, RecallRequest};
use mira::usecases::store::{store, StoreRequest};
use mira::usecases::{load, UseCaseError};
use reqwest::blocking::{Client, Response};
use reqwest::header::{AUTHORIZATION, CONTENT_SECURITY_POLICY, CONTENT_TYPE, HOST, ORIGIN};
use serde_json::{json, Value};
use std::path::Path;

const TOKEN: &str = "ui-s3cret";

/// A config file in `dir` setting the HTTP token.
fn token_config(dir: &Path) -> String {
    let path = dir.join("config.yaml");
    std::fs::write(&path, format!("mcp:\n  http:\n    auth_token: {TOKEN}\n")).expect("config");
    path.to_str().expect("utf-8 path").to_owned()
}

/// `http://127.0.0.1:<port>` of a server URL.
fn origin(url: &str) -> String {
    let rest = url.trim_start_matches("http://");
    format!("http://{}", &rest[..rest.find('/').unwrap_or(rest.len())])
}

fn json_of(r: Response) -> (u16, Value) {
    let status = r.status().as_u16();
    (
        status,
        serde_json::from_str(&r.text().unwrap_or_default()).unwrap_or(Value::Null),
    )
}

/// Whether an API refusal's message contains `words`.
fn says(e: &Value, words: &str) -> bool {
    e["error"].as_str().is_some_and(|m| m.contains(words))
}

/// A POST of `body` as JSON.
fn post(http: &Client, url: String, body: &Value) -> reqwest::blocking::RequestBuilder {
    http.post(url)
        .header(CONTENT_TYPE, "application/json")
        .body(body.to_string())
}

#[test]
fn the_api_needs_the_token_and_refuses_cross_site_and_foreign_host_requests() {
    let _serial = serial();
    let dir = tempfile::tempdir().expect("tempdir");
    let config = token_config(dir.path());
    let server = HttpServer::spawn(
        dir.path(),
        &["ui", "--addr", "127.0.0.1:0", "--config", &config],
    );
    assert!(server.url.ends_with("/ui/"), "{}", server.url);
    let base = origin(&server.url);
    let http = Client::new();
    let api = |path: &str| format!("{base}/ui/api/{path}");

    // The page itself holds no data: it loads without the token, with a strict CSP.
    let page = http.get(&server.url).send().expect("page");
    assert_eq!(page.status(), 200);
    let csp = page.headers()[CONTENT_SECURITY_POLICY]
        .to_str()
        .expect("csp")
        .to_owned();
    for rule in [
        "default-src 'none'",
        "script-src 'self'",
        "frame-ancestors 'none'",
    ] {
        assert!(csp.contains(rule), "{csp}");
    }
    assert!(page
        .text()
        .expect("html")
        .contains("<script type=\"module\" src=\"main.js\">"));
    let js = http.get(format!("{base}/ui/main.js")).send().expect("js");
    assert!(js.headers()[CONTENT_TYPE]
        .to_str()
        .expect("type")
        .starts_with("text/javascript"));
    assert_eq!(
        http.get(format!("{base}/ui/nope.js"))
            .send()
            .expect("404")
            .status(),
        404
    );
    assert_eq!(
        http.get(format!("{base}/"))
            .send()
            .expect("root")
            .url()
            .path(),
        "/ui/"
    );

    // Without the token (or with a wrong one) the API refuses reads and changes.
    let (status, _) = json_of(http.get(api("status")).send().expect("status"));
    assert_eq!(status, 401);
    let (status, _) = json_of(
        http.get(api("status"))
            .header(AUTHORIZATION, "Bearer guess")
            .send()
            .expect("status"),
    );
    assert_eq!(status, 401);
    let memory =
        json!({"content": "The staging database runs PostgreSQL 16 on port 5433.", "wing": "ops"});
    let (status, _) = json_of(post(&http, api("store"), &memory).send().expect("store"));
    assert_eq!(status, 401, "a store without the token must be refused");

    let bearer = format!("Bearer {TOKEN}");
    let read = |path: &str| {
        let answer = http.get(api(path)).header(AUTHORIZATION, &bearer).send();
        json_of(answer.expect("GET"))
    };
    let (status, s) = read("status");
    assert_eq!(status, 200, "{s}");
    assert_eq!(s["status"]["memories"], 0, "{s}");
    assert_eq!(s["soul"], false);
    assert_eq!(
        s["token_required"], true,
        "the page offers to change the token"
    );
    let (status, e) = read("soul?agent=ada");
    assert_eq!(status, 404, "{e}");
    assert!(says(&e, "--with-soul"), "{e}");

    // A change must carry a JSON body and come from the page's own origin.
    let form = http
        .post(api("store"))
        .header(AUTHORIZATION, &bearer)
        .header(CONTENT_TYPE, "application/x-www-form-urlencoded")
        .body("content=x&wing=ops")
        .send()
        .expect("form post");
    assert_eq!(form.status(), 403);
    let (status, e) = json_of(
        post(&http, api("store"), &memory)
            .header(AUTHORIZATION, &bearer)
            .header(ORIGIN, "http://evil.example")
            .send()
            .expect("cross-site"),
    );
    assert_eq!(status, 403, "{e}");
    assert!(says(&e, "cross-site"), "{e}");
    // A name that resolves to 127.0.0.1 but is not loopback's (DNS rebinding) is not answered.
    let (status, _) = json_of(
        http.get(api("status"))
            .header(AUTHORIZATION, &bearer)
            .header(HOST, "rebind.example")
            .send()
            .expect("rebinding"),
    );
    assert_eq!(status, 421);

    let (status, stored) = json_of(
        post(&http, api("store"), &memory)
            .header(AUTHORIZATION, &bearer)
            .header(ORIGIN, &base)
            .send()
            .expect("store"),
    );
    assert_eq!(status, 200, "{stored}");
    let id = stored["id"].as_str().expect("id").to_owned();
    let (status, _) = json_of(
        post(&http, api("forget"), &json!({"id": id}))
            .send()
            .expect("forget"),
    );
    assert_eq!(status, 401, "a forget without the token must be refused");
    let (status, page) = read(&format!("memory?id={id}"));
    assert_eq!(status, 200, "still there after the refused forget: {page}");
    assert_eq!(page["content"], memory["content"]);
    assert_eq!(page["wing"], "ops");

    // A memory's page shows its supersession chain both ways (a correction stored beside the
    // running server, by the CLI).
    let newer = mira_command(
        dir.path(),
        &[
            "store",
            "The staging database runs PostgreSQL 17 on port 5433.",
            "--wing",
            "ops",
            "--supersedes",
            &id,
            "--json",
        ],
    )
    .output()
    .expect("mira store");
    let newer: Value = serde_json::from_slice(&newer.stdout).expect("store JSON");
    let newer = newer["id"].as_str().expect("id");
    let (_, old_page) = read(&format!("memory?id={id}"));
    assert_eq!(old_page["superseded_by"], newer, "{old_page}");
    assert_eq!(old_page["later_versions"][0]["id"], newer, "{old_page}");
    let (_, new_page) = read(&format!("memory?id={newer}"));
    assert_eq!(
        new_page["earlier_versions"][0]["id"],
        id.as_str(),
        "{new_page}"
    );
    assert_eq!(new_page["pinned"], false);
    assert!(new_page["stored_at"].as_str().is_some(), "{new_page}");

    // Bad input is a 400 that says what to do; an unknown id a 404.
    let (status, e) = read("recall?query=port&budget=0");
    assert_eq!(status, 400, "{e}");
    assert!(says(&e, "1 to 100000"), "{e}");
    // The page of an id that names no memory speaks to the person reading it, not in the
    // tools' terms.
    for (path, status_wanted, says_what) in [
        (
            "memory?id=00000000-0000-4000-8000-000000000000",
            404,
            "may have been forgotten",
        ),
        ("memory?id=deadbeef", 404, "No memory has the id deadbeef"),
        ("memory?id=not-an-id", 400, "is not a memory id"),
    ] {
        let (status, e) = read(path);
        assert_eq!(status, status_wanted, "{path}: {e}");
        assert!(says(&e, says_what), "{path}: {e}");
        assert!(!e.to_string().contains("mira_"), "{path}: {e}");
    }
    let (status, e) = json_of(
        post(&http, api("pin"), &json!({"id": id}))
            .header(AUTHORIZATION, &bearer)
            .send()
            .expect("pin"),
    );
    assert_eq!(status, 400, "{e}");
    assert!(says(&e, "pinned"), "{e}");
    assert!(server.stop().success());
}

#[test]
fn the_browser_is_served_beside_mcp_and_never_alone_on_the_network_without_a_token() {
    let _serial = serial();
    let dir = tempfile::tempdir().expect("tempdir");
    let config = token_config(dir.path());
    let server = HttpServer::start_with(dir.path(), &["--config", &config]);
    let base = origin(&server.url);
    let http = Client::new();
    assert_eq!(
        http.get(format!("{base}/ui/"))
            .send()
            .expect("page")
            .status(),
        200
    );
    assert_eq!(
        http.get(format!("{base}/ui/api/status"))
            .send()
            .expect("status")
            .status(),
        401
    );
    let ok = http
        .get(format!("{base}/ui/api/status"))
        .header(AUTHORIZATION, format!("Bearer {TOKEN}"))
        .send()
        .expect("status");
    assert_eq!(ok.status(), 200);
    assert!(
        server
            .stderr()
            .contains(&format!("memory browser on {base}/ui/")),
        "{}",
        server.stderr()
    );
    assert!(server.stop().success());

    let refused = mira_command(dir.path(), &["ui", "--addr", "0.0.0.0:0"])
        .output()
        .expect("mira ui");
    assert!(!refused.status.success());
    let err = String::from_utf8_lossy(&refused.stderr);
    assert!(err.contains("mcp.http.auth_token"), "{err}");
}

fn fact(app: &mira::App, content: &str, wing: &str) -> mira_core::memory::MemoryId {
    let r = StoreRequest {
        content: content.into(),
        wing: wing.into(),
        memory_type: Some("fact".into()),
        ..StoreRequest::default()
    };
    store(app, &Access::local(), r).expect("store").id
}

#[test]
fn an_edit_refiles_a_memory_and_derives_its_fingerprint_again() {
    let dir = tempfile::tempdir().expect("tempdir");
    let app = hash_app(dir.path());
    let text = "We chose Redis for the session cache because it keeps latency under 2 ms.";
    let id = fact(&app, text, "alpha");
    let twin = fact(&app, text, "beta");
    let before = load::load(&app, &Access::local(), &id.to_string()).expect("load");
    assert_eq!(
        before.memory.fingerprint.memory_type.map(|t| t.as_str()),
        Some("fact")
    );

    let out = edit(
        &app,
        &Access::local(),
        &EditRequest {
            id: id.to_string()[..8].into(),
            wing: Some("gamma".into()),
            room: Some("caching".into()),
            memory_type: Some("decision".into()),
        },
    )
    .expect("edit");
    assert_eq!(out.changed, vec!["wing", "room", "type"]);
    let after = load::load(&app, &Access::local(), &id.to_string()).expect("load");
    assert_eq!(
        (after.memory.wing.as_str(), after.memory.room.as_str()),
        ("gamma", "caching")
    );
    assert_eq!(after.memory.memory_type.as_str(), "decision");
    assert_eq!(
        after.memory.fingerprint.memory_type.map(|t| t.as_str()),
        Some("decision"),
        "the fingerprint is extracted again for the new type"
    );
    assert_eq!(after.memory.content, text, "the text never changes");

    let ids = |wing: &str| -> Vec<_> {
        let r = RecallRequest {
            query: "session cache".into(),
            wing: Some(wing.into()),
            ..RecallRequest::default()
        };
        recall(&app, &Access::local(), &r)
            .expect("recall")
            .items
            .iter()
            .map(|i| i.id)
            .collect()
    };
    assert_eq!(ids("gamma"), vec![id], "recall follows the new wing");
    assert!(
        !ids("alpha").contains(&id),
        "and no longer finds it in the old one"
    );

    let same = edit(
        &app,
        &Access::local(),
        &EditRequest {
            id: id.to_string(),
            room: Some("caching".into()),
            ..EditRequest::default()
        },
    )
    .expect("no-op");
    assert!(same.changed.is_empty());
    let req = |id: &str, wing: Option<&str>, memory_type: Option<&str>| EditRequest {
        id: id.into(),
        wing: wing.map(Into::into),
        room: None,
        memory_type: memory_type.map(Into::into),
    };
    let (id, twin) = (id.to_string(), twin.to_string());
    for (r, expect) in [
        (req(&id, None, None), "nothing to change"),
        (req(&id, Some("bad wing!"), None), "is invalid"),
        (req(&id, None, Some("poem")), "decision"),
        (
            req(&twin, Some("gamma"), None),
            "already holds the same text",
        ),
        (
            req("00000000-0000-4000-8000-000000000000", Some("x"), None),
            "no memory has id",
        ),
    ] {
        match edit(&app, &Access::local(), &r) {
            Err(UseCaseError::Invalid(m)) | Err(UseCaseError::NotFound(m)) => {
                assert!(m.contains(expect), "{m}")
            }
            other => panic!("{r:?} was not refused: {other:?}"),
        }
    }
}

#[test]
fn each_recalled_item_says_why_it_was_picked() {
    let dir = tempfile::tempdir().expect("tempdir");
    let app = hash_app(dir.path());
    fact(
        &app,
        "The billing service retries failed payments three times.",
        "w",
    );
    fact(
        &app,
        "The billing service sends invoices on the first day of the month.",
        "w",
    );
    let r = recall(
        &app,
        &Access::local(),
        &RecallRequest {
            query: "billing service invoices".into(),
            ..RecallRequest::default()
        },
    )
    .expect("recall");
    assert_eq!(r.items.len(), 2);
    assert!(
        r.items[0].why.starts_with("#1 of 2 by relevance; "),
        "{}",
        r.items[0].why
    );
    assert!(r.items.iter().all(|i| i.why.contains(match i.mode {
        "verbatim" => "full text",
        "fingerprint" => "facts only",
        _ => "header",
    })));
}
