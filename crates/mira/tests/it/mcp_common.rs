//! Helpers for the MCP tests: spawning the real `mira` binary on a fresh store, a
//! line-delimited JSON-RPC client over its stdin/stdout, and a streamable-HTTP client.
//! Every wait has a timeout, so a hung server fails the test instead of hanging it.
#![allow(dead_code)]

use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How long any single answer may take (the first store or recall loads the model).
pub const ANSWER_TIMEOUT: Duration = Duration::from_secs(90);
/// The protocol version the tests ask for.
pub const PROTOCOL: &str = "2025-06-18";

/// `mira` with a store in `dir` and the installed model.
pub fn mira_command(dir: &Path, args: &[&str]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_mira"));
    cmd.args(args)
        .current_dir(dir)
        .env("MIRA_STORAGE_PATH", dir.join("store"))
        .env("HOME", dir)
        .env("MIRA_METRICS_ENABLED", "false")
        .env("MIRA_MODEL_DIR", mira_embed::resolve_model_dir(None))
        .env_remove("MIRA_CONFIG")
        .env_remove("MIRA_STORAGE_BACKEND")
        .env_remove("MIRA_DATABASE_URL")
        .env_remove("MIRA_LOG")
        .env_remove("MIRA_HTTP_ADDR");
    cmd
}

/// Collects a child's stderr on a thread (so the pipe never fills), and optionally hands each
/// line to `lines` as it arrives.
fn collect_stderr(
    mut child_stderr: impl Read + Send + 'static,
    lines: Option<mpsc::Sender<String>>,
) -> Arc<Mutex<String>> {
    let buf = Arc::new(Mutex::new(String::new()));
    let sink = buf.clone();
    std::thread::spawn(move || {
        let mut reader = BufReader::new(&mut child_stderr);
        let mut line = String::new();
        while reader.read_line(&mut line).map(|n| n > 0).unwrap_or(false) {
            if let Some(tx) = &lines {
                let _ = tx.send(line.clone());
            }
            sink.lock()
                .unwrap_or_else(|p| p.into_inner())
                .push_str(&line);
            line.clear();
        }
    });
    buf
}

/// Runs the tests of a binary one at a time (each holds the guard), so that their servers do not
/// compete for the cores and the start-up timings mean something.
pub fn serial() -> std::sync::MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(|p| p.into_inner())
}

/// The `initialize` request's params.
pub fn initialize_params() -> Value {
    json!({
        "protocolVersion": PROTOCOL,
        "capabilities": {},
        "clientInfo": {"name": "mira-tests", "version": "1.0"}
    })
}

/// Checks one line of the server's stdout: a JSON-RPC 2.0 request, notification or response.
pub fn assert_json_rpc(line: &str) {
    let v: Value = serde_json::from_str(line)
        .unwrap_or_else(|e| panic!("stdout line is not JSON ({e}): {line}"));
    assert_eq!(v["jsonrpc"], "2.0", "not JSON-RPC 2.0: {line}");
    let is_response =
        v.get("id").is_some() && (v.get("result").is_some() ^ v.get("error").is_some());
    let is_request = v["method"].is_string();
    assert!(
        is_response || is_request,
        "neither a response nor a request: {line}"
    );
}

/// The text of a tool result's first content item.
pub fn text(result: &Value) -> &str {
    result["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("no text content: {result}"))
}

/// Whether a tool result is an error.
pub fn is_error(result: &Value) -> bool {
    result["isError"] == json!(true)
}

/// The ids of a `mira_recall` result's items, in display order.
pub fn recalled_ids(result: &Value) -> Vec<String> {
    result["structuredContent"]["items"]
        .as_array()
        .map(|items| {
            items
                .iter()
                .filter_map(|i| i["id"].as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

/// The id of the memory a `mira_store` result names (its text says `Stored: <short id>`; the
/// structured content has the UUID).
pub fn stored_id(result: &Value) -> String {
    assert!(
        text(result).starts_with("Stored: "),
        "not a store result: {result}"
    );
    result["structuredContent"]["id"]
        .as_str()
        .unwrap_or_else(|| panic!("no id in the store's structured content: {result}"))
        .to_owned()
}

/// A client speaking newline-delimited JSON-RPC to `mira serve` over its stdin/stdout.
pub struct StdioClient {
    child: Child,
    stdin: Option<ChildStdin>,
    messages: Receiver<(Instant, Value)>,
    transcript: Arc<Mutex<Vec<String>>>,
    stderr: Arc<Mutex<String>>,
    next_id: i64,
    /// When the process was spawned.
    pub started: Instant,
}

impl StdioClient {
    /// Spawns `mira ARGS` on a store in `dir`.
    pub fn spawn(dir: &Path, args: &[&str]) -> StdioClient {
        StdioClient::spawn_command(mira_command(dir, args))
    }

    /// Spawns `cmd` (built by [`mira_command`], e.g. with more environment).
    pub fn spawn_command(mut cmd: Command) -> StdioClient {
        let started = Instant::now();
        let mut child = cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn mira");
        let stdout = child.stdout.take().expect("stdout");
        let stderr = collect_stderr(child.stderr.take().expect("stderr"), None);
        let transcript = Arc::new(Mutex::new(Vec::new()));
        let (tx, messages) = mpsc::channel();
        let lines = transcript.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                lines
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .push(line.clone());
                if let Ok(v) = serde_json::from_str::<Value>(&line) {
                    let _ = tx.send((Instant::now(), v));
                }
            }
        });
        StdioClient {
            stdin: child.stdin.take(),
            child,
            messages,
            transcript,
            stderr,
            next_id: 0,
            started,
        }
    }

    /// Writes one raw line to the server.
    pub fn send_raw(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().expect("stdin is open");
        stdin
            .write_all(line.as_bytes())
            .and_then(|_| stdin.write_all(b"\n"))
            .and_then(|_| stdin.flush())
            .expect("write to mira");
    }

    /// Sends a request and returns its id.
    pub fn send_request(&mut self, method: &str, params: Value) -> i64 {
        self.next_id += 1;
        let id = self.next_id;
        self.send_raw(
            &json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string(),
        );
        id
    }

    /// Sends a notification.
    pub fn notify(&mut self, method: &str) {
        self.send_raw(&json!({"jsonrpc": "2.0", "method": method}).to_string());
    }

    /// Waits for the first message matching `pred` (others are dropped); returns it and when
    /// it arrived.
    pub fn wait_for(&mut self, what: &str, pred: impl Fn(&Value) -> bool) -> (Instant, Value) {
        let deadline = Instant::now() + ANSWER_TIMEOUT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.messages.recv_timeout(left) {
                Ok((at, v)) if pred(&v) => return (at, v),
                Ok(_) => continue,
                Err(RecvTimeoutError::Timeout) => panic!(
                    "no {what} within {ANSWER_TIMEOUT:?}; stderr:\n{}",
                    self.stderr()
                ),
                Err(RecvTimeoutError::Disconnected) => panic!(
                    "mira closed stdout while waiting for {what}; stderr:\n{}",
                    self.stderr()
                ),
            }
        }
    }

    /// The response to request `id`.
    pub fn response(&mut self, id: i64) -> (Instant, Value) {
        self.wait_for(&format!("response to request {id}"), |v| {
            v["id"] == json!(id) && v.get("method").is_none()
        })
    }

    /// Sends a request and returns its whole response message.
    pub fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.send_request(method, params);
        self.response(id).1
    }

    /// `initialize` then `notifications/initialized`; returns the initialize result.
    pub fn initialize(&mut self) -> Value {
        let r = self.request("initialize", initialize_params());
        self.notify("notifications/initialized");
        r["result"].clone()
    }

    /// Calls a tool and returns its result (panics on a JSON-RPC error).
    pub fn call_tool(&mut self, name: &str, arguments: Value) -> Value {
        let r = self.request("tools/call", json!({"name": name, "arguments": arguments}));
        assert!(r.get("error").is_none(), "{name}: protocol error {r}");
        r["result"].clone()
    }

    /// What the server wrote to stderr so far.
    pub fn stderr(&self) -> String {
        self.stderr
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// The server's stderr once it contains `text` (its lines are read on another thread than
    /// its answers), or as it is after [`ANSWER_TIMEOUT`].
    pub fn stderr_with(&self, text: &str) -> String {
        let deadline = Instant::now() + ANSWER_TIMEOUT;
        loop {
            let now = self.stderr();
            if now.contains(text) || Instant::now() > deadline {
                return now;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// The next message within `timeout`, or `None` (also once the server is gone).
    pub fn next_message(&mut self, timeout: Duration) -> Option<Value> {
        self.messages.recv_timeout(timeout).ok().map(|(_, v)| v)
    }

    /// Kills the server (SIGKILL on Unix) and waits for it; messages it wrote before dying stay
    /// readable with [`StdioClient::next_message`].
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Closes stdin and waits for the server to exit; returns its status and every stdout line.
    pub fn close(mut self) -> (ExitStatus, Vec<String>) {
        drop(self.stdin.take());
        let deadline = Instant::now() + Duration::from_secs(20);
        let status = loop {
            if let Some(s) = self.child.try_wait().expect("wait for mira") {
                break s;
            }
            assert!(
                Instant::now() < deadline,
                "mira did not exit after stdin closed; stderr:\n{}",
                self.stderr()
            );
            std::thread::sleep(Duration::from_millis(20));
        };
        // The reader thread drains stdout until EOF.
        std::thread::sleep(Duration::from_millis(100));
        let lines = self
            .transcript
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        (status, lines)
    }
}

impl Drop for StdioClient {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// An HTTP server (`mira serve --http 127.0.0.1:0`, `mira ui`) on a store in `dir`, with the
/// address it listens on.
pub struct HttpServer {
    child: Child,
    stderr: Arc<Mutex<String>>,
    /// The first URL it names (`http://127.0.0.1:<port>/mcp` for `mira serve --http`).
    pub url: String,
}

impl HttpServer {
    /// Starts the server and waits until it says where it listens.
    pub fn start(dir: &Path) -> HttpServer {
        HttpServer::start_with(dir, &[])
    }

    /// Starts the server with more arguments (e.g. `--config FILE`).
    pub fn start_with(dir: &Path, extra: &[&str]) -> HttpServer {
        let mut args = vec!["serve", "--http", "127.0.0.1:0"];
        args.extend_from_slice(extra);
        HttpServer::spawn(dir, &args)
    }

    /// Starts `mira <args>` (an HTTP server) and waits until it names the first URL it serves
    /// on stderr.
    pub fn spawn(dir: &Path, args: &[&str]) -> HttpServer {
        HttpServer::spawn_command(mira_command(dir, args))
    }

    /// [`HttpServer::spawn`] of `cmd` (built by [`mira_command`], e.g. with more environment).
    pub fn spawn_command(mut cmd: Command) -> HttpServer {
        let args: Vec<_> = cmd
            .get_args()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        let mut child = cmd
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("spawn mira {args:?}: {e}"));
        let (tx, rx) = mpsc::channel();
        let stderr = collect_stderr(child.stderr.take().expect("stderr"), Some(tx));
        let deadline = Instant::now() + Duration::from_secs(30);
        let url = loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match rx.recv_timeout(left) {
                Ok(line) => {
                    if let Some(i) = line.find("http://") {
                        break line[i..].trim().to_owned();
                    }
                }
                Err(_) => panic!(
                    "mira {args:?} did not start; stderr:\n{}",
                    stderr.lock().unwrap_or_else(|p| p.into_inner())
                ),
            }
        };
        HttpServer { child, stderr, url }
    }

    /// What the server wrote to stderr so far.
    pub fn stderr(&self) -> String {
        self.stderr
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Takes the server's stdout (to check it stays empty).
    pub fn stdout(&mut self) -> impl Read {
        self.child.stdout.take().expect("stdout")
    }

    /// The process id of the server (or of the program that started it, e.g. strace).
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Stops the server (SIGTERM where available) and returns its exit status.
    pub fn stop(mut self) -> ExitStatus {
        #[cfg(unix)]
        {
            let _ = Command::new("kill")
                .arg("-TERM")
                .arg(self.child.id().to_string())
                .status();
        }
        #[cfg(not(unix))]
        {
            let _ = self.child.kill();
        }
        self.wait()
    }

    /// Waits (up to 20 s) for the server to end, and returns its exit status.
    pub fn wait(&mut self) -> ExitStatus {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            if let Some(s) = self.child.try_wait().expect("wait for mira") {
                return s;
            }
            assert!(
                Instant::now() < deadline,
                "mira did not stop; stderr:\n{}",
                self.stderr()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// One MCP session over streamable HTTP.
pub struct HttpClient {
    http: reqwest::blocking::Client,
    url: String,
    session: Option<String>,
    token: Option<String>,
    next_id: i64,
}

/// A parsed HTTP answer: status and the JSON-RPC messages in its body (JSON or SSE).
pub struct HttpAnswer {
    /// The HTTP status.
    pub status: u16,
    /// The `Mcp-Session-Id` header, if any.
    pub session: Option<String>,
    /// The messages of the body.
    pub messages: Vec<Value>,
    /// The raw body.
    pub body: String,
}

/// The JSON-RPC messages of a body: one JSON document, or SSE `data:` lines.
pub fn parse_body(content_type: &str, body: &str) -> Vec<Value> {
    if content_type.starts_with("text/event-stream") {
        body.lines()
            .filter_map(|l| l.strip_prefix("data:"))
            .map(str::trim)
            .filter(|d| !d.is_empty())
            .map(|d| {
                serde_json::from_str(d)
                    .unwrap_or_else(|e| panic!("SSE data is not JSON ({e}): {d}"))
            })
            .collect()
    } else if body.trim().is_empty() {
        vec![]
    } else {
        vec![serde_json::from_str(body).unwrap_or_else(|e| panic!("body is not JSON ({e}): {body}"))]
    }
}

impl HttpClient {
    /// A client of the server at `url` (not yet initialised).
    pub fn new(url: &str) -> HttpClient {
        let http = reqwest::blocking::Client::builder()
            .timeout(ANSWER_TIMEOUT)
            .build()
            .expect("HTTP client");
        HttpClient {
            http,
            url: url.to_owned(),
            session: None,
            token: None,
            next_id: 0,
        }
    }

    /// Sends `Authorization: Bearer <token>` with every request.
    pub fn with_token(mut self, token: &str) -> HttpClient {
        self.token = Some(token.to_owned());
        self
    }

    /// POSTs a raw body with the headers of an MCP client.
    pub fn post_raw(&self, body: String) -> HttpAnswer {
        let mut req = self
            .http
            .post(&self.url)
            .header("Accept", "application/json, text/event-stream")
            .header("Content-Type", "application/json")
            .body(body);
        if let Some(t) = &self.token {
            req = req.bearer_auth(t);
        }
        if let Some(s) = &self.session {
            req = req
                .header("Mcp-Session-Id", s)
                .header("MCP-Protocol-Version", PROTOCOL);
        }
        let resp = req.send().expect("HTTP request to mira");
        let status = resp.status().as_u16();
        let session = resp
            .headers()
            .get("mcp-session-id")
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        let ct = resp
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_owned();
        let body = resp.text().expect("HTTP body");
        let messages = if status < 300 || ct.starts_with("application/json") {
            parse_body(&ct, &body)
        } else {
            vec![]
        };
        HttpAnswer {
            status,
            session,
            messages,
            body,
        }
    }

    /// Sends a request; returns its response message.
    pub fn request(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        let a = self.post_raw(
            json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string(),
        );
        assert_eq!(a.status, 200, "{method}: HTTP {} {}", a.status, a.body);
        if a.session.is_some() {
            self.session = a.session;
        }
        a.messages
            .into_iter()
            .find(|m| m["id"] == json!(id))
            .unwrap_or_else(|| panic!("{method}: no response with id {id} in: {}", a.body))
    }

    /// `initialize` then `notifications/initialized`; returns the initialize result.
    pub fn initialize(&mut self) -> Value {
        let r = self.request("initialize", initialize_params());
        assert!(self.session.is_some(), "no Mcp-Session-Id after initialize");
        let a = self
            .post_raw(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string());
        assert_eq!(
            a.status, 202,
            "initialized notification: HTTP {} {}",
            a.status, a.body
        );
        r["result"].clone()
    }

    /// Calls a tool and returns its result (panics on a JSON-RPC error).
    pub fn call_tool(&mut self, name: &str, arguments: Value) -> Value {
        let r = self.request("tools/call", json!({"name": name, "arguments": arguments}));
        assert!(r.get("error").is_none(), "{name}: protocol error {r}");
        r["result"].clone()
    }

    /// Ends the session (`DELETE` with its id), as a client does when it closes; returns the
    /// HTTP status.
    pub fn end_session(&mut self) -> u16 {
        let session = self.session.take().expect("a session to end");
        let mut req = self
            .http
            .delete(&self.url)
            .header("Mcp-Session-Id", session)
            .header("MCP-Protocol-Version", PROTOCOL);
        if let Some(t) = &self.token {
            req = req.bearer_auth(t);
        }
        req.send().expect("DELETE to mira").status().as_u16()
    }
}

/// The median of some durations, in milliseconds.
pub fn median_ms(mut d: Vec<Duration>) -> f64 {
    d.sort();
    let ms = |x: Duration| x.as_secs_f64() * 1000.0;
    match d.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => ms(d[n / 2]),
        n => (ms(d[n / 2 - 1]) + ms(d[n / 2])) / 2.0,
    }
}

/// Fails on any error result, and on `database is locked` anywhere in it; returns it.
pub fn checked(r: Value, what: &str) -> Value {
    assert!(!is_error(&r), "{what}: {r}");
    assert!(
        !r.to_string()
            .to_ascii_lowercase()
            .contains("database is locked"),
        "{what}: {r}"
    );
    r
}

/// The `p` quantile of sorted latencies, in milliseconds.
pub fn quantile_ms(sorted: &[Duration], p: f64) -> f64 {
    let i = ((sorted.len() as f64 * p).ceil() as usize).clamp(1, sorted.len()) - 1;
    sorted[i].as_secs_f64() * 1000.0
}

/// Prints the figures of a load run (shown with `--nocapture`): every call's tool and latency,
/// over `secs` seconds, from `clients` clients.
#[allow(
    clippy::print_stdout,
    reason = "the load figures, shown with --nocapture"
)]
pub fn report_load(label: &str, clients: usize, calls: &[(&'static str, Duration)], secs: f64) {
    let mut all: Vec<Duration> = calls.iter().map(|c| c.1).collect();
    all.sort();
    println!(
        "{label}: {clients} clients, {} calls in {secs:.1} s ({:.1} calls/s), p50 {:.0} ms, p99 {:.0} ms, max {:.0} ms, 0 errors",
        all.len(),
        all.len() as f64 / secs,
        quantile_ms(&all, 0.50),
        quantile_ms(&all, 0.99),
        quantile_ms(&all, 1.0)
    );
    for tool in ["mira_recall", "mira_store", "mira_status"] {
        let mut d: Vec<Duration> = calls.iter().filter(|c| c.0 == tool).map(|c| c.1).collect();
        if d.is_empty() {
            continue;
        }
        d.sort();
        println!(
            "  {tool}: {} calls, p50 {:.0} ms, p99 {:.0} ms",
            d.len(),
            quantile_ms(&d, 0.50),
            quantile_ms(&d, 0.99)
        );
    }
}
