//! The first day with an agent: what a new user meets after the set-up, one test per
//! surprise, through the binary (CLI, MCP over stdio, a terminal) and the recall use case. The memory page's links are in `ui_browser.rs`.

use crate::common::hash_app;
use crate::first_hour::{as_new_user, git, run_ok};
use crate::mcp_common::{self, mira_command, text, StdioClient};
use chrono::{TimeZone, Utc};
use mira::usecases::access::Access;
use mira::usecases::recall::{recall, RecallRequest, Surface};
use mira::usecases::store::{store, StoreRequest};
use mira::usecases::UseCaseError;
use serde_json::{json, Value};
use std::collections::HashSet;
use std::io::Write as _;
use std::path::Path;
use std::process::{Command, Output, Stdio};

/// `mira ARGS` on the store in `dir/store`.
fn mira(dir: &Path, args: &[&str]) -> Output {
    mira_command(dir, args).output().unwrap()
}

fn ok(dir: &Path, args: &[&str]) -> String {
    run_ok(&mut mira_command(dir, args))
}

fn json_of(dir: &Path, args: &[&str]) -> Value {
    serde_json::from_str(&ok(dir, args)).unwrap()
}

/// Stores `text` in `wing` at `at` (RFC 3339); its UUID.
fn put(dir: &Path, text: &str, wing: &str, at: &str) -> String {
    let v = json_of(
        dir,
        &["store", text, "--wing", wing, "--created-at", at, "--json"],
    );
    v["id"].as_str().unwrap().to_owned()
}

fn short(id: &str) -> String {
    id.replace('-', "")[..8].to_owned()
}

/// `mira ARGS` (one shell word each) on the store in `dir/store`, run on a terminal (util-linux
/// `script`) where `typed` is typed; what the terminal showed.
fn on_a_terminal(dir: &Path, args: &[&str], typed: &str) -> String {
    let line = format!("{} {}", env!("CARGO_BIN_EXE_mira"), args.join(" "));
    let mut script = Command::new("script");
    script.args(["-qec", &line, "/dev/null"]).current_dir(dir);
    // The environment `mira_command` gives mira.
    for (k, v) in mira_command(dir, &[]).get_envs() {
        match v {
            Some(v) => script.env(k, v),
            None => script.env_remove(k),
        };
    }
    let mut child = script
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("util-linux script");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(typed.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Whether `s` holds a hyphenated UUID or the reference's `T0:` form.
fn has_uuid(s: &str) -> bool {
    let re = regex::Regex::new(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-").unwrap();
    re.is_match(s) || s.contains("T0:")
}

/// Inside a clone, `mira status` creates nothing and says where the first memory will
/// go, why, and how to choose another store; every command that reads or changes what is
/// stored refuses with the path instead of creating an empty store; the first store creates
/// it and status then names the reason.
#[test]
fn reading_creates_no_store_and_status_says_where_one_would_go() {
    let home = tempfile::tempdir().unwrap();
    let repo = home.path().join("clone");
    let inside = repo.join("src/deep");
    std::fs::create_dir_all(&inside).unwrap();
    git(&repo, &["init", "-q"]);
    let db = repo.join(".mira/mira.db").display().to_string();

    let status = run_ok(&mut as_new_user(home.path(), &inside, &["status"]));
    for needed in [
        "none yet".to_string(),
        db.clone(),
        format!("the project {}", repo.display()),
        ".git".into(),
        "MIRA_STORAGE_PATH".into(),
        "Model:".into(),
    ] {
        assert!(status.contains(&needed), "{needed} missing:\n{status}");
    }
    let st: Value = serde_json::from_str(&run_ok(&mut as_new_user(
        home.path(),
        &inside,
        &["status", "--json"],
    )))
    .unwrap();
    assert_eq!(
        (st["exists"].clone(), st["db_path"].clone()),
        (json!(false), json!(db))
    );

    let commands: &[&[&str]] = &[
        &["recall", "what did we decide?"],
        &["timeline"],
        &["load", "0a1b2c3d"],
        &["causal", "0a1b2c3d"],
        &["export"],
        &["archive", "--dry-run"],
        &["restore", "0a1b2c3d"],
        &["clear", "--wing", "w"],
        &["forget", "0a1b2c3d", "--yes"],
        &["pin", "0a1b2c3d"],
        &["link", "0a1b2c3d", "1b2c3d4e"],
        &["unlink", "0a1b2c3d", "1b2c3d4e"],
        &["index", "rebuild"],
        &["webhooks", "dead-letters"],
        &["soul", "--agent", "ada", "status"],
    ];
    for args in commands {
        let out = as_new_user(home.path(), &inside, args).output().unwrap();
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(3), "{args:?}: {err}");
        assert!(
            err.contains(&format!("no memory store at {db}")) && err.contains("mira status"),
            "{args:?}: {err}"
        );
        assert!(!repo.join(".mira").exists(), "{args:?} created the store");
    }

    // Outside any project, the user's store is named (and not created either).
    let notes = home.path().join("notes");
    std::fs::create_dir_all(&notes).unwrap();
    let user_db = home.path().join(".local/share/mira/mira.db");
    let status = run_ok(&mut as_new_user(home.path(), &notes, &["status"]));
    assert!(
        status.contains(&user_db.display().to_string()) && status.contains("no .git or .mira"),
        "{status}"
    );
    assert!(!user_db.parent().unwrap().exists());

    // The first store creates the project's store; status says why that one.
    run_ok(&mut as_new_user(
        home.path(),
        &inside,
        &[
            "store",
            "We keep the release notes in docs/CHANGES.md.",
            "--wing",
            "clone",
        ],
    ));
    let status = run_ok(&mut as_new_user(home.path(), &inside, &["status"]));
    assert!(
        status.contains(&format!("Database: {db} ("))
            && status.contains(&format!("Chosen by: the project {}", repo.display())),
        "{status}"
    );
}

/// Memories of a wing spread over days, most about one topic, and two pinned rules unrelated
/// to it; the block for that topic in each surface and at every budget.
#[test]
fn the_block_marks_pins_keeps_them_and_gives_each_day_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let app = hash_app(dir.path());
    let day = |d: u32, h: u32| Utc.with_ymd_and_hms(2026, 3, d, h, 0, 0).unwrap();
    let texts = [
        (
            day(2, 9),
            "The database connection pool was raised to 40 connections.",
        ),
        (
            day(5, 14),
            "Checkout errors came from the connection pool running dry at peak.",
        ),
        (
            day(2, 16),
            "The staging database pool keeps 5 idle connections.",
        ),
        (
            day(9, 11),
            "Pool exhaustion alerts now page the on-call engineer.",
        ),
        (
            day(5, 8),
            "We moved session storage out of the main database.",
        ),
        (
            day(9, 10),
            "Lunch on Fridays is at the Italian place downstairs.",
        ),
        (
            day(12, 10),
            "The connection pool size is read from POOL_SIZE at start.",
        ),
        (day(2, 11), "Database backups run nightly at 02:00 UTC."),
    ];
    for (at, t) in texts {
        store(
            &app,
            &Access::local(),
            StoreRequest {
                content: t.into(),
                wing: "ops".into(),
                created_at: Some(at),
                ..StoreRequest::default()
            },
        )
        .unwrap();
    }
    let mut pinned = Vec::new();
    for (at, t) in [
        (day(1, 9), "Always answer the customer in French."),
        (day(7, 9), "Never deploy on a Friday afternoon."),
    ] {
        let o = store(
            &app,
            &Access::local(),
            StoreRequest {
                content: t.into(),
                wing: "ops".into(),
                created_at: Some(at),
                pinned: true,
                ..StoreRequest::default()
            },
        )
        .unwrap();
        pinned.push(o.id);
    }
    let ask = |budget: i64, surface: Surface| RecallRequest {
        query: "database connection pool".into(),
        wing: Some("ops".into()),
        budget: Some(budget),
        surface,
        ..RecallRequest::default()
    };

    let r = recall(&app, &Access::local(), &ask(4000, Surface::Mcp)).unwrap();
    assert_eq!(r.items.len(), texts.len() + pinned.len(), "{}", r.text);
    // The pinned mark, on the pinned memories alone.
    for i in &r.items {
        assert_eq!(
            i.text.starts_with(&format!("[{} pinned] ", i.short_id)),
            i.pinned,
            "{}",
            i.text
        );
        assert!(r.text.contains(&i.text));
    }
    assert!(
        r.text.ends_with("mira_load(id) gives one in full."),
        "{}",
        r.text
    );
    // One line per day; the days in the order of their first memory, pinned ones first, then
    // by relevance; within a day, in that order too.
    let day_re = regex::Regex::new(r"^\d{1,2} [A-Z][a-z]+ \d{4}:$").unwrap();
    let day_lines: Vec<&str> = r.text.lines().filter(|l| day_re.is_match(l)).collect();
    let distinct: HashSet<&&str> = day_lines.iter().collect();
    assert_eq!(distinct.len(), day_lines.len(), "{}", r.text);
    let shown: HashSet<_> = r.items.iter().map(|i| i.id).collect();
    let order: Vec<_> = r
        .ranking
        .iter()
        .filter(|id| pinned.contains(id))
        .chain(r.ranking.iter().filter(|id| !pinned.contains(id)))
        .filter(|id| shown.contains(id))
        .copied()
        .collect();
    let mut expected_days: Vec<String> = Vec::new();
    for id in &order {
        let item = r.items.iter().find(|i| i.id == *id).unwrap();
        let d = chrono::DateTime::parse_from_rfc3339(&item.created_at)
            .unwrap()
            .format("%-d %B %Y:")
            .to_string();
        if !expected_days.contains(&d) {
            expected_days.push(d);
        }
    }
    assert_eq!(day_lines, expected_days, "{}", r.text);
    let rank = |id| order.iter().position(|o| *o == id).unwrap();
    for pair in r.items.windows(2) {
        if pair[0].created_at[..10] == pair[1].created_at[..10] {
            assert!(
                rank(pair[0].id) < rank(pair[1].id),
                "not by relevance within a day: {}",
                r.text
            );
        }
    }

    // The command line's closing line names the command.
    let cli = recall(&app, &Access::local(), &ask(4000, Surface::Cli)).unwrap();
    assert!(
        cli.text.ends_with("`mira load ID` gives one in full.") && !cli.text.contains("mira_load"),
        "{}",
        cli.text
    );

    // At every budget, each pinned memory is shown or named as left out, the whole answer
    // fits, and a budget that shows nothing is refused with the smallest that shows one.
    let mut refused = 0;
    for budget in (20..=420).step_by(4) {
        match recall(&app, &Access::local(), &ask(budget, Surface::Mcp)) {
            Ok(r) => {
                assert!(
                    r.used <= budget as u32 && !r.items.is_empty(),
                    "{budget}: {}",
                    r.text
                );
                assert!(
                    mira_core::tokens::count(&r.text) as u32 <= budget as u32,
                    "{budget}: {}",
                    r.text
                );
                for p in &pinned {
                    let short = mira_core::render::short_id(*p);
                    let named = r
                        .text
                        .lines()
                        .any(|l| l.starts_with("Pinned, left out") && l.contains(&short));
                    assert!(
                        r.items.iter().any(|i| i.id == *p) || named,
                        "{budget}: pinned {short} silently missing:\n{}",
                        r.text
                    );
                }
            }
            Err(UseCaseError::Invalid(m)) => {
                refused += 1;
                let need: i64 = m
                    .split("give a budget of at least ")
                    .nth(1)
                    .and_then(|rest| rest.split(|c: char| !c.is_ascii_digit()).next())
                    .and_then(|n| n.parse().ok())
                    .unwrap_or_else(|| panic!("{budget}: no minimum in: {m}"));
                assert!(need > budget, "{budget}: {m}");
                let r = recall(&app, &Access::local(), &ask(need, Surface::Mcp)).unwrap();
                assert!(!r.items.is_empty(), "{need} shows nothing: {}", r.text);
            }
            Err(e) => panic!("{budget}: {e}"),
        }
    }
    assert!(refused > 0, "the smallest budgets should be refused");
}

/// On the command line: headlines say what was decided and are cut between
/// words; every human output prints short ids (that `load` takes), `--json` the UUIDs; a
/// budget too small for any memory fails with the smallest one that works.
#[test]
fn human_output_has_short_ids_and_whole_word_headlines() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let long = "Root cause of the checkout 500s: the pool opened one connection per request and never gave it back, so PostgreSQL refused new ones after a hundred.";
    let stripe = put(
        d,
        "We chose Stripe for payments over PayPal: better API and lower fees for our volume.",
        "shop",
        "2026-10-15T09:00:00Z",
    );
    let api = put(
        d,
        "We decided to write the API in Rust with axum instead of Go, because the team knows Rust.",
        "shop",
        "2026-10-16T09:00:00Z",
    );
    let bug = put(
        d,
        "Bug: checkout returns HTTP 500 under load; logs show too many connections.",
        "shop",
        "2026-11-01T10:00:00Z",
    );
    let fix = put(d, long, "shop", "2026-11-02T10:00:00Z");

    let timeline = ok(d, &["timeline", "--wing", "shop"]);
    let line_of = |id: &str| {
        timeline
            .lines()
            .find(|l| l.contains(&short(id)))
            .unwrap_or_else(|| panic!("{id} not listed:\n{timeline}"))
            .to_owned()
    };
    let s = line_of(&stripe);
    assert!(s.contains("Stripe") && s.contains("PayPal"), "{s}");
    let a = line_of(&api);
    assert!(
        a.contains("write the API") && a.contains("Rust") && a.contains("Go"),
        "{a}"
    );
    let f = line_of(&fix);
    let headline = f.split("debug_log: ").nth(1).unwrap();
    let kept = headline
        .strip_suffix('…')
        .unwrap_or_else(|| panic!("not cut: {f}"));
    assert!(long.starts_with(kept), "{f}");
    assert!(
        !long[kept.len()..].starts_with(char::is_alphanumeric),
        "cut mid-word: {f}"
    );

    let linked = ok(
        d,
        &["link", &short(&bug), &short(&fix), "--relation", "resolves"],
    );
    let outputs = [
        ok(
            d,
            &[
                "store",
                "The checkout pool now holds 20 connections.",
                "--wing",
                "shop",
            ],
        ),
        timeline.clone(),
        ok(
            d,
            &["timeline", "--include-archived", "--include-superseded"],
        ),
        ok(d, &["causal", &short(&fix), "--consequences"]),
        ok(d, &["load", &short(&bug)]),
        linked,
        ok(d, &["archive", "--id", &short(&stripe)]),
        ok(d, &["restore", &short(&stripe)]),
        ok(d, &["pin", &short(&api)]),
        ok(d, &["recall", "checkout errors", "--wing", "shop"]),
        ok(d, &["unlink", &short(&bug), &short(&fix)]),
        ok(d, &["forget", &short(&stripe), "--yes"]),
    ];
    for o in &outputs {
        assert!(!has_uuid(o), "a long id in human output:\n{o}");
    }
    for line in outputs[2].lines() {
        assert!(line.chars().count() <= 160, "a long timeline line: {line}");
    }
    let loaded = json_of(d, &["load", &short(&bug), "--json"]);
    assert_eq!(loaded["id"], bug.as_str(), "--json keeps the UUID");

    // A budget that holds the frame but no memory: refused with the smallest that shows one.
    let out = mira(
        d,
        &[
            "recall",
            "checkout errors",
            "--wing",
            "shop",
            "--budget",
            "40",
        ],
    );
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    let need = err
        .split("give a budget of at least ")
        .nth(1)
        .and_then(|r| r.split(|c: char| !c.is_ascii_digit()).next())
        .unwrap_or_else(|| panic!("{err}"));
    let r = json_of(
        d,
        &[
            "recall",
            "checkout errors",
            "--wing",
            "shop",
            "--budget",
            need,
            "--json",
        ],
    );
    assert!(!r["items"].as_array().unwrap().is_empty(), "{r}");
}

/// A bug and its fix linked and unlinked by hand from the command line and over MCP;
/// links that make no sense refused with what to do; `mira forget` asks on a terminal and
/// refuses to guess elsewhere.
#[test]
fn links_are_made_and_removed_by_hand_and_forget_asks_first() {
    let _serial = mcp_common::serial();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let bug = put(
        d,
        "Bug: checkout returns HTTP 500 under load; logs show 'too many connections'.",
        "shop",
        "2026-11-01T10:00:00Z",
    );
    let fix = put(
        d,
        "Root cause of the checkout 500s: a connection per request. Fix: one shared pool of 20.",
        "shop",
        "2026-11-01T15:00:00Z",
    );
    let other = put(
        d,
        "The office plants are watered on Mondays.",
        "home",
        "2026-11-01T12:00:00Z",
    );
    let (b, f) = (short(&bug), short(&fix));

    let linked = ok(d, &["link", &b, &f, "--relation", "resolves"]);
    assert!(
        linked.starts_with("Linked (resolves):") && linked.contains(&b) && linked.contains(&f),
        "{linked}"
    );
    assert!(ok(d, &["link", &b, &f, "--relation", "resolves"]).starts_with("Already linked"));
    let chain = json_of(d, &["causal", &f, "--json"]);
    assert_eq!(chain["causes"][0]["node"]["id"], bug.as_str(), "{chain}");
    assert_eq!(chain["causes"][0]["relation"], "resolves");
    for (args, code, says) in [
        (vec!["link", &f, &b], 2, "swap the two ids"),
        (
            vec!["link", &b, &f, "--relation", "updates"],
            2,
            "superseding",
        ),
        (
            vec!["link", &b, &f, "--relation", "fixes"],
            2,
            "because, triggered, resolves",
        ),
        (vec!["link", &b, &b], 2, "same memory"),
        (vec!["link", &b, &short(&other)], 2, "one wing"),
        (vec!["link", &b, "ffffffff"], 3, "no memory"),
    ] {
        let out = mira(d, &args);
        assert_eq!(out.status.code(), Some(code), "{args:?}: {}", stderr(&out));
        assert!(stderr(&out).contains(says), "{args:?}: {}", stderr(&out));
    }
    let unlinked = ok(d, &["unlink", &f, &b]);
    assert!(
        unlinked.contains(&format!("Unlinked {b} → {f} (resolves")),
        "{unlinked}"
    );
    let out = mira(d, &["unlink", &f, &b]);
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));

    // The same over MCP: mira_link writes, mira_unlink removes (destructive).
    let mut c = StdioClient::spawn_command(mira_command(d, &["serve"]));
    c.initialize();
    let list = c.request("tools/list", json!({}));
    let tools = list["result"]["tools"].as_array().unwrap();
    let annotations = |n: &str| {
        tools
            .iter()
            .find(|t| t["name"] == n)
            .unwrap_or_else(|| panic!("{n} not listed"))["annotations"]
            .clone()
    };
    assert_eq!(annotations("mira_link")["destructiveHint"], json!(false));
    assert_eq!(annotations("mira_unlink")["destructiveHint"], json!(true));
    let r = c.call_tool(
        "mira_link",
        json!({"from": b, "to": f, "relation": "resolves"}),
    );
    assert!(!mcp_common::is_error(&r), "{r}");
    assert_eq!(r["structuredContent"]["added"], json!(true), "{r}");
    assert!(!has_uuid(text(&r)), "{}", text(&r));
    let chain = c.call_tool("mira_causal_chain", json!({"id": f}));
    assert!(text(&chain).contains(&b), "{}", text(&chain));
    let missing = c.call_tool("mira_link", json!({"from": b}));
    assert!(
        mcp_common::is_error(&missing) && text(&missing).contains("`from` and `to`"),
        "{missing}"
    );
    let r = c.call_tool("mira_unlink", json!({"from": f, "to": b}));
    assert_eq!(
        r["structuredContent"]["removed"][0]["from"],
        bug.as_str(),
        "{r}"
    );
    assert!(c.close().0.success());

    // Forget: off a terminal it deletes nothing without --yes and says so.
    let out = mira(d, &["forget", &b]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("nothing was deleted") && err.contains(&format!("mira forget {b} --yes")),
        "{err}"
    );
    ok(d, &["load", &b]);
    // On a terminal it shows the memory and asks; "n" keeps it, "y" deletes it.
    let said = on_a_terminal(d, &["forget", &b], "n\n");
    assert!(
        said.contains(&format!(
            "Forget {b} ([debug_log] Bug: checkout returns HTTP 500"
        )) && said.contains("Nothing was deleted"),
        "{said}"
    );
    ok(d, &["load", &b]);
    let said = on_a_terminal(d, &["forget", &b], "y\n");
    assert!(said.contains(&format!("Forgot {b} ")), "{said}");
    assert_eq!(mira(d, &["load", &b]).status.code(), Some(3));
}

/// Counts in words that agree with them, help summaries that are whole sentences, an
/// import that counts only the links it wrote, the facts a store found, and numbers in JSON as
/// they were computed.
#[test]
fn the_command_line_says_what_it_did_in_plain_words() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let cause = put(
        d,
        "The checkout service crashed at peak load: the database connection pool was exhausted at 10 connections.",
        "shop",
        "2026-11-01T10:00:00Z",
    );
    let effect = json_of(
        d,
        &[
            "store",
            "We raised the database connection pool to 100 connections because the checkout service crashed at peak load.",
            "--wing",
            "shop",
            "--created-at",
            "2026-11-01T11:00:00Z",
            "--json",
        ],
    );
    assert_eq!(
        effect["links"][0]["target"],
        cause.as_str(),
        "a causal link: {effect}"
    );

    // Plurals.
    let archived = ok(d, &["archive", "--id", &short(&cause)]);
    assert!(archived.contains("Archived:"), "{archived}");
    let restored = ok(d, &["restore", &short(&cause)]);
    assert!(restored.starts_with("Unarchived 1 memory:"), "{restored}");
    put(
        d,
        "Plants are watered on Mondays.",
        "home",
        "2026-11-02T10:00:00Z",
    );
    let preview = ok(d, &["clear", "--wing", "home"]);
    assert!(
        preview.contains("would permanently delete 1 memory ("),
        "{preview}"
    );
    let out = mira(d, &["export", "--wing", "home"]);
    assert!(
        stderr(&out).contains("Exported 1 memory"),
        "{}",
        stderr(&out)
    );

    // A store says what it extracted, or why nothing.
    let plain = ok(
        d,
        &["store", "Plants are kept by the window.", "--wing", "home"],
    );
    assert!(
        plain.contains("Facts: 0 (none extracted: recall shows the text itself"),
        "{plain}"
    );
    let decided = ok(
        d,
        &[
            "store",
            "We chose Stripe for payments over PayPal: better API.",
            "--wing",
            "shop",
        ],
    );
    assert!(
        decided.contains("Facts: 2 extracted\n  Stripe | (rejected: PayPal)"),
        "{decided}"
    );

    // Re-importing what is there writes nothing, links included.
    let file = d.join("shop.jsonl");
    ok(
        d,
        &["export", "--wing", "shop", "-o", file.to_str().unwrap()],
    );
    let fresh = d.join("fresh");
    std::fs::create_dir_all(&fresh).unwrap();
    let first = ok(&fresh, &["import", file.to_str().unwrap()]);
    assert!(first.contains("Links restored: 1"), "{first}");
    let again = ok(&fresh, &["import", file.to_str().unwrap()]);
    assert!(
        again.contains("Imported: 0") && again.contains("Links restored: 0"),
        "{again}"
    );

    // Numbers in JSON as computed (an f32 confidence is 0.59, not 0.5899999737739563), on the
    // command line and in MCP structured content.
    let long_float = regex::Regex::new(r"\d\.\d{10,}").unwrap();
    let loaded = ok(d, &["load", &short(&cause), "--json"]);
    assert!(loaded.contains("\"confidence\""), "{loaded}");
    assert!(!long_float.is_match(&loaded), "{loaded}");
    let _serial = mcp_common::serial();
    let mut c = StdioClient::spawn_command(mira_command(d, &["serve"]));
    c.initialize();
    for (tool, args) in [
        ("mira_load", json!({"id": short(&cause)})),
        (
            "mira_causal_chain",
            json!({"id": short(&cause), "include_consequences": true}),
        ),
        (
            "mira_recall",
            json!({"query": "connection pool", "wing": "shop"}),
        ),
    ] {
        let r = c.call_tool(tool, args);
        let structured = r["structuredContent"].to_string();
        assert!(!long_float.is_match(&structured), "{tool}: {structured}");
    }
    assert!(c.close().0.success());

    // `mira --help`: one short line per command, each the first sentence of its own help.
    let help = ok(d, &["--help"]);
    let commands: Vec<&str> = help
        .split("Commands:\n")
        .nth(1)
        .unwrap()
        .split("\n\n")
        .next()
        .unwrap()
        .lines()
        .collect();
    assert!(commands.len() > 20, "{help}");
    for line in commands {
        assert!(line.chars().count() <= 100, "too long: {line}");
        let (name, summary) = line.trim().split_once(' ').unwrap();
        if name == "help" {
            continue;
        }
        let own = ok(d, &[name, "--help"]);
        let first = own.split("\n\n").next().unwrap().replace('\n', " ");
        assert_eq!(
            first.trim_end_matches('.'),
            summary.trim(),
            "`mira --help` cuts the summary of {name}"
        );
    }
    let causal = ok(d, &["causal", "--help"]);
    assert!(
        causal.contains("short id") && !causal.contains("T0:"),
        "{causal}"
    );
}
