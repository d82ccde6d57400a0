//! What a session leaves in memory, read from its transcript by rules (no language model):
//!
//! - **requests**: each prompt of the user that says something (at least
//!   [`MIN_CONTENT_WORDS`] content words) and got work or an answer (a tool was used, or the
//!   reply has at least [`MIN_ANSWER_WORDS`] content words): "ok", "yes go on" and "thanks,
//!   looks good" are not requests, whatever their words;
//! - **outcomes**: the assistant's last text of each exchange (from one prompt to the next)
//!   when it says something ([`MIN_ANSWER_WORDS`] content words) or files were changed, with
//!   the files it changed and the command that checked them (a command that succeeded after
//!   the last change);
//! - **errors and their fixes**: a command (a tool call with a `command` input) that failed
//!   with some output, and a later success of the same command (same program and subcommand,
//!   see [`command_key`]) with files changed in between, or of the very same command line
//!   after other work (a service started, a package installed): the error as the command and
//!   the lines of its output that say what failed (its last failure before the fix), the fix
//!   as what the assistant said after the failure, the files changed and the command that
//!   passed. The fix resolves the error (a causal link). A command that failed at least twice
//!   and still fails at the end of the session is an open problem.
//!
//! Everything else is tool noise and left out: tool outputs (but an error's lines), file
//! reads, searches, failures of the tools themselves (an edit that did not apply) and
//! commands that failed without a word of output (a search with no match). The memory types
//! are the classifier's for requests and outcomes (a request to switch libraries is a
//! decision), `debug_log` for errors and fixes. The texts are derived from the transcript
//! alone, so a second reading of the same transcript gives the same memories.

use super::transcript::Event;
use crate::usecases::capture::{Candidate, Kind};
use chrono::{DateTime, Utc};
use mira_core::memory::MemoryType;
use regex::Regex;
use serde_json::Value;
use std::collections::HashMap;
use std::path::Path;
use std::sync::LazyLock;

/// Content words (three letters or more, not stop words) a prompt needs to be kept.
pub const MIN_CONTENT_WORDS: usize = 3;
/// Content words a reply needs to count as an answer (and an outcome to be kept without a
/// changed file): "You're welcome." and "Done." are not answers.
pub const MIN_ANSWER_WORDS: usize = 6;
/// Longest request kept, in characters (a longer prompt is cut at a word).
const MAX_REQUEST_CHARS: usize = 800;
/// Longest outcome text kept, in characters.
const MAX_OUTCOME_CHARS: usize = 1200;
/// Longest explanation of a fix kept, in characters.
const MAX_EXPLANATION_CHARS: usize = 500;
/// Longest command shown, in characters.
const MAX_COMMAND_CHARS: usize = 120;
/// Longest error gist, in characters.
const MAX_GIST_CHARS: usize = 400;
/// Lines of an error's output kept.
const GIST_LINES: usize = 3;
/// Changed files named; more are counted.
const MAX_FILES: usize = 6;
/// A fenced code block longer than this many lines is shown as `[code]` in an outcome.
const MAX_CODE_LINES: usize = 3;

/// How to read the session.
#[derive(Debug, Clone, Default)]
pub struct Options<'a> {
    /// The session's working directory: changed files are named relative to it.
    pub cwd: Option<&'a Path>,
    /// Whether the last exchange is over (the session ended, or the turn stopped); before a
    /// compaction it may still be running, and is left for a later capture.
    pub last_exchange_done: bool,
}

/// Lines of a command's output that say what failed: a failure word, or an exception's name
/// (`ModuleNotFoundError`, `NullPointerException`).
static ERRORISH: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i:\b(error|errors|failed|failure|failures|panicked|panic|exception|traceback|fatal|assert\w*|cannot|undefined|not found|denied|refused|timed out|mismatch\w*)\b)|\w(Error|Exception)\b",
    )
    .expect("a valid pattern")
});

/// A failure line that carries its message after a colon (`error[E0308]: mismatched types`,
/// `ModuleNotFoundError: No module named 'x'`, `panicked at src/a.rs:3:5:`): said first.
static MESSAGE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i:\b(error|exception|panicked|fatal|failed|refused|denied)\b)[^:]*:\s*\S|\w(Error|Exception)(\[\w+\])?:\s*\S",
    )
    .expect("a valid pattern")
});

/// What decorates a line (`==== ERRORS ====`, `____ x ____`).
fn undecorated(line: &str) -> &str {
    line.trim_matches(|c: char| {
        c.is_whitespace() || matches!(c, '=' | '_' | '-' | '*' | '!' | '~' | '#' | '>')
    })
}

/// The wrapper's own line about the exit status.
static EXIT_LINE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)^(exit (code|status)|exited with( code)?|process exited)\b[^a-z]*\d+\W*$")
        .expect("a valid pattern")
});

/// Terminal colour and cursor sequences.
static ANSI: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\x1b\[[0-9;?]*[A-Za-z]").expect("a valid pattern"));

/// A fenced code block.
static FENCED: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?s)```[^\n]*\n(.*?)```").expect("a valid pattern"));

/// What a tool call is, for the rules.
enum Call {
    /// A command: its text and the key that identifies it across runs.
    Command { text: String, key: String },
    /// A change to a file (the file, relative to the session's folder when inside it).
    Edit(String),
    /// Anything else (reads, searches, other tools).
    Other,
}

/// A command failing since its first failure, and what happened since.
struct Streak {
    /// The last failing run: its command line, the lines that say what failed, its time.
    command: String,
    gist: String,
    at: DateTime<Utc>,
    /// Failing runs of the command.
    runs: usize,
    /// Files changed since the first failure.
    edits: Vec<String>,
    /// Whether other commands succeeded since.
    commands: bool,
    /// What the assistant said since.
    texts: Vec<String>,
}

impl Streak {
    /// Whether `passed` (a success of the same key) fixed it: files were changed since, or the
    /// very same command line passed after other work.
    fn fixed_by(&self, passed: &str) -> bool {
        !self.edits.is_empty()
            || (passed == self.command && (self.commands || !self.texts.is_empty()))
    }

    fn error(&self) -> Candidate {
        Candidate {
            kind: Kind::Error,
            content: format!("`{}` failed: {}", self.command, self.gist),
            at: self.at,
            memory_type: Some(MemoryType::DebugLog),
            resolves: None,
        }
    }
}

/// The memories a session should leave, in the order they happened (an error comes right
/// before its fix, and the fix names it).
pub fn candidates(events: &[Event], opts: &Options<'_>) -> Vec<Candidate> {
    let mut exchanges: Vec<(&str, DateTime<Utc>, Vec<&Event>)> = Vec::new();
    for e in events {
        match e {
            Event::Prompt { text, at } => exchanges.push((text, *at, Vec::new())),
            other => {
                if let Some(last) = exchanges.last_mut() {
                    last.2.push(other);
                }
            }
        }
    }
    if !opts.last_exchange_done {
        exchanges.pop();
    }
    let mut out = Vec::new();
    let mut calls: HashMap<&str, Call> = HashMap::new();
    let mut streaks: HashMap<String, Streak> = HashMap::new();
    for (prompt, asked_at, events) in &exchanges {
        let answered = events.iter().any(|e| matches!(e, Event::Call { .. }))
            || events.iter().rev().find_map(|e| match e {
                Event::Text { text, .. } => Some(says(text, MIN_ANSWER_WORDS)),
                _ => None,
            }) == Some(true);
        if let Some(text) = kept(prompt, MAX_REQUEST_CHARS).filter(|_| answered) {
            out.push(Candidate {
                kind: Kind::Request,
                content: format!("Request: {text}"),
                at: *asked_at,
                memory_type: None,
                resolves: None,
            });
        }
        let mut edits: Vec<String> = Vec::new();
        let mut checked: Option<String> = None;
        let mut last_text: Option<(&str, DateTime<Utc>)> = None;
        for e in events {
            match e {
                Event::Call { id, input, .. } => {
                    calls.insert(id.as_str(), classify_call(input, opts.cwd));
                }
                Event::Result {
                    id,
                    error,
                    output,
                    at,
                } => {
                    let (text, key) = match calls.get(id.as_str()) {
                        Some(Call::Command { text, key }) => (text, key),
                        Some(Call::Edit(path)) if !*error => {
                            for s in streaks.values_mut() {
                                push_once(&mut s.edits, path);
                            }
                            push_once(&mut edits, path);
                            checked = None;
                            continue;
                        }
                        _ => continue,
                    };
                    if *error {
                        let gist = error_gist(output);
                        if gist.is_empty() {
                            continue;
                        }
                        let s = streaks.entry(key.clone()).or_insert_with(|| Streak {
                            command: String::new(),
                            gist: String::new(),
                            at: *at,
                            runs: 0,
                            edits: Vec::new(),
                            commands: false,
                            texts: Vec::new(),
                        });
                        s.command = text.clone();
                        s.gist = gist;
                        s.at = *at;
                        s.runs += 1;
                        continue;
                    }
                    if !edits.is_empty() {
                        checked = Some(text.clone());
                    }
                    match streaks.remove(key) {
                        Some(s) if s.fixed_by(text) => {
                            out.push(s.error());
                            out.push(fix(&s, text, *at, out.len() - 1));
                        }
                        Some(s) => {
                            // Not fixed by this run (say, another file listed): still failing.
                            streaks.insert(key.clone(), s);
                        }
                        None => streaks.values_mut().for_each(|s| s.commands = true),
                    }
                }
                Event::Text { text, at } => {
                    for s in streaks.values_mut() {
                        s.texts.push(text.clone());
                    }
                    last_text = Some((text, *at));
                }
                Event::Prompt { .. } => {}
            }
        }
        if let Some(c) = outcome(last_text, &edits, checked.as_deref()) {
            out.push(c);
        }
    }
    let mut open: Vec<&Streak> = streaks.values().filter(|s| s.runs > 1).collect();
    open.sort_by_key(|s| s.at);
    out.extend(open.into_iter().map(Streak::error));
    out
}

/// The outcome of an exchange: its last text, the files changed, the command that checked
/// them; `None` when the text says too little and nothing was changed.
fn outcome(
    last_text: Option<(&str, DateTime<Utc>)>,
    edits: &[String],
    checked: Option<&str>,
) -> Option<Candidate> {
    let (text, at) = last_text?;
    let text = without_long_code(text);
    let said = says(&text, MIN_ANSWER_WORDS).then(|| truncate(text.trim(), MAX_OUTCOME_CHARS));
    if said.is_none() && edits.is_empty() {
        return None;
    }
    let mut content = format!("Outcome: {}", said.unwrap_or_else(|| single_line(&text)));
    if !edits.is_empty() {
        content.push_str(&format!("\nFiles changed: {}.", files(edits)));
    }
    if let Some(c) = checked {
        content.push_str(&format!("\nChecked with `{c}`."));
    }
    Some(Candidate {
        kind: Kind::Outcome,
        content,
        at,
        memory_type: None,
        resolves: None,
    })
}

/// The fix of a streak, ended by `passed` at `at`; `error` is the index of its error.
fn fix(s: &Streak, passed: &str, at: DateTime<Utc>, error: usize) -> Candidate {
    let first_line = s.gist.split(" | ").next().unwrap_or("");
    let mut content = format!("Fixed `{}` failing ({first_line})", s.command);
    if let Some(why) = s
        .texts
        .iter()
        .find_map(|t| kept(&without_long_code(t), MAX_EXPLANATION_CHARS))
    {
        content.push_str(&format!(": {why}"));
    } else {
        content.push('.');
    }
    if !s.edits.is_empty() {
        content.push_str(&format!("\nFiles changed: {}.", files(&s.edits)));
    }
    content.push_str(&format!("\nPassed: `{passed}`."));
    Candidate {
        kind: Kind::Fix,
        content,
        at,
        memory_type: Some(MemoryType::DebugLog),
        resolves: Some(error),
    }
}

/// What a tool call is: a command (its input has a `command` string), a change to a file (a
/// path and new text: `content`, `new_string`, `edits`, `new_source`), or something else.
fn classify_call(input: &Value, cwd: Option<&Path>) -> Call {
    if let Some(command) = input.get("command").and_then(Value::as_str) {
        let text = truncate(&single_line(command), MAX_COMMAND_CHARS);
        return Call::Command {
            key: command_key(command),
            text,
        };
    }
    let writes = ["content", "new_string", "edits", "new_source"]
        .iter()
        .any(|k| input.get(k).is_some());
    match edited_file(input, cwd) {
        Some(path) if writes => Call::Edit(path),
        _ => Call::Other,
    }
}

/// The path a tool input names.
fn file_path(input: &Value) -> Option<&str> {
    ["file_path", "notebook_path", "path"]
        .iter()
        .find_map(|k| input.get(k).and_then(Value::as_str))
}

/// The file a change wrote, relative to `cwd` when inside it.
fn edited_file(input: &Value, cwd: Option<&Path>) -> Option<String> {
    let path = Path::new(file_path(input)?);
    let shown = cwd.and_then(|c| path.strip_prefix(c).ok()).unwrap_or(path);
    Some(shown.display().to_string())
}

/// What identifies a command across runs: its program and its first plain argument (`cargo
/// test`, `npm run`, `pytest`), after leading `cd …&&`, variable assignments and wrappers.
pub fn command_key(command: &str) -> String {
    let segment = command
        .split("&&")
        .map(str::trim)
        .find(|s| !s.starts_with("cd ") && !s.is_empty())
        .unwrap_or(command);
    let segment = segment.split(['|', ';']).next().unwrap_or(segment);
    let mut words = segment
        .split_whitespace()
        .skip_while(|w| w.contains('=') && !w.starts_with('-'))
        .skip_while(|w| matches!(*w, "sudo" | "time" | "env" | "nice" | "timeout"))
        .skip_while(|w| w.chars().all(|c| c.is_ascii_digit() || c == 's'));
    let Some(program) = words.next() else {
        return String::new();
    };
    let program = program.rsplit('/').next().unwrap_or(program);
    let sub = words.find(|w| !w.starts_with('-')).filter(|w| {
        w.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | ':'))
    });
    match sub {
        Some(sub) => format!("{program} {sub}"),
        None => program.to_owned(),
    }
}

/// The lines of a failed command's output that say what failed (or its last lines), on one
/// line separated by ` | `; empty when the output says nothing. Lines that carry a message
/// (`MESSAGE`) come before summaries ("1 failed", "Found 1 error"); the lines kept stay in
/// the output's order.
pub fn error_gist(output: &str) -> String {
    let lines: Vec<String> = output
        .lines()
        .map(|l| undecorated(&ANSI.replace_all(l, "")).to_owned())
        .filter(|l| !l.is_empty() && !EXIT_LINE.is_match(l))
        .collect();
    // A line of one word ("failures:", "ERRORS") says nothing about what failed.
    let mut failing: Vec<(usize, &str)> = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        let telling = ERRORISH.is_match(l) && l.split_whitespace().nth(1).is_some();
        if telling && !failing.iter().any(|(_, seen)| *seen == l) {
            failing.push((i, l));
        }
    }
    // Messages first, then the rest, each in output order; the chosen ones back in order.
    failing.sort_by_key(|(i, l)| (!MESSAGE.is_match(l), *i));
    failing.truncate(GIST_LINES);
    failing.sort_by_key(|(i, _)| *i);
    let mut picked: Vec<&str> = failing.into_iter().map(|(_, l)| l).collect();
    if picked.is_empty() {
        picked = lines
            .iter()
            .rev()
            .take(2)
            .rev()
            .map(String::as_str)
            .collect();
    }
    let gist: Vec<String> = picked
        .iter()
        .map(|l| truncate(&single_line(l), MAX_GIST_CHARS / GIST_LINES + 40))
        .collect();
    truncate(&gist.join(" | "), MAX_GIST_CHARS)
}

/// Whether `text` has at least `words` content words (three letters or more, not stop words).
fn says(text: &str, words: usize) -> bool {
    mira_core::text::keywords(text, 3).len() >= words
}

/// The text cut to `max` characters, when it says something: at least [`MIN_CONTENT_WORDS`]
/// content words.
fn kept(text: &str, max: usize) -> Option<String> {
    let text = text.trim();
    says(text, MIN_CONTENT_WORDS).then(|| truncate(text, max))
}

/// `s` cut to at most `max` characters at a word, with `…` when cut.
fn truncate(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_owned();
    }
    format!(
        "{}…",
        mira_core::text::truncate_words(s, max.saturating_sub(1))
    )
}

fn single_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The text with fenced code blocks longer than [`MAX_CODE_LINES`] lines shown as `[code]`.
fn without_long_code(text: &str) -> String {
    FENCED
        .replace_all(text, |c: &regex::Captures<'_>| {
            if c[1].lines().count() > MAX_CODE_LINES {
                "[code]".to_owned()
            } else {
                c[0].to_owned()
            }
        })
        .into_owned()
}

fn push_once(list: &mut Vec<String>, item: &str) {
    if !list.iter().any(|x| x == item) {
        list.push(item.to_owned());
    }
}

/// The changed files, the first [`MAX_FILES`] named and the rest counted.
fn files(edits: &[String]) -> String {
    let mut shown = edits[..edits.len().min(MAX_FILES)].join(", ");
    if edits.len() > MAX_FILES {
        shown.push_str(&format!(" and {} more", edits.len() - MAX_FILES));
    }
    shown
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn command_keys_name_the_program_and_its_subcommand() {
        for (command, key) in [
            ("cargo test -p billing retry", "cargo test"),
            ("cd crates/x && cargo test", "cargo test"),
            ("RUST_LOG=debug cargo build --release", "cargo build"),
            ("npm run build 2>&1 | tail -20", "npm run"),
            ("pytest tests/test_api.py -x", "pytest"),
            ("python -m pytest -q", "python pytest"),
            ("/usr/local/bin/go test ./...", "go test"),
            ("timeout 60 make check", "make check"),
        ] {
            assert_eq!(command_key(command), key, "{command}");
        }
    }

    #[test]
    fn the_gist_keeps_the_lines_that_say_what_failed() {
        let out = "Exit code 101\n   Compiling x v0.1.0\n\u{1b}[31merror[E0308]\u{1b}[0m: mismatched types\n  --> src/lib.rs:3:5\nerror: could not compile `x`";
        assert_eq!(
            error_gist(out),
            "error[E0308]: mismatched types | error: could not compile `x`"
        );
        assert_eq!(error_gist("Exit code 1\n"), "", "nothing said");
        assert_eq!(
            error_gist("Exit code 2\nsomething odd\nlast words"),
            "something odd | last words"
        );
        let pytest = "collected 0 items / 1 error\n==== ERRORS ====\n____ ERROR collecting t.py ____\nE   ModuleNotFoundError: No module named 'x'\n==== 1 error in 0.4s ====";
        assert_eq!(
            error_gist(pytest),
            "collected 0 items / 1 error | ERROR collecting t.py | E ModuleNotFoundError: No module named 'x'"
        );
    }
}
