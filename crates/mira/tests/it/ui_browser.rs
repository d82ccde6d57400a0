//! The memory browser in a real headless Chromium, driven through WebDriver (chromedriver):
//! a store with part of a LoCoMo conversation, a search that shows what `mira recall` answers
//! for the same query and budget (each result with its text), a memory's page, a causal link
//! followed, removed and made again by hand, the actions (pin, edit, archive, restore, forget,
//! store in the wing being browsed), a stored `<script>` shown as text, the token asked once (and
//! its button only where a token is needed), a bad address answered for a person, and no view
//! wider than an 800 px window. The run takes screenshots of the main views: into `docs/` (shown
//! in the README) with
//! `MIRA_UPDATE_SCREENSHOTS=1`, else into the target directory.
//!
//! Chromium and chromedriver come from `scripts/browser.sh` (Debian's packages); the test runs
//! it when they are missing and skips, saying so, only when they cannot be installed (under CI
//! it fails instead).

use crate::mcp_common::{mira_command, serial, HttpServer};
use fantoccini::{Client, ClientBuilder, Locator};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const TOKEN: &str = "browser-s3cret";
/// The LoCoMo conversation imported (its first sessions), in `common::locomo_dev_dir()`.
const LOCOMO: &str = "30.json";
const SESSIONS: usize = 4;
const QUERY: &str = "What flooring does Jon want for his dance studio?";
const BUDGET: &str = "600";
/// The longest any page may take to show what a step waits for.
const WAIT: Duration = Duration::from_secs(60);

const CAUSE: &str = "The checkout service crashed at peak load: the database connection pool was exhausted at 10 connections.";
const EFFECT: &str = "We raised the database connection pool to 100 connections because the checkout service crashed at peak load.";
const CONSEQUENCE: &str = "Checkout latency at peak load dropped to 80 ms as a result of raising the database connection pool to 100 connections.";
/// Two ways an agent talked: the identity drifts from the first to the second.
const FORMAL: &str = "User: Can you check the billing report?\nAssistant: Certainly. I would recommend that we verify each total carefully before sending it. Furthermore, the rounding rule is not documented. Therefore, I would suggest a written procedure. Please note that the figures must be reconciled with the ledger.\n";
const BREEZY: &str = "User: how is the deploy going?\nAssistant: hey, all good! lol it went super smooth 😄 honestly nothing to worry about, just ship it! awesome work btw 🎉 love it\n";
const SCRIPT: &str = "Gina's playlist note <script>document.body.dataset.pwned = 'script'</script><img src=x onerror=\"document.body.dataset.pwned = 'img'\"> jazz and contemporary";

/// `name` on the PATH.
fn on_path(name: &str) -> Option<PathBuf> {
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

/// Chromium and chromedriver, installed by `scripts/browser.sh` when missing.
fn browser() -> Option<(PathBuf, PathBuf)> {
    let found = || Some((on_path("chromium")?, on_path("chromedriver")?));
    if let Some(b) = found() {
        return Some(b);
    }
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/browser.sh");
    let ran = Command::new("bash").arg(&script).status();
    eprintln!("scripts/browser.sh: {ran:?}");
    found()
}

/// Chromium and chromedriver for `test`; `None` (the test skips, saying so) when they cannot be
/// installed, which fails under CI.
pub(crate) fn browser_for(test: &str) -> Option<(PathBuf, PathBuf)> {
    let found = browser();
    if found.is_none() {
        assert!(
            !mira_testkit::under_ci(),
            "Chromium is required under CI and could not be installed (scripts/browser.sh)"
        );
        eprintln!(
            "SKIPPED {test}: no Chromium could be installed (scripts/browser.sh needs apt-get and Debian's chromium, chromium-driver)"
        );
    }
    found
}

/// A chromedriver process on a free port, stopped on drop.
pub(crate) struct Driver {
    child: Child,
    url: String,
}

impl Driver {
    pub(crate) fn start(path: &Path) -> Driver {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("free port")
            .port();
        let child = Command::new(path)
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start chromedriver");
        let deadline = Instant::now() + Duration::from_secs(20);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                Instant::now() < deadline,
                "chromedriver did not listen on {port}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        Driver {
            child,
            url: format!("http://127.0.0.1:{port}"),
        }
    }
}

impl Drop for Driver {
    /// Asks chromedriver to quit its browsers too (a failed test leaves its session open),
    /// then stops it.
    fn drop(&mut self) {
        let _ = reqwest::blocking::Client::new()
            .get(format!("{}/shutdown", self.url))
            .timeout(Duration::from_secs(10))
            .send();
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A headless Chromium at `chromium` (its profile in `profile`), driven through `driver`.
pub(crate) async fn session(driver: &Driver, chromium: &Path, profile: &Path) -> Client {
    let mut caps = serde_json::Map::new();
    caps.insert(
        "goog:chromeOptions".into(),
        json!({
            "binary": chromium,
            "args": ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                     "--disable-background-networking", "--disable-component-update", "--disable-sync",
                     "--window-size=1280,900", format!("--user-data-dir={}", profile.display())],
        }),
    );
    ClientBuilder::new(hyper_util::client::legacy::connect::HttpConnector::new())
        .capabilities(caps)
        .connect(&driver.url)
        .await
        .expect("WebDriver session")
}

/// The runtime the WebDriver client runs on.
pub(crate) fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime")
}

/// `mira <args>` on the test's store; asserts success and returns stdout.
pub(crate) fn run(dir: &Path, args: &[&str]) -> String {
    let out = mira_command(dir, args).output().expect("run mira");
    assert!(
        out.status.success(),
        "mira {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("utf-8")
}

pub(crate) fn run_json(dir: &Path, args: &[&str]) -> Value {
    serde_json::from_str(&run(dir, args)).expect("JSON output")
}

/// The first sessions of the LoCoMo conversation, as a LoCoMo file in `dir`.
fn locomo_slice(dir: &Path) -> PathBuf {
    let full: Value = serde_json::from_str(
        &std::fs::read_to_string(crate::common::locomo_dev_dir().join(LOCOMO))
            .expect("LoCoMo file"),
    )
    .expect("JSON");
    let mut slice = serde_json::Map::new();
    for key in ["speaker_a", "speaker_b"] {
        slice.insert(key.into(), full[key].clone());
    }
    for n in 1..=SESSIONS {
        for key in [format!("session_{n}"), format!("session_{n}_date_time")] {
            slice.insert(key.clone(), full[&key].clone());
        }
    }
    let path = dir.join("locomo-30.json");
    std::fs::write(&path, Value::Object(slice).to_string()).expect("write slice");
    path
}

/// Where the screenshots go: `docs/` (shown in the README) with `MIRA_UPDATE_SCREENSHOTS=1`,
/// else the target directory, so that a test run leaves the working tree as it was.
fn docs() -> PathBuf {
    if std::env::var_os("MIRA_UPDATE_SCREENSHOTS").is_some_and(|v| v == "1") {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs")
    } else {
        Path::new(env!("CARGO_TARGET_TMPDIR")).join("screenshots")
    }
}

/// Evaluates `js` (a function body returning a value) until it returns something truthy.
pub(crate) async fn until(c: &Client, js: &str, what: &str) -> Value {
    let started = Instant::now();
    loop {
        let v = c.execute(js, vec![]).await.expect("execute script");
        let truthy = !matches!(&v, Value::Null | Value::Bool(false))
            && v != json!(0)
            && v != json!("")
            && v.as_array().is_none_or(|a| !a.is_empty());
        if truthy {
            return v;
        }
        if started.elapsed() > WAIT {
            let notice = c
                .execute("return document.body.innerText.slice(0, 2000)", vec![])
                .await
                .unwrap_or_default();
            panic!("timed out waiting for {what}; page text:\n{notice}");
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Clicks `css` once it is there, scrolled to the middle of the window first (a control that
/// the browser scrolls to the top edge would sit under the sticky bar, as a person never sees it).
pub(crate) async fn click(c: &Client, css: &str) {
    let e = c
        .wait()
        .at_most(WAIT)
        .for_element(Locator::Css(css))
        .await
        .unwrap_or_else(|e| panic!("{css}: {e}"));
    let arg = serde_json::to_value(&e).expect("an element reference");
    c.execute("arguments[0].scrollIntoView({block: 'center'});", vec![arg])
        .await
        .unwrap_or_else(|e| panic!("scroll to {css}: {e}"));
    e.click()
        .await
        .unwrap_or_else(|e| panic!("click {css}: {e}"));
}

pub(crate) async fn type_into(c: &Client, css: &str, text: &str) {
    let e = c
        .wait()
        .at_most(WAIT)
        .for_element(Locator::Css(css))
        .await
        .unwrap_or_else(|e| panic!("{css}: {e}"));
    e.clear().await.expect("clear");
    e.send_keys(text).await.expect("type");
}

/// Confirms the dialog an action opened.
pub(crate) async fn confirm(c: &Client) {
    until(
        c,
        "return document.getElementById('confirm').open",
        "the confirm dialog",
    )
    .await;
    click(c, "#confirm-ok").await;
}

async fn screenshot(c: &Client, name: &str) {
    let png = c.screenshot().await.expect("screenshot");
    std::fs::create_dir_all(docs()).expect("docs/");
    std::fs::write(docs().join(name), png).expect("write screenshot");
}

/// The ids of the search results shown, in order, and the context block shown.
async fn shown_results(c: &Client) -> (Vec<String>, String) {
    let v = until(
        c,
        "const b = document.getElementById('block'); if (!b) return null; \
         return {ids: [...document.querySelectorAll('#results tbody tr')].map(r => r.dataset.id), block: b.textContent};",
        "search results",
    )
    .await;
    let ids = v["ids"]
        .as_array()
        .expect("ids")
        .iter()
        .map(|i| i.as_str().expect("id").to_owned())
        .collect();
    (ids, v["block"].as_str().expect("block").to_owned())
}

/// Searches the test's query with its budget from the search view; returns what it shows.
async fn search(c: &Client) -> (Vec<String>, String) {
    click(c, "nav a[data-view=search]").await;
    type_into(c, "#q", QUERY).await;
    type_into(c, "#budget", BUDGET).await;
    click(c, "#search-form button[type=submit]").await;
    shown_results(c).await
}

/// `mira recall` for the test's query and budget: item ids and the block.
fn cli_recall(dir: &Path) -> (Vec<String>, String) {
    let r = run_json(dir, &["recall", QUERY, "--budget", BUDGET, "--json"]);
    let ids = r["items"]
        .as_array()
        .expect("items")
        .iter()
        .map(|i| i["id"].as_str().expect("id").to_owned())
        .collect();
    (ids, r["text"].as_str().expect("text").to_owned())
}

/// A block as `mira recall` prints it, but for the tokens used: the page shows the agent's,
/// whose closing line names the MCP tool instead of the command (a token apart in the title).
fn as_on_the_command_line(block: &str) -> String {
    without_tokens_used(&block.replace(
        "mira_load(id) gives one in full.",
        "`mira load ID` gives one in full.",
    ))
}

/// The block with its title's `used/budget tokens` as `budget tokens`.
fn without_tokens_used(block: &str) -> String {
    let (title, rest) = block.split_once('\n').unwrap_or((block, ""));
    let title: Vec<&str> = title
        .split(" · ")
        .map(|part| part.split_once('/').map_or(part, |(_, budget)| budget))
        .collect();
    format!("{}\n{rest}", title.join(" · "))
}

/// Waits until the page shows memory `id`, and returns its text as shown.
pub(crate) async fn memory_shown(c: &Client, id: &str) -> String {
    let js = format!(
        "const a = document.querySelector('article.memory'); \
         return a && a.dataset.id === '{id}' ? document.getElementById('memory-content').textContent : null;"
    );
    until(c, &js, &format!("the page of {id}"))
        .await
        .as_str()
        .expect("text")
        .to_owned()
}

#[test]
fn the_memory_browser_in_chromium() {
    let _serial = serial();
    let Some((chromium, chromedriver)) = browser_for("the_memory_browser_in_chromium") else {
        return;
    };
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    let slice = locomo_slice(d);
    run(
        d,
        &[
            "import",
            "--format",
            "locomo",
            slice.to_str().expect("path"),
            "--wing",
            "locomo",
        ],
    );
    let cause = run_json(d, &["store", CAUSE, "--wing", "shop", "--json"]);
    let effect = run_json(d, &["store", EFFECT, "--wing", "shop", "--json"]);
    let (cause_id, effect_id) = (
        cause["id"].as_str().expect("id"),
        effect["id"].as_str().expect("id"),
    );
    assert_eq!(
        effect["links"][0]["target"], cause_id,
        "the test needs a causal link: {effect}"
    );
    let consequence = run_json(d, &["store", CONSEQUENCE, "--wing", "shop", "--json"]);
    assert_eq!(
        consequence["links"][0]["target"], effect_id,
        "{consequence}"
    );
    let script = run_json(d, &["store", SCRIPT, "--wing", "shop", "--json"]);
    let script_id = script["id"].as_str().expect("id");

    for (i, talk) in [FORMAL, FORMAL, BREEZY].iter().enumerate() {
        let file = d.join(format!("talk-{i}.txt"));
        std::fs::write(&file, talk).expect("conversation");
        let path = file.to_str().expect("path");
        run(
            d,
            &[
                "soul",
                "--agent",
                "ada",
                "capture",
                "--conversation",
                path,
                "--model",
                "m1",
            ],
        );
    }

    let config = d.join("config.yaml");
    std::fs::write(&config, format!("mcp:\n  http:\n    auth_token: {TOKEN}\n")).expect("config");
    let server = HttpServer::spawn(
        d,
        &[
            "ui",
            "--addr",
            "127.0.0.1:0",
            "--with-soul",
            "--config",
            config.to_str().expect("path"),
        ],
    );
    let url = server.url.clone();
    let refused = reqwest::blocking::get(url.replace("/ui/", "/ui/api/status")).expect("status");
    assert_eq!(
        refused.status(),
        401,
        "the API must refuse a request without the token"
    );

    let driver = Driver::start(&chromedriver);
    let profile = tempfile::tempdir().expect("profile dir");
    runtime().block_on(async {
        let c = session(&driver, &chromium, profile.path()).await;

        // The page asks for the token once, then shows the wings.
        c.goto(&url).await.expect("open the page");
        until(&c, "return document.getElementById('token-dialog').open", "the token dialog").await;
        type_into(&c, "#token-input", TOKEN).await;
        click(&c, "#token-ok").await;
        until(&c, "return document.querySelectorAll('.card.wing').length", "the wings").await;
        // A token is required here: the page offers to change it.
        until(&c, "return !document.getElementById('token-button').hidden", "the Token button").await;
        let wings = until(&c, "return [...document.querySelectorAll('.card.wing')].map(w => w.dataset.wing)", "wing names").await;
        assert_eq!(wings, json!(["locomo", "shop"]));
        screenshot(&c, "ui-wings.png").await;
        // The keyboard: `/` opens the search with the query box focused.
        c.active_element().await.expect("focus").send_keys("/").await.expect("key");
        until(
            &c,
            "return document.body.dataset.view === 'search' && document.activeElement.id === 'q'",
            "the search opened by /",
        )
        .await;

        // A search shows exactly what `mira recall` answers for the same query and budget.
        let (ids, block) = search(&c).await;
        let (cli_ids, cli_block) = cli_recall(d);
        assert!(!ids.is_empty(), "nothing recalled");
        assert_eq!(ids, cli_ids, "the page and mira recall disagree");
        assert_eq!(as_on_the_command_line(&block), without_tokens_used(&cli_block), "the block shown is not the agent's");
        assert!(block.ends_with("mira_load(id) gives one in full."), "{block}");
        // Each result shows the memory as the block shows it (text, facts or header), not a
        // bare id.
        let texts = until(&c, "return [...document.querySelectorAll('#results td.memory-cell > a')].map(a => a.textContent)", "the results' texts").await;
        let texts = texts.as_array().expect("texts");
        assert_eq!(texts.len(), ids.len());
        for shown in texts {
            let shown = shown.as_str().expect("text");
            assert!(shown.len() > 12, "a result shows {shown:?}");
            assert!(block.contains(shown.trim_end_matches(" …")), "{shown:?} is not in the block");
        }
        let why = until(&c, "return document.querySelector('#results td.why').textContent", "why").await;
        assert!(why.as_str().is_some_and(|w| w.starts_with("#1 of ")), "{why}");
        screenshot(&c, "ui-search.png").await;

        // Open the first result.
        let first = ids[0].clone();
        click(&c, &format!("#results tbody tr[data-id='{first}'] a[data-id]")).await;
        let shown = memory_shown(&c, &first).await;
        let loaded = run_json(d, &["load", &first, "--json"]);
        assert_eq!(shown, loaded["content"].as_str().expect("content"));

        // Follow a causal link, from a memory to its cause; its neighbourhood is drawn.
        c.goto(&format!("{url}#/memory/{effect_id}")).await.expect("effect page");
        memory_shown(&c, effect_id).await;
        let nodes = until(
            &c,
            "const n = [...document.querySelectorAll('svg.causal a.node')].map(a => a.dataset.id); return n.length ? n : null;",
            "the causal graph",
        )
        .await;
        let consequence_id = consequence["id"].as_str().expect("id");
        for id in [cause_id, effect_id, consequence_id] {
            assert!(nodes.as_array().expect("nodes").contains(&json!(id)), "{id} not drawn: {nodes}");
        }
        let led_to = until(&c, "return document.querySelector('#consequences a[data-id]')?.dataset.id", "the consequence").await;
        assert_eq!(led_to, json!(consequence_id));
        screenshot(&c, "ui-memory.png").await;
        c.execute("document.querySelector('#causes').scrollIntoView()", vec![]).await.expect("scroll");
        screenshot(&c, "ui-graph.png").await;

        // Fix the links by hand: remove the one to the cause, then make it again from the form.
        click(&c, &format!("#causes li[data-id='{cause_id}'] button.unlink")).await;
        confirm(&c).await;
        until(&c, &format!("return !document.querySelector(\"#causes li[data-id='{cause_id}']\") && !!document.getElementById('link-form')"), "the link removed").await;
        assert_eq!(run_json(d, &["load", effect_id, "--json"])["causes"], json!([]));
        c.execute("document.getElementById('link-way').value = 'from'", vec![]).await.expect("way");
        type_into(&c, "#link-other", &cause_id[..8]).await;
        c.execute("document.getElementById('link-relation').value = 'resolves'", vec![]).await.expect("relation");
        click(&c, "#link-form button[type=submit]").await;
        confirm(&c).await;
        until(&c, &format!("return document.querySelector(\"#causes li[data-id='{cause_id}']\")?.dataset.relation"), "the link made").await;
        let causes = run_json(d, &["load", effect_id, "--json"])["causes"].clone();
        assert_eq!((&causes[0]["id"], &causes[0]["relation"]), (&json!(cause_id), &json!("resolves")), "{causes}");
        click(&c, &format!("#causes a[data-id='{cause_id}']")).await;
        assert_eq!(memory_shown(&c, cause_id).await, CAUSE);

        // A stored <script> is text: shown as written, never run.
        c.goto(&format!("{url}#/memory/{script_id}")).await.expect("script page");
        assert_eq!(memory_shown(&c, script_id).await, SCRIPT);
        let injected = c
            .execute("return [document.body.dataset.pwned || null, document.querySelectorAll('main script, main img').length]", vec![])
            .await
            .expect("check");
        assert_eq!(injected, json!([null, 0]), "memory text ran as HTML");

        // Actions, each confirmed: pin, edit the room, archive, restore; a cancelled forget.
        click(&c, "#act-pin").await;
        confirm(&c).await;
        until(&c, "return document.getElementById('act-pin')?.textContent === 'Unpin'", "the pin").await;
        click(&c, "#act-edit").await;
        type_into(&c, "#edit-room", "music").await;
        click(&c, "#edit-form button[type=submit]").await;
        confirm(&c).await;
        until(&c, "return document.querySelector('.memory .meta')?.textContent.includes('/ music')", "the new room").await;
        click(&c, "#act-archive").await;
        confirm(&c).await;
        click(&c, "#act-restore").await;
        confirm(&c).await;
        until(&c, "return !!document.getElementById('act-archive')", "the restore").await;
        click(&c, "#act-forget").await;
        until(&c, "return document.getElementById('confirm').open", "the confirm dialog").await;
        click(&c, "#confirm-cancel").await;
        let after = run_json(d, &["load", script_id, "--json"]);
        assert_eq!((after["room"].as_str(), after["archived"].as_bool()), (Some("music"), Some(false)), "{after}");
        let pinned = run_json(d, &["recall", "jazz playlist", "--wing", "shop", "--json"]);
        assert!(pinned["items"].as_array().expect("items").iter().any(|i| i["id"] == script_id && i["pinned"] == true), "{pinned}");

        // Forget the first search result, then search again: it is gone, from the page and
        // from mira recall alike.
        c.goto(&format!("{url}#/memory/{first}")).await.expect("first page");
        memory_shown(&c, &first).await;
        click(&c, "#act-forget").await;
        confirm(&c).await;
        until(&c, "return document.body.dataset.view === 'timeline'", "the timeline after forgetting").await;
        let (again, block) = search(&c).await;
        let (cli_ids, cli_block) = cli_recall(d);
        assert!(!again.contains(&first), "{first} still recalled after forgetting it");
        assert_eq!(again, cli_ids, "the page and mira recall disagree after a forget");
        assert_eq!(as_on_the_command_line(&block), without_tokens_used(&cli_block));

        // Store a new memory from the page: the form starts in the wing being browsed.
        c.goto(&format!("{url}#/timeline?wing=shop")).await.expect("shop's timeline");
        until(&c, "return document.querySelectorAll('#timeline li[data-id]').length", "shop's timeline").await;
        click(&c, "nav a[data-view=store]").await;
        let wing = until(&c, "return document.getElementById('new-wing')?.value", "the new memory's wing").await;
        assert_eq!(wing, json!("shop"), "New memory starts in the wing being browsed");
        type_into(&c, "#new-content", "Jon's studio opens downtown with Marley flooring on the main floor.").await;
        type_into(&c, "#new-wing", "locomo").await;
        click(&c, "#store-form button[type=submit]").await;
        confirm(&c).await;
        let new_id = until(&c, "return document.querySelector('#store-result a[data-id]')?.dataset.id", "the stored memory").await;
        let stored = run_json(d, &["load", new_id.as_str().expect("id"), "--json"]);
        assert_eq!(stored["wing"], "locomo");

        // The other views.
        c.goto(&format!("{url}#/timeline?wing=locomo")).await.expect("timeline");
        until(&c, "return document.querySelectorAll('#timeline li[data-id]').length >= 10", "the timeline").await;
        screenshot(&c, "ui-timeline.png").await;
        c.goto(&format!("{url}#/health")).await.expect("health");
        until(&c, "return !!document.getElementById('index-health')", "the health view").await;
        screenshot(&c, "ui-health.png").await;
        // SOUL's view: the traits with their confidence, the drift of each version.
        click(&c, "#nav-soul").await;
        type_into(&c, "#agent", "ada").await;
        click(&c, "#soul-form button[type=submit]").await;
        until(&c, "return document.querySelectorAll('#traits tbody tr').length >= 3", "the traits").await;
        let bars = until(&c, "return document.querySelectorAll('#drift-chart rect.bar').length", "the drift chart").await;
        assert_eq!(bars, json!(3), "one bar per version");
        let last = until(
            &c,
            "return [...document.querySelectorAll('#drift-chart rect.bar')].map(b => b.classList.contains('significant'))",
            "the drift bars",
        )
        .await;
        assert_eq!(last[2], json!(true), "the breezy capture drifted: {last}");
        screenshot(&c, "ui-identity.png").await;

        // An address that names no memory: a page for a person, with a way on.
        for (bad, says) in [("deadbeef", "No memory has the id deadbeef"), ("not-an-id", "is not a memory id")] {
            c.goto(&format!("{url}#/memory/{bad}")).await.expect("bad id");
            let text = until(&c, "return document.getElementById('no-memory')?.innerText", "the no-such-memory page").await;
            let text = text.as_str().expect("text");
            assert!(text.starts_with("No such memory") && text.contains(says), "{text}");
            assert!(!text.contains("mira_") && text.contains("Search"), "{text}");
        }

        // 800 px wide: no view is wider than the window.
        c.set_window_size(800, 900).await.expect("resize");
        let views = [
            "#/".to_owned(),
            format!("#/search?q={}&budget={BUDGET}", QUERY.replace(' ', "%20").replace('?', "%3F")),
            "#/timeline?wing=locomo".to_owned(),
            format!("#/memory/{effect_id}"),
            "#/store".to_owned(),
            "#/health".to_owned(),
            "#/soul?agent=ada".to_owned(),
        ];
        for view in &views {
            let renders = c.execute("return Number(document.body.dataset.renders)", vec![]).await.expect("renders");
            c.goto(&format!("{url}{view}")).await.expect("view");
            let js = format!("return Number(document.body.dataset.renders) > {renders} && !document.querySelector('#graph p.muted')");
            until(&c, &js, view).await;
            let widths = c
                .execute("return [document.documentElement.scrollWidth, document.documentElement.clientWidth]", vec![])
                .await
                .expect("widths");
            assert!(widths[1].as_i64().is_some_and(|w| w <= 800), "{widths}");
            assert!(widths[0].as_i64() <= widths[1].as_i64(), "{view} overflows at 800 px: {widths}");
        }
        c.set_window_size(1280, 900).await.expect("resize");

        // Without a token, the page has no Token button.
        let open = HttpServer::spawn(d, &["ui", "--addr", "127.0.0.1:0"]);
        c.goto(&open.url).await.expect("the page without a token");
        until(&c, "return document.querySelectorAll('.card.wing').length", "the wings").await;
        let hidden = c.execute("return document.getElementById('token-button').hidden", vec![]).await.expect("button");
        assert_eq!(hidden, json!(true), "a Token button without a token");
        assert!(open.stop().success());
        c.close().await.expect("close the session");
    });
    assert!(server.stop().success());
}
