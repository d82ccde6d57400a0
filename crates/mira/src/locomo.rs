//! The LoCoMo reader: conversations (turns with their sessions and dates) and their questions
//! from the benchmark's JSON files, and the store requests that put a conversation in memory.
//! LongMemEval and other data converted to the same format read the same way.

use crate::usecases::store::StoreRequest;
use anyhow::{bail, Context, Result};
use chrono::{DateTime, NaiveDate, TimeZone, Utc};
use serde_json::Value;
use std::collections::HashSet;
use std::path::{Path, PathBuf};

/// One turn of a conversation.
#[derive(Debug, Clone)]
pub struct Turn {
    /// `D<session>:<turn>`.
    pub dia_id: String,
    /// Session number.
    pub session: u32,
    /// `speaker: text` (with the image caption when the turn shares an image).
    pub content: String,
    /// When it was said.
    pub at: DateTime<Utc>,
}

/// One question.
#[derive(Debug, Clone)]
pub struct Question {
    /// The question text.
    pub text: String,
    /// LoCoMo category (1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop, 5 adversarial).
    pub category: u8,
    /// Evidence turn ids that exist in the conversation.
    pub evidence: Vec<String>,
}

/// A parsed LoCoMo conversation.
#[derive(Debug, Clone)]
pub struct Conversation {
    /// File stem, used as the wing name (`locomo-<stem>`).
    pub name: String,
    /// The turns in order.
    pub turns: Vec<Turn>,
    /// The questions.
    pub questions: Vec<Question>,
    /// Evidence ids that named no turn (skipped).
    pub skipped_evidence: usize,
}

/// Parses a LoCoMo session date such as `1:56 pm on 8 May, 2023`.
pub fn parse_session_date(s: &str) -> Option<DateTime<Utc>> {
    let s = s.trim().to_ascii_lowercase();
    let (time, date) = s.split_once(" on ")?;
    let (hm, ampm) = time.trim().split_once(' ')?;
    let (h, m) = hm.split_once(':')?;
    let (mut h, m): (u32, u32) = (h.trim().parse().ok()?, m.trim().parse().ok()?);
    match ampm.trim() {
        "pm" if h < 12 => h += 12,
        "am" if h == 12 => h = 0,
        "am" | "pm" => {}
        _ => return None,
    }
    let date = date.replace(',', " ");
    let parts: Vec<&str> = date.split_whitespace().collect();
    let [day, month, year] = parts.as_slice() else {
        return None;
    };
    let day = NaiveDate::parse_from_str(&format!("{day} {month} {year}"), "%d %B %Y").ok()?;
    Utc.from_local_datetime(&day.and_hms_opt(h, m, 0)?).single()
}

/// Parses one LoCoMo JSON file.
pub fn parse_conversation(path: &Path) -> Result<Conversation> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    let v: Value =
        serde_json::from_str(&text).with_context(|| format!("{} is not JSON", path.display()))?;
    let conv = v.get("conversation").unwrap_or(&v);
    let mut turns = Vec::new();
    for n in 1.. {
        let Some(session) = conv.get(format!("session_{n}")).and_then(Value::as_array) else {
            if n > 60 {
                break;
            }
            continue;
        };
        let date = conv
            .get(format!("session_{n}_date_time"))
            .and_then(Value::as_str)
            .and_then(parse_session_date)
            .with_context(|| format!("{}: session_{n} has no readable date", path.display()))?;
        for (i, t) in session.iter().enumerate() {
            let (Some(id), Some(speaker), Some(said)) = (
                t.get("dia_id").and_then(Value::as_str),
                t.get("speaker").and_then(Value::as_str),
                t.get("text").and_then(Value::as_str),
            ) else {
                continue;
            };
            let mut content = format!("{speaker}: {said}");
            if let Some(c) = t.get("blip_caption").and_then(Value::as_str) {
                content.push_str(&format!(" [shares an image: {c}]"));
            }
            turns.push(Turn {
                dia_id: id.trim().to_owned(),
                session: n,
                content,
                at: date + chrono::Duration::seconds(i as i64),
            });
        }
    }
    if turns.is_empty() {
        bail!(
            "{}: no session_N turns found (is it a LoCoMo file?)",
            path.display()
        );
    }
    let known: HashSet<&str> = turns.iter().map(|t| t.dia_id.as_str()).collect();
    let mut skipped = 0;
    let mut questions = Vec::new();
    for q in v.get("qa").and_then(Value::as_array).into_iter().flatten() {
        let (Some(text), Some(category)) = (
            q.get("question").and_then(Value::as_str),
            q.get("category").and_then(Value::as_u64),
        ) else {
            continue;
        };
        let mut evidence = Vec::new();
        for e in q
            .get("evidence")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
        {
            for id in e.split(';').map(str::trim).filter(|s| !s.is_empty()) {
                if known.contains(id) {
                    if !evidence.iter().any(|x: &String| x == id) {
                        evidence.push(id.to_owned());
                    }
                } else {
                    skipped += 1;
                }
            }
        }
        questions.push(Question {
            text: text.to_owned(),
            category: category.min(255) as u8,
            evidence,
        });
    }
    let name = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "conv".into());
    Ok(Conversation {
        name,
        turns,
        questions,
        skipped_evidence: skipped,
    })
}

impl Conversation {
    /// The wing of the conversation: `locomo-<file stem>` (non-alphanumerics as `-`).
    pub fn wing(&self) -> String {
        format!(
            "locomo-{}",
            self.name.replace(|c: char| !c.is_ascii_alphanumeric(), "-")
        )
    }

    /// One store request per turn: a session note of `wing`, dated, in its session.
    pub fn store_requests(&self, wing: &str) -> Vec<StoreRequest> {
        self.turns
            .iter()
            .map(|t| StoreRequest {
                content: t.content.clone(),
                wing: wing.to_owned(),
                memory_type: Some("session_note".into()),
                created_at: Some(t.at),
                session_id: Some(format!("session-{}", t.session)),
                ..StoreRequest::default()
            })
            .collect()
    }
}

/// The LoCoMo files of `path`: the file itself, or the folder's `.json` files in name order.
pub fn files(path: &Path) -> Result<Vec<PathBuf>> {
    if path.is_file() {
        return Ok(vec![path.to_path_buf()]);
    }
    let mut out: Vec<PathBuf> = std::fs::read_dir(path)
        .with_context(|| format!("cannot read the folder {}", path.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    out.sort();
    if out.is_empty() {
        bail!("no .json files in {}", path.display());
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn session_dates_parse() {
        let d = parse_session_date("1:56 pm on 8 May, 2023").unwrap();
        assert_eq!(d.to_rfc3339(), "2023-05-08T13:56:00+00:00");
        assert_eq!(
            parse_session_date("12:09 am on 13 September, 2023")
                .unwrap()
                .to_rfc3339(),
            "2023-09-13T00:09:00+00:00"
        );
        assert!(parse_session_date("yesterday").is_none());
    }
}
