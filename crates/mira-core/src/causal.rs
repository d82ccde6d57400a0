//! Causal cues in a new memory and their links to earlier memories, backed by similarity.
//!
//! [`detect_cues`] finds relation cues (case-insensitive, whole words), each with a strength:
//!
//! | relation | strength 0.9–0.95 | 0.7–0.8 | 0.35–0.6 |
//! |---|---|---|---|
//! | TRIGGERED | triggered by, in response to, as a follow-up to, prompted by, suite à, à la suite de, en réponse à, consécutivement à, déclenché par | following (not "the following", not "following:") | after, après |
//! | BECAUSE | because of, as a result of, caused by, à cause de, en raison de | because, due to, owing to, parce que, puisque | thanks to, 'cause, grâce à; since and car only as conjunctions |
//! | CONTRADICTS | contradicts, contredit, no longer true, n'est plus vrai, is inconsistent with, conflicts with, est incompatible avec, s'oppose à, reverted, rolled back | revert, roll back, rollback, annulé | is/was wrong, is/was incorrect, not true, actually not, c'est faux |
//! | UPDATES | supersedes, replaces, replaced, "update:", "updated:", remplace, "mise à jour :" | updates, updated, changed to, increased/reduced/raised/lowered/bumped to, from now on, met à jour, mis à jour, actualise, désormais, dorénavant, no longer, n'est plus | is now, are now, now is, est maintenant |
//! | RESOLVES | resolves, resolved, fixes, fixed, résout, résolu, corrige, corrigé | solves, solved, solutionne, fix for, workaround for, règle le/la, réglé | addresses, closes |
//!
//! "however" is not a cue. [`link`] then attaches each cue to the earlier memories it is about:
//! a link needs a cue and a candidate whose effective similarity (cosine plus
//! [`ENTITY_BONUS`] per shared entity, at most [`MAX_ENTITY_BONUS`], capped at 1) reaches
//! [`CausalParams::min_similarity`].

use crate::memory::{MemoryId, RelationType};
use crate::text::{
    car_is_causal, extraction_prefix, floor_char_boundary, in_question, phrase_matches,
    phrase_pattern, phrase_regex, since_is_causal,
};
use regex::{Regex, RegexSet};
use std::sync::LazyLock;

/// A relation cue found in a memory's text.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Cue {
    /// The relation the cue announces.
    pub relation: RelationType,
    /// How explicit the cue is, in (0, 1] ("supersedes" 0.95, "after" 0.35).
    pub strength: f32,
}

/// An earlier memory of the same wing that a new memory may link to. The caller limits the
/// candidates to `causal_lookback` memories within `causal_max_days`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CausalCandidate {
    /// The earlier memory.
    pub id: MemoryId,
    /// Cosine similarity between the two embeddings.
    pub similarity: f32,
    /// Age of the earlier memory, in days, at the time of the new one.
    pub age_days: f64,
    /// Number of entities the two memories share (case-insensitive).
    pub shared_entities: usize,
}

/// Tuning of [`link`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CausalParams {
    /// Lowest effective similarity of a linked candidate.
    pub min_similarity: f32,
    /// Most links made for one new memory.
    pub max_links: usize,
}

impl Default for CausalParams {
    /// `min_similarity` 0.45 is provisional (MiniLM gives ~0.5–0.7 for related sentences and
    /// < 0.3 for unrelated ones) until it is tuned on real data; `max_links` 3.
    fn default() -> Self {
        Self {
            min_similarity: 0.45,
            max_links: 3,
        }
    }
}

/// A causal link from an earlier memory (`target`) to the new one; the stored edge is
/// `target → new memory`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CausalLink {
    /// The earlier memory.
    pub target: MemoryId,
    /// The relation of the new memory to it.
    pub relation: RelationType,
    /// `sqrt(cue strength × effective similarity)`, in [0, 1].
    pub confidence: f32,
}

/// Effective-similarity bonus per shared entity.
pub const ENTITY_BONUS: f32 = 0.03;
/// Largest total entity bonus.
pub const MAX_ENTITY_BONUS: f32 = 0.09;
/// Further candidates within this margin of a cue's best one get the same relation.
pub const TIE_MARGIN: f32 = 0.05;

/// Plain cue phrases grouped by relation and strength.
#[rustfmt::skip]
const CUE_GROUPS: &[(RelationType, f32, &[&str])] = &[
    (
        RelationType::Triggered,
        0.9,
        &[
            "triggered by", "in response to", "as a follow-up to", "as a follow up to",
            "in reaction to", "prompted by", "suite à", "à la suite de", "à la suite d'",
            "en réponse à", "consécutivement à", "déclenché par", "déclenchée par",
        ],
    ),
    (RelationType::Triggered, 0.35, &["after", "après"]),
    (
        RelationType::Because,
        0.9,
        &[
            "because of", "as a result of", "caused by", "à cause de", "à cause d'", "à cause du",
            "à cause des", "en raison de", "en raison d'", "en raison du", "en raison des",
        ],
    ),
    (
        RelationType::Because,
        0.75,
        &[
            "because", "due to", "owing to", "parce que", "parce qu'", "puisque", "puisqu'",
        ],
    ),
    (
        RelationType::Because,
        0.6,
        &["thanks to", "'cause", "grâce à", "grâce au", "grâce aux"],
    ),
    (
        RelationType::Contradicts,
        0.95,
        &[
            "contradicts", "contradicted", "contredit", "contredisent", "no longer true",
            "n'est plus vrai", "is inconsistent with", "are inconsistent with", "conflicts with",
            "est incompatible avec", "sont incompatibles avec", "s'oppose à", "reverted",
            "rolled back",
        ],
    ),
    (
        RelationType::Contradicts,
        0.7,
        &[
            "revert", "reverting", "roll back", "rolling back", "rollback", "annulé", "annulée",
        ],
    ),
    (
        RelationType::Contradicts,
        0.6,
        &[
            "is wrong", "was wrong", "is incorrect", "was incorrect", "is not true", "isn't true",
            "not true", "actually not", "c'est faux", "est faux", "n'est pas vrai",
        ],
    ),
    (
        RelationType::Updates,
        0.95,
        &[
            "supersedes", "superseded", "replaces", "replaced", "update:", "updated:",
            "mise à jour:", "remplace", "remplacé", "remplacée", "remplacent",
        ],
    ),
    (
        RelationType::Updates,
        0.75,
        &[
            "updates", "updated", "changed to", "changed from", "increased to", "reduced to",
            "raised to", "lowered to", "bumped to", "decreased to", "from now on", "met à jour",
            "mis à jour", "mise à jour", "actualise", "actualisé", "désormais", "dorénavant",
            "à partir de maintenant", "no longer", "n'est plus", "ne sont plus",
        ],
    ),
    (
        RelationType::Updates,
        0.6,
        &[
            "is now", "are now", "now is", "now are", "est maintenant", "sont maintenant",
        ],
    ),
    (
        RelationType::Resolves,
        0.9,
        &[
            "resolves", "resolved", "fixes", "fixed", "résout", "résolu", "résolue", "corrige",
            "corrigé", "corrigée",
        ],
    ),
    (
        RelationType::Resolves,
        0.75,
        &[
            "solves", "solved", "solutionne", "solutionné", "fix for", "workaround for", "règle le",
            "règle la", "règle les", "règle l'", "réglé", "réglée",
        ],
    ),
    (
        RelationType::Resolves,
        0.5,
        &["addresses", "addressed", "closes"],
    ),
];

/// Strength of "following" as a TRIGGERED cue.
const FOLLOWING_STRENGTH: f32 = 0.7;
/// Strength of "since" and "car" as BECAUSE cues (conjunctions only).
const WEAK_CONJUNCTION_STRENGTH: f32 = 0.45;

static CUE_SET: LazyLock<RegexSet> = LazyLock::new(|| {
    RegexSet::new(
        CUE_GROUPS
            .iter()
            .map(|(_, _, phrases)| phrase_pattern(phrases)),
    )
    .expect("phrase lists compile")
});

/// Each group of [`CUE_GROUPS`] on its own, to find where its cues are.
static CUE_REGEXES: LazyLock<Vec<Regex>> = LazyLock::new(|| {
    CUE_GROUPS
        .iter()
        .map(|(_, _, phrases)| phrase_regex(phrases))
        .collect()
});

/// Cues that say a state changed only when a complement follows them ("the limit is now 500",
/// not "where you are now.").
const NOW_CUES: &[&str] = &[
    "is now",
    "are now",
    "now is",
    "now are",
    "est maintenant",
    "sont maintenant",
];

/// Whether a cue of group `index` found by the [`CUE_SET`] asserts its relation. Cues that say
/// a state changed (updates, contradicts, resolves) count only outside questions ("any updates
/// on the kids?" asks, it does not update) and, for [`NOW_CUES`], with a complement after them.
fn asserted(index: usize, content: &str) -> bool {
    let relation = CUE_GROUPS[index].0;
    if !(relation.supersedes() || relation == RelationType::Resolves) {
        return true;
    }
    phrase_matches(&CUE_REGEXES[index], content).any(|cue| {
        let phrase = cue
            .as_str()
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ");
        let needs_complement = NOW_CUES.contains(&phrase.to_lowercase().as_str());
        !in_question(content, cue.start())
            && (!needs_complement || has_complement(&content[cue.end()..]))
    })
}

/// Whether `after` (the text after a cue) goes on with a word, a number or a quote.
fn has_complement(after: &str) -> bool {
    let rest = after.trim_start();
    rest.len() < after.len()
        && rest
            .chars()
            .next()
            .is_some_and(|c| c.is_alphanumeric() || "\"'‘“$€£(".contains(c))
}

/// "following", with what may precede or follow it to tell the preposition from the adjective.
static FOLLOWING: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)(?:^|[^\p{L}\p{N}_])(the\s+|as\s+)?following(?:$|[^\p{L}\p{N}_])")
        .expect("literal regex")
});

static CONJUNCTIONS: LazyLock<Regex> = LazyLock::new(|| phrase_regex(&["since", "car"]));

/// The relation cues of `content`'s [`extraction_prefix`], one per relation (its strongest
/// cue), strongest first, ties in [`RelationType`] order.
pub fn detect_cues(content: &str) -> Vec<Cue> {
    let content = extraction_prefix(content);
    let mut found: Vec<Cue> = CUE_SET
        .matches(content)
        .iter()
        .filter(|&index| asserted(index, content))
        .map(|index| {
            let (relation, strength, _) = CUE_GROUPS[index];
            Cue { relation, strength }
        })
        .collect();
    let following = FOLLOWING.captures_iter(content).any(|caps| {
        let after = caps.get(0).map_or("", |m| &content[m.end()..]);
        caps.get(1).is_none()
            && !after.starts_with(':')
            && !caps.get(0).is_some_and(|m| m.as_str().ends_with(':'))
    });
    if following {
        found.push(Cue {
            relation: RelationType::Triggered,
            strength: FOLLOWING_STRENGTH,
        });
    }
    let conjunction = phrase_matches(&CONJUNCTIONS, content).any(|cue| {
        let after = &content[cue.end()..];
        let after = &after[..floor_char_boundary(after, 200)];
        if cue.as_str().eq_ignore_ascii_case("since") {
            since_is_causal(after)
        } else {
            car_is_causal(after)
        }
    });
    if conjunction {
        found.push(Cue {
            relation: RelationType::Because,
            strength: WEAK_CONJUNCTION_STRENGTH,
        });
    }
    strongest_per_relation(&found)
}

/// The strongest cue of each relation among `cues` (strengths above 0, capped at 1),
/// strongest first, ties in [`RelationType`] order.
fn strongest_per_relation(cues: &[Cue]) -> Vec<Cue> {
    let mut best: Vec<Cue> = Vec::new();
    for cue in cues.iter().filter(|c| c.strength > 0.0) {
        let strength = cue.strength.min(1.0);
        match best.iter_mut().find(|c| c.relation == cue.relation) {
            Some(known) => known.strength = known.strength.max(strength),
            None => best.push(Cue {
                relation: cue.relation,
                strength,
            }),
        }
    }
    best.sort_by(|a, b| {
        b.strength
            .total_cmp(&a.strength)
            .then(a.relation.cmp(&b.relation))
    });
    best
}

/// Effective similarity of a candidate: cosine plus the entity bonus, capped at 1 (−∞ for a
/// similarity that is not finite, so that it never passes the threshold).
fn effective_similarity(candidate: &CausalCandidate) -> f32 {
    if !candidate.similarity.is_finite() {
        return f32::NEG_INFINITY;
    }
    let bonus = (ENTITY_BONUS * candidate.shared_entities as f32).min(MAX_ENTITY_BONUS);
    (candidate.similarity + bonus).min(1.0)
}

/// Links a new memory with `cues` to `candidates`. Candidates below
/// [`CausalParams::min_similarity`] (effective similarity, NaN included) are never linked.
/// Cues are served strongest first; each takes the most similar candidate not linked yet
/// (ties: the newer, then the smaller id), so one target gets one relation, the strongest
/// cue's. A second round gives each cue the further candidates within [`TIE_MARGIN`] of its
/// first one (an update superseding two near-identical older facts). At most
/// [`CausalParams::max_links`] links; confidence = `sqrt(strength × effective similarity)`.
/// Deterministic for the same inputs.
pub fn link(
    cues: &[Cue],
    candidates: &[CausalCandidate],
    params: &CausalParams,
) -> Vec<CausalLink> {
    let relations = strongest_per_relation(cues);
    let mut eligible: Vec<(f32, &CausalCandidate)> = candidates
        .iter()
        .map(|c| (effective_similarity(c), c))
        .filter(|(similarity, _)| *similarity >= params.min_similarity)
        .collect();
    eligible.sort_by(|(sa, a), (sb, b)| {
        sb.total_cmp(sa)
            .then(a.age_days.total_cmp(&b.age_days))
            .then(a.id.cmp(&b.id))
    });

    let mut used = vec![false; eligible.len()];
    let mut links = Vec::new();
    let mut firsts: Vec<(Cue, f32)> = Vec::new();
    let take = |cue: Cue, floor: f32, used: &mut [bool], links: &mut Vec<CausalLink>| {
        let index = (0..eligible.len()).find(|&i| !used[i] && eligible[i].0 >= floor)?;
        used[index] = true;
        let (similarity, candidate) = eligible[index];
        links.push(CausalLink {
            target: candidate.id,
            relation: cue.relation,
            confidence: (cue.strength * similarity).max(0.0).sqrt().min(1.0),
        });
        Some(similarity)
    };
    for &cue in &relations {
        if links.len() >= params.max_links {
            return links;
        }
        if let Some(similarity) = take(cue, f32::NEG_INFINITY, &mut used, &mut links) {
            firsts.push((cue, similarity));
        }
    }
    for (cue, best) in firsts {
        while links.len() < params.max_links
            && take(cue, best - TIE_MARGIN, &mut used, &mut links).is_some()
        {}
    }
    links
}

#[cfg(test)]
mod tests {
    use super::*;
    use uuid::Uuid;
    use RelationType::*;

    fn relations(content: &str) -> Vec<RelationType> {
        detect_cues(content)
            .into_iter()
            .map(|c| c.relation)
            .collect()
    }

    fn candidate(n: u128, similarity: f32, age_days: f64) -> CausalCandidate {
        CausalCandidate {
            id: Uuid::from_u128(n),
            similarity,
            age_days,
            shared_entities: 0,
        }
    }

    #[test]
    fn english_cues() {
        assert_eq!(
            relations("Following the PostgreSQL decision, we chose pgAdmin for monitoring."),
            vec![Triggered]
        );
        assert_eq!(
            relations("Update: the API rate limit is now 500 requests per minute."),
            vec![Updates]
        );
        assert_eq!(
            relations("We reverted the PostgreSQL migration because of data loss."),
            vec![Contradicts, Because]
        );
        assert_eq!(
            relations("This fix resolves the timeout issue because the pool was too small."),
            vec![Resolves, Because]
        );
        assert_eq!(relations("This supersedes the old rule"), vec![Updates]);
        assert_eq!(
            relations("It conflicts with the earlier plan"),
            vec![Contradicts]
        );
    }

    #[test]
    fn weak_and_excluded_cues() {
        assert!(
            relations("However, the team was happy.").is_empty(),
            "however is not a cue"
        );
        assert!(relations("Do the following: restart, then check.").is_empty());
        assert!(relations("Run the following steps").is_empty());
        assert!(relations("We have used Go since 2020.").is_empty());
        assert_eq!(relations("We keep Go since it is fast."), vec![Because]);
        assert!(relations("The car is red.").is_empty());
        assert!(relations("Afterwards we left; the aftermath was fine").is_empty());
        let after = detect_cues("We left after the meeting.");
        assert_eq!(
            after,
            vec![Cue {
                relation: Triggered,
                strength: 0.35
            }]
        );
    }

    #[test]
    fn questions_and_bare_nows_update_nothing() {
        // Chat turns that ask, or say "now" without a new value, supersede nothing.
        assert!(relations("Those kids are adorable, any updates on them?").is_empty());
        assert!(relations("Is the rate limit now 500?").is_empty());
        assert!(relations("It's good to appreciate where you are now. Tell me more!").is_empty());
        assert!(relations("Was the old plan wrong?").is_empty());
        assert!(relations("Anything else around here that needs to be fixed?").is_empty());
        // Statements still do, also after a question in the same memory.
        assert_eq!(
            relations("Any news? The rate limit is now 500 per minute."),
            vec![Updates]
        );
        assert_eq!(
            relations("The default port is now \"8080\"."),
            vec![Updates]
        );
        assert_eq!(relations("Prices now are 12 euros."), vec![Updates]);
        assert_eq!(relations("We updated the runbook."), vec![Updates]);
        assert_eq!(relations("That estimate was wrong."), vec![Contradicts]);
    }

    #[test]
    fn strengths_order_and_range() {
        let cues = detect_cues(
            "Update: after the outage, this supersedes the plan because of cost; it fixes #12.",
        );
        assert!(cues.iter().all(|c| c.strength > 0.0 && c.strength <= 1.0));
        assert!(cues.windows(2).all(|w| w[0].strength >= w[1].strength));
        assert_eq!(
            cues[0],
            Cue {
                relation: Updates,
                strength: 0.95
            }
        );
        let explicit = detect_cues("because of the outage")[0].strength;
        let weak = detect_cues("after the outage")[0].strength;
        assert!(explicit > weak);
    }

    #[test]
    fn french_cues() {
        assert_eq!(
            relations("Suite à la décision PostgreSQL, on a choisi pgAdmin."),
            vec![Triggered]
        );
        assert_eq!(
            relations("Mise à jour : la limite est désormais de 500."),
            vec![Updates]
        );
        assert_eq!(
            relations("Cela contredit la note précédente."),
            vec![Contradicts]
        );
        assert_eq!(
            relations("Ce correctif résout le problème de délai."),
            vec![Resolves]
        );
        assert_eq!(
            relations("On garde Redis car il est rapide."),
            vec![Because]
        );
        assert_eq!(
            relations("Le service a planté en raison d'une fuite mémoire."),
            vec![Because]
        );
        assert!(relations("La règle du jeu est simple.").is_empty());
    }

    #[test]
    fn links_need_a_cue_and_similarity() {
        let params = CausalParams::default();
        let decision = candidate(1, 0.62, 2.0);
        let unrelated = candidate(2, 0.18, 1.0);
        let cues =
            detect_cues("Following the PostgreSQL decision, we chose pgAdmin for monitoring.");
        let links = link(&cues, &[unrelated, decision], &params);
        assert_eq!(links.len(), 1);
        assert_eq!(
            (links[0].target, links[0].relation),
            (decision.id, Triggered)
        );
        assert!((0.0..=1.0).contains(&links[0].confidence));
        assert!(
            link(&[], &[decision], &params).is_empty(),
            "no cue, no link"
        );
        assert!(
            link(&cues, &[unrelated], &params).is_empty(),
            "an unrelated memory is never linked"
        );
    }

    #[test]
    fn update_links_to_the_old_value() {
        let old_limit = candidate(10, 0.71, 5.0);
        let other = candidate(11, 0.22, 1.0);
        let cues = detect_cues("Update: the API rate limit is now 500 requests per minute.");
        let links = link(&cues, &[other, old_limit], &CausalParams::default());
        assert_eq!(
            links,
            vec![CausalLink {
                target: old_limit.id,
                relation: Updates,
                confidence: (0.95f32 * 0.71).sqrt()
            }]
        );
    }

    #[test]
    fn revert_links_to_the_decision_once() {
        let decision = candidate(1, 0.66, 10.0);
        let cues = detect_cues("We reverted the PostgreSQL migration because of data loss.");
        let links = link(&cues, &[decision], &CausalParams::default());
        assert_eq!(links.len(), 1, "one target, one relation: {links:?}");
        assert_eq!(links[0].relation, Contradicts);
        let incident = candidate(2, 0.55, 1.0);
        let links = link(&cues, &[decision, incident], &CausalParams::default());
        let pairs: Vec<_> = links.iter().map(|l| (l.target, l.relation)).collect();
        assert_eq!(
            pairs,
            vec![(decision.id, Contradicts), (incident.id, Because)]
        );
    }

    #[test]
    fn ties_prefer_newer_then_margin_and_cap() {
        let params = CausalParams {
            min_similarity: 0.45,
            max_links: 3,
        };
        let older = candidate(1, 0.6, 9.0);
        let newer = candidate(2, 0.6, 1.0);
        let cue = [Cue {
            relation: Updates,
            strength: 0.9,
        }];
        let links = link(&cue, &[older, newer], &params);
        assert_eq!(
            links.iter().map(|l| l.target).collect::<Vec<_>>(),
            vec![newer.id, older.id]
        );
        let far = candidate(3, 0.5, 1.0);
        assert_eq!(
            link(&cue, &[newer, far], &params).len(),
            1,
            "outside the tie margin"
        );
        let many: Vec<_> = (0..10).map(|i| candidate(i, 0.8, i as f64)).collect();
        assert_eq!(link(&cue, &many, &params).len(), 3);
        assert!(link(
            &cue,
            &many,
            &CausalParams {
                max_links: 0,
                ..params
            }
        )
        .is_empty());
    }

    #[test]
    fn entity_overlap_raises_similarity_a_little() {
        let params = CausalParams::default();
        let cue = [Cue {
            relation: Because,
            strength: 0.75,
        }];
        let mut near = candidate(1, 0.40, 1.0);
        assert!(link(&cue, &[near], &params).is_empty());
        near.shared_entities = 2;
        assert_eq!(link(&cue, &[near], &params).len(), 1);
        near.shared_entities = 50;
        near.similarity = 0.30;
        assert!(
            link(&cue, &[near], &params).is_empty(),
            "the bonus is capped"
        );
        let nan = CausalCandidate {
            similarity: f32::NAN,
            ..near
        };
        assert!(link(&cue, &[nan], &params).is_empty());
    }
}
