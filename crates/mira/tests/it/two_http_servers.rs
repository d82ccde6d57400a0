//! Two `mira serve --http` servers on one PostgreSQL database, as two machines of a team run
//! them (each with its own storage folder for index files): 20 MCP clients, 10 per server,
//! store memories with unique markers and recall the newest memory the other server
//! acknowledged. Every acknowledged store must be in the database at the end, and a memory
//! acknowledged through one server must come back from the first recall through the other
//! issued after the acknowledgement (each server follows the database's change feed before every
//! recall: no per-process index may lag). Any HTTP or tool error fails the run.

use crate::common::{stdout, Db};
use crate::mcp_common::{
    checked, mira_command, recalled_ids, report_load, serial, HttpClient, HttpServer,
};
use serde_json::{json, Value};
use std::collections::HashSet;
use std::path::Path;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// MCP clients per server.
const CLIENTS_PER_SERVER: usize = 10;
/// The wing every client stores into and recalls from.
const WING: &str = "team";
/// How long a recall may keep missing a memory the other server acknowledged before the run
/// fails (only to measure a lag, should there be one: the assertion is that there is none).
const GIVE_UP_AFTER: Duration = Duration::from_secs(15);

/// A store acknowledged by a server.
#[derive(Clone)]
struct Acked {
    id: String,
    content: String,
    server: usize,
}

/// What one client did.
#[derive(Default)]
struct ClientRun {
    /// Every call's tool and latency.
    calls: Vec<(&'static str, Duration)>,
    /// Recalls through this client's server of a memory the other server had acknowledged.
    cross_recalls: usize,
    /// The memories such a recall missed, with how long until a recall found them.
    late: Vec<(String, Duration)>,
}

/// The `i`-th note of `client` on `server`: its text carries a marker no other note has.
fn note(server: usize, client: usize, i: usize) -> String {
    const TOPICS: [&str; 5] = [
        "the nightly backup job",
        "the payment webhook",
        "the search reindex",
        "the cache warmer",
        "the audit exporter",
    ];
    const PEOPLE: [&str; 4] = ["Amara", "Bruno", "Chen", "Dalia"];
    format!(
        "Ticket m{server}c{client}n{i}: {} on host h{client}x{i} was checked by {} during rotation {}.",
        TOPICS[(client + i) % TOPICS.len()],
        PEOPLE[i % PEOPLE.len()],
        server * 1000 + i
    )
}

/// `mira serve --http` on `db`, its index files and HOME in `dir`.
fn server(db: &Db, dir: &Path) -> HttpServer {
    let mut cmd = mira_command(dir, &["serve", "--http", "127.0.0.1:0"]);
    cmd.envs(db.env())
        .env("MIRA_STORAGE_PATH", dir.join("store"));
    HttpServer::spawn_command(cmd)
}

/// Stores one memory; returns its id (it must be new).
fn store(c: &mut HttpClient, content: &str) -> String {
    let r = checked(
        c.call_tool("mira_store", json!({"content": content, "wing": WING})),
        "store",
    );
    assert_eq!(r["structuredContent"]["stored"], json!(true), "{r}");
    r["structuredContent"]["id"]
        .as_str()
        .unwrap_or_else(|| panic!("no id: {r}"))
        .to_owned()
}

fn recall(c: &mut HttpClient, query: &str) -> Value {
    checked(
        c.call_tool(
            "mira_recall",
            json!({"query": query, "wing": WING, "budget": 1000}),
        ),
        "recall",
    )
}

/// One client of `server` until `run_for` has passed since `started`: store a note, then recall
/// the newest memory the other server acknowledged.
fn client(
    url: &str,
    server: usize,
    n: usize,
    acked: &Mutex<Vec<Acked>>,
    started: Instant,
    run_for: Duration,
) -> ClientRun {
    let mut c = HttpClient::new(url);
    c.initialize();
    let mut run = ClientRun::default();
    let mut i = 0;
    while started.elapsed() < run_for {
        i += 1;
        let content = note(server, n, i);
        let t = Instant::now();
        let id = store(&mut c, &content);
        run.calls.push(("mira_store", t.elapsed()));
        let newest_of_other = {
            let mut acked = acked.lock().unwrap();
            acked.push(Acked {
                id,
                content,
                server,
            });
            acked.iter().rev().find(|a| a.server != server).cloned()
        };
        let Some(target) = newest_of_other else {
            continue;
        };
        let asked = Instant::now();
        let r = recall(&mut c, &target.content);
        run.calls.push(("mira_recall", asked.elapsed()));
        run.cross_recalls += 1;
        if recalled_ids(&r).contains(&target.id) {
            continue;
        }
        // Missed: measure how long until it shows up, then fail the run with that figure.
        loop {
            std::thread::sleep(Duration::from_millis(50));
            if recalled_ids(&recall(&mut c, &target.content)).contains(&target.id) {
                run.late.push((target.id.clone(), asked.elapsed()));
                break;
            }
            assert!(
                asked.elapsed() < GIVE_UP_AFTER,
                "{} stored through server {} was not recalled through server {server} within {GIVE_UP_AFTER:?}",
                target.id,
                target.server
            );
        }
    }
    run
}

/// The ids `mira export` writes for the database.
fn exported_ids(db: &Db) -> Vec<String> {
    stdout(db.mira().arg("export"))
        .lines()
        .map(|l| {
            let v: Value = serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}"));
            v["id"]
                .as_str()
                .unwrap_or_else(|| panic!("no id: {l}"))
                .to_owned()
        })
        .collect()
}

#[allow(
    clippy::print_stdout,
    reason = "the load and visibility figures, shown with --nocapture"
)]
fn two_servers(run_for: Duration) {
    let Some(db) = Db::postgres() else {
        return;
    };
    let dirs = [tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap()];
    let servers = [server(&db, dirs[0].path()), server(&db, dirs[1].path())];
    let acked = Mutex::new(Vec::new());
    // Load each server's model before the clock starts.
    for (s, srv) in servers.iter().enumerate() {
        let mut warm = HttpClient::new(&srv.url);
        warm.initialize();
        let content = format!("Warm-up note of server {s}: the model is loaded.");
        let id = store(&mut warm, &content);
        recall(&mut warm, &content);
        acked.lock().unwrap().push(Acked {
            id,
            content,
            server: s,
        });
    }

    let started = Instant::now();
    let runs: Vec<ClientRun> = std::thread::scope(|scope| {
        let threads: Vec<_> = (0..2 * CLIENTS_PER_SERVER)
            .map(|k| {
                let (s, n) = (k % 2, k / 2);
                let (url, acked) = (&servers[s].url, &acked);
                scope.spawn(move || client(url, s, n, acked, started, run_for))
            })
            .collect();
        threads
            .into_iter()
            .map(|t| t.join().expect("client thread"))
            .collect()
    });
    let secs = started.elapsed().as_secs_f64();
    let acked = acked.into_inner().unwrap();

    // Nothing lost: both servers count every acknowledged store, and the database holds each.
    let expected: HashSet<&str> = acked.iter().map(|a| a.id.as_str()).collect();
    assert_eq!(expected.len(), acked.len(), "an id was acknowledged twice");
    for srv in &servers {
        let mut c = HttpClient::new(&srv.url);
        c.initialize();
        let s = checked(c.call_tool("mira_status", json!({})), "status");
        assert_eq!(
            s["structuredContent"]["memories"].as_u64(),
            Some(acked.len() as u64),
            "{s}"
        );
    }
    let exported = exported_ids(&db);
    let in_db: HashSet<&str> = exported.iter().map(String::as_str).collect();
    let lost: Vec<_> = expected.difference(&in_db).collect();
    assert!(
        lost.is_empty(),
        "acknowledged but not in the database: {lost:?}"
    );
    assert_eq!(
        exported.len(),
        acked.len(),
        "the database holds unacknowledged memories"
    );

    let cross: usize = runs.iter().map(|r| r.cross_recalls).sum();
    let late: Vec<_> = runs.iter().flat_map(|r| &r.late).collect();
    let calls: Vec<_> = runs.iter().flat_map(|r| r.calls.iter().copied()).collect();
    report_load(
        "two HTTP servers on one PostgreSQL",
        2 * CLIENTS_PER_SERVER,
        &calls,
        secs,
    );
    println!(
        "  {} stores acknowledged, {} in the database (0 lost); {cross} recalls of the other server's newest memory, {} missed it",
        acked.len(),
        exported.len(),
        late.len()
    );
    assert!(
        late.is_empty(),
        "recalls through one server missed memories the other had acknowledged (id, time until found): {late:?}"
    );
    assert!(
        cross >= 2 * CLIENTS_PER_SERVER,
        "only {cross} cross-server recalls in {secs:.1} s"
    );
    for srv in servers {
        let stderr = srv.stderr();
        assert!(!stderr.contains("not synchronised"), "{stderr}");
        let status = srv.stop();
        assert!(status.success(), "{status:?}");
    }
}

#[test]
fn two_http_servers_on_postgres_lose_nothing_and_see_each_other() {
    let _serial = serial();
    two_servers(Duration::from_secs(5));
}

/// The long run, 30 seconds of two servers on one PostgreSQL database:
/// `cargo test -p mira --test it two_http_servers -- --ignored --nocapture`.
#[test]
#[ignore]
fn two_http_servers_on_postgres_for_30_seconds() {
    let _serial = serial();
    two_servers(Duration::from_secs(30));
}
