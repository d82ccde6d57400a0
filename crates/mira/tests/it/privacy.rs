//! Nothing leaves the machine: `mira store`, `mira recall` and a short `mira serve --http`
//! session, each run under `strace` with a fresh `HOME`, write nowhere but the store folder
//! (and the model folder), open no network socket other than their own listening ones, and
//! never look a host name up.
//!
//! The trace (`strace -ff -y`: every thread in a file of its own, file descriptors shown with
//! the path or socket they stand for) is read for the system calls that create, change or
//! remove a file, and for every socket, connection and datagram. CI (`CI` set) installs
//! strace (`.ci/run`) and fails without it; elsewhere the test says why it does not run.

use crate::mcp_common::{HttpClient, HttpServer};
use serde_json::json;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// Whether `strace` can run here; under CI its absence fails the test.
fn strace_available() -> bool {
    let ok = Command::new("strace")
        .arg("-V")
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        assert!(
            !mira_testkit::under_ci(),
            "strace is missing: the privacy test needs it (.ci/run installs it: apt-get install strace)"
        );
        eprintln!("privacy test not run: strace is not installed (apt-get install strace)");
    }
    ok
}

/// A fresh user: an empty `HOME`, a working directory outside any project, and nothing of the
/// caller's environment but `PATH`; the installed model is named by `MIRA_MODEL_DIR`.
struct FreshUser {
    root: tempfile::TempDir,
    model: PathBuf,
}

impl FreshUser {
    fn new() -> FreshUser {
        let root = tempfile::tempdir().unwrap();
        std::fs::create_dir(root.path().join("home")).unwrap();
        std::fs::create_dir(root.path().join("work")).unwrap();
        std::fs::create_dir(root.path().join("trace")).unwrap();
        FreshUser {
            root,
            model: mira_embed::resolve_model_dir(None),
        }
    }

    fn home(&self) -> PathBuf {
        self.root.path().join("home")
    }

    fn work(&self) -> PathBuf {
        self.root.path().join("work")
    }

    /// The store the README promises: `~/.local/share/mira` outside a project.
    fn store(&self) -> PathBuf {
        self.home().join(".local/share/mira")
    }

    /// `mira <args>` under strace, each thread's trace in `trace/<step>.<tid>`.
    fn traced(&self, step: &str, args: &[&str]) -> Command {
        let mut cmd = Command::new("strace");
        cmd.args(["-ff", "-qq", "-y", "-s", "4096", "-e"])
            .arg("trace=%file,%network")
            .arg("-o")
            .arg(self.root.path().join("trace").join(step))
            .arg(env!("CARGO_BIN_EXE_mira"))
            .args(args)
            .current_dir(self.work())
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", self.home())
            .env("MIRA_MODEL_DIR", &self.model)
            // The health and metrics listener of `serve --http` on a free port.
            .env("MIRA_METRICS_ADDR", "127.0.0.1:0");
        cmd
    }

    /// Runs a traced command to its end; returns its stdout.
    fn run(&self, step: &str, args: &[&str]) -> String {
        let out = self.traced(step, args).output().unwrap();
        assert!(
            out.status.success(),
            "mira {args:?} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    }

    /// Every line of every trace file.
    fn trace(&self) -> Vec<String> {
        let mut lines = Vec::new();
        for entry in std::fs::read_dir(self.root.path().join("trace")).unwrap() {
            let text = std::fs::read_to_string(entry.unwrap().path()).unwrap();
            lines.extend(text.lines().map(str::to_owned));
        }
        lines
    }
}

/// The quoted strings of a strace line, each with the descriptor annotation before it
/// (`AT_FDCWD</dir>` or `3</dir>`), unescaped enough for paths.
fn quoted_paths(line: &str) -> Vec<(Option<String>, String)> {
    let mut out = Vec::new();
    let mut rest = line;
    while let Some(start) = rest.find('"') {
        let before = &rest[..start];
        let dir = before
            .rfind('<')
            .filter(|&i| before[i..].trim_end().ends_with(">,"))
            .map(|i| {
                let inner = &before[i + 1..];
                inner[..inner.find('>').unwrap_or(inner.len())].to_owned()
            });
        let body = &rest[start + 1..];
        let mut text = String::new();
        let mut chars = body.char_indices();
        let mut end = body.len();
        while let Some((i, c)) = chars.next() {
            match c {
                '\\' => {
                    if let Some((_, n)) = chars.next() {
                        text.push(n);
                    }
                }
                '"' => {
                    end = i;
                    break;
                }
                c => text.push(c),
            }
        }
        out.push((dir, text));
        rest = body.get(end + 1..).unwrap_or("");
    }
    out
}

/// What the trace shows the process doing that it must not.
fn violations(lines: &[String], cwd: &Path, allowed: &[PathBuf]) -> Vec<String> {
    const WRITE_FLAGS: [&str; 4] = ["O_WRONLY", "O_RDWR", "O_CREAT", "O_TRUNC"];
    const CHANGES: [&str; 14] = [
        "creat",
        "mkdir",
        "mkdirat",
        "rename",
        "renameat",
        "renameat2",
        "link",
        "linkat",
        "symlink",
        "symlinkat",
        "unlink",
        "unlinkat",
        "rmdir",
        "truncate",
    ];
    let resolve = |dir: &Option<String>, p: &str| -> PathBuf {
        let p = Path::new(p);
        if p.is_absolute() {
            p.to_path_buf()
        } else {
            dir.as_deref()
                .map_or_else(|| cwd.to_path_buf(), PathBuf::from)
                .join(p)
        }
    };
    let inside = |p: &Path| {
        allowed.iter().any(|a| p.starts_with(a))
            || ["/dev/null", "/dev/tty"].iter().any(|d| p == Path::new(d))
    };
    let mut found = Vec::new();
    let mut inet_sockets = BTreeSet::new();
    let mut listening = BTreeSet::new();
    for line in lines {
        let Some((call, args)) = line.split_once('(') else {
            continue;
        };
        let call = call.trim();
        let paths = quoted_paths(args);
        let opens_for_writing = matches!(call, "open" | "openat" | "openat2")
            && args
                .rsplit_once('"')
                .is_some_and(|(_, flags)| WRITE_FLAGS.iter().any(|f| flags.contains(f)));
        if opens_for_writing || CHANGES.contains(&call) {
            for (dir, p) in &paths {
                let path = resolve(dir, p);
                // The folders on the way to the store are made when it is first created.
                let on_the_way = matches!(call, "mkdir" | "mkdirat")
                    && allowed.iter().any(|a| a.starts_with(&path));
                if !inside(&path) && !on_the_way {
                    found.push(format!("writes outside the store: {line}"));
                }
            }
        }
        if matches!(
            call,
            "open" | "openat" | "openat2" | "stat" | "newfstatat" | "access"
        ) && paths
            .iter()
            .any(|(_, p)| ["/etc/resolv.conf", "/etc/hosts", "/etc/gai.conf"].contains(&p.as_str()))
        {
            found.push(format!("looks a host name up: {line}"));
        }
        let socket_id = |s: &str| {
            s.find("socket:[").map(|i| {
                let rest = &s[i..];
                rest[..rest.find(']').map_or(rest.len(), |j| j + 1)].to_owned()
            })
        };
        match call {
            "socket" => {
                if args.starts_with("AF_INET") {
                    if let Some(id) = line.rsplit_once('=').and_then(|(_, r)| socket_id(r)) {
                        inet_sockets.insert(id);
                    }
                } else if !args.starts_with("AF_UNIX") && !args.starts_with("AF_LOCAL") {
                    found.push(format!("opens a non-local socket: {line}"));
                }
            }
            "listen" => {
                if let Some(id) = socket_id(args) {
                    listening.insert(id);
                }
            }
            "connect" => found.push(format!("connects: {line}")),
            "sendto" | "sendmsg" | "sendmmsg" if args.contains("sa_family=AF_INET") => {
                found.push(format!("sends a datagram: {line}"))
            }
            _ => {}
        }
    }
    for s in inet_sockets.difference(&listening) {
        found.push(format!("opens a network socket that never listens: {s}"));
    }
    found
}

/// The pid of the process `strace` (pid `tracer`) started.
fn traced_child(tracer: u32) -> u32 {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let children = std::fs::read_to_string(format!("/proc/{tracer}/task/{tracer}/children"))
            .unwrap_or_default();
        if let Some(pid) = children.split_whitespace().next() {
            return pid.parse().unwrap();
        }
        assert!(Instant::now() < deadline, "strace started no process");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Kills the traced server if the test ends before it stopped it (strace killed by the test
/// harness would leave it running, detached).
struct KillOnDrop(u32);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        if Path::new(&format!("/proc/{}", self.0)).exists() {
            let _ = Command::new("kill")
                .args(["-KILL", &self.0.to_string()])
                .status();
        }
    }
}

/// The MCP endpoint the server names on stderr (after the health and metrics address, which
/// it prints first).
fn mcp_url(server: &HttpServer) -> String {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let stderr = server.stderr();
        if let Some(url) = stderr
            .lines()
            .filter_map(|l| l.find("http://").map(|i| l[i..].trim()))
            .find(|u| u.ends_with("/mcp"))
        {
            return url.to_owned();
        }
        assert!(
            Instant::now() < deadline,
            "no MCP address on stderr:\n{stderr}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Every file under `dir`, relative to it.
fn files_under(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path.clone());
            }
            out.push(path.strip_prefix(dir).unwrap().display().to_string());
        }
    }
    out.sort();
    out
}

#[test]
fn store_recall_and_serve_write_only_the_store_and_open_no_connection() {
    if !strace_available() {
        return;
    }
    let _serial = crate::mcp_common::serial();
    let user = FreshUser::new();
    let stored = user.run(
        "store",
        &[
            "store",
            "We keep the billing ledger in PostgreSQL 16.",
            "--wing",
            "privacy",
        ],
    );
    assert!(stored.starts_with("Stored: "), "{stored}");
    let recalled = user.run("recall", &["recall", "billing ledger", "--wing", "privacy"]);
    assert!(recalled.contains("billing ledger"), "{recalled}");

    let mut server =
        HttpServer::spawn_command(user.traced("serve", &["serve", "--http", "127.0.0.1:0"]));
    let mira = KillOnDrop(traced_child(server.pid()));
    let mut client = HttpClient::new(&mcp_url(&server));
    client.initialize();
    for (tool, args) in [
        (
            "mira_store",
            json!({"content": "The ledger is backed up nightly.", "wing": "privacy"}),
        ),
        (
            "mira_recall",
            json!({"query": "ledger backups", "wing": "privacy"}),
        ),
        ("mira_status", json!({})),
    ] {
        let r = client.call_tool(tool, args);
        assert_ne!(r["isError"], json!(true), "{tool}: {r}");
    }
    let _ = Command::new("kill")
        .args(["-TERM", &mira.0.to_string()])
        .status();
    let status = server.wait();
    assert!(
        status.success(),
        "mira failed: {status}\n{}",
        server.stderr()
    );

    let trace = user.trace();
    assert!(
        trace.iter().any(|l| l.starts_with("listen(")),
        "the trace holds no listen(): is strace tracing?"
    );
    let allowed = [user.store(), user.model.clone()];
    let found = violations(&trace, &user.work(), &allowed);
    assert!(
        found.is_empty(),
        "mira did what it must not ({} times):\n{}",
        found.len(),
        found.join("\n")
    );
    let home: Vec<String> = files_under(&user.home())
        .into_iter()
        .filter(|f| {
            !Path::new(f).starts_with(".local/share/mira") && f != ".local" && f != ".local/share"
        })
        .collect();
    assert!(
        home.is_empty(),
        "files created in HOME outside the store: {home:?}"
    );
}

#[test]
fn the_trace_reader_sees_what_it_must() {
    let cwd = Path::new("/w");
    let allowed = [PathBuf::from("/h/.local/share/mira")];
    let lines: Vec<String> = [
        r#"openat(AT_FDCWD</w>, "/h/.local/share/mira/mira.db", O_RDWR|O_CREAT|O_CLOEXEC, 0644) = 3</h/.local/share/mira/mira.db>"#,
        r#"openat(AT_FDCWD</w>, "/h/.cache/Microsoft/DeveloperTools/.onnxruntime/deviceid", O_WRONLY|O_CREAT|O_TRUNC, 0644) = 5</h/.cache/Microsoft/DeveloperTools/.onnxruntime/deviceid>"#,
        r#"openat(AT_FDCWD</w>, "/etc/ld.so.cache", O_RDONLY|O_CLOEXEC) = 3</etc/ld.so.cache>"#,
        r#"mkdirat(7</h/.cache>, "x", 0777) = 0"#,
        r#"mkdir("/h/.local/share/mira/index", 0777) = 0"#,
        r#"mkdir("/h/.local", 0777) = 0"#,
        r#"rename("/h/.local/share/mira/index/.t", "/tmp/elsewhere") = 0"#,
        r#"openat(AT_FDCWD</w>, "/etc/resolv.conf", O_RDONLY|O_CLOEXEC) = 3</etc/resolv.conf>"#,
        r#"socket(AF_INET, SOCK_STREAM|SOCK_CLOEXEC|SOCK_NONBLOCK, IPPROTO_TCP) = 9<socket:[100]>"#,
        r#"listen(9<socket:[100]>, 1024) = 0"#,
        r#"socket(AF_INET6, SOCK_DGRAM|SOCK_CLOEXEC, IPPROTO_IP) = 10<socket:[101]>"#,
        r#"connect(10<socket:[101]>, {sa_family=AF_INET6, sin6_port=htons(443)}, 28) = -1 ENETUNREACH"#,
        r#"socket(AF_NETLINK, SOCK_RAW|SOCK_CLOEXEC, NETLINK_ROUTE) = 11<socket:[102]>"#,
        r#"socketpair(AF_UNIX, SOCK_STREAM|SOCK_CLOEXEC, 0, [12<socket:[103]>, 13<socket:[104]>]) = 0"#,
        r#"sendto(14<socket:[105]>, "x", 1, MSG_NOSIGNAL, {sa_family=AF_INET, sin_port=htons(53)}, 16) = 1"#,
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let found = violations(&lines, cwd, &allowed);
    let expect = [
        "deviceid",
        "mkdirat(7</h/.cache>",
        "/tmp/elsewhere",
        "resolv.conf",
        "connects",
        "AF_NETLINK",
        "sends a datagram",
        "socket:[101]",
    ];
    for e in expect {
        assert!(
            found.iter().any(|f| f.contains(e)),
            "{e} not reported: {found:#?}"
        );
    }
    assert_eq!(found.len(), expect.len(), "{found:#?}");
}
