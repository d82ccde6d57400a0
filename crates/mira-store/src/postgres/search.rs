//! PostgreSQL's own search: full text over the content and the day (`tsvector`, GIN,
//! `ts_rank`), dense search with pgvector's HNSW index, both filtered by wing, room and
//! archive state in the same query.

use super::write::TEXT_SEARCH;
use crate::model::Scope;
use crate::Result;
use mira_core::memory::MemoryId;
use postgres::GenericClient;
use std::collections::HashSet;

/// Dimension of the `vector` column.
pub(super) const DIM: usize = 384;

/// The query's content words (no stop words, at most 32) joined by `or`, for
/// `websearch_to_tsquery` (which reads any text without failing); `None` without a word.
fn or_query(text: &str) -> Option<String> {
    let mut seen = HashSet::new();
    let words: Vec<String> = mira_core::text::words(text)
        .into_iter()
        .filter(|w| !mira_core::text::is_stop_word(w))
        .filter(|w| seen.insert(w.clone()))
        .take(32)
        .map(|w| w.replace('"', ""))
        .collect();
    (!words.is_empty()).then(|| words.join(" or "))
}

/// How PostgreSQL ranks the memories its full-text search matches: `ts_rank` (how often the
/// query's words occur) or `ts_rank_cd` (cover density: how close together they occur), divided
/// by a function of the memory's length as PostgreSQL's normalisation flag says: 0 nothing, 1
/// one plus the log of the length, 2 the length, 4 the mean harmonic distance between extents
/// (`ts_rank_cd` only), 8 the unique words, 16 one plus their log. (Flag 32, rank / (rank + 1),
/// keeps the order: it is left out.)
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TextRank {
    cover_density: bool,
    normalization: u8,
}

impl TextRank {
    /// The ranking of [`crate::MemoryStore::lexical_search`] on PostgreSQL: `ts_rank` without
    /// normalisation, the variant closest to BM25 on the LoCoMo development set (best recall@10
    /// on each conversation, most of BM25's top 10; docs/benchmarks.md, "PostgreSQL").
    pub const DEFAULT: TextRank = TextRank::rank(0);

    /// Every ranking `mira eval locomo --text-ranks` measures.
    pub const ALL: [TextRank; 11] = [
        TextRank::rank(0),
        TextRank::rank(1),
        TextRank::rank(2),
        TextRank::rank(8),
        TextRank::rank(16),
        TextRank::cover_density(0),
        TextRank::cover_density(1),
        TextRank::cover_density(2),
        TextRank::cover_density(4),
        TextRank::cover_density(8),
        TextRank::cover_density(16),
    ];

    const fn rank(normalization: u8) -> TextRank {
        TextRank {
            cover_density: false,
            normalization,
        }
    }

    const fn cover_density(normalization: u8) -> TextRank {
        TextRank {
            cover_density: true,
            normalization,
        }
    }

    /// `ts_rank/<flag>` or `ts_rank_cd/<flag>`.
    pub fn name(self) -> String {
        format!("{}/{}", self.function(), self.normalization)
    }

    fn function(self) -> &'static str {
        if self.cover_density {
            "ts_rank_cd"
        } else {
            "ts_rank"
        }
    }
}

/// See [`crate::MemoryStore::lexical_search`] and [`crate::PgStore::text_search`].
pub(super) fn lexical_search(
    c: &mut impl GenericClient,
    text: &str,
    limit: usize,
    scope: &Scope,
    rank: TextRank,
) -> Result<Vec<(MemoryId, f64)>> {
    let Some(q) = or_query(text) else {
        return Ok(Vec::new());
    };
    let limit = i64::try_from(limit).unwrap_or(i64::MAX);
    let rows = c.query(
        &format!(
            "SELECT v.id, {}(v.search, q, {})::float8 AS score
             FROM verbatims v, websearch_to_tsquery('{TEXT_SEARCH}', $1) q
             WHERE v.search @@ q AND v.archived_at IS NULL
               AND ($2::text IS NULL OR v.wing = $2) AND ($3::text IS NULL OR v.room = $3)
             ORDER BY score DESC, v.seq LIMIT $4",
            rank.function(),
            rank.normalization
        ),
        &[&q, &scope.wing, &scope.room, &limit],
    )?;
    Ok(rows
        .iter()
        .map(|r| Ok((r.try_get(0)?, r.try_get(1)?)))
        .collect::<std::result::Result<_, postgres::Error>>()?)
}

/// See [`crate::MemoryStore::dense_search`].
pub(super) fn dense_search(
    c: &mut impl GenericClient,
    query: &[f32],
    limit: usize,
    scope: &Scope,
) -> Result<Vec<(MemoryId, f32)>> {
    if query.len() != DIM || query.iter().any(|x| !x.is_finite()) || limit == 0 {
        return Ok(Vec::new());
    }
    let limit = i64::try_from(limit).unwrap_or(i64::MAX);
    let q = pgvector::Vector::from(query.to_vec());
    let rows = c.query(
        "SELECT v.id, (1 - (e.vector <=> $1))::float4
         FROM embeddings e JOIN verbatims v ON v.id = e.memory_id
         WHERE v.archived_at IS NULL
           AND ($2::text IS NULL OR v.wing = $2) AND ($3::text IS NULL OR v.room = $3)
         ORDER BY e.vector <=> $1 LIMIT $4",
        &[&q, &scope.wing, &scope.room, &limit],
    )?;
    Ok(rows
        .iter()
        .map(|r| Ok((r.try_get(0)?, r.try_get(1)?)))
        .collect::<std::result::Result<_, postgres::Error>>()?)
}
