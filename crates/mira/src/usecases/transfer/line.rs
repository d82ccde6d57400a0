//! One line of the JSONL export format: one memory with every stored field, keys in a fixed
//! order, timestamps in RFC 3339 (UTC, milliseconds), the embedding (optional) as base64 of its
//! little-endian f32s.
//!
//! Reading a line validates everything and recomputes what derives from the text (content
//! hash, token counts, fact count), so a hand-edited line cannot leave inconsistent rows.
//! Only `id`, `wing`, `room`, `type`, `content` and `created_at` are required: a missing
//! fingerprint or tag list is extracted from the content as a store would, a missing
//! `stored_at` is the import time and missing relations are none.

use super::super::store::content_hash;
use super::super::validate;
use base64::Engine;
use chrono::{DateTime, SecondsFormat, Utc};
use mira_core::fingerprint;
use mira_core::memory::Fingerprint;
use mira_core::memory::{Memory, MemoryId, RelationType};
use mira_core::message::Term;
use mira_core::tags::Tag;
use mira_core::{render, tags, tokens};
use mira_store::{Bookkeeping, Edge, Embedding, NewMemory, Source, StoredMemory};
use serde::{Deserialize, Serialize};

/// A memory as one JSON line.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Line {
    /// The id (a UUID).
    pub id: String,
    /// The wing.
    pub wing: String,
    /// The room.
    pub room: String,
    /// The memory type.
    #[serde(rename = "type")]
    pub memory_type: String,
    /// T0.
    pub content: String,
    /// When it happened.
    pub created_at: String,
    /// When it was written.
    #[serde(default)]
    pub stored_at: Option<String>,
    /// The session it was stored in.
    #[serde(default)]
    pub session_id: Option<String>,
    /// When it was archived, if it is.
    #[serde(default)]
    pub archived_at: Option<String>,
    /// The newer memory that supersedes it.
    #[serde(default)]
    pub superseded_by: Option<String>,
    /// Shown in every recall of its wing (written only when true).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub pinned: bool,
    /// Where it came from: `captured` (by a client hook); written only then, absent means
    /// `stored` (every file written before sources were recorded).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// Free-form metadata (a JSON object).
    #[serde(default)]
    pub metadata: Option<serde_json::Value>,
    /// T1.
    #[serde(default)]
    pub fingerprint: Option<Fingerprint>,
    /// Tags in stored order.
    #[serde(default)]
    pub tags: Option<Vec<LineTag>>,
    /// Causal edges from earlier memories to this one.
    #[serde(default)]
    pub causes: Vec<LineEdge>,
    /// T2, when exported with embeddings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub embedding: Option<LineEmbedding>,
}

/// A tag.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LineTag {
    /// The normalised tag.
    pub tag: String,
    /// What it came from (entity, subject, keyword...).
    pub kind: String,
}

/// A causal edge, seen from the memory it leads to.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LineEdge {
    /// The earlier memory.
    pub from: String,
    /// because, triggered, contradicts, updates or resolves.
    pub relation: String,
    /// Confidence in [0, 1].
    pub confidence: f64,
    /// When the link was detected.
    pub detected_at: String,
}

/// An embedding.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LineEmbedding {
    /// The model that computed it.
    pub model: String,
    /// Dimensions.
    pub dim: usize,
    /// Base64 (standard alphabet, padded) of `dim` little-endian f32s.
    pub vector: String,
}

/// A line read and checked, ready to restore.
#[derive(Debug)]
pub struct Parsed {
    /// The memory to write, without its relations (its embedding if the line had one).
    pub memory: NewMemory,
    /// The newer memory that supersedes it.
    pub superseded_by: Option<MemoryId>,
    /// Its causes.
    pub causes: Vec<Edge>,
}

fn time_text(ms: i64) -> String {
    DateTime::<Utc>::from_timestamp_millis(ms)
        .unwrap_or_default()
        .to_rfc3339_opts(SecondsFormat::Millis, true)
}

fn time_ms(field: &str, text: &str) -> Result<i64, String> {
    DateTime::parse_from_rfc3339(text)
        .map(|t| t.timestamp_millis())
        .map_err(|e| {
            format!("{field} '{text}' is not an RFC 3339 date ({e}): write it like 2026-12-03T09:30:00.000Z")
        })
}

fn parse_id(field: &str, text: &str) -> Result<MemoryId, String> {
    mira_core::memory::parse_memory_id(text).map_err(|e| format!("{field}: {e}"))
}

impl Line {
    /// The line of an exported memory (read with [`mira_store::Parts::export`]).
    pub fn from_stored(m: StoredMemory) -> Result<Line, String> {
        let (r, f) = (m.memory, m.bookkeeping);
        let metadata = serde_json::from_str(&f.metadata)
            .map_err(|e| format!("memory {}: stored metadata is not JSON: {e}", r.id))?;
        Ok(Line {
            id: r.id.to_string(),
            wing: r.wing,
            room: r.room,
            memory_type: r.memory_type.as_str().to_owned(),
            content: r.content,
            created_at: time_text(r.created_at.timestamp_millis()),
            stored_at: Some(time_text(f.stored_at)),
            session_id: r.session_id,
            archived_at: f.archived_at.map(time_text),
            superseded_by: r.superseded_by.map(|s| s.to_string()),
            pinned: f.pinned,
            source: (f.source != Source::Stored).then(|| f.source.as_str().to_owned()),
            metadata: Some(metadata),
            fingerprint: Some(r.fingerprint),
            tags: Some(
                m.tags
                    .into_iter()
                    .map(|t| LineTag {
                        tag: t.tag,
                        kind: t.kind.as_str().to_owned(),
                    })
                    .collect(),
            ),
            causes: m
                .causes
                .into_iter()
                .map(|e| LineEdge {
                    from: e.other.to_string(),
                    relation: e.relation.as_str().to_owned(),
                    confidence: e.confidence,
                    detected_at: time_text(e.detected_at),
                })
                .collect(),
            embedding: m.embedding.map(|e| LineEmbedding {
                model: e.model,
                dim: e.vector.len(),
                vector: base64::engine::general_purpose::STANDARD.encode(
                    e.vector
                        .iter()
                        .flat_map(|x| x.to_le_bytes())
                        .collect::<Vec<u8>>(),
                ),
            }),
        })
    }

    /// Reads one line (its fields are checked by [`Line::check`]).
    pub fn parse(text: &str) -> Result<Line, String> {
        serde_json::from_str(text).map_err(|e| format!("not a memory line: {e}"))
    }

    /// Checks every field; `now` is the import time (unix ms), `min_entity_len` the extraction
    /// setting used when the fingerprint must be extracted. The error says what is wrong and
    /// how to fix it.
    pub fn check(self, now: i64, min_entity_len: usize) -> Result<Parsed, String> {
        let id = parse_id("id", &self.id)?;
        validate::content(&self.content).map_err(|e| e.to_string())?;
        validate::name(Term::Wing, &self.wing).map_err(|e| e.to_string())?;
        validate::name(Term::Room, &self.room).map_err(|e| e.to_string())?;
        let memory_type = validate::memory_type(&self.memory_type).map_err(|e| e.to_string())?;
        let created_at = time_ms("created_at", &self.created_at)?;
        let stored_at = match &self.stored_at {
            Some(t) => time_ms("stored_at", t)?,
            None => now,
        };
        let archived_at = self
            .archived_at
            .as_deref()
            .map(|t| time_ms("archived_at", t))
            .transpose()?;
        let superseded_by = self
            .superseded_by
            .as_deref()
            .map(|s| parse_id("superseded_by", s))
            .transpose()?;
        let source = match self.source.as_deref() {
            None => Source::Stored,
            Some(s) => s.parse().map_err(|e| format!("source: {e}"))?,
        };
        let metadata = match self.metadata {
            None => "{}".to_owned(),
            Some(v @ serde_json::Value::Object(_)) => v.to_string(),
            Some(_) => return Err("metadata must be a JSON object (or absent)".into()),
        };
        let fingerprint = self
            .fingerprint
            .unwrap_or_else(|| fingerprint::extract(&self.content, memory_type, min_entity_len));
        let tags = match self.tags {
            Some(tags) => tags
                .into_iter()
                .map(|t| {
                    if t.tag.trim().is_empty() {
                        return Err("a tag needs a non-empty tag".to_owned());
                    }
                    let kind = t.kind.parse().map_err(|e| format!("tags: {e}"))?;
                    Ok(Tag { tag: t.tag, kind })
                })
                .collect::<Result<_, _>>()?,
            None => tags::extract_tags(&self.content, &fingerprint),
        };
        let causes = self
            .causes
            .into_iter()
            .map(|e| {
                let relation: RelationType = e.relation.parse()?;
                if !(0.0..=1.0).contains(&e.confidence) {
                    return Err(format!(
                        "causes: confidence {} is outside [0, 1]",
                        e.confidence
                    ));
                }
                Ok(Edge {
                    other: parse_id("causes.from", &e.from)?,
                    relation,
                    confidence: e.confidence,
                    detected_at: time_ms("causes.detected_at", &e.detected_at)?,
                })
            })
            .collect::<Result<Vec<_>, String>>()?;
        let embedding = self.embedding.map(decode_embedding).transpose()?;
        let memory = Memory {
            id,
            wing: self.wing,
            room: self.room,
            memory_type,
            token_count: tokens::count(&self.content) as u32,
            content: self.content,
            fingerprint,
            created_at: DateTime::<Utc>::from_timestamp_millis(created_at).unwrap_or_default(),
            session_id: self.session_id,
            archived: archived_at.is_some(),
            superseded_by,
        };
        let fingerprint_tokens = tokens::count(&render::fingerprint_text(&memory)) as u32;
        let bookkeeping = Bookkeeping {
            content_hash: content_hash(&memory.content),
            stored_at,
            archived_at,
            metadata,
            fingerprint_tokens,
            pinned: self.pinned,
            source,
            costs: Some(render::mode_costs(&memory)),
        };
        Ok(Parsed {
            memory: NewMemory {
                memory,
                bookkeeping,
                tags,
                embedding,
                causes: Vec::new(),
                supersedes: Vec::new(),
                retracts: Vec::new(),
            },
            superseded_by,
            causes,
        })
    }
}

fn decode_embedding(e: LineEmbedding) -> Result<Embedding, String> {
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(e.vector.as_bytes())
        .map_err(|err| format!("embedding.vector is not base64: {err}"))?;
    if e.dim == 0 || bytes.len() != e.dim * 4 {
        return Err(format!(
            "embedding.vector holds {} bytes, expected dim × 4 = {} (or drop the embedding to re-embed)",
            bytes.len(),
            e.dim * 4
        ));
    }
    let vector: Vec<f32> = bytes
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    if vector.iter().any(|x| !x.is_finite()) {
        return Err(
            "embedding.vector has a non-finite value (drop the embedding to re-embed)".into(),
        );
    }
    Ok(Embedding {
        model: e.model,
        vector,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const MINIMAL: &str = r#"{"id":"7f0c1d52-3a59-4d1e-9c43-0e2b3f0f6a11","wing":"w","room":"facts","type":"fact","content":"The API limit is 100 requests per minute.","created_at":"2026-01-02T03:04:05.678Z"}"#;

    fn parse(text: &str) -> Result<Parsed, String> {
        Line::parse(text)?.check(42, 2)
    }

    #[test]
    fn a_minimal_line_gets_everything_derived() {
        let p = parse(MINIMAL).unwrap();
        let (m, f) = (&p.memory.memory, &p.memory.bookkeeping);
        assert_eq!(m.created_at.timestamp_millis(), 1_767_323_045_678);
        assert_eq!(f.stored_at, 42, "stored_at defaults to the import time");
        assert_eq!(f.metadata, "{}");
        assert!(m.token_count > 5 && f.fingerprint_tokens > 0);
        assert_eq!(f.content_hash, content_hash(&m.content));
        assert!(!p.memory.tags.is_empty(), "tags are extracted when absent");
        assert!(p.memory.embedding.is_none() && p.causes.is_empty());
        assert_eq!(
            f.source,
            Source::Stored,
            "a line without a source was stored"
        );
    }

    #[test]
    fn every_bad_field_is_named() {
        let with = |field: &str, value: &str| {
            let mut v: serde_json::Value = serde_json::from_str(MINIMAL).unwrap();
            v[field] = serde_json::from_str(value).unwrap();
            parse(&v.to_string()).unwrap_err()
        };
        assert!(with("id", r#""42""#).contains("id"));
        assert!(with("created_at", r#""yesterday""#).contains("created_at"));
        assert!(with("type", r#""opinion""#).contains("decision"));
        assert!(with("wing", r#""a/b""#).contains("wing"));
        assert!(with("content", r#""  ""#).contains("empty"));
        assert!(with("metadata", "[1]").contains("object"));
        assert!(with("source", r#""scraped""#).contains("source"));
        assert!(with("unknown", "1").contains("unknown field"));
        assert!(with("embedding", r#"{"model":"m","dim":2,"vector":"AAAA"}"#).contains("bytes"));
        assert!(with("embedding", r#"{"model":"m","dim":1,"vector":"!!"}"#).contains("base64"));
        assert!(
            with("embedding", r#"{"model":"m","dim":1,"vector":"AADAfw=="}"#)
                .contains("non-finite")
        );
        let cause = r#"[{"from":"7f0c1d52-3a59-4d1e-9c43-0e2b3f0f6a12","relation":"because","confidence":2.0,"detected_at":"2026-01-02T03:04:05Z"}]"#;
        assert!(with("causes", cause).contains("confidence"));
        let cause = cause.replace("because", "caused").replace("2.0", "0.5");
        assert!(with("causes", &cause).contains("relation"));
        assert!(parse("[]").unwrap_err().contains("not a memory line"));
    }
}
