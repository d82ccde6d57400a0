//! T1 fingerprint: the structured facts extracted from a memory's text by rules.
//!
//! [`extract`] fills each field from cue words (English and French, case-insensitive, whole
//! words; a clause ends at a line break, `;`, or `.`/`!`/`?` before a space):
//! - `decision`: the short noun phrase after a decision cue of [`crate::classify`] ("decided
//!   to migrate to X", "will use X", "adopt X", "chose X", "decision: X", "décidé d'utiliser
//!   X"), leading verbs and articles skipped, cut at a preposition or conjunction ("X for v2" →
//!   "X"); in the passive ("X was chosen") the phrase before; not in a question, not a pronoun.
//! - `rejected`: the list after "rejected", "discarded", "excluded", "ruled out", "decided
//!   against", "rather than", "instead of", "rejeté", "écarté", "plutôt que", "au lieu de", and
//!   "over" after a decision or preference cue in the same sentence ("I prefer Go over
//!   Python"); explicit lists split on commas, and, or, et, ou, alternatives ("rather than X
//!   or Y") on and, or, et, ou only; parenthesised remarks dropped; in the passive ("X was
//!   rejected") the phrase before.
//! - `reasons`: the clause after "because (of)", "'cause", "due to", "owing to", "as a result of",
//!   "given that", "since" (as a conjunction), "thanks to", "parce que", "car" (as a
//!   conjunction), "en raison de", "à cause de", "étant donné que", "puisque", "grâce à"; after
//!   "reason:", "rationale:", "justification:", "why:", "root cause:", "cause:", "raison :",
//!   "cause racine :", "motif :" a list of short
//!   noun phrases ("ACID and team expertise") gives one reason each.
//! - `assignee`: the name after "assigned to", "assignee:", "owner:", "owned by", "handled by",
//!   "assigné à", "attribué à", "confié à", "responsable :", "pris en charge par"; or the
//!   capitalised name before "will take care of / implement / handle / fix…", "is
//!   responsible", "va s'occuper", "s'en charge", "s'en occupe".
//! - `approvals`: the names after "approved by", "validated by", "signed off by", "endorsed
//!   by", "accepted by", "approver:", "validé par", "approuvé par", "signé par"; or the
//!   capitalised name before "approved", "validated", "signed off", "a validé".
//! - `deadline`: a date expression after "deadline", "due date", "due" (not "due to"),
//!   "target date", "ETA", "date limite", "échéance"; else after "by", "before", "until", "no
//!   later than", "avant (le)", "d'ici", "au plus tard", "pour le", "jusqu'au"; else "sprint N"
//!   (kept as "Sprint N"). Date expressions: ISO and numeric dates, "April 15(, 2024)", "15
//!   avril (2024)", month names, weekdays, "end of the week/month/quarter/sprint", "fin du
//!   mois", "next week", "in 2 weeks", "dans 3 jours", "tomorrow", "demain", "EOD", "Q3",
//!   "sprint 5". Never a bare number.
//! - `subjects` (1 to 3): the text after "subject:", "topic:", "sujet :", "objet :", the noun
//!   phrase after "about", "regarding", "concerning", "à propos de", "au sujet de" (unless it
//!   holds a pronoun or starts with a number); then the
//!   decision; then phrases around domain words (database, migration, api, auth, deployment,
//!   cache, roadmap, timeout…, not inside URLs or paths); then entities by kind (technologies,
//!   organisations, other names, places, people, versions, ids; no dates, e-mails or URLs)
//!   leaving out rejected options, assignee and approvers; else "Decision", "Fact",
//!   "Preference", "Note" or "Debug" by type. A candidate that a subject contains, or that
//!   contains one, as whole words, is skipped.
//! - `key_facts` (at most 5): the clause around a state verb of [`crate::classify`] (is, are,
//!   runs on, set to, =, est, vaut…) with a data token (number, version, boolean, URL), from
//!   up to 4 words before the verb to the next comma or clause end; and `key = value` /
//!   `key: value` settings with a digit or a boolean value.
//!
//! Only the [`crate::text::extraction_prefix`] (16 KiB) of a memory is read. Every text field
//! is whitespace-collapsed and cut at a word boundary (decision 80 characters, subjects 60,
//! reasons and key facts 120, other items 60; entities 120), and lists are capped (rejected 8,
//! reasons 5, approvals 5, key facts 5, entities [`crate::entities::MAX_ENTITIES`]), so even a
//! 64 KiB text gives a fingerprint of at most a few kilobytes.

use crate::classify::{DATA_TOKEN, DECISION_CUES, PREFERENCE_CUES, STATE_VERB};
use crate::entities::{extract_entities, MONTH_NAMES};
use crate::memory::MemoryType;
use crate::text::{
    car_is_causal, clause_at, extraction_prefix, first_word_lower, floor_char_boundary,
    in_question, is_stop_word, is_word_char, lowercase, phrase_matches, phrase_regex,
    sentence_before, since_is_causal, strip_elision, truncate_words, word_spans, words, WORD_START,
};
use regex::Regex;
use std::collections::HashSet;
use std::sync::LazyLock;

use crate::memory::{Entity, EntityKind, Fingerprint};

/// Longest decision, in characters.
const MAX_DECISION_CHARS: usize = 80;
/// Longest subject, rejected option, assignee, approver or deadline, in characters.
const MAX_ITEM_CHARS: usize = 60;
/// Longest reason or key fact, in characters.
const MAX_SENTENCE_CHARS: usize = 120;
const MAX_REJECTED: usize = 8;
const MAX_REASONS: usize = 5;
const MAX_APPROVALS: usize = 5;
const MAX_KEY_FACTS: usize = 5;
const MAX_SUBJECTS: usize = 3;
/// Longest noun phrase or list item, in words.
const MAX_PHRASE_WORDS: usize = 6;

/// Words that end a noun phrase: prepositions, conjunctions, auxiliaries, time adverbs.
#[rustfmt::skip]
static STOPPERS: LazyLock<HashSet<&str>> = LazyLock::new(|| {
    HashSet::from([
        "for", "to", "as", "in", "on", "at", "with", "without", "because", "since", "instead",
        "rather", "over", "than", "but", "so", "which", "that", "who", "whom", "whose", "when",
        "while", "after", "before", "until", "by", "from", "via", "due", "is", "are", "was", "were",
        "be", "been", "will", "would", "should", "can", "could", "may", "might", "must", "shall",
        "if", "then", "unless", "into", "within", "across", "per", "where", "though", "although",
        "given", "thanks", "except", "not", "today", "tomorrow", "yesterday", "now", "tonight",
        "also", "too", "pour", "à", "au", "aux", "en", "dans", "sur", "avec", "sans", "car",
        "parce", "plutôt", "lieu", "comme", "que", "qu", "qui", "quand", "après", "avant", "par",
        "depuis", "pendant", "afin", "mais", "donc", "est", "sont", "sera", "était", "va", "vont",
        "aujourd'hui", "demain", "hier", "maintenant", "grâce", "selon", "vers", "chez", "contre",
        "puisque", "lorsque", "si", "pas", "aussi",
    ])
});

/// Words that separate the items of a list.
const SEPARATORS: &[&str] = &["and", "or", "nor", "et", "ou", "ni"];

/// Leading articles and determiners dropped from a phrase.
static DETERMINERS: LazyLock<HashSet<&str>> = LazyLock::new(|| {
    HashSet::from([
        "the", "a", "an", "our", "my", "your", "their", "its", "this", "that", "these", "those",
        "some", "le", "la", "les", "un", "une", "des", "du", "notre", "nos", "votre", "vos",
        "leur", "leurs", "mon", "ma", "mes", "ce", "cet", "cette", "ces", "son", "sa", "ses",
    ])
});

/// Words skipped between a decision cue and the chosen option ("decided to migrate to X").
#[rustfmt::skip]
const DECISION_LEAD: &[&str] = &[
    "to", "on", "for", "with", "that", "we", "i", "they", "would", "will", "should", "finally",
    "use", "using", "adopt", "adopting", "migrate", "migrating", "move", "moving", "switch",
    "switching", "go", "going", "keep", "take", "stay", "stick", "implement", "build", "deploy",
    "run", "utiliser", "adopter", "migrer", "passer", "garder", "prendre", "partir", "rester",
    "vers", "à", "sur", "de", "pour", "que", "nous", "on",
];

/// Auxiliaries that put a cue in the passive ("X was chosen"): the phrase is before them.
const PASSIVE_AUX: &[&str] = &[
    "was", "were", "is", "are", "been", "be", "being", "got", "été", "est", "sont", "fut",
];

/// Adverbs allowed between a passive auxiliary and its cue ("was finally chosen").
#[rustfmt::skip]
const PASSIVE_ADVERBS: &[&str] = &[
    "finally", "eventually", "ultimately", "also", "already", "then", "finalement", "aussi", "donc",
];

/// Negations that turn a passive decision into a non-decision ("X was not chosen").
const NEGATIONS: &[&str] = &["not", "never", "pas", "jamais"];

/// Words after "over" that are not an alternative ("over the weekend").
const OVER_SKIP: &[&str] = &[
    "time", "years", "months", "weeks", "days", "hours", "minutes", "weekend", "night", "summer",
    "winter", "past", "period", "course", "phone", "email", "slack", "there", "here", "it", "them",
    "this", "that", "all", "lunch", "coffee",
];

/// Pronouns that make an "about" phrase useless as a subject.
const PRONOUNS: &[&str] = &[
    "it", "this", "that", "them", "us", "me", "him", "her", "you", "cela", "ça", "lui", "eux",
    "what", "how", "why",
];

/// Leading words that are not part of a person's name ("Then Jean will…").
#[rustfmt::skip]
const NOT_NAMES: &[&str] = &[
    "then", "so", "also", "maybe", "hopefully", "today", "tomorrow", "tonight", "yesterday",
    "finally", "next", "now", "here", "there", "update", "note", "ok", "okay", "yes", "sure",
    "alors", "ensuite", "demain", "puis", "donc", "désormais", "bon", "and", "but",
];

/// Words whose neighbourhood makes a subject phrase.
#[rustfmt::skip]
static DOMAIN_WORDS: LazyLock<HashSet<&str>> = LazyLock::new(|| {
    HashSet::from([
        "migration", "migrations", "architecture", "auth", "authentication", "authorization",
        "authentification", "api", "apis", "database", "databases", "db", "frontend", "front-end",
        "backend", "back-end", "deploy", "deployment", "deployments", "déploiement",
        "infrastructure", "infra", "security", "sécurité", "performance", "cache", "caching",
        "monitoring", "logging", "pipeline", "roadmap", "release", "schema", "schéma", "server",
        "serveur", "onboarding", "billing", "facturation", "payment", "payments", "paiement",
        "storage", "stockage", "network", "réseau", "configuration", "testing", "backup",
        "sauvegarde", "latency", "latence", "scaling", "timeout", "timeouts", "handler", "endpoint",
        "endpoints", "queue", "worker", "workers", "login", "cluster", "query", "queries", "pool",
    ])
});

/// Verbs that end a subject phrase around a domain word ("database runs on…").
static PHRASE_VERBS: LazyLock<HashSet<&str>> = LazyLock::new(|| {
    HashSet::from([
        "runs", "uses", "needs", "has", "had", "does", "did", "works", "supports", "requires",
        "contains", "failed", "fails", "crashed", "returns", "takes", "goes", "went", "became",
        "remains", "stays", "seems", "looks", "got", "gets", "decided", "chose",
    ])
});

/// Labels of `key: value` settings that other fields already take.
#[rustfmt::skip]
const SETTING_LABELS: &[&str] = &[
    "http", "https", "ftp", "mailto", "deadline", "due", "reason", "reasons", "rationale",
    "rejected", "decision", "subject", "topic", "owner", "assignee", "sprint", "eta", "update",
    "note", "fix", "re", "sujet", "raison", "décision", "échéance",
];

const WEEKDAY_NAMES: &str = "monday|tuesday|wednesday|thursday|friday|saturday|sunday|lundi|mardi|mercredi|jeudi|vendredi|samedi|dimanche";

#[rustfmt::skip]
static REJECT_CUES: LazyLock<Regex> = LazyLock::new(|| {
    phrase_regex(&[
        "rejected", "rejecting", "discarded", "excluded", "dismissed", "ruled out",
        "decided against", "not chosen", "rather than", "instead of", "rejeté", "rejetée",
        "rejetés", "rejetées", "écarté", "écartée", "écartés", "écartées", "exclu", "exclue",
        "exclus", "exclues", "plutôt que", "plutôt qu'", "au lieu de", "au lieu d'", "au lieu du",
        "au lieu des",
    ])
});

/// Starts of the [`REJECT_CUES`] that introduce an alternative rather than a list.
const ALTERNATIVE_CUES: &[&str] = &["rather", "instead", "plutôt", "au lieu"];

static OVER: LazyLock<Regex> = LazyLock::new(|| phrase_regex(&["over"]));

#[rustfmt::skip]
static REASON_CUES: LazyLock<Regex> = LazyLock::new(|| {
    phrase_regex(&[
        "reason:", "reasons:", "rationale:", "justification:", "why:", "root cause:", "cause:",
        "raison:", "raisons:", "cause racine:",
        "motif:", "motifs:", "because of", "because", "due to", "owing to", "as a result of",
        "given that", "since", "thanks to", "'cause", "parce que", "parce qu'", "car", "en raison de",
        "en raison d'", "en raison du", "en raison des", "à cause de", "à cause d'", "à cause du",
        "à cause des", "étant donné que", "étant donné qu'", "puisque", "puisqu'", "grâce à",
        "grâce au", "grâce aux",
    ])
});

static LIST_SPLIT: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?i)\s*[,;]\s*|\s+(?:and|et|&)\s+").expect("literal regex"));

#[rustfmt::skip]
static ASSIGN_CUES: LazyLock<Regex> = LazyLock::new(|| {
    phrase_regex(&[
        "assigned to", "assign to", "assignee:", "owner:", "owned by", "handled by", "responsible:",
        "assigné à", "assignée à", "attribué à", "attribuée à", "confié à", "confiée à",
        "responsable:", "pris en charge par", "prise en charge par",
    ])
});

/// One or two capitalised words, the name before an assignment or approval verb.
const NAME: &str = r"(\p{Lu}[\p{L}\p{N}'’-]*(?: \p{Lu}[\p{L}\p{N}'’-]*)?)";

static ASSIGN_BEFORE: LazyLock<Regex> = LazyLock::new(|| {
    let verbs = r"(?:will|shall|is going to|is gonna)\s+(?:take care of|handle|implement|own|fix|lead|drive|write|build|deploy|investigate|review|work on|look into|take over|do)|is assigned|is responsible|owns|volunteered|took over|takes care of|(?:va|doit)\s+(?:s['’]occuper|implémenter|gérer|corriger|faire|prendre en charge|développer)|s['’]en\s+(?:charge|occupe)|est\s+responsable|est\s+assignée?|prend\s+en\s+charge|s['’]occupe";
    Regex::new(&format!(
        r"{WORD_START}{NAME}\s+(?i:{verbs})(?:$|[^\p{{L}}\p{{N}}_])"
    ))
    .expect("literal regex")
});

#[rustfmt::skip]
static APPROVAL_CUES: LazyLock<Regex> = LazyLock::new(|| {
    phrase_regex(&[
        "approved by", "validated by", "signed off by", "signed-off by", "sign-off by", "sign-off:",
        "signoff:", "approver:", "approvers:", "approved:", "endorsed by", "accepted by", "ok'd by",
        "okayed by", "validé par", "validée par", "validés par", "validées par", "approuvé par",
        "approuvée par", "approuvés par", "signé par", "signée par", "accepté par", "acceptée par",
        "validation:", "approbation:",
    ])
});

static APPROVAL_BEFORE: LazyLock<Regex> = LazyLock::new(|| {
    let verbs = r"(?:has\s+|have\s+|had\s+|a\s+)?(?:approved|validated|signed off|signed-off|ok'?d|okayed|validé|validée|approuvé|approuvée)";
    Regex::new(&format!(
        r"{WORD_START}{NAME}\s+(?i:{verbs})(?:$|[^\p{{L}}\p{{N}}_])"
    ))
    .expect("literal regex")
});

/// A date or time expression usable as a deadline (never a bare number).
static DATE_EXPR: LazyLock<String> = LazyLock::new(|| {
    let (m, d) = (MONTH_NAMES, WEEKDAY_NAMES);
    format!(
        r"(?:\d{{4}}-\d{{2}}-\d{{2}}|\d{{1,2}}[/.-]\d{{1,2}}[/.-]\d{{2,4}}|(?:{m})\s+\d{{4}}|(?:{m})\.?\s+\d{{1,2}}(?:st|nd|rd|th)?(?:,?\s+\d{{4}})?|\d{{1,2}}(?:st|nd|rd|th|er)?\s+(?:of\s+)?(?:{m})(?:\s+\d{{4}})?|(?:the\s+)?end\s+of\s+(?:the\s+)?(?:day|week|month|quarter|year|sprint|{m})|(?:la\s+)?fin\s+(?:du\s+|de\s+la\s+|de\s+l['’]|d['’])?(?:mois|semaine|trimestre|sprint|année|journée|{m})|(?:next|this)\s+(?:week|month|quarter|year|sprint|{d})|(?:la\s+)?semaine\s+prochaine|(?:le\s+)?mois\s+prochain|(?:le\s+)?sprint\s+prochain|(?:in|within)\s+\d{{1,3}}\s+(?:days?|weeks?|months?)|dans\s+\d{{1,3}}\s+(?:jours?|semaines?|mois)|tomorrow|demain|tonight|ce\s+soir|eod|eow|[qt][1-4](?:\s+\d{{4}})?|sprint\s*#?\s*\d{{1,4}}|{m}|{d})"
    )
});

#[rustfmt::skip]
static DEADLINE_LABEL: LazyLock<Regex> = LazyLock::new(|| {
    phrase_regex(&[
        "deadline", "due date", "due", "target date", "eta", "date limite", "échéance",
    ])
});

static DATE_AT_START: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(&format!(
        r"(?i)^[\s:=-]*(?:(?:is|by|on|before|for|le|au|est|fixée?\s+au|prévue?\s+le)\s+)*({})",
        *DATE_EXPR
    ))
    .expect("literal regex")
});

static BY_DATE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(&format!(
        r"(?i){WORD_START}(?:by|before|until|no\s+later\s+than|avant(?:\s+le)?|d['’]ici(?:\s+(?:le|la|à|au))?|au\s+plus\s+tard(?:\s+le)?|pour\s+le|jusqu['’]au)\s+({})",
        *DATE_EXPR
    ))
    .expect("literal regex")
});

static SPRINT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(&format!(r"(?i){WORD_START}(sprint\s*#?\s*\d{{1,4}})")).expect("literal regex")
});

static SPRINT_NUMBER: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?i)sprint\s*#?\s*(\d+)").expect("literal regex"));

static SUBJECT_LABEL: LazyLock<Regex> =
    LazyLock::new(|| phrase_regex(&["subject:", "topic:", "sujet:", "thème:", "objet:", "re:"]));

#[rustfmt::skip]
static ABOUT: LazyLock<Regex> = LazyLock::new(|| {
    phrase_regex(&[
        "about", "regarding", "concerning", "concernant", "à propos de", "à propos du",
        "à propos des", "à propos d'", "au sujet de", "au sujet du", "au sujet des", "au sujet d'",
    ])
});

static SETTING: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(&format!(
        r"(?i){WORD_START}((\p{{L}}[\p{{L}}\p{{N}}_.-]{{1,40}})\s*[=:]\s*(?:[\p{{L}}\p{{N}}_./:%-]*\d[\p{{L}}\p{{N}}_./:%-]*|true|false|enabled|disabled))"
    ))
    .expect("literal regex")
});

/// Extracts the fingerprint of `content`'s [`extraction_prefix`] (see the module docs);
/// `memory_type` is recorded and chooses the default subject, entities shorter than
/// `min_entity_len` characters are dropped.
pub fn extract(content: &str, memory_type: MemoryType, min_entity_len: usize) -> Fingerprint {
    let content = extraction_prefix(content);
    let entities = extract_entities(content, min_entity_len);
    let decision = extract_decision(content);
    let mut rejected = extract_rejected(content);
    if let Some(decision) = &decision {
        rejected.retain(|r| !r.eq_ignore_ascii_case(decision));
    }
    let assignee = extract_assignee(content, &entities);
    let approvals = extract_approvals(content);
    let people: Vec<&str> = rejected
        .iter()
        .chain(&approvals)
        .chain(&assignee)
        .map(String::as_str)
        .collect();
    let subjects = extract_subjects(
        content,
        memory_type,
        decision.as_deref(),
        &entities,
        &people,
    );
    Fingerprint {
        memory_type: Some(memory_type),
        subjects,
        decision,
        rejected,
        reasons: extract_reasons(content),
        assignee,
        approvals,
        deadline: extract_deadline(content),
        key_facts: extract_key_facts(content, &entities),
        entities,
    }
}

/// `text` without its parenthesised or bracketed remarks ("MySQL (not ACID)" → "MySQL ").
fn without_parentheses(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut depth = 0usize;
    for c in text.chars() {
        match c {
            '(' | '[' => depth += 1,
            ')' | ']' => {
                depth = depth.saturating_sub(1);
                out.push(' ');
            }
            _ if depth == 0 => out.push(c),
            _ => {}
        }
    }
    out
}

/// Whitespace collapsed, surrounding punctuation removed, cut to `max_chars` at a word
/// boundary; `None` when nothing is left.
fn tidy(text: &str, max_chars: usize) -> Option<String> {
    let collapsed = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let trimmed = collapsed
        .trim_start_matches(|c: char| c.is_whitespace() || ":,;.-–—=*•>".contains(c))
        .trim_end_matches(|c: char| c.is_whitespace() || ",;:.!?-–—".contains(c));
    let cut = truncate_words(trimmed, max_chars);
    (!cut.is_empty()).then(|| cut.to_string())
}

/// How [`phrase_items`] splits a clause.
#[derive(Clone, Copy, PartialEq)]
enum Items {
    /// Only the first noun phrase.
    First,
    /// A list split on [`SEPARATORS`] ("X or Y"); a comma ends it.
    Joined,
    /// A list split on commas, slashes and [`SEPARATORS`] ("Rejected: X, Y and Z").
    Listed,
}

/// The noun phrases at the start of `clause`, split as `mode` says. Parenthesised remarks are
/// dropped, leading [`DETERMINERS`] skipped, and the list ends at a [`STOPPERS`] word, at
/// sentence punctuation or after [`MAX_PHRASE_WORDS`] words in one item.
fn phrase_items(clause: &str, mode: Items) -> Vec<String> {
    let cleaned = without_parentheses(clause);
    let mut items = Vec::new();
    let mut current: Vec<&str> = Vec::new();
    let mut prev_end: Option<usize> = None;
    for (start, word) in word_spans(&cleaned) {
        if let Some(prev) = prev_end {
            let gap = &cleaned[prev..start];
            if gap.contains(['.', ':', ';', '!', '?', '\n', '"', '“', '”', '«', '»', '=']) {
                break;
            }
            if gap.contains([',', '/', '&', '+', '|']) {
                if mode != Items::Listed {
                    break;
                }
                push_item(&mut items, &mut current);
            }
        }
        prev_end = Some(start + word.len());
        let lower = lowercase(word);
        if SEPARATORS.contains(&lower.as_ref()) {
            if mode == Items::First {
                break;
            }
            push_item(&mut items, &mut current);
            continue;
        }
        // An elided stopper ("qu'il") ends the phrase too.
        let head = lower.split(['\'', '’']).next().unwrap_or_default();
        if STOPPERS.contains(lower.as_ref()) || STOPPERS.contains(head) {
            break;
        }
        let word = if current.is_empty() {
            strip_elision(word)
        } else {
            word
        };
        if current.is_empty() && DETERMINERS.contains(lowercase(word).as_ref()) {
            continue;
        }
        if current.len() == MAX_PHRASE_WORDS {
            break;
        }
        current.push(word);
    }
    push_item(&mut items, &mut current);
    items
}

fn push_item(items: &mut Vec<String>, current: &mut Vec<&str>) {
    if !current.is_empty() {
        items.push(current.join(" "));
        current.clear();
    }
}

/// The first phrase of `clause` (see [`phrase_items`]).
fn first_phrase(clause: &str) -> Option<String> {
    phrase_items(clause, Items::First).into_iter().next()
}

/// `clause` from its first word that is not in `skip` (at most 6 words skipped, never across
/// punctuation).
fn skip_words<'a>(clause: &'a str, skip: &[&str]) -> &'a str {
    let mut prev_end = 0;
    for (n, (start, word)) in word_spans(clause).enumerate() {
        let lower = strip_elision(word).to_lowercase();
        if n == 6
            || !skip.contains(&lower.as_str())
            || clause[prev_end..start].contains([',', '.', ':', ';'])
        {
            return &clause[start..];
        }
        prev_end = start + word.len();
    }
    ""
}

/// What precedes a cue in the passive voice ("X was (not) chosen").
struct Passive {
    /// The phrase before the auxiliary, when there is one ("X").
    phrase: Option<String>,
    /// Whether a negation stands between the auxiliary and the cue.
    negated: bool,
}

/// The passive context of the cue that starts at `cue_start`, or `None` when no auxiliary
/// precedes the cue.
fn passive(text: &str, cue_start: usize) -> Option<Passive> {
    let window = floor_char_boundary(text, cue_start.saturating_sub(160));
    let before = &text[window..cue_start];
    let words: Vec<(usize, &str)> = word_spans(before).collect();
    let mut i = words.len();
    let mut negated = false;
    let mut saw_aux = false;
    while i > 0 {
        let lower = lowercase(words[i - 1].1);
        if PASSIVE_AUX.contains(&lower.as_ref()) {
            saw_aux = true;
        } else if NEGATIONS.contains(&lower.as_ref()) || lower.ends_with("n't") {
            negated = true;
            saw_aux |= lower.ends_with("n't");
        } else if !PASSIVE_ADVERBS.contains(&lower.as_ref()) {
            break;
        }
        i -= 1;
    }
    if !saw_aux {
        return None;
    }
    let mut first = i;
    while first > 0 && i - first < 4 {
        let (start, word) = words[first - 1];
        let next_start = words.get(first).map_or(before.len(), |w| w.0);
        let lower = lowercase(word);
        if before[start + word.len()..next_start]
            .contains([',', '.', ';', ':', '!', '?', '\n', '(', ')'])
            || is_stop_word(&lower)
            || STOPPERS.contains(lower.as_ref())
            || DETERMINERS.contains(lower.as_ref())
        {
            break;
        }
        first -= 1;
    }
    let phrase = (first < i).then(|| {
        let (start, _) = words[first];
        let (last_start, last) = words[i - 1];
        before[start..last_start + last.len()].to_string()
    });
    Some(Passive { phrase, negated })
}

fn extract_decision(content: &str) -> Option<String> {
    for cue in phrase_matches(&DECISION_CUES, content) {
        let after = clause_at(content, cue.end());
        let head = first_word_lower(after);
        if in_question(content, cue.end())
            || matches!(
                head.as_str(),
                "against" | "not" | "never" | "contre" | "pas"
            )
            || PRONOUNS.contains(&head.as_str())
        {
            continue;
        }
        let phrase = match passive(content, cue.start()) {
            Some(Passive { negated: true, .. }) => continue,
            Some(Passive {
                phrase: Some(phrase),
                ..
            }) => Some(phrase),
            _ => first_phrase(skip_words(after, DECISION_LEAD)),
        };
        if let Some(decision) = phrase.and_then(|p| tidy(&p, MAX_DECISION_CHARS)) {
            return Some(decision);
        }
    }
    None
}

fn push_unique(list: &mut Vec<String>, item: Option<String>, max: usize) {
    if let Some(item) = item {
        if list.len() < max && !list.iter().any(|x| x.to_lowercase() == item.to_lowercase()) {
            list.push(item);
        }
    }
}

fn extract_rejected(content: &str) -> Vec<String> {
    let mut rejected = Vec::new();
    for cue in phrase_matches(&REJECT_CUES, content) {
        // "Rejected: X, Y" lists with commas; "rather than X or Y" stops at a comma.
        let cue_text = lowercase(cue.as_str());
        let mode = if ALTERNATIVE_CUES.iter().any(|alt| cue_text.starts_with(alt)) {
            Items::Joined
        } else {
            Items::Listed
        };
        let items = match passive(content, cue.start()) {
            Some(Passive {
                phrase: Some(phrase),
                ..
            }) => vec![phrase],
            _ => phrase_items(clause_at(content, cue.end()), mode),
        };
        for item in items {
            push_unique(&mut rejected, tidy(&item, MAX_ITEM_CHARS), MAX_REJECTED);
        }
    }
    for cue in phrase_matches(&OVER, content) {
        let sentence = sentence_before(content, cue.start());
        if !DECISION_CUES.is_match(sentence) && !PREFERENCE_CUES.is_match(sentence) {
            continue;
        }
        for item in phrase_items(clause_at(content, cue.end()), Items::Joined) {
            let head = first_word_lower(&item);
            if head.starts_with(|c: char| c.is_ascii_digit()) || OVER_SKIP.contains(&head.as_str())
            {
                break;
            }
            push_unique(&mut rejected, tidy(&item, MAX_ITEM_CHARS), MAX_REJECTED);
        }
    }
    rejected
}

fn extract_reasons(content: &str) -> Vec<String> {
    let mut reasons = Vec::new();
    for cue in phrase_matches(&REASON_CUES, content) {
        let clause = clause_at(content, cue.end());
        let cue_text = cue.as_str().to_lowercase();
        if (cue_text == "since" && !since_is_causal(clause))
            || (cue_text == "car" && !car_is_causal(clause))
        {
            continue;
        }
        let clause = clause.trim_start_matches(|c: char| c == ':' || c.is_whitespace());
        if cue_text.ends_with(':') {
            let parts: Vec<&str> = LIST_SPLIT
                .split(clause)
                .map(str::trim)
                .filter(|p| !p.is_empty())
                .collect();
            if parts.len() > 1 && parts.iter().all(|p| p.split_whitespace().count() <= 4) {
                for part in parts {
                    push_unique(&mut reasons, tidy(part, MAX_SENTENCE_CHARS), MAX_REASONS);
                }
                continue;
            }
        }
        push_unique(&mut reasons, tidy(clause, MAX_SENTENCE_CHARS), MAX_REASONS);
        if reasons.len() == MAX_REASONS {
            break;
        }
    }
    reasons
}

/// `raw` without leading words that are not names ("Then Jean" → "Jean").
fn clean_name(raw: &str) -> Option<String> {
    let words: Vec<&str> = raw.split_whitespace().collect();
    let skip = words
        .iter()
        .take_while(|w| {
            let lower = w.to_lowercase();
            is_stop_word(&lower) || NOT_NAMES.contains(&lower.as_str())
        })
        .count();
    tidy(&words[skip..].join(" "), MAX_ITEM_CHARS)
}

fn extract_assignee(content: &str, entities: &[Entity]) -> Option<String> {
    let after_cue = phrase_matches(&ASSIGN_CUES, content).find_map(|cue| {
        let clause = clause_at(content, cue.end()).trim_start_matches([':', ' ', '@']);
        first_phrase(clause).and_then(|p| tidy(&p, MAX_ITEM_CHARS))
    });
    after_cue.or_else(|| {
        ASSIGN_BEFORE.captures_iter(content).find_map(|caps| {
            let name = clean_name(caps.get(1)?.as_str())?;
            let technology = entities
                .iter()
                .any(|e| e.kind == EntityKind::Technology && e.text.eq_ignore_ascii_case(&name));
            (!technology).then_some(name)
        })
    })
}

fn extract_approvals(content: &str) -> Vec<String> {
    let mut approvals = Vec::new();
    for cue in phrase_matches(&APPROVAL_CUES, content) {
        for item in phrase_items(clause_at(content, cue.end()), Items::Listed) {
            push_unique(&mut approvals, clean_name(&item), MAX_APPROVALS);
        }
    }
    for caps in APPROVAL_BEFORE.captures_iter(content) {
        push_unique(
            &mut approvals,
            caps.get(1).and_then(|m| clean_name(m.as_str())),
            MAX_APPROVALS,
        );
    }
    approvals
}

/// Whether a match that ends at `end` ends on a word boundary.
fn ends_word(text: &str, end: usize) -> bool {
    !text[end..].chars().next().is_some_and(is_word_char)
}

fn extract_deadline(content: &str) -> Option<String> {
    let labelled = phrase_matches(&DEADLINE_LABEL, content).find_map(|cue| {
        let clause = clause_at(content, cue.end());
        if first_word_lower(clause) == "to" {
            return None;
        }
        if let Some(date) = DATE_AT_START.captures(clause).and_then(|c| c.get(1)) {
            if ends_word(clause, date.end()) {
                return Some(date.as_str().to_string());
            }
        }
        let phrase = first_phrase(skip_words(
            clause,
            &["is", "by", "on", "for", "le", "au", "est"],
        ))?;
        phrase
            .contains(|c: char| c.is_ascii_digit())
            .then_some(phrase)
    });
    let value = labelled
        .or_else(|| {
            BY_DATE
                .captures_iter(content)
                .filter_map(|caps| caps.get(1))
                .find(|m| ends_word(content, m.end()))
                .map(|m| m.as_str().to_string())
        })
        .or_else(|| {
            SPRINT
                .captures_iter(content)
                .filter_map(|caps| caps.get(1))
                .find(|m| ends_word(content, m.end()))
                .map(|m| m.as_str().to_string())
        })?;
    tidy(
        &SPRINT_NUMBER.replace_all(&value, "Sprint $1"),
        MAX_ITEM_CHARS,
    )
}

fn extract_subjects(
    content: &str,
    memory_type: MemoryType,
    decision: Option<&str>,
    entities: &[Entity],
    excluded: &[&str],
) -> Vec<String> {
    let mut subjects: Vec<String> = Vec::new();
    let labelled = phrase_matches(&SUBJECT_LABEL, content)
        .next()
        .map(|cue| clause_at(content, cue.end()).to_string());
    let about = || {
        phrase_matches(&ABOUT, content).find_map(|cue| {
            let phrase = first_phrase(clause_at(content, cue.end()))?;
            let words = words(&phrase);
            let useless = words
                .first()
                .is_some_and(|w| w.starts_with(|c: char| c.is_ascii_digit()))
                || words.iter().any(|w| PRONOUNS.contains(&w.as_str()));
            (!useless).then_some(phrase)
        })
    };
    add_subject(&mut subjects, labelled.or_else(about));
    add_subject(&mut subjects, decision.map(str::to_string));
    for phrase in domain_phrases(content, 2) {
        add_subject(&mut subjects, Some(phrase));
    }
    let mut ranked: Vec<&Entity> = entities
        .iter()
        .filter(|e| {
            !matches!(
                e.kind,
                EntityKind::Url | EntityKind::Email | EntityKind::Date
            )
        })
        .filter(|e| !excluded.iter().any(|x| x.eq_ignore_ascii_case(&e.text)))
        .collect();
    ranked.sort_by_key(|e| entity_rank(e.kind));
    for entity in ranked {
        add_subject(&mut subjects, Some(entity.text.clone()));
    }
    if subjects.is_empty() {
        let default = match memory_type {
            MemoryType::Decision => "Decision",
            MemoryType::Fact => "Fact",
            MemoryType::Preference => "Preference",
            MemoryType::SessionNote => "Note",
            MemoryType::DebugLog => "Debug",
        };
        subjects.push(default.to_string());
    }
    subjects
}

/// Adds `candidate` to `subjects` unless it is full or a subject contains it or is contained
/// in it (as whole words, case-insensitively).
fn add_subject(subjects: &mut Vec<String>, candidate: Option<String>) {
    let Some(candidate) = candidate.and_then(|c| tidy(&c, MAX_ITEM_CHARS)) else {
        return;
    };
    let candidate_words = words(&candidate);
    let overlaps = subjects.iter().any(|s| {
        let subject_words = words(s);
        contains_words(&subject_words, &candidate_words)
            || contains_words(&candidate_words, &subject_words)
    });
    if subjects.len() < MAX_SUBJECTS && !overlaps {
        subjects.push(candidate);
    }
}

/// Whether `needle` occurs in `haystack` as a run of whole words.
fn contains_words(haystack: &[String], needle: &[String]) -> bool {
    !needle.is_empty()
        && haystack
            .windows(needle.len())
            .any(|window| window == needle)
}

/// Salience of an entity kind as a subject (lower first).
fn entity_rank(kind: EntityKind) -> u8 {
    match kind {
        EntityKind::Technology => 0,
        EntityKind::Organization => 1,
        EntityKind::Other => 2,
        EntityKind::Location => 3,
        EntityKind::Person => 4,
        EntityKind::Version => 5,
        EntityKind::Id => 6,
        EntityKind::Date | EntityKind::Email | EntityKind::Url => 7,
    }
}

/// Whether `word` can be part of a subject phrase around a domain word.
fn is_phrase_word(word: &str) -> bool {
    let lower = word.to_lowercase();
    word.chars().any(char::is_alphabetic)
        && !is_stop_word(&lower)
        && !STOPPERS.contains(lower.as_str())
        && !PHRASE_VERBS.contains(lower.as_str())
        && !lower.contains(['\'', '’'])
}

/// Up to `max` phrases of at most 5 words around [`DOMAIN_WORDS`] ("database connection pool").
fn domain_phrases(content: &str, max: usize) -> Vec<String> {
    let words: Vec<(usize, &str)> = word_spans(content).collect();
    let adjacent = |a: usize, b: usize| {
        let (start_a, word_a) = words[a];
        content[start_a + word_a.len()..words[b].0]
            .chars()
            .all(|c| c == ' ' || c == '\t')
    };
    let mut phrases: Vec<String> = Vec::new();
    let mut covered_until = 0;
    for k in 0..words.len() {
        if phrases.len() == max {
            break;
        }
        let (start, word) = words[k];
        if k < covered_until || !DOMAIN_WORDS.contains(lowercase(word).as_ref()) {
            continue;
        }
        if content[..start].ends_with(['/', '.', '@', ':', '=', '#', '_']) {
            continue;
        }
        let mut first = k;
        while first > 0
            && k - first < 2
            && is_phrase_word(words[first - 1].1)
            && adjacent(first - 1, first)
        {
            first -= 1;
        }
        let mut last = k;
        while last + 1 < words.len()
            && last - k < 2
            && is_phrase_word(words[last + 1].1)
            && adjacent(last, last + 1)
        {
            last += 1;
        }
        covered_until = last + 1;
        let phrase = &content[words[first].0..words[last].0 + words[last].1.len()];
        if !phrases.iter().any(|p| p.eq_ignore_ascii_case(phrase)) {
            phrases.push(phrase.to_string());
        }
    }
    phrases
}

/// The key fact around a state verb: up to 4 words before it (none a stop word) and the
/// predicate up to the next comma or the clause end (at most 12 words), as a byte range.
fn verb_fact(content: &str, verb_start: usize) -> Option<(usize, usize)> {
    let window = floor_char_boundary(content, verb_start.saturating_sub(120));
    let before = &content[window..verb_start];
    let words: Vec<(usize, &str)> = word_spans(before).collect();
    let mut subject_start = None;
    let mut next_start = before.len();
    for &(start, word) in words.iter().rev().take(4) {
        let lower = word.to_lowercase();
        if before[start + word.len()..next_start]
            .contains([',', '.', ';', ':', '!', '?', '\n', '(', ')', '"'])
            || is_stop_word(&lower)
            || STOPPERS.contains(lower.as_str())
        {
            break;
        }
        subject_start = Some(window + start);
        next_start = start;
    }
    let subject_start = subject_start?;
    let clause = clause_at(content, verb_start);
    let mut end = verb_start;
    let mut prev_end = 0;
    for (n, (start, word)) in word_spans(clause).enumerate() {
        if n == 12 || clause[prev_end..start].contains(',') {
            break;
        }
        prev_end = start + word.len();
        end = verb_start + prev_end;
    }
    (end > verb_start).then_some((subject_start, end))
}

fn extract_key_facts(content: &str, entities: &[Entity]) -> Vec<String> {
    let mut spans: Vec<(usize, usize)> = Vec::new();
    let mut last_end = 0;
    for verb in phrase_matches(&STATE_VERB, content) {
        if verb.start() < last_end {
            continue;
        }
        if let Some((start, end)) = verb_fact(content, verb.start()) {
            if DATA_TOKEN.is_match(&content[start..end]) {
                spans.push((start, end));
                last_end = end;
                if spans.len() == MAX_KEY_FACTS {
                    break;
                }
            }
        }
    }
    for caps in SETTING.captures_iter(content).take(4 * MAX_KEY_FACTS) {
        let (Some(setting), Some(key)) = (caps.get(1), caps.get(2)) else {
            continue;
        };
        let overlaps = spans
            .iter()
            .any(|&(s, e)| setting.start() < e && s < setting.end());
        // "Melanie: 5" is a speaker's turn, not a setting.
        let speaker = entities
            .iter()
            .any(|e| e.kind == EntityKind::Person && e.text == key.as_str());
        if !overlaps
            && !speaker
            && ends_word(content, setting.end())
            && !SETTING_LABELS.contains(&key.as_str().to_lowercase().as_str())
        {
            spans.push((setting.start(), setting.end()));
        }
    }
    spans.sort_unstable();
    let mut facts = Vec::new();
    for (start, end) in spans {
        push_unique(
            &mut facts,
            tidy(&content[start..end], MAX_SENTENCE_CHARS),
            MAX_KEY_FACTS,
        );
    }
    facts
}

#[cfg(test)]
mod tests;
