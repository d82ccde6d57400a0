//! The health and metrics endpoints: readiness before and after the store is open, component
//! health, `/metrics` as Prometheus text that moves with the work done, on the port of
//! `mira serve --http` and on a listener of their own beside either transport when asked for.

use crate::common;
use crate::mcp_common;
use crate::mcp_common::{mira_command, HttpClient, HttpServer, StdioClient};
use mira::ops::OpsServer;
use mira::usecases::access::Access;
use mira::usecases::store::{store, StoreRequest};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

fn get(url: &str) -> (u16, String) {
    let r = reqwest::blocking::Client::builder()
        .timeout(Duration::from_secs(30))
        .build()
        .expect("client")
        .get(url)
        .send()
        .unwrap_or_else(|e| panic!("GET {url}: {e}"));
    let status = r.status().as_u16();
    (status, r.text().expect("body"))
}

fn get_json(url: &str) -> (u16, Value) {
    let (status, body) = get(url);
    let v = serde_json::from_str(&body).unwrap_or_else(|e| panic!("{url}: not JSON ({e}): {body}"));
    (status, v)
}

/// Parses the Prometheus text format strictly: every line is a `# HELP`/`# TYPE` comment or
/// `name{label="value",...} number`. Returns each sample by its `name{labels}` as written.
fn parse_prometheus(text: &str) -> BTreeMap<String, f64> {
    let name_ok = |n: &str| {
        !n.is_empty()
            && n.chars().enumerate().all(|(i, c)| {
                c == '_' || c == ':' || c.is_ascii_alphabetic() || (i > 0 && c.is_ascii_digit())
            })
    };
    let mut samples = BTreeMap::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        if let Some(rest) = line.strip_prefix("# ") {
            let mut parts = rest.splitn(3, ' ');
            let kind = parts.next().unwrap_or("");
            let name = parts.next().unwrap_or("");
            assert!(
                matches!(kind, "HELP" | "TYPE") && name_ok(name),
                "bad comment: {line}"
            );
            if kind == "TYPE" {
                let t = parts.next().unwrap_or("");
                assert!(
                    ["counter", "gauge", "histogram", "summary", "untyped"].contains(&t),
                    "bad type: {line}"
                );
            }
            continue;
        }
        let (series, value) = line
            .rsplit_once(' ')
            .unwrap_or_else(|| panic!("bad sample: {line}"));
        let name = series.split('{').next().unwrap_or("");
        assert!(name_ok(name), "bad metric name: {line}");
        if let Some(labels) = series.strip_prefix(name) {
            if !labels.is_empty() {
                let inner = labels
                    .strip_prefix('{')
                    .and_then(|l| l.strip_suffix('}'))
                    .unwrap_or_else(|| panic!("bad labels: {line}"));
                for pair in inner.split("\",").filter(|p| !p.is_empty()) {
                    let (k, v) = pair
                        .split_once("=\"")
                        .unwrap_or_else(|| panic!("bad label: {line}"));
                    assert!(name_ok(k) && !v.contains('\n'), "bad label: {line}");
                }
            }
        }
        let v: f64 = match value {
            "+Inf" => f64::INFINITY,
            "-Inf" => f64::NEG_INFINITY,
            v => v.parse().unwrap_or_else(|_| panic!("bad value: {line}")),
        };
        samples.insert(series.to_owned(), v);
    }
    samples
}

fn sample(samples: &BTreeMap<String, f64>, series: &str) -> f64 {
    *samples
        .get(series)
        .unwrap_or_else(|| panic!("no {series} in {:?}", samples.keys().collect::<Vec<_>>()))
}

fn ops_config(dir: &std::path::Path) -> mira::Config {
    let mut cfg = common::config_in(dir);
    cfg.metrics.enabled = Some(true);
    cfg.metrics.prometheus_addr = "127.0.0.1:0".into();
    cfg
}

#[test]
fn ready_is_503_until_the_store_is_open_then_200() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cfg = ops_config(dir.path());
    let ops =
        OpsServer::start(&cfg.metrics, mira::serving::Exposure::default()).expect("start ops");
    let base = format!("http://{}", ops.local_addr());
    assert!(ops.local_addr().ip().is_loopback());

    let (status, body) = get_json(&format!("{base}/health/ready"));
    assert_eq!(status, 503, "{body}");
    assert_eq!(body["status"], "not_ready");
    assert!(
        body["detail"].as_str().unwrap_or("").contains("migrations"),
        "{body}"
    );
    assert_eq!(
        get_json(&format!("{base}/health/live")),
        (200, json!({"status": "alive"}))
    );
    assert_eq!(get(&format!("{base}/metrics")).0, 503);
    let (status, health) = get_json(&format!("{base}/health"));
    assert_eq!((status, health["status"].as_str()), (503, Some("starting")));

    let app = Arc::new(
        mira::App::open_with_embedder(cfg, Arc::new(mira_embed::HashEmbedder::new(384)))
            .expect("open app"),
    );
    ops.attach(app.clone());
    let (status, body) = get_json(&format!("{base}/health/ready"));
    assert_eq!((status, body), (200, json!({"status": "ready"})));
    assert_eq!(get(&format!("{base}/health/live")).0, 200);
}

#[test]
fn health_reports_each_component_and_503_until_all_are_ok() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cfg = ops_config(dir.path());
    let ops =
        OpsServer::start(&cfg.metrics, mira::serving::Exposure::default()).expect("start ops");
    let base = format!("http://{}", ops.local_addr());
    let app = Arc::new(
        mira::App::open_with_embedder(cfg, Arc::new(mira_embed::HashEmbedder::new(384)))
            .expect("open app"),
    );
    ops.attach(app.clone());

    // The model is loaded lazily: until then the embedder is degraded.
    let (status, h) = get_json(&format!("{base}/health"));
    assert_eq!(status, 503, "{h}");
    assert_eq!(h["status"], "degraded");
    assert_eq!(h["database"]["status"], "ok", "{h}");
    assert!(h["database"]["detail"]
        .as_str()
        .unwrap_or("")
        .contains("schema version"));
    assert_eq!(h["vector_index"]["status"], "ok", "{h}");
    assert_eq!(h["embedder"]["status"], "degraded", "{h}");
    assert!(h["embedder"]["detail"]
        .as_str()
        .unwrap_or("")
        .contains("not loaded"));

    app.embedder().expect("embedder");
    let (status, h) = get_json(&format!("{base}/health"));
    assert_eq!((status, h["status"].as_str()), (200, Some("ok")), "{h}");
    assert_eq!(h["embedder"]["status"], "ok");
}

#[test]
fn metrics_parse_as_prometheus_text_and_move_after_a_store_and_a_recall() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cfg = ops_config(dir.path());
    let ops =
        OpsServer::start(&cfg.metrics, mira::serving::Exposure::default()).expect("start ops");
    let url = format!("http://{}/metrics", ops.local_addr());
    let app = Arc::new(
        mira::App::open_with_embedder(cfg, Arc::new(mira_embed::HashEmbedder::new(384)))
            .expect("open app"),
    );
    // As `mira serve` does before attaching: the index read, its graph checked.
    app.index()
        .expect("index")
        .wait_idle(Duration::from_secs(30));
    ops.attach(app.clone());

    let (status, text) = get(&url);
    assert_eq!(status, 200);
    let before = parse_prometheus(&text);
    assert_eq!(sample(&before, "mira_memories{type=\"decision\"}"), 0.0);
    assert_eq!(sample(&before, "mira_store_duration_seconds_count"), 0.0);
    assert_eq!(sample(&before, "mira_index_vectors"), 0.0);
    assert_eq!(sample(&before, "mira_index_state{state=\"ready\"}"), 1.0);
    assert_eq!(sample(&before, "mira_webhook_dead_letters"), 0.0);

    store(
        &app,
        &Access::local(),
        StoreRequest {
            content: "We decided to adopt PostgreSQL for the billing service.".into(),
            wing: "ops".into(),
            memory_type: Some("decision".into()),
            ..StoreRequest::default()
        },
    )
    .expect("store");
    mira::usecases::recall::recall(
        &app,
        &Access::local(),
        &mira::usecases::recall::RecallRequest {
            query: "which database for billing".into(),
            budget: Some(500),
            ..Default::default()
        },
    )
    .expect("recall");

    let after = parse_prometheus(&get(&url).1);
    assert_eq!(sample(&after, "mira_memories{type=\"decision\"}"), 1.0);
    assert_eq!(sample(&after, "mira_store_duration_seconds_count"), 1.0);
    assert_eq!(sample(&after, "mira_recall_duration_seconds_count"), 1.0);
    assert_eq!(sample(&after, "mira_recall_budget_utilisation_count"), 1.0);
    assert_eq!(sample(&after, "mira_index_vectors"), 1.0);
    assert!(
        sample(&after, "mira_embed_duration_seconds_count") >= 2.0,
        "store + query"
    );
    assert!(sample(&after, "mira_embed_batch_size_sum") >= 2.0);
}

/// Waits until the spawned server's stderr names the metrics address.
fn metrics_addr(stderr: impl Fn() -> String) -> String {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let s = stderr();
        if let Some(line) = s
            .lines()
            .find(|l| l.contains("health and metrics on http://"))
        {
            let at = line.find("http://").unwrap_or(0);
            let rest = &line[at..];
            return rest.split("/health").next().unwrap_or(rest).to_owned();
        }
        assert!(
            Instant::now() < deadline,
            "no metrics address; stderr:\n{s}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn with_metrics(mut cmd: std::process::Command) -> std::process::Command {
    cmd.env("MIRA_METRICS_ENABLED", "true")
        .env("MIRA_METRICS_ADDR", "127.0.0.1:0");
    cmd
}

#[test]
fn serve_over_stdio_counts_tool_calls_on_metrics() {
    let _serial = mcp_common::serial();
    let dir = tempfile::tempdir().expect("tempdir");
    let mut client = StdioClient::spawn_command(with_metrics(mira_command(dir.path(), &["serve"])));
    let base = metrics_addr(|| client.stderr());
    client.initialize();
    let r = client.call_tool(
        "mira_store",
        json!({"content": "The staging cluster runs on port 8443.", "wing": "ops"}),
    );
    assert!(!mcp_common::is_error(&r), "{r}");
    let r = client.call_tool("mira_store", json!({"content": "no wing"}));
    assert!(mcp_common::is_error(&r), "{r}");

    let m = parse_prometheus(&get(&format!("{base}/metrics")).1);
    assert_eq!(
        sample(
            &m,
            "mira_tool_calls_total{outcome=\"ok\",tool=\"mira_store\"}"
        ),
        1.0
    );
    assert_eq!(
        sample(
            &m,
            "mira_tool_calls_total{outcome=\"error\",tool=\"mira_store\"}"
        ),
        1.0
    );
    assert_eq!(
        sample(&m, "mira_tool_duration_seconds_count{tool=\"mira_store\"}"),
        2.0
    );
    assert_eq!(get_json(&format!("{base}/health/ready")).0, 200);
    let (status, _) = client.close();
    assert!(status.success());
}

/// `mira serve --http` with the default metrics settings: `/health…` and `/metrics` on its own
/// port beside `/mcp`, counting the calls made there, and no second listener (a second server
/// on the machine used to log "cannot listen on 127.0.0.1:9090").
#[test]
fn serve_over_http_serves_metrics_on_its_own_port_and_nowhere_else() {
    let _serial = mcp_common::serial();
    let dir = tempfile::tempdir().expect("tempdir");
    let start = || {
        let mut cmd = mira_command(dir.path(), &["serve", "--http", "127.0.0.1:0"]);
        cmd.env_remove("MIRA_METRICS_ENABLED")
            .env_remove("MIRA_METRICS_ADDR")
            .env("MIRA_LOG", "info");
        HttpServer::spawn_command(cmd)
    };
    let (server, second) = (start(), start());
    for s in [&server, &second] {
        let log = s.stderr();
        assert!(
            !log.contains("9090") && !log.contains("cannot listen"),
            "{log}"
        );
    }
    let base = server.url.trim_end_matches("/mcp").to_owned();
    let mut client = HttpClient::new(&server.url);
    client.initialize();
    let r = client.call_tool("mira_status", json!({}));
    assert!(!mcp_common::is_error(&r), "{r}");
    let m = parse_prometheus(&get(&format!("{base}/metrics")).1);
    assert_eq!(
        sample(
            &m,
            "mira_tool_calls_total{outcome=\"ok\",tool=\"mira_status\"}"
        ),
        1.0
    );
    assert_eq!(get_json(&format!("{base}/health/ready")).0, 200);
    assert_eq!(
        get_json(&format!("{base}/health/live")).1["status"],
        "alive"
    );
    let (status, health) = get_json(&format!("{base}/health"));
    assert!(status == 200 || status == 503, "{status}");
    assert!(health["database"]["status"].is_string(), "{health}");
    let log = server.stderr();
    assert!(
        log.contains(&format!("health and metrics on {base}/health")),
        "{log}"
    );
    assert!(server.stop().success());
    assert!(second.stop().success());
}

/// `metrics.enabled: false` turns the endpoints off on the server's port too, and `true` (or
/// `--metrics ADDR`) adds a listener of their own; on the server's port `/metrics` and `/health`
/// take the server's token when `metrics.auth_token` is not set, and the probes stay open.
#[test]
fn the_server_port_endpoints_follow_metrics_enabled_and_the_token() {
    let _serial = mcp_common::serial();
    let dir = tempfile::tempdir().expect("tempdir");
    let off = HttpServer::start(dir.path());
    let base = off.url.trim_end_matches("/mcp").to_owned();
    assert_eq!(get(&format!("{base}/metrics")).0, 404);
    assert_eq!(get(&format!("{base}/health/live")).0, 404);
    assert!(off.stop().success());

    let config = dir.path().join("config.yaml");
    std::fs::write(&config, "mcp:\n  http:\n    auth_token: port-token\n").expect("config");
    let config = config.to_string_lossy().into_owned();
    let mut cmd = mira_command(
        dir.path(),
        &[
            "--config",
            &config,
            "serve",
            "--http",
            "127.0.0.1:0",
            "--metrics",
            "127.0.0.1:0",
        ],
    );
    cmd.env_remove("MIRA_METRICS_ENABLED");
    let both = HttpServer::spawn_command(cmd);
    // The listener of their own starts first (before the store opens), then the server's port.
    let own = metrics_addr(|| both.stderr());
    let deadline = Instant::now() + Duration::from_secs(60);
    let base = loop {
        let log = both.stderr();
        assert!(Instant::now() < deadline, "no MCP address: {log}");
        if let Some(l) = log
            .lines()
            .find(|l| l.contains("MCP over streamable HTTP on"))
        {
            break l[l.find("http://").unwrap_or(0)..]
                .trim()
                .trim_end_matches("/mcp")
                .to_owned();
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_ne!(own, base, "a listener of their own");
    assert_protected_by(&base, "port-token");
    assert_eq!(
        get(&format!("{own}/metrics")).0,
        200,
        "no metrics.auth_token"
    );
    assert!(both.stop().success());
}

/// `/metrics` and `/health` at `base` need `token` (a wrong one is refused too); the probes
/// `/health/live` and `/health/ready` stay open.
fn assert_protected_by(base: &str, token: &str) {
    for path in ["/metrics", "/health"] {
        assert_eq!(get(&format!("{base}{path}")).0, 401, "{path}");
        assert_eq!(get_with_token(&format!("{base}{path}"), "wrong"), 401);
    }
    assert_eq!(get_with_token(&format!("{base}/metrics"), token), 200);
    for probe in ["/health/live", "/health/ready"] {
        assert_eq!(get(&format!("{base}{probe}")).0, 200, "{probe} stays open");
    }
}

fn get_with_token(url: &str, token: &str) -> u16 {
    reqwest::blocking::Client::new()
        .get(url)
        .bearer_auth(token)
        .send()
        .unwrap_or_else(|e| panic!("GET {url}: {e}"))
        .status()
        .as_u16()
}

#[test]
fn metrics_can_require_a_token_and_no_secret_reaches_logs_or_status() {
    let _serial = mcp_common::serial();
    let dir = tempfile::tempdir().expect("tempdir");
    let config = dir.path().join("config.yaml");
    std::fs::write(
        &config,
        "mcp:\n  http:\n    auth_token: mcp-s3cret-token\nmetrics:\n  auth_token: metrics-s3cret-token\n\
         webhooks:\n  enabled: true\n  max_retries: 0\n  endpoints:\n    - url: http://hook-user:hook-pw-s3cret@127.0.0.1:9/hook?key=query-s3cret\n      secret: hmac-s3cret-key\n",
    )
    .expect("write config");
    let config = config.to_string_lossy().into_owned();
    let mut client = StdioClient::spawn_command(with_metrics(mira_command(
        dir.path(),
        &["--config", &config, "--log", "debug", "serve"],
    )));
    let base = metrics_addr(|| client.stderr());
    client.initialize();
    let r = client.call_tool(
        "mira_store",
        json!({"content": "The staging cluster runs on port 8443.", "wing": "ops"}),
    );
    assert!(!mcp_common::is_error(&r), "{r}");
    let r = client.call_tool("mira_status", json!({}));
    let status_tool = r.to_string();

    assert_protected_by(&base, "metrics-s3cret-token");

    // The webhook delivery to the closed port fails and is dead-lettered (logged) meanwhile.
    std::thread::sleep(Duration::from_millis(1500));
    let logs = client.stderr();
    assert!(logs.contains("DEBUG") || logs.contains("debug"), "{logs}");
    let (_, _) = client.close();
    let status_cli = common::stdout(
        common::mira(&dir.path().join("store")).args(["--config", &config, "status", "--json"]),
    );
    assert!(
        !status_tool.contains("s3cret"),
        "mira_status: {status_tool}"
    );
    assert!(!status_cli.contains("s3cret"), "mira status: {status_cli}");
    assert!(!logs.contains("s3cret"), "logs: {logs}");
}

#[test]
fn stdio_servers_serve_metrics_only_when_asked() {
    let _serial = mcp_common::serial();
    let dir = tempfile::tempdir().expect("tempdir");
    let mut quiet = mira_command(dir.path(), &["serve"]);
    quiet.env_remove("MIRA_METRICS_ENABLED");
    let mut client = StdioClient::spawn_command(quiet);
    client.initialize();
    let s = client.call_tool("mira_status", json!({}));
    assert!(!mcp_common::is_error(&s), "{s}");
    assert!(
        !client.stderr().contains("health and metrics on http://"),
        "{}",
        client.stderr()
    );
    client.close();
    let mut asked = mira_command(dir.path(), &["serve", "--metrics", "127.0.0.1:0"]);
    asked.env_remove("MIRA_METRICS_ENABLED");
    let mut client = StdioClient::spawn_command(asked);
    let base = metrics_addr(|| client.stderr());
    client.initialize();
    assert_eq!(get(&format!("{base}/health/live")).0, 200);
    client.close();
}
