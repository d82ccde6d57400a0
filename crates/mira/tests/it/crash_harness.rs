//! Crash harness: a `mira serve` (MCP over stdio) stores memories in a pipeline and is killed
//! with SIGKILL at seeded random moments, again and again on the same store, on SQLite and on
//! PostgreSQL. After each kill a new process opens the store: the SQLite file passes
//! `PRAGMA integrity_check`, every memory whose store was acknowledged loads and is recallable,
//! and the vector index holds every row.
//!
//! `MIRA_CRASH_KILLS` (default 8; PostgreSQL: at most 3 unless set) sets the number of kills and
//! `MIRA_CRASH_SEED` the seed; `scripts/crash-test.sh` runs a long series.
#![cfg(unix)]

use crate::common::Db;
use crate::mcp_common::{is_error, mira_command, serial, text, StdioClient};
use mira_testkit::Rng;
use serde_json::{json, Value};
use std::collections::HashMap;
use std::path::Path;
use std::time::{Duration, Instant};

/// Store calls in flight at once, so that a kill usually lands in the middle of one.
const IN_FLIGHT: usize = 3;

fn env_u64(name: &str, default: u64) -> u64 {
    match std::env::var(name) {
        Ok(v) => v
            .trim()
            .parse()
            .unwrap_or_else(|_| panic!("{name}={v}: expected a whole number")),
        Err(_) => default,
    }
}

const SERVICES: &[&str] = &[
    "billing",
    "search",
    "gateway",
    "scheduler",
    "auth",
    "ledger",
    "mailer",
    "reports",
];
const CAUSES: &[&str] = &[
    "a leaked file descriptor",
    "an expired TLS certificate",
    "a full disk on the log volume",
    "a stale DNS entry",
    "a deadlock in the connection pool",
];

/// A distinctive memory text for store number `n`.
fn content(rng: &mut Rng, round: u64, n: u64) -> String {
    let service = SERVICES[rng.below(SERVICES.len() as u64) as usize];
    let cause = CAUSES[rng.below(CAUSES.len() as u64) as usize];
    format!(
        "Incident {round}-{n}: the {service} service restarted {} times because of {cause}; ticket OPS-{}.",
        2 + rng.below(40),
        10_000 + round * 1000 + n
    )
}

/// `PRAGMA integrity_check` on the database file, opened read-only.
fn integrity(db: &Path) -> String {
    let conn =
        rusqlite::Connection::open_with_flags(db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .unwrap_or_else(|e| panic!("cannot open {}: {e}", db.display()));
    conn.query_row("PRAGMA integrity_check", [], |r| r.get::<_, String>(0))
        .unwrap_or_else(|e| panic!("integrity_check failed to run: {e}"))
}

/// Stores memories in a pipeline until a random moment after the first acknowledgement, then
/// kills the server. Returns the acknowledged memories (id → content) and how many stores were
/// still unanswered when it died.
fn store_until_killed(
    c: &mut StdioClient,
    rng: &mut Rng,
    round: u64,
) -> (HashMap<String, String>, usize) {
    let mut pending: HashMap<i64, String> = HashMap::new();
    let mut acked = HashMap::new();
    let mut kill_at: Option<Instant> = None;
    let started = Instant::now();
    let mut n = 0;
    loop {
        while pending.len() < IN_FLIGHT {
            n += 1;
            let text = content(rng, round, n);
            let id = c.send_request(
                "tools/call",
                json!({"name": "mira_store", "arguments": {"content": text, "wing": "crash"}}),
            );
            pending.insert(id, text);
        }
        if let Some(msg) = c.next_message(Duration::from_millis(2)) {
            if let Some(text) = msg["id"].as_i64().and_then(|id| pending.remove(&id)) {
                let result = &msg["result"];
                assert!(!is_error(result), "store failed: {msg}");
                let id = result["structuredContent"]["id"]
                    .as_str()
                    .unwrap_or_else(|| panic!("no id in {msg}"))
                    .to_owned();
                acked.insert(id, text);
                kill_at
                    .get_or_insert_with(|| Instant::now() + Duration::from_millis(rng.below(1200)));
            }
        }
        if kill_at.is_some_and(|t| Instant::now() >= t) {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(90),
            "no store was acknowledged; stderr:\n{}",
            c.stderr()
        );
    }
    c.kill();
    // Answers written before the kill still count as acknowledged.
    while let Some(msg) = c.next_message(Duration::from_millis(50)) {
        if let Some(text) = msg["id"].as_i64().and_then(|id| pending.remove(&id)) {
            if let Some(id) = msg["result"]["structuredContent"]["id"].as_str() {
                acked.insert(id.to_owned(), text);
            }
        }
    }
    (acked, pending.len())
}

/// Checks a fresh process's view of the store; returns the acknowledged memories it lacks.
fn verify(
    c: &mut StdioClient,
    acked: &HashMap<String, String>,
    latest: &HashMap<String, String>,
) -> usize {
    let mut lost = 0;
    for (id, content) in acked {
        let r = c.call_tool("mira_load", json!({"id": id}));
        if is_error(&r) || !text(&r).contains(content.as_str()) {
            eprintln!("LOST: {id}: {}", text(&r));
            lost += 1;
        }
    }
    // The memories of the last round are recallable by their own words.
    for (id, content) in latest {
        let r = c.call_tool(
            "mira_recall",
            json!({"query": content, "wing": "crash", "budget": 2000}),
        );
        assert!(!is_error(&r), "{r}");
        let ids: Vec<&str> = r["structuredContent"]["items"]
            .as_array()
            .map(|a| a.iter().filter_map(|i| i["id"].as_str()).collect())
            .unwrap_or_default();
        assert!(
            ids.contains(&id.as_str()),
            "{id} not recalled for its own text: {}",
            text(&r)
        );
    }
    let s = c.call_tool("mira_status", json!({}));
    let memories = s["structuredContent"]["memories"].as_u64().unwrap_or(0) as usize;
    let indexed = s["structuredContent"]["index"]["size"]
        .as_u64()
        .unwrap_or(0) as usize;
    assert!(memories >= acked.len() - lost, "{s}");
    assert_eq!(
        indexed, memories,
        "the vector index does not hold every row: {s}"
    );
    lost
}

backend_test! {
    fn acknowledged_memories_survive_sigkill(db) {
        let _serial = serial();
        let kills = env_u64("MIRA_CRASH_KILLS", 8);
        let kills = match db.pg {
            Some(_) if std::env::var_os("MIRA_CRASH_KILLS").is_none() => kills.min(3),
            _ => kills,
        };
        survive_kills(db, kills);
    }
}

/// Kills a server `kills` times on `db`, checking after each kill.
#[allow(
    clippy::print_stdout,
    reason = "the harness's figures, shown with --nocapture"
)]
fn survive_kills(db: &Db, kills: u64) {
    let seed = env_u64("MIRA_CRASH_SEED", 0x5eed_2026);
    let mut rng = Rng::new(seed);
    let file = db.dir.path().join("mira.db");
    let serve = || {
        let mut cmd = mira_command(db.dir.path(), &["serve"]);
        cmd.envs(db.env());
        StdioClient::spawn_command(cmd)
    };
    let started = Instant::now();

    let mut acked: HashMap<String, String> = HashMap::new();
    let mut latest: HashMap<String, String> = HashMap::new();
    let mut lost = 0;
    let mut in_flight = 0;
    for round in 0..=kills {
        if round > 0 && db.pg.is_none() {
            assert_eq!(integrity(&file), "ok", "after kill {round}");
        }
        let mut c = serve();
        c.initialize();
        lost += verify(&mut c, &acked, &latest);
        if round == kills {
            let _ = c.close();
            break;
        }
        let (round_acked, unanswered) = store_until_killed(&mut c, &mut rng, round);
        in_flight += unanswered;
        latest = round_acked;
        acked.extend(latest.clone());
    }
    let value: Value = json!({
        "backend": db.name(),
        "kills_survived": kills,
        "acknowledged": acked.len(),
        "unanswered_at_kill": in_flight,
        "lost": lost,
        "seed": seed,
        "seconds": started.elapsed().as_secs_f64(),
    });
    println!("crash harness: {value}");
    assert_eq!(lost, 0, "acknowledged memories were lost");
    assert!(
        acked.len() as u64 >= kills,
        "too few stores acknowledged: {value}"
    );
}
