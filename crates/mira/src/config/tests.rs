//! Tests of the configuration.

use super::*;

#[test]
fn example_file_parses_to_the_defaults() {
    let text = include_str!("../../../../config.example.yaml");
    let cfg = Config::from_yaml(text).unwrap();
    assert_eq!(cfg, Config::default());
}

#[test]
fn unknown_keys_are_named() {
    let err = Config::from_yaml("recall:\n  rrf_kk: 3\n")
        .unwrap_err()
        .to_string();
    assert!(err.contains("recall") && err.contains("rrf_kk"), "{err}");
    let err = Config::from_yaml("bogus: 1\n").unwrap_err().to_string();
    assert!(err.contains("bogus"), "{err}");
}

#[test]
fn wrong_types_are_named() {
    let err = Config::from_yaml("allocator:\n  default_budget: lots\n")
        .unwrap_err()
        .to_string();
    assert!(err.contains("allocator.default_budget"), "{err}");
}

#[test]
fn retired_keys_are_accepted_and_warned_about() {
    let cfg =
        Config::from_yaml("allocator:\n  session_boost_max: 3\nrecall:\n  rrf_k: 60\n").unwrap();
    assert_eq!(cfg.allocator, AllocatorConfig::default());
    let warnings = cfg.retired_key_warnings().join("\n");
    assert!(
        warnings.contains("allocator.session_boost_max") && warnings.contains("recall.rrf_k"),
        "{warnings}"
    );
}

#[test]
fn the_overlap_cache_section_of_earlier_files_is_accepted_and_warned_about() {
    let cfg =
        Config::from_yaml("overlap_cache:\n  ttl_days: 30\n  max_entries: 1000000\n").unwrap();
    let warnings = cfg.retired_key_warnings();
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(
        warnings[0].contains("`overlap_cache` is no longer used"),
        "{warnings:?}"
    );
}

#[test]
fn the_postgres_backend_is_read_and_checked() {
    let cfg = Config::from_yaml(
        "storage:\n  backend: postgres\n  postgres:\n    url: postgres://m@db/mira\n    tls: verify-full\n",
    )
    .unwrap();
    assert_eq!(cfg.storage.backend, StorageBackend::Postgres);
    let opts = cfg.postgres_options();
    assert_eq!(
        (opts.url.as_str(), opts.tls),
        (
            "postgres://m@db/mira",
            Some(mira_store::TlsMode::VerifyFull)
        )
    );
    let err = Config::from_yaml("storage:\n  backend: postgres\n")
        .unwrap_err()
        .to_string();
    assert!(err.contains("storage.postgres.url"), "{err}");
    let err = Config::from_yaml("storage:\n  postgres:\n    tls: maybe\n")
        .unwrap_err()
        .to_string();
    assert!(err.contains("storage.postgres.tls"), "{err}");
    let mut cfg = Config::default();
    cfg.apply_env(|k| match k {
        "MIRA_STORAGE_BACKEND" => Some("postgres".into()),
        "MIRA_DATABASE_URL" => Some("postgres://m@h/x".into()),
        _ => None,
    })
    .unwrap();
    assert_eq!(cfg.storage.backend, StorageBackend::Postgres);
    assert_eq!(
        cfg.storage.postgres.url.as_deref(),
        Some("postgres://m@h/x")
    );
    let err = Config::default()
        .apply_env(|k| (k == "MIRA_STORAGE_BACKEND").then(|| "mysql".into()))
        .unwrap_err();
    assert!(err.to_string().contains("MIRA_STORAGE_BACKEND"), "{err}");
}

#[test]
fn reference_keys_without_use_are_accepted_and_warned_about() {
    let text = "system:\n  version: \"1.0\"\nhnsw:\n  M: 16\n  Ml: 0.25\nrecall:\n  query_expansion:\n    temperature: 0.3\n    num_variants: 2\n";
    let cfg = Config::from_yaml(text).unwrap();
    assert_eq!(
        (cfg.hnsw.m, cfg.recall.query_expansion.num_variants),
        (16, 2)
    );
    let warnings = cfg.retired_key_warnings();
    assert_eq!(warnings.len(), 3, "{warnings:?}");
    for key in [
        "`system`",
        "`hnsw.Ml`",
        "`recall.query_expansion.temperature`",
    ] {
        assert!(
            warnings.iter().any(|w| w.contains(key)),
            "{key}: {warnings:?}"
        );
    }
}

#[test]
fn closed_words_are_checked_when_the_file_is_read() {
    let cfg = Config::from_yaml(
        "storage:\n  sqlite:\n    journal_mode: delete\n    synchronous: FULL\nrecall:\n  superseded: exclude\nmcp:\n  transport: http\n",
    )
    .unwrap();
    assert_eq!(cfg.storage.sqlite.journal_mode, JournalMode::Delete);
    assert_eq!(cfg.sqlite_options().journal_mode, "DELETE");
    assert_eq!(cfg.sqlite_options().synchronous, "FULL");
    assert_eq!(cfg.recall.superseded, SupersededPolicy::Exclude);
    assert_eq!(cfg.mcp.transport, McpTransport::Http);
    for (text, key, words) in [
        (
            "recall:\n  superseded: hide\n",
            "recall.superseded",
            "`header` or `exclude`",
        ),
        (
            "mcp:\n  transport: sse\n",
            "mcp.transport",
            "`stdio` or `http`",
        ),
        (
            "storage:\n  sqlite:\n    synchronous: SOMETIMES\n",
            "storage.sqlite.synchronous",
            "`NORMAL`",
        ),
    ] {
        let err = Config::from_yaml(text).unwrap_err().to_string();
        assert!(err.contains(key) && err.contains(words), "{err}");
    }
}

#[test]
fn embedding_precision_is_read_and_checked() {
    assert_eq!(
        Config::default().embeddings.precision,
        mira_embed::Precision::Int8
    );
    let cfg = Config::from_yaml("embeddings:\n  precision: f32\n  threads: 1\n").unwrap();
    assert_eq!(cfg.embeddings.precision, mira_embed::Precision::F32);
    assert_eq!(cfg.embeddings.model_options().threads, 1);
    let err = Config::from_yaml("embeddings:\n  precision: fp16\n")
        .unwrap_err()
        .to_string();
    assert!(err.contains("embeddings.precision"), "{err}");
}

#[test]
fn out_of_range_values_are_named() {
    let err = Config::from_yaml("allocator:\n  pinned_share: 3\n")
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("allocator.pinned_share") && err.contains("[0, 1]"),
        "{err}"
    );
    let err = Config::from_yaml("webhooks:\n  endpoints: [ftp://x]\n")
        .unwrap_err()
        .to_string();
    assert!(err.contains("webhooks.endpoints[0]"), "{err}");
}

#[test]
fn env_overrides_apply() {
    let mut cfg = Config::default();
    cfg.apply_env(|k| match k {
        "MIRA_STORAGE_PATH" => Some("/tmp/x".into()),
        "MIRA_MODEL_DIR" => Some("/tmp/m".into()),
        "MIRA_SOUL_ENABLED" => Some("true".into()),
        "MIRA_EMBEDDINGS_PRECISION" => Some("f32".into()),
        _ => None,
    })
    .unwrap();
    assert_eq!(cfg.embeddings.precision, mira_embed::Precision::F32);
    let err = cfg
        .apply_env(|k| (k == "MIRA_EMBEDDINGS_PRECISION").then(|| "fp16".into()))
        .unwrap_err();
    assert!(err.to_string().contains("f32 or int8"), "{err}");
    assert_eq!(cfg.storage_dir(), PathBuf::from("/tmp/x"));
    assert_eq!(cfg.db_path(), PathBuf::from("/tmp/x/mira.db"));
    assert_eq!(cfg.embeddings.model_dir, Some(PathBuf::from("/tmp/m")));
    assert!(cfg.soul.enabled);
    let err = cfg
        .apply_env(|k| (k == "MIRA_SOUL_ENABLED").then(|| "maybe".into()))
        .unwrap_err();
    assert!(err.to_string().contains("MIRA_SOUL_ENABLED"));
}
