//! Connecting to PostgreSQL, as a user sees it through `mira status`: TLS as the URL says
//! (the test server has no TLS, so `require` and `verify-full` must fail closed), a URL and a
//! config that disagree named both, and a wrong database or port reported at the first
//! attempt with the server's or the system's own words, not after the pool's retries.

use crate::common;
use mira_testkit::pg as pg_server;
use std::time::{Duration, Instant};

/// `url` with `query` added to its parameters.
fn with_query(url: &str, query: &str) -> String {
    let sep = if url.contains('?') { '&' } else { '?' };
    format!("{url}{sep}{query}")
}

/// `mira status` on the PostgreSQL database at `url`: whether it succeeded, its stderr and
/// how long it took.
fn status(url: &str, config: Option<&str>) -> (bool, String, Duration) {
    let dir = tempfile::tempdir().unwrap();
    let mut cmd = common::mira(dir.path());
    cmd.env("MIRA_STORAGE_BACKEND", "postgres")
        .env("MIRA_DATABASE_URL", url)
        .arg("status");
    if let Some(yaml) = config {
        let file = dir.path().join("config.yaml");
        std::fs::write(&file, yaml).unwrap();
        cmd.arg("--config").arg(file);
    }
    let started = Instant::now();
    let out = cmd.output().unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
        started.elapsed(),
    )
}

#[test]
fn tls_the_url_asks_for_fails_closed_on_a_server_without_it() {
    let Some(db) = pg_server::TestDatabase::create() else {
        return;
    };
    for mode in ["require", "verify-ca", "verify-full"] {
        let (ok, stderr, _) = status(&with_query(&db.url, &format!("sslmode={mode}")), None);
        assert!(!ok, "sslmode={mode} connected to a server without TLS");
        assert!(
            stderr.contains("does not accept TLS") && stderr.contains(&format!("sslmode={mode}")),
            "{mode}: {stderr}"
        );
    }
    let (ok, stderr, _) = status(
        &with_query(&db.url, "sslmode=disable"),
        Some("storage:\n  postgres:\n    tls: verify-full\n"),
    );
    assert!(!ok);
    assert!(
        stderr.contains("storage.postgres.tls is verify-full")
            && stderr.contains("sslmode=disable"),
        "{stderr}"
    );
    // Plain text when the URL asks for it, or as libpq's default `prefer` falls back to.
    for url in [with_query(&db.url, "sslmode=disable"), db.url.clone()] {
        let (ok, stderr, _) = status(&url, None);
        assert!(ok, "{url}: {stderr}");
    }
}

#[test]
fn a_wrong_database_or_port_fails_at_once_with_the_reason() {
    let Some(server) = pg_server::server_url() else {
        return;
    };
    let missing = mira_store::PgOptions {
        url: server.to_owned(),
        ..mira_store::PgOptions::default()
    }
    .on_database("mira_no_such_database")
    .unwrap()
    .url;
    let (ok, stderr, took) = status(&missing, None);
    assert!(!ok);
    assert!(
        stderr.contains("database \"mira_no_such_database\" does not exist"),
        "{stderr}"
    );
    assert!(took < Duration::from_secs(2), "took {took:?}: {stderr}");

    let closed = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let (ok, stderr, took) = status(&format!("postgres://mira@127.0.0.1:{closed}/mira"), None);
    assert!(!ok);
    assert!(stderr.contains("Connection refused"), "{stderr}");
    assert!(took < Duration::from_secs(2), "took {took:?}: {stderr}");
}
