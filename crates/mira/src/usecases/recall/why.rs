//! Why recall showed a memory, and in which form: one sentence per item of the block, for
//! people reading a recall (the memory browser), from what the ranking and the allocator knew.

use mira_core::memory::MemoryId;
use mira_core::render::RenderMode;

/// What is known about one selected memory.
pub(super) struct Picked {
    /// Its place in the relevance order of the candidates (0 = the most relevant).
    pub rank: usize,
    /// How many candidates were ranked.
    pub of: usize,
    /// Its relevance in [0, 1].
    pub relevance: f32,
    /// Whether it is pinned.
    pub pinned: bool,
    /// Its successor, when superseded.
    pub superseded_by: Option<MemoryId>,
    /// A newer memory of the block about the same thing, when there is one.
    pub newer: Option<MemoryId>,
    /// How it was rendered.
    pub mode: RenderMode,
}

/// "#2 of 40 by relevance; full text fits", "pinned; …", "superseded by 1a2b3c4d: …".
pub(super) fn explain(p: &Picked) -> String {
    let picked = match (p.pinned, p.superseded_by) {
        (true, _) if p.relevance <= 0.0 => {
            "pinned: shown in every recall of its wing, though the query does not match it"
                .to_owned()
        }
        (true, _) => format!("pinned, and #{} of {} by relevance", p.rank + 1, p.of),
        (false, Some(next)) => format!(
            "superseded by {}: kept below its successor as history",
            mira_core::render::short_id(next)
        ),
        (false, None) => format!("#{} of {} by relevance", p.rank + 1, p.of),
    };
    let picked = match p.newer {
        Some(n) => format!(
            "{picked}; an earlier statement: {} says the same thing more recently and is shown above",
            mira_core::render::short_id(n)
        ),
        None => picked,
    };
    let form = match p.mode {
        RenderMode::Verbatim => "its full text fits the budget",
        RenderMode::Fingerprint => "extracted facts only: the full text did not fit what was left",
        RenderMode::Header if p.superseded_by.is_some() => {
            "a header only, as every superseded memory"
        }
        RenderMode::Header => {
            "a header only: it repeats a memory shown above, or nothing richer fitted what was left"
        }
    };
    format!("{picked}; {form}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn picked(pinned: bool, relevance: f32, mode: RenderMode) -> Picked {
        Picked {
            rank: 1,
            of: 40,
            relevance,
            pinned,
            superseded_by: None,
            newer: None,
            mode,
        }
    }

    #[test]
    fn sentences() {
        assert_eq!(
            explain(&picked(false, 0.8, RenderMode::Verbatim)),
            "#2 of 40 by relevance; its full text fits the budget"
        );
        assert!(explain(&picked(true, 0.0, RenderMode::Fingerprint)).starts_with("pinned: shown"));
        assert!(explain(&picked(true, 0.5, RenderMode::Header)).starts_with("pinned, and #2 of 40"));
        let mut s = picked(false, 0.5, RenderMode::Header);
        s.superseded_by = Some(MemoryId::nil());
        assert_eq!(
            explain(&s),
            "superseded by 00000000: kept below its successor as history; a header only, as every superseded memory"
        );
    }
}
