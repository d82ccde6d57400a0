//! Webhooks against a local HTTP endpoint on 127.0.0.1: delivery and payload, signature,
//! events of every use case, retry then success, retries exhausted → dead letter → `mira
//! webhooks replay`, the circuit breaker, a full queue, and refused cross-host redirects.

use crate::common;
use hmac::{Hmac, KeyInit, Mac};
use mira::config::{WebhookEndpoint, WebhookEndpointDetail};
use mira::usecases::access::Access;
use mira::usecases::store::{store, StoreRequest};
use mira::App;
use serde_json::Value;
use std::collections::{BTreeMap, VecDeque};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// One request the endpoint received.
#[derive(Debug, Clone)]
struct Received {
    headers: BTreeMap<String, String>,
    body: String,
}

impl Received {
    fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("not JSON ({e}): {}", self.body))
    }
}

#[derive(Default)]
struct Script {
    /// Answers to give, in order; `then` once they are used up.
    answers: VecDeque<u16>,
    then: u16,
    /// Extra response header lines (e.g. a Location).
    extra: String,
    delay: Duration,
    received: Vec<Received>,
}

/// A tiny HTTP/1.1 endpoint that records every request and answers as scripted.
struct Hook {
    url: String,
    script: Arc<Mutex<Script>>,
}

impl Hook {
    fn start(then: u16) -> Hook {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let url = format!("http://{}/hook", listener.local_addr().expect("addr"));
        let script = Arc::new(Mutex::new(Script {
            then,
            ..Script::default()
        }));
        let s = script.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { continue };
                let s = s.clone();
                std::thread::spawn(move || serve_one(stream, &s));
            }
        });
        Hook { url, script }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Script> {
        self.script.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn received(&self) -> Vec<Received> {
        self.lock().received.clone()
    }

    /// Waits until `n` requests arrived.
    fn wait_for(&self, n: usize) -> Vec<Received> {
        wait(&format!("{n} requests"), || self.received().len() >= n);
        self.received()
    }
}

fn serve_one(stream: std::net::TcpStream, script: &Mutex<Script>) {
    let mut reader = BufReader::new(stream.try_clone().expect("clone"));
    let mut headers = BTreeMap::new();
    let mut line = String::new();
    if reader.read_line(&mut line).unwrap_or(0) == 0 {
        return;
    }
    loop {
        line.clear();
        if reader.read_line(&mut line).unwrap_or(0) == 0 || line.trim().is_empty() {
            break;
        }
        if let Some((k, v)) = line.split_once(':') {
            headers.insert(k.trim().to_ascii_lowercase(), v.trim().to_owned());
        }
    }
    let len: usize = headers
        .get("content-length")
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    let mut body = vec![0u8; len];
    if reader.read_exact(&mut body).is_err() {
        return;
    }
    let (status, extra, delay) = {
        let mut s = script.lock().unwrap_or_else(|p| p.into_inner());
        s.received.push(Received {
            headers,
            body: String::from_utf8_lossy(&body).into_owned(),
        });
        let status = s.answers.pop_front().unwrap_or(s.then);
        (status, s.extra.clone(), s.delay)
    };
    std::thread::sleep(delay);
    let mut out = stream;
    let _ = write!(
        out,
        "HTTP/1.1 {status} Scripted\r\nContent-Length: 0\r\nConnection: close\r\n{extra}\r\n"
    );
}

fn wait(what: &str, done: impl Fn() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while !done() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(10));
    }
}

const SECRET: &str = "s3cret-for-tests";

fn endpoint(url: &str) -> WebhookEndpoint {
    WebhookEndpoint::Detailed(WebhookEndpointDetail {
        url: url.to_owned(),
        secret: Some(SECRET.into()),
        events: vec![],
        include_content: true,
        timeout_seconds: Some(5),
    })
}

fn config(dir: &std::path::Path, url: &str) -> mira::Config {
    let mut cfg = common::config_in(dir);
    let w = &mut cfg.webhooks;
    w.enabled = true;
    w.workers = 1;
    w.max_retries = 2;
    w.backoff_initial_ms = 5;
    w.backoff_max_ms = 20;
    w.endpoints = vec![endpoint(url)];
    cfg
}

fn open(cfg: mira::Config) -> App {
    App::open_with_embedder(cfg, Arc::new(mira_embed::HashEmbedder::new(384))).expect("open")
}

fn put(app: &App, content: &str) -> mira::usecases::store::StoreOutcome {
    store(
        app,
        &Access::local(),
        StoreRequest {
            content: content.into(),
            wing: "hooks".into(),
            ..StoreRequest::default()
        },
    )
    .expect("store never fails because of webhooks")
}

fn metric(app: &App, series: &str) -> f64 {
    let text = app
        .metrics
        .render(&mira::ops::gauges(app).expect("gauges"))
        .expect("metrics");
    text.lines()
        .find_map(|l| l.strip_prefix(series)?.strip_prefix(' ')?.parse().ok())
        .unwrap_or(0.0)
}

fn hmac_hex(secret: &str, body: &[u8]) -> String {
    let mut mac = <Hmac<sha2::Sha256> as KeyInit>::new_from_slice(secret.as_bytes()).expect("key");
    mac.update(body);
    mac.finalize()
        .into_bytes()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

#[test]
fn a_store_is_delivered_with_its_payload_and_a_valid_signature() {
    let hook = Hook::start(200);
    let dir = tempfile::tempdir().expect("tempdir");
    let app = open(config(dir.path(), &hook.url));
    let o = put(&app, "We decided to adopt Kubernetes for deployment.");
    let got = hook.wait_for(1);
    let r = &got[0];
    let p = r.json();
    assert_eq!(p["event"], "memory.stored");
    assert_eq!(p["id"], o.id.to_string());
    assert_eq!(p["wing"], "hooks");
    assert_eq!(p["room"], "decisions");
    assert_eq!(p["type"], "decision");
    assert_eq!(
        p["content"],
        "We decided to adopt Kubernetes for deployment."
    );
    assert!(chrono::DateTime::parse_from_rfc3339(p["timestamp"].as_str().unwrap_or("")).is_ok());
    assert_eq!(r.headers["content-type"], "application/json");
    assert_eq!(r.headers["x-mira-event"], "memory.stored");
    assert_eq!(
        r.headers["x-mira-signature"],
        format!("sha256={}", hmac_hex(SECRET, r.body.as_bytes()))
    );
    assert_ne!(
        r.headers["x-mira-signature"],
        format!("sha256={}", hmac_hex("another secret", r.body.as_bytes()))
    );
    // The worker counts the delivery once the receiver has answered: give it a moment.
    let deadline = Instant::now() + Duration::from_secs(5);
    while metric(&app, "mira_webhook_deliveries_total") < 1.0 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    assert_eq!(metric(&app, "mira_webhook_deliveries_total"), 1.0);
    assert_eq!(app.store.dead_letter_count().expect("count"), 0);
}

#[test]
fn every_lifecycle_use_case_emits_its_event_and_content_is_sent_only_on_request() {
    let hook = Hook::start(200);
    let dir = tempfile::tempdir().expect("tempdir");
    let mut cfg = config(dir.path(), &hook.url);
    cfg.webhooks.endpoints = vec![WebhookEndpoint::Url(hook.url.clone())];
    let app = open(cfg);
    let old = put(&app, "The deploy target is the eu-west cluster.");
    let new = store(
        &app,
        &Access::local(),
        StoreRequest {
            content: "The deploy target is now the us-east cluster.".into(),
            wing: "hooks".into(),
            supersedes: Some(old.id.to_string()),
            ..StoreRequest::default()
        },
    )
    .expect("store");
    mira::usecases::archive::archive(
        &app,
        &Access::local(),
        &mira::usecases::archive::ArchiveRequest {
            ids: vec![old.id.to_string()],
            ..Default::default()
        },
    )
    .expect("archive");
    mira::usecases::clear::forget(&app, &Access::local(), &new.id.to_string()).expect("forget");
    let third = put(&app, "Room cleanup note for the hooks wing.");
    mira::usecases::clear::clear(
        &app,
        &Access::local(),
        &mira::usecases::clear::ClearRequest {
            scope: mira::usecases::clear::ClearScope::Wing {
                wing: "hooks".into(),
            },
            confirm: true,
        },
    )
    .expect("clear");
    let got = hook.wait_for(8);
    let events: Vec<(String, String)> = got
        .iter()
        .map(|r| {
            let p = r.json();
            assert!(p.get("content").is_none(), "no content unless asked: {p}");
            assert!(
                !r.headers.contains_key("x-mira-signature"),
                "no secret, no signature"
            );
            (
                p["event"].as_str().unwrap_or("").to_owned(),
                p["id"].as_str().unwrap_or("").to_owned(),
            )
        })
        .collect();
    let (o, n, t) = (old.id.to_string(), new.id.to_string(), third.id.to_string());
    let want = [
        ("memory.stored", &o),
        ("memory.stored", &n),
        ("memory.superseded", &o),
        ("memory.archived", &o),
        ("memory.cleared", &n),
        ("memory.stored", &t),
    ];
    for (event, id) in want {
        assert!(
            events.iter().any(|(e, i)| e == event && i == id),
            "{event} {id} missing from {events:?}"
        );
    }
    let superseded = got
        .iter()
        .map(Received::json)
        .find(|p| p["event"] == "memory.superseded")
        .expect("superseded");
    assert_eq!(superseded["superseded_by"], n);
    let cleared: Vec<Value> = got
        .iter()
        .map(Received::json)
        .filter(|p| p["event"] == "memory.cleared" && p["id"] != n.as_str())
        .collect();
    assert!(
        !cleared.is_empty() && cleared.iter().all(|p| p["wing"] == "hooks"),
        "{cleared:?}"
    );
}

#[test]
fn a_failed_delivery_is_retried_until_it_succeeds() {
    let hook = Hook::start(200);
    hook.lock().answers = VecDeque::from([500, 502]);
    let dir = tempfile::tempdir().expect("tempdir");
    let app = open(config(dir.path(), &hook.url));
    put(&app, "Retry me until the endpoint recovers.");
    let got = hook.wait_for(3);
    wait("the delivery", || {
        metric(&app, "mira_webhook_deliveries_total") == 1.0
    });
    let ids: Vec<&String> = got.iter().map(|r| &r.headers["x-mira-delivery"]).collect();
    assert!(
        ids.iter().all(|i| *i == ids[0]),
        "one delivery id across retries: {ids:?}"
    );
    assert_eq!(metric(&app, "mira_webhook_failures_total"), 2.0);
    assert_eq!(app.store.dead_letter_count().expect("count"), 0);
}

fn write_config(dir: &std::path::Path, url: &str) -> std::path::PathBuf {
    let path = dir.join("config.yaml");
    std::fs::write(
        &path,
        format!(
            "webhooks:\n  max_retries: 0\n  endpoints:\n    - url: {url}\n      secret: {SECRET}\n      include_content: true\n"
        ),
    )
    .expect("write config");
    path
}

#[test]
fn exhausted_retries_dead_letter_the_event_and_the_cli_replays_it() {
    let hook = Hook::start(503);
    let dir = tempfile::tempdir().expect("tempdir");
    let store_dir = dir.path().join("store");
    let app = open(config(&store_dir, &hook.url));
    let o = put(&app, "This event will wait in the dead-letter table.");
    wait("the dead letter", || {
        app.store.dead_letter_count().unwrap_or(0) == 1
    });
    let letter = app.store.dead_letters(10).expect("list").remove(0);
    assert_eq!(letter.attempts, 3, "the first attempt and 2 retries");
    assert_eq!(letter.event_type, "memory.stored");
    assert!(
        letter.last_error.as_deref().unwrap_or("").contains("503"),
        "{letter:?}"
    );
    assert_eq!(
        metric(
            &app,
            "mira_webhook_dead_letters_total{reason=\"retries_exhausted\"}"
        ),
        1.0
    );
    assert_eq!(hook.received().len(), 3);
    drop(app);

    let cfg = write_config(dir.path(), &hook.url);
    let cli = |args: &[&str]| {
        let mut cmd = common::mira(&store_dir);
        cmd.arg("--config").arg(&cfg).args(args);
        cmd
    };
    let listed = common::stdout(&mut cli(&["webhooks", "dead-letters"]));
    assert!(
        listed.contains(&letter.id) && listed.contains("memory.stored"),
        "{listed}"
    );
    assert!(!listed.contains(SECRET));

    // Still failing: the replay reports it, exits 1 and keeps the letter.
    let out = cli(&["webhooks", "replay", &letter.id])
        .output()
        .expect("run");
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert_eq!(hook.received().len(), 4);

    hook.lock().then = 200;
    let replayed = common::stdout(&mut cli(&["webhooks", "replay", "--all"]));
    assert!(replayed.contains("Replayed 1 of 1"), "{replayed}");
    let got = hook.received();
    let last = got.last().expect("replayed request");
    assert_eq!(last.headers["x-mira-delivery"], letter.id);
    assert_eq!(last.json()["id"], o.id.to_string());
    assert_eq!(
        last.headers["x-mira-signature"],
        format!("sha256={}", hmac_hex(SECRET, last.body.as_bytes()))
    );
    let listed = common::stdout(&mut cli(&["webhooks", "dead-letters"]));
    assert!(listed.contains("No dead letters"), "{listed}");
    let out = cli(&["webhooks", "replay", "no-such-id"])
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(3));
}

#[test]
fn the_circuit_opens_after_repeated_failures_and_closes_after_the_cool_down() {
    let hook = Hook::start(500);
    let dir = tempfile::tempdir().expect("tempdir");
    let mut cfg = config(dir.path(), &hook.url);
    cfg.webhooks.max_retries = 0;
    cfg.webhooks.circuit_failures = 2;
    cfg.webhooks.circuit_cooldown_ms = 1500;
    let app = open(cfg);
    let letters = || app.store.dead_letter_count().unwrap_or(0);
    put(&app, "first failure");
    wait("1 dead letter", || letters() == 1);
    put(&app, "second failure opens the circuit");
    wait("2 dead letters", || letters() == 2);
    put(&app, "refused while open");
    wait("3 dead letters", || letters() == 3);
    assert_eq!(hook.received().len(), 2, "an open circuit sends nothing");
    let refused = app.store.dead_letters(10).expect("list");
    assert!(
        refused.iter().any(|d| d.attempts == 0
            && d.last_error
                .as_deref()
                .unwrap_or("")
                .contains("circuit breaker")),
        "{refused:?}"
    );
    assert_eq!(
        metric(
            &app,
            "mira_webhook_dead_letters_total{reason=\"circuit_open\"}"
        ),
        1.0
    );

    hook.lock().then = 200;
    std::thread::sleep(Duration::from_millis(1700));
    put(&app, "the trial after the cool-down");
    hook.wait_for(3);
    put(&app, "closed again");
    hook.wait_for(4);
    wait("2 deliveries", || {
        metric(&app, "mira_webhook_deliveries_total") == 2.0
    });
    assert_eq!(letters(), 3);
}

#[test]
fn a_full_queue_never_fails_nor_blocks_a_store() {
    let hook = Hook::start(200);
    hook.lock().delay = Duration::from_millis(1000);
    let dir = tempfile::tempdir().expect("tempdir");
    let mut cfg = config(dir.path(), &hook.url);
    cfg.webhooks.queue_size = 1;
    let app = open(cfg);
    for i in 0..6 {
        put(
            &app,
            &format!("burst memory number {i} about queue overflow"),
        );
    }
    let overflowed = app.store.dead_letters(10).expect("list");
    assert!(!overflowed.is_empty(), "some events overflowed");
    assert!(overflowed.iter().all(|d| d
        .last_error
        .as_deref()
        .unwrap_or("")
        .contains("queue was full")));
    assert_eq!(
        metric(
            &app,
            "mira_webhook_dead_letters_total{reason=\"queue_full\"}"
        ),
        overflowed.len() as f64
    );
    assert_eq!(
        mira::usecases::status::status(&app, &Access::local())
            .expect("status")
            .memories,
        6,
        "every store succeeded"
    );
}

#[test]
fn redirects_to_another_host_are_not_followed() {
    let elsewhere = Hook::start(200);
    let hook = Hook::start(307);
    let other = elsewhere.url.replace("127.0.0.1", "localhost");
    hook.lock().extra = format!("Location: {other}\r\n");
    let dir = tempfile::tempdir().expect("tempdir");
    let mut cfg = config(dir.path(), &hook.url);
    cfg.webhooks.max_retries = 0;
    let app = open(cfg);
    put(&app, "Do not follow me elsewhere.");
    wait("the dead letter", || {
        app.store.dead_letter_count().unwrap_or(0) == 1
    });
    assert!(
        elsewhere.received().is_empty(),
        "the other host got nothing"
    );
}

#[test]
fn endpoints_are_validated_at_start() {
    let dir = tempfile::tempdir().expect("tempdir");
    let err = App::open_with_embedder(
        config(dir.path(), "ftp://127.0.0.1/hook"),
        Arc::new(mira_embed::HashEmbedder::new(384)),
    )
    .expect_err("ftp is refused");
    assert!(format!("{err:#}").contains("http"), "{err:#}");
}
