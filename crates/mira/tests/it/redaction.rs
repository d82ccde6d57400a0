//! Secret redaction on store (`storage.redact_secrets`), driven through the store, load and
//! recall use cases.

use crate::common::{config_in, hash_app};
use mira::config::Config;
use mira::usecases::access::Access;
use mira::usecases::load::load;
use mira::usecases::recall::{recall, RecallRequest};
use mira::usecases::store::{render_text, store, StoreRequest};
use mira::App;
use std::sync::Arc;

const API_KEY: &str = "sk-proj-abcdefghijklmnopqrstuvwx1234";
const PASSWORD: &str = "hunter22-prod";

fn leaky() -> String {
    format!(
        "Deploy the billing API with key {API_KEY} and DB_PASSWORD={PASSWORD} on the staging host."
    )
}

fn req(content: &str) -> StoreRequest {
    StoreRequest {
        content: content.into(),
        wing: "ops".into(),
        ..StoreRequest::default()
    }
}

#[test]
fn secrets_are_redacted_before_anything_is_stored() {
    let dir = tempfile::tempdir().unwrap();
    let app = hash_app(dir.path());
    let out = store(&app, &Access::local(), req(&leaky())).unwrap();
    assert!(out.stored);
    assert_eq!(out.redacted, 2);
    assert!(
        render_text(&out).contains("Redacted: 2 secrets replaced"),
        "{}",
        render_text(&out)
    );

    let m = load(&app, &Access::local(), &out.id.to_string())
        .unwrap()
        .memory;
    assert!(!m.content.contains(API_KEY) && !m.content.contains(PASSWORD));
    assert!(
        m.content.contains("[REDACTED:api_key]") && m.content.contains("[REDACTED:password]"),
        "{}",
        m.content
    );
    let fp = serde_json::to_string(&m.fingerprint).unwrap();
    assert!(!fp.contains(API_KEY) && !fp.contains(PASSWORD), "{fp}");

    // Neither the full-text index nor the rendered context can give the secret back.
    let r = recall(
        &app,
        &Access::local(),
        &RecallRequest {
            query: format!("billing API key {API_KEY} {PASSWORD}"),
            ..RecallRequest::default()
        },
    )
    .unwrap();
    assert!(r.items.iter().any(|i| i.id == out.id), "{}", r.text);
    // (The `Query:` line echoes the caller's own query.)
    let context: Vec<&str> = r
        .text
        .lines()
        .filter(|l| !l.starts_with("Query:"))
        .collect();
    let context = context.join("\n");
    assert!(
        context.contains("[REDACTED:api_key]")
            && !context.contains(API_KEY)
            && !context.contains(PASSWORD),
        "{context}"
    );

    // The same leaky text again is an exact duplicate of the redacted memory.
    let again = store(&app, &Access::local(), req(&leaky())).unwrap();
    assert_eq!((again.stored, again.id, again.redacted), (false, out.id, 2));

    let clean = store(
        &app,
        &Access::local(),
        req("The staging host runs Debian 12."),
    )
    .unwrap();
    assert_eq!(clean.redacted, 0);
    assert!(!render_text(&clean).contains("Redacted"));
}

#[test]
fn redaction_can_be_turned_off() {
    let cfg = Config::from_yaml("storage:\n  redact_secrets: false\n").unwrap();
    assert!(!cfg.storage.redact_secrets);
    assert!(Config::default().storage.redact_secrets);

    let dir = tempfile::tempdir().unwrap();
    let mut cfg = config_in(dir.path());
    cfg.storage.redact_secrets = false;
    let app = App::open_with_embedder(cfg, Arc::new(mira_embed::HashEmbedder::new(384))).unwrap();
    let out = store(&app, &Access::local(), req(&leaky())).unwrap();
    assert_eq!(out.redacted, 0);
    let m = load(&app, &Access::local(), &out.id.to_string())
        .unwrap()
        .memory;
    assert_eq!(m.content, leaky());
}
