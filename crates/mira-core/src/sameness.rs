//! Whether two memories speak of the same thing, whatever their wording: recall shows the
//! newer of two such memories first and marks the older one as an earlier statement; a store
//! offers the earlier memories a new one may update.
//!
//! Two statements are about the same thing when their vectors are close (cosine at least
//! [`MIN_SIMILARITY`]), nothing says they are about two people (two speakers, a name in one and
//! "that name's sister" in the other) or that the later one adds to the earlier rather than
//! replaces it ("also", "too", "as well"), and one of these holds:
//!
//! - **another value in the same frame**: word for word the same sentence but for the values
//!   (names, places, products, numbers, dates: what [`crate::entities`] finds, numbers and
//!   capitalised words inside a sentence): one changed value anywhere ("Priya owns the checkout
//!   service." → "Omar owns …"), or several after an unchanged subject ("My plan is 15 euros
//!   with 20 GB." → "… 12 euros with 30 GB."); two changed values from the first word on are
//!   two subjects ("Alice lives in Lyon." and "Bob lives in Porto.");
//! - **another predicate after an unchanged subject**: one changed stretch of words that does
//!   not start the sentence, with vectors at least [`CLOSE_SIMILARITY`] apart ("I'm learning
//!   the violin." → "I'm learning the cello."); a changed subject with the same predicate ("The
//!   server room is on the ground floor." and "The mail room …") is another thing;
//! - **an announced change**: the later one says something changed (a closed class of words:
//!   moved, switched, now, no longer, replaced, new, since, …) and the two share a term of
//!   their subject (two when they name different people: "Alice lives in Lyon." and "Bob now
//!   lives in Porto." share only a verb); at recall, a term more than [`DISTINCTIVE_HOLDERS`]
//!   of the compared memories contain is not one of their subject ([`Question::common`]: in a chat
//!   every turn says "new", "love" or the friend's name);
//! - **the same answer**: at recall, when both hold the question's distinctive terms and the
//!   newer is at least as close to the question as the older: two answers about one subject,
//!   the newer first.
//!
//! The first two look at short statements (at most [`MAX_FRAME_WORDS`] words); long texts
//! compare by the announced change alone.

use crate::entities::extract_entities;
use crate::lexical;
use crate::memory::{Entity, EntityKind};
use crate::rank::speaker;
use crate::text::{is_english_stop_word, phrase_regex};
use chrono::{DateTime, Utc};
use regex::Regex;
use std::collections::{HashMap, HashSet};
use std::hash::{Hash, Hasher};
use std::sync::{LazyLock, OnceLock};

/// Below this cosine two statements are never the same thing.
pub const MIN_SIMILARITY: f32 = 0.5;
/// Cosine from which one changed predicate after an unchanged subject is the same thing.
pub const CLOSE_SIMILARITY: f32 = 0.7;
/// Longest statement, in words, compared word for word.
pub const MAX_FRAME_WORDS: usize = 60;

/// Words that announce that something changed.
#[rustfmt::skip]
static CHANGE: LazyLock<Regex> = LazyLock::new(|| {
    phrase_regex(&[
        "now", "no longer", "anymore", "any more", "not anymore", "moved", "moving", "switched",
        "switching", "changed", "replaced", "instead", "new", "update", "updated", "upgraded",
        "since", "from now on", "starting", "left", "gone", "dropped", "stopped", "quit",
        "gave up", "became", "promoted", "retired", "took over", "handed", "transferred",
        "migrated", "rescheduled", "postponed", "pushed back", "slipped", "increased", "raised",
        "lowered", "reduced", "went up", "went down", "these days", "finally", "sold", "closed",
        "ended", "broke up", "relocated", "rewrote", "bumped", "passed away", "stepped down",
        "deleted", "cut", "used to", "previously", "not any longer", "any longer",
    ])
});

/// Words that make a statement an addition to what was said before.
static ADDITION: LazyLock<Regex> = LazyLock::new(|| {
    phrase_regex(&[
        "also",
        "too",
        "additionally",
        "as well",
        "in addition",
        "besides",
    ])
});

/// A memory as compared: its text, its unit vector and when it happened. What is derived from
/// the text is computed on first use.
#[derive(Debug)]
pub struct Statement<'a> {
    /// The text.
    pub content: &'a str,
    /// Its embedding (unit length).
    pub vector: &'a [f32],
    /// When it happened.
    pub at: DateTime<Utc>,
    /// Who says it (`Name:` prefix), in lower case.
    speaker: Option<String>,
    /// The text without its speaker prefix.
    body: &'a str,
    /// Its terms (stems of the words that are not stop words), the speaker left out: all a
    /// recall needs of most statements ([`Question::new`]), so apart from [`Text`].
    terms: OnceLock<HashSet<String>>,
    /// Its entities as the store extracted them, when known (else read from the text).
    entities: Option<&'a [Entity]>,
    text: OnceLock<Text>,
    words: OnceLock<Vec<Word>>,
}

/// One word of a statement.
#[derive(Debug, Clone)]
struct Word {
    /// Lower case.
    lower: String,
    /// A hash of `lower`, to tell most unequal words apart without comparing them.
    hash: u64,
    /// A value: a number, a name, a date (see the module docs).
    value: bool,
    /// A stop word.
    stop: bool,
}

impl PartialEq for Word {
    fn eq(&self, other: &Self) -> bool {
        self.hash == other.hash && self.lower == other.lower
    }
}

/// What a comparison needs from a text, beyond its terms.
#[derive(Debug)]
struct Text {
    /// The terms of the people it names (they are not what it is about).
    people: HashSet<String>,
    /// The lower-case words of its entities.
    entity_words: HashSet<String>,
    /// The names it uses in the possessive and what they possess ("Raj's sister": `raj`,
    /// `sister`), in lower case.
    possessives: Vec<(String, String)>,
    /// Its first word, in lower case.
    first: Option<String>,
    /// Its words, in lower case (for [`someone_else`]).
    lower_words: HashSet<String>,
    /// Whether it says something changed.
    change: bool,
    /// Whether it adds to something rather than replaces it.
    addition: bool,
    /// Number of words.
    len: usize,
}

/// The words of `text` with whether each is a value; `entity_words` are the lower-case words
/// of its entities.
fn words(text: &str, entity_words: &HashSet<String>) -> Vec<Word> {
    let mut out = Vec::new();
    let mut sentence_start = true;
    let mut word = String::new();
    let mut flush = |word: &mut String, sentence_start: &mut bool| {
        if word.is_empty() {
            return;
        }
        let lower = word.to_lowercase();
        let capitalised = word.chars().next().is_some_and(char::is_uppercase) && word != "I";
        let value = word.chars().any(|c| c.is_ascii_digit())
            || entity_words.contains(&lower)
            || (capitalised && !*sentence_start);
        let hash = {
            let mut h = std::hash::DefaultHasher::new();
            lower.hash(&mut h);
            h.finish()
        };
        let stop = is_english_stop_word(&lower);
        out.push(Word {
            lower,
            hash,
            value,
            stop,
        });
        word.clear();
        *sentence_start = false;
    };
    for c in text.chars() {
        if c.is_alphanumeric() || c == '_' {
            word.push(c);
            continue;
        }
        flush(&mut word, &mut sentence_start);
        if matches!(c, '.' | '!' | '?' | ';' | ':' | '\n') {
            sentence_start = true;
        }
    }
    flush(&mut word, &mut sentence_start);
    out
}

impl<'a> Statement<'a> {
    /// A statement of `content` with its embedding, made at `at`.
    pub fn new(content: &'a str, vector: &'a [f32], at: DateTime<Utc>) -> Self {
        let speaker = speaker(content);
        let body = match speaker {
            Some(_) => content.split_once(':').map_or(content, |(_, body)| body),
            None => content,
        };
        Statement {
            content,
            vector,
            at,
            speaker,
            body,
            terms: OnceLock::new(),
            entities: None,
            text: OnceLock::new(),
            words: OnceLock::new(),
        }
    }

    /// The same statement with the entities the store extracted from `content` (its
    /// fingerprint's), instead of reading them again; the speaker's name is not one of them.
    pub fn with_entities(mut self, entities: &'a [Entity]) -> Self {
        self.entities = Some(entities);
        self
    }

    fn terms(&self) -> &HashSet<String> {
        self.terms
            .get_or_init(|| lexical::terms(self.body).into_iter().collect())
    }

    fn text(&self) -> &Text {
        self.text.get_or_init(|| {
            let body = self.body;
            let lower = crate::text::words(body);
            let read;
            let entities: Vec<&Entity> = match self.entities {
                Some(known) => known
                    .iter()
                    .filter(|e| self.speaker.as_deref() != Some(e.text.to_lowercase().as_str()))
                    .collect(),
                None => {
                    read = extract_entities(body, 2);
                    read.iter().collect()
                }
            };
            let people = entities
                .iter()
                .filter(|e| e.kind == EntityKind::Person)
                .flat_map(|e| lexical::terms(&e.text))
                .collect();
            Text {
                entity_words: entities
                    .iter()
                    .flat_map(|e| crate::text::words(&e.text))
                    .collect(),
                people,
                possessives: POSSESSIVE
                    .captures_iter(body)
                    .filter_map(|c| Some((c.get(1)?, c.get(2)?)))
                    .map(|(who, what)| (who.as_str().to_lowercase(), what.as_str().to_lowercase()))
                    .collect(),
                first: lower.first().cloned(),
                len: lower.len(),
                lower_words: lower.into_iter().collect(),
                change: CHANGE.is_match(body),
                addition: ADDITION.is_match(body),
            }
        })
    }

    /// Its words with whether each is a value.
    fn words(&self) -> &[Word] {
        self.words
            .get_or_init(|| words(self.body, &self.text().entity_words))
    }
}

/// A capitalised name in the possessive followed by a word ("Raj's sister").
static POSSESSIVE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\b(\p{Lu}[\p{L}-]+)['’]s\s+(\p{L}+)").expect("literal regex"));

/// The question a recall answers, as the comparison uses it.
#[derive(Debug, Clone, Default)]
pub struct Question<'a> {
    /// Its vector.
    pub vector: &'a [f32],
    /// Its distinctive terms: those at most [`DISTINCTIVE_HOLDERS`] of the compared memories
    /// contain, what the question is specifically about among what recall shows.
    pub distinctive: HashSet<String>,
    /// The terms more than [`DISTINCTIVE_HOLDERS`] of the compared memories contain: words a
    /// whole block shares (the people of a chat, its topic, its small talk) say nothing of what
    /// two of them have in common.
    pub common: HashSet<String>,
}

/// Most statements that may hold a distinctive term of the question.
pub const DISTINCTIVE_HOLDERS: usize = 3;

impl<'a> Question<'a> {
    /// The question `text` with its `vector`, among the compared `statements` (one count of
    /// holders per term gives both its distinctive terms and the common ones).
    pub fn new(text: &str, vector: &'a [f32], statements: &[Statement<'_>]) -> Self {
        let mut holders: HashMap<&str, usize> = HashMap::new();
        for s in statements {
            for t in s.terms() {
                *holders.entry(t).or_default() += 1;
            }
        }
        let distinctive = lexical::query_terms(text)
            .into_iter()
            .filter(|t| (1..=DISTINCTIVE_HOLDERS).contains(holders.get(t.as_str()).unwrap_or(&0)))
            .collect();
        let common = holders
            .into_iter()
            .filter(|&(_, n)| n > DISTINCTIVE_HOLDERS)
            .map(|(t, _)| t.to_owned())
            .collect();
        Question {
            vector,
            distinctive,
            common,
        }
    }
}

/// Cosine of two unit vectors (0 when either is missing or their lengths differ).
pub fn cosine(a: &[f32], b: &[f32]) -> f32 {
    if a.len() != b.len() || a.is_empty() {
        return 0.0;
    }
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// One stretch where two word sequences differ: `[a0, a1)` of the first, `[b0, b1)` of the
/// second.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Hunk {
    a0: usize,
    a1: usize,
    b0: usize,
    b1: usize,
}

/// The stretches where `a` and `b` differ, from a longest common subsequence of their words.
fn hunks(a: &[Word], b: &[Word]) -> Vec<Hunk> {
    let (n, m) = (a.len(), b.len());
    // at(i, j): longest common subsequence of a[i..] and b[j..].
    let width = m + 1;
    let mut lcs = vec![0u16; (n + 1) * width];
    let at = |i: usize, j: usize| i * width + j;
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            lcs[at(i, j)] = if a[i] == b[j] {
                lcs[at(i + 1, j + 1)] + 1
            } else {
                lcs[at(i + 1, j)].max(lcs[at(i, j + 1)])
            };
        }
    }
    let mut out = Vec::new();
    let (mut i, mut j) = (0, 0);
    let mut open: Option<(usize, usize)> = None;
    while i < n || j < m {
        if i < n && j < m && a[i] == b[j] {
            if let Some((a0, b0)) = open.take() {
                out.push(Hunk {
                    a0,
                    a1: i,
                    b0,
                    b1: j,
                });
            }
            i += 1;
            j += 1;
            continue;
        }
        open.get_or_insert((i, j));
        if j >= m || (i < n && lcs[at(i + 1, j)] >= lcs[at(i, j + 1)]) {
            i += 1;
        } else {
            j += 1;
        }
    }
    if let Some((a0, b0)) = open {
        out.push(Hunk {
            a0,
            a1: n,
            b0,
            b1: m,
        });
    }
    // A change of function words only ("in the basement" → "on the ground floor": "in" → "on")
    // changes nothing of what is said.
    out.retain(|h| !a[h.a0..h.a1].iter().chain(&b[h.b0..h.b1]).all(|w| w.stop));
    out
}

/// How the words of two statements line up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Frame {
    /// Only values changed: how many stretches, and whether the first starts the sentence
    /// (only stop words before it).
    Values { stretches: usize, at_start: bool },
    /// One stretch changed, not only values, and words added or left out, after the start of
    /// the sentence.
    Predicate,
    /// Anything else (or too long to say).
    Other,
}

/// Whether [`frame`] may find `a` and `b` in one frame, told from their words alone: half the
/// shorter kept at most (its stop words and the other words both have, with repetition) and a
/// word of substance among them; unless `close` (where one changed predicate counts), every
/// word of substance only one of them has is a value. Most pairs fail and need no alignment.
fn may_share_frame(a: &[Word], b: &[Word], close: bool) -> bool {
    let substance = |w: &[Word]| {
        let mut h: Vec<u64> = w.iter().filter(|w| !w.stop).map(|w| w.hash).collect();
        h.sort_unstable();
        h
    };
    let (x, y) = (substance(a), substance(b));
    let (mut i, mut j, mut common) = (0, 0, 0);
    while i < x.len() && j < y.len() {
        match x[i].cmp(&y[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                common += 1;
                i += 1;
                j += 1;
            }
        }
    }
    let most_kept = common + a.iter().filter(|w| w.stop).count();
    let only_values = |w: &[Word], other: &[u64]| {
        w.iter()
            .filter(|w| !w.stop && !w.value)
            .all(|w| other.binary_search(&w.hash).is_ok())
    };
    common > 0
        && 2 * most_kept >= a.len().min(b.len())
        && (close || (only_values(a, &y) && only_values(b, &x)))
}

fn frame(a: &[Word], b: &[Word]) -> Frame {
    if a.len() > MAX_FRAME_WORDS || b.len() > MAX_FRAME_WORDS {
        return Frame::Other;
    }
    let hs = hunks(a, b);
    // The unchanged words must be at least half of the shorter statement and say something
    // (not only "I", "is", "the").
    let changed = |i: usize, side: &[Hunk], first: bool| {
        side.iter().any(|h| {
            if first {
                (h.a0..h.a1).contains(&i)
            } else {
                (h.b0..h.b1).contains(&i)
            }
        })
    };
    let kept: Vec<&Word> = (0..a.len())
        .filter(|&i| !changed(i, &hs, true))
        .map(|i| &a[i])
        .collect();
    if hs.is_empty() || 2 * kept.len() < a.len().min(b.len()) || kept.iter().all(|w| w.stop) {
        return Frame::Other;
    }
    // The first change starts the sentence when only stop words come before it ("The Pro plan"
    // and "The Team plan").
    let at_start = a[..hs[0].a0].iter().all(|w| w.stop);
    let only_values = hs.iter().all(|h| {
        a[h.a0..h.a1].iter().chain(&b[h.b0..h.b1]).all(|w| w.value) && h.a1 > h.a0 && h.b1 > h.b0
    });
    let substitutions = hs.iter().filter(|h| h.a1 > h.a0 && h.b1 > h.b0).count();
    if only_values {
        Frame::Values {
            stretches: hs.len(),
            at_start,
        }
    } else if substitutions <= 1 && !at_start {
        Frame::Predicate
    } else {
        Frame::Other
    }
}

/// Whether `b` speaks of someone or something of the subject of `a` that `a` does not mention
/// ("Raj's sister" in `b`, "Raj" starting `a`; not "Tariq's laptop" beside "Tariq updated his
/// laptop").
fn someone_else(a: &Text, b: &Text) -> bool {
    a.first.as_ref().is_some_and(|first| {
        b.possessives
            .iter()
            .any(|(who, what)| who == first && !a.lower_words.contains(what))
    })
}

/// The terms both share that are neither people's names (a name is whom a text is addressed to
/// or about, not what it says of them) nor `common` to what they are compared among.
fn shared_terms(a: &Statement<'_>, b: &Statement<'_>, common: &HashSet<String>) -> usize {
    let (a_people, b_people) = (&a.text().people, &b.text().people);
    a.terms()
        .intersection(b.terms())
        .filter(|t| !a_people.contains(*t) && !b_people.contains(*t) && !common.contains(*t))
        .count()
}

/// Share of answer to the question the newer statement may lose and still answer it alike.
pub const ANSWER_MARGIN: f32 = 0.03;

/// Whether `older` and `newer` speak of the same thing (see the module docs); with `question`,
/// also when both are about its distinctive terms and answer it alike.
pub fn same_thing(
    older: &Statement<'_>,
    newer: &Statement<'_>,
    question: Option<&Question<'_>>,
) -> bool {
    let similarity = cosine(older.vector, newer.vector);
    if similarity < MIN_SIMILARITY || older.speaker != newer.speaker {
        return false;
    }
    let (o, n) = (older.text(), newer.text());
    if n.addition || someone_else(o, n) || someone_else(n, o) {
        return false;
    }
    if o.len.max(n.len) <= MAX_FRAME_WORDS
        && may_share_frame(older.words(), newer.words(), similarity >= CLOSE_SIMILARITY)
    {
        match frame(older.words(), newer.words()) {
            Frame::Values { stretches: 1, .. } => return true,
            Frame::Values {
                stretches,
                at_start: false,
            } if stretches <= 3 => return true,
            Frame::Predicate if similarity >= CLOSE_SIMILARITY => return true,
            _ => {}
        }
    }
    let different_people =
        !o.people.is_empty() && !n.people.is_empty() && o.people.is_disjoint(&n.people);
    let none = HashSet::new();
    let common = question.map_or(&none, |q| &q.common);
    if n.change && shared_terms(older, newer, common) >= if different_people { 2 } else { 1 } {
        return true;
    }
    question.is_some_and(|q| {
        let asked: Vec<&String> = q
            .distinctive
            .iter()
            .filter(|t| older.terms().contains(*t))
            .collect();
        !asked.is_empty()
            && asked.iter().all(|t| newer.terms().contains(*t))
            && cosine(q.vector, newer.vector) >= cosine(q.vector, older.vector) - ANSWER_MARGIN
    })
}

/// What to offer as memories one may replace (or be replaced by) another: of `close` (each
/// with its cosine to that other), those at least [`MIN_SIMILARITY`] close, the ones `same`
/// holds for (the same thing, see [`same_thing`]) first, then the others (a change in other
/// words: "I'm vegetarian." and "I went fully vegan in January." share no word); most similar
/// first within each, at most `max`. `same` reads texts, so it is asked only until `max` hold.
pub fn same_first<T>(close: Vec<(T, f32)>, max: usize, mut same: impl FnMut(&T) -> bool) -> Vec<T> {
    let mut close: Vec<(T, f32)> = close
        .into_iter()
        .filter(|(_, similarity)| *similarity >= MIN_SIMILARITY)
        .collect();
    close.sort_by(|a, b| b.1.total_cmp(&a.1));
    let (mut first, mut then) = (Vec::new(), Vec::new());
    for (t, _) in close {
        if first.len() == max {
            break;
        }
        if same(&t) {
            first.push(t);
        } else {
            then.push(t);
        }
    }
    first.into_iter().chain(then).take(max).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words_of(s: &str) -> Vec<Word> {
        words(s, &HashSet::new())
    }

    #[test]
    fn same_first_puts_the_same_thing_first_and_drops_the_distant() {
        let close = vec![
            ("close", 0.9),
            ("same", 0.6),
            ("far", 0.4),
            ("closer", 0.95),
        ];
        assert_eq!(
            same_first(close.clone(), 3, |t| *t == "same"),
            ["same", "closer", "close"]
        );
        assert_eq!(same_first(close.clone(), 2, |_| false), ["closer", "close"]);
        let mut asked = 0;
        let all = same_first(close, 1, |_| {
            asked += 1;
            true
        });
        assert_eq!((all, asked), (vec!["closer"], 1));
    }

    #[test]
    fn hunks_are_the_changed_stretches() {
        let a = words_of("The Pro plan costs 25 dollars per seat.");
        let b = words_of("The Team plan costs 40 dollars per seat.");
        assert_eq!(hunks(&a, &b).len(), 2);
        assert!(hunks(&a, &a).is_empty());
        let c = words_of("I paint with watercolours.");
        let d = words_of("I paint with oils.");
        assert_eq!(
            hunks(&c, &d),
            vec![Hunk {
                a0: 3,
                a1: 4,
                b0: 3,
                b1: 4
            }]
        );
    }

    /// The store's entities (read from the whole text, speaker included) give the same answers
    /// as reading the body again: the speaker's name is not taken for a person it speaks of.
    #[test]
    fn known_entities_answer_as_read_ones() {
        let v = [1.0f32, 0.0];
        let at = DateTime::<Utc>::from_timestamp(1_700_000_000, 0).unwrap();
        let later = at + chrono::Duration::days(3);
        let pairs = [
            // Two other people (Melanie, Bob) and one shared word: not the same thing.
            (
                "Caroline: Melanie lives in Lyon.",
                "Caroline: Bob now lives in Porto.",
                false,
            ),
            (
                "Caroline: I live in Lyon.",
                "Caroline: I moved, I live in Porto now.",
                true,
            ),
        ];
        for (a, b, same) in pairs {
            let (ea, eb) = (extract_entities(a, 2), extract_entities(b, 2));
            assert!(ea.iter().any(|e| e.text == "Caroline"), "{ea:?}");
            let read = same_thing(
                &Statement::new(a, &v, at),
                &Statement::new(b, &v, later),
                None,
            );
            let known = same_thing(
                &Statement::new(a, &v, at).with_entities(&ea),
                &Statement::new(b, &v, later).with_entities(&eb),
                None,
            );
            assert_eq!((read, known), (same, same), "{a} / {b}");
        }
    }

    /// An announced change counts a shared term only when few of the compared memories hold
    /// it: a term every turn of a chat holds names no subject of two of them.
    #[test]
    fn a_term_the_whole_block_holds_names_no_subject() {
        static V: [f32; 2] = [1.0, 0.0];
        let v = &V;
        let at = DateTime::<Utc>::from_timestamp(1_700_000_000, 0).unwrap();
        let day = |d: i64| at + chrono::Duration::days(d);
        let older = "Jon: The studio plan is going well.";
        let newer = "Jon: I finally found a new place for the studio.";
        let others = [
            "Jon: The studio floor needs work.",
            "Jon: My students love the studio.",
            "Jon: The studio opens soon.",
        ];
        let block = |holders: &[&'static str]| -> Vec<Statement<'static>> {
            [older, newer]
                .iter()
                .chain(holders)
                .enumerate()
                .map(|(i, t)| Statement::new(t, v, day(i as i64)))
                .collect()
        };
        for (holders, same) in [(&others[..1], true), (&others[..], false)] {
            let statements = block(holders);
            let q = Question::new("", v, &statements);
            assert_eq!(
                same_thing(&statements[0], &statements[1], Some(&q)),
                same,
                "{} other holders of \"studio\"",
                holders.len()
            );
        }
        // At store time (no block) the shared term counts.
        assert!(same_thing(
            &Statement::new(older, v, day(0)),
            &Statement::new(newer, v, day(1)),
            None
        ));
    }

    #[test]
    fn frames() {
        let f = |a: &str, b: &str| frame(&words_of(a), &words_of(b));
        assert_eq!(
            f(
                "Error reports go to Sentry.",
                "Error reports go to Bugsnag."
            ),
            Frame::Values {
                stretches: 1,
                at_start: false
            }
        );
        assert_eq!(
            f("Alice lives in Lyon.", "Bob lives in Porto."),
            Frame::Other,
            "sentence-initial capitals are not values without entities"
        );
        assert_eq!(
            f("I paint with watercolours.", "I paint with oils."),
            Frame::Predicate
        );
        assert_eq!(
            f(
                "The server room is on the ground floor.",
                "The mail room is on the ground floor."
            ),
            Frame::Other
        );
    }
}
