//! The causal chain use case: breadth-first search over the causal edges of a memory, upstream
//! (its causes) and optionally downstream (its consequences).
//!
//! Each memory is visited once per direction (the start included), so cycles terminate; a
//! memory reachable along several paths appears once, at its smallest depth, under the first
//! memory that reached it.

use super::access::Access;
use super::timeline::{marks, rfc3339, summary};
use super::{load, UseCaseError, UseCaseResult};
use crate::App;
use chrono::{DateTime, Utc};
use mira_core::memory::{Memory, MemoryId, MemoryType, RelationType};
use mira_core::message::Term;
use mira_core::render::short_id;
use serde::Serialize;
use std::collections::{HashSet, VecDeque};
use std::fmt::Write;

/// Default search depth (edges from the start).
pub const DEFAULT_DEPTH: i64 = 3;
/// Largest search depth.
pub const MAX_DEPTH: i64 = 10;
/// Most memories listed per direction (the search stops there and says so).
pub const MAX_NODES: usize = 500;

/// A causal chain request.
#[derive(Debug, Clone, Default)]
pub struct CausalRequest {
    /// The memory: its short id, a longer prefix, the UUID or `T0:<uuid>`.
    pub id: String,
    /// How many edges to follow, 1-10 (default 3).
    pub max_depth: Option<i64>,
    /// Also follow edges downstream (what the memory led to).
    pub include_consequences: bool,
}

/// A memory of a chain (the start, or one step).
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct ChainNode {
    /// Its id.
    pub id: MemoryId,
    /// Its type.
    pub memory_type: MemoryType,
    /// Its summary (first subject, else decision, else the start of its content).
    pub summary: String,
    /// When it was created (RFC 3339 in JSON).
    #[serde(serialize_with = "rfc3339")]
    #[schemars(with = "String")]
    pub created_at: DateTime<Utc>,
    /// Whether it is archived.
    pub archived: bool,
    /// The memory that replaces it, when superseded.
    pub superseded_by: Option<MemoryId>,
}

/// One step of a chain: a memory reached through one edge.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct ChainStep {
    /// The memory reached.
    pub node: ChainNode,
    /// Edges from the start (1 = a direct cause or consequence).
    pub depth: u32,
    /// The memory it was reached from (the start at depth 1).
    pub via: MemoryId,
    /// The relation of the edge (always read older → newer: the cause → its consequence).
    pub relation: RelationType,
    /// The edge's confidence in [0, 1] (to 3 decimals).
    pub confidence: f64,
}

/// The result of a causal chain search.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct CausalChain {
    /// The start.
    pub start: ChainNode,
    /// The depth searched.
    pub max_depth: u32,
    /// Causes, breadth first (nearest first).
    pub causes: Vec<ChainStep>,
    /// Consequences, breadth first, when asked for.
    pub consequences: Option<Vec<ChainStep>>,
    /// Whether a direction stopped at [`MAX_NODES`] memories.
    pub truncated: bool,
}

fn node(m: &Memory) -> ChainNode {
    ChainNode {
        id: m.id,
        memory_type: m.memory_type,
        summary: summary(m),
        created_at: m.created_at,
        archived: m.archived,
        superseded_by: m.superseded_by,
    }
}

/// Breadth-first search from `start` over causes (`upstream`) or consequences.
fn bfs(
    app: &App,
    access: &Access,
    start: MemoryId,
    max_depth: u32,
    upstream: bool,
) -> UseCaseResult<(Vec<ChainStep>, bool)> {
    let mut visited = HashSet::from([start]);
    let mut queue = VecDeque::from([(start, 0u32)]);
    let mut steps = Vec::new();
    while let Some((id, depth)) = queue.pop_front() {
        if depth >= max_depth {
            continue;
        }
        let Some(loaded) = app.store.load(id)? else {
            continue;
        };
        let edges = if upstream {
            loaded.causes
        } else {
            loaded.consequences
        };
        for e in edges {
            if !visited.insert(e.other) {
                continue;
            }
            if steps.len() >= MAX_NODES {
                return Ok((steps, true));
            }
            let Some(other) = app.store.load(e.other)? else {
                continue;
            };
            // A link into a wing the caller may not read is not shown, nor followed.
            if !access.may_read(&other.memory.wing) {
                continue;
            }
            steps.push(ChainStep {
                node: node(&other.memory),
                depth: depth + 1,
                via: id,
                relation: e.relation,
                confidence: load::rounded(e.confidence),
            });
            queue.push_back((e.other, depth + 1));
        }
    }
    Ok((steps, false))
}

/// The causal chain of a memory, through the wings `access` may read.
pub fn causal_chain(app: &App, access: &Access, req: &CausalRequest) -> UseCaseResult<CausalChain> {
    let depth = req.max_depth.unwrap_or(DEFAULT_DEPTH);
    if !(1..=MAX_DEPTH).contains(&depth) {
        return Err(UseCaseError::Invalid(Term::MaxDepth.then(format!(
            " {depth} is out of range: give 1 to {MAX_DEPTH} (default {DEFAULT_DEPTH})"
        ))));
    }
    let depth = depth as u32;
    let start = load::load(app, access, &req.id)?;
    let id = start.memory.id;
    let (causes, mut truncated) = bfs(app, access, id, depth, true)?;
    let consequences = if req.include_consequences {
        let (steps, t) = bfs(app, access, id, depth, false)?;
        truncated |= t;
        Some(steps)
    } else {
        None
    };
    Ok(CausalChain {
        start: node(&start.memory),
        max_depth: depth,
        causes,
        consequences,
        truncated,
    })
}

/// `<short id> [<type>] <summary> (<YYYY-MM-DD>)` and its marks.
fn node_text(n: &ChainNode) -> String {
    format!(
        "{} [{}] {} ({}){}",
        short_id(n.id),
        n.memory_type,
        n.summary,
        n.created_at.format("%Y-%m-%d"),
        marks(n.archived, n.superseded_by)
    )
}

/// Writes `steps` as a tree: each step under the memory it was reached from, indented by two
/// spaces per level.
fn write_tree(out: &mut String, steps: &[ChainStep], parent: MemoryId, depth: u32) {
    for s in steps.iter().filter(|s| s.via == parent && s.depth == depth) {
        let _ = writeln!(
            out,
            "{}→ {} — {} {:.2}",
            "  ".repeat(depth.saturating_sub(1) as usize),
            node_text(&s.node),
            s.relation,
            s.confidence,
        );
        write_tree(out, steps, s.node.id, depth + 1);
    }
}

/// The text form: `=== CAUSAL CHAIN (Upstream) ===`, the start, one
/// `→ <short id> [type] summary (YYYY-MM-DD) — <relation> <confidence>` line per cause
/// (indented by depth), then `=== CONSEQUENCES (Downstream) ===` the same way when asked for.
pub fn render_text(c: &CausalChain) -> String {
    let mut out = String::from("=== CAUSAL CHAIN (Upstream) ===\n");
    let _ = writeln!(out, "Start: {}", node_text(&c.start));
    if c.causes.is_empty() {
        out.push_str("(no causes recorded)\n");
    }
    write_tree(&mut out, &c.causes, c.start.id, 1);
    if let Some(cons) = &c.consequences {
        out.push_str("\n=== CONSEQUENCES (Downstream) ===\n");
        if cons.is_empty() {
            out.push_str("(no consequences recorded)\n");
        }
        write_tree(&mut out, cons, c.start.id, 1);
    }
    if c.truncated {
        let _ = writeln!(
            out,
            "\n(stopped at {MAX_NODES} memories per direction: lower max_depth)"
        );
    }
    out
}
