//! Rule-based memory type classification, English and French, with word boundaries.
//!
//! The first rule that fires wins:
//! 1. **debug_log**, strong cues: panic, stack trace, backtrace, traceback, segfault,
//!    segmentation fault, crash, root cause, bug, bugfix, hotfix, regression, core dump,
//!    null pointer, out of memory, memory leak, deadlock, race condition, debugging,
//!    "fixed the/a/it…", "the/this/a fix", "fix:"; FR: plantage, planté, bogue, corrigé,
//!    correctif, cause racine, pile d'appels, fuite mémoire, interblocage, débogage, régression.
//! 2. **decision**: decided, decide to, chose, chosen, opted, opt for, "we/I/they selected",
//!    picked, went with, settled on, agreed on/to, will/shall/'ll/going to use, "we
//!    adopted", "will adopt", migrate to, "we switched to", "decision:", "choice:"; FR: décidé,
//!    choisi, opté, retenu, "avons adopté", migrer vers, "décision :", "choix :", nous allons
//!    utiliser, on va utiliser, on part sur. (A bare "adopt" is left out: people adopt
//!    children and cats.)
//! 3. **preference**: prefer, preference, favourite/favorite, dislike, "I/we like/love/hate",
//!    likes, liked, loves, hates, always/never use, would rather; FR: préfère, préférence,
//!    favori, j'aime, j'adore, je déteste, je n'aime pas, nous aimons, toujours/jamais utiliser.
//! 4. **decision**, standing rules and commitments (English, outside conversation: text with
//!    an exclamation mark or addressed to "you" is chit-chat, not a note):
//!    - an imperative opening a sentence: never, always, do not, don't, make sure, remember
//!      to, be sure to, avoid ("Never deploy on Fridays."; not "never mind", "always happy");
//!    - an obligation: must / shall (not, never, always) + verb, "is not allowed", "is
//!      forbidden", "is mandatory", "is required" ("must be" needs a participle and "must
//!      have felt" is a guess, not a rule);
//!    - a future action with a due time: will / is going to + verb … by Friday, next week,
//!      on March 3, tomorrow ("Bob will implement the login page by Friday.");
//!    - a switch: switched / migrated from X to Y.
//! 5. **debug_log**, weak cues: error, exception, failed, failure, timed out, broken,
//!    workaround; FR: erreur, échec, échoué, contournement. "error handling", "error rate",
//!    "gestion des erreurs" and similar are not cues.
//! 6. **fact**: a state verb (is, are, was, has, contains, equals, requires, supports, runs on,
//!    uses, holds, stores, costs, listens on, defaults to, set to, returns, went from/to,
//!    increased/reduced to, changed to, `=`; FR: est, sont, vaut, contient, utilise,
//!    nécessite, tourne sur, écoute sur, coûte, est passé à) and a data token (a number of 2+
//!    digits, a decimal or version, v2, "version 3", "port 8", "is 3", a URL, a word ending in
//!    digits like utf8 or eu-west-1, a number with a unit like 30s, 512MB, 2am or 2 million,
//!    "is enabled/disabled", "= true", "= off", ": false"; a bare "true", as in "true self",
//!    is not data). Outside conversation also: a configured state ("is stored", "are shipped",
//!    "is backed up", "changes every"), who does what ("Alice leads the platform team"), and
//!    the team or a definite thing using, running or being a named thing ("We use MySQL for
//!    billing", "Our CI runs on GitHub Actions").
//! 7. otherwise **session_note**.
//!
//! Decision and preference cues inside a question ("What's your favorite book?") do not count.
//! Decisions come before preferences so that "we decided to adopt X because I like it" is a
//! decision; strong debug cues come first because a fixed crash is a debug log even when a
//! decision is taken in the same breath.

use crate::memory::MemoryType;
use crate::text::{
    clause_at, extraction_prefix, in_question, phrase_matches, phrase_regex, strip_elision,
    word_spans, WORD_END, WORD_START,
};
use regex::Regex;
use std::sync::LazyLock;

/// Strong cues of a debug log (they win over every other type).
#[rustfmt::skip]
static DEBUG_STRONG: LazyLock<Regex> = LazyLock::new(|| {
    phrase_regex(&[
        "panic", "panics", "panicked", "panicking", "stack trace", "stack traces", "stacktrace",
        "backtrace", "traceback", "segfault", "segfaults", "segmentation fault", "crash", "crashes",
        "crashed", "crashing", "root cause", "bug", "bugs", "bugfix", "bug fix", "hotfix",
        "regression", "regressions", "core dump", "null pointer", "nullpointerexception",
        "out of memory", "memory leak", "deadlock", "race condition", "debugging", "debugged",
        "fixed the", "fixed a", "fixed an", "fixed it", "fixed this", "fixed that", "fixed by",
        "fixed in", "fix:", "fixed:", "the fix", "this fix", "a fix", "quick fix", "unhandled",
        "uncaught", "undefined behaviour", "undefined behavior",
        // French
        "plantage", "plantages", "planté", "plantée", "a crashé", "bogue", "bogues", "corrigé",
        "corrigée", "corrigés", "corrigées", "correctif", "cause racine", "cause première",
        "pile d'appels", "trace d'appels", "fuite mémoire", "fuite de mémoire", "interblocage",
        "débogage", "débogué", "régression", "régressions",
    ])
});

/// Cues of a decision; the chosen option follows the cue (used by the fingerprint too).
#[rustfmt::skip]
pub(crate) static DECISION_CUES: LazyLock<Regex> = LazyLock::new(|| {
    phrase_regex(&[
        "decided", "decide to", "decides to", "chose", "chosen", "opted", "opt for", "we selected",
        "i selected", "they selected", "team selected", "we picked", "i picked", "we have selected",
        "went with", "will go with", "'ll go with", "let's go with", "settled on", "agreed on",
        "agreed to", "will use", "shall use", "'ll use", "are going to use", "is going to use",
        "am going to use", "gonna use", "will adopt", "will switch to", "will migrate to",
        "will move to", "we adopt", "we adopted", "we're adopting", "we are adopting",
        "team adopted", "let's adopt", "migrate to", "migrating to", "migrated to",
        "we switched to", "we're switching to", "we are switching to", "let's switch to",
        "decision:", "choice:", "final decision:",
        // French
        "décidé", "décidée", "décidons", "décide de", "décide d'", "choisi", "choisie", "choisis",
        "choisissons", "opté", "optons", "opte pour", "retenu", "retenue", "avons adopté",
        "adoptons", "migrer vers", "migrons vers", "décision:", "choix:",
        "nous allons utiliser", "on va utiliser", "je vais utiliser", "nous utiliserons",
        "on utilisera", "nous allons adopter", "on part sur", "nous partons sur",
    ])
});

/// Cues of a preference (used by the fingerprint too).
#[rustfmt::skip]
pub(crate) static PREFERENCE_CUES: LazyLock<Regex> = LazyLock::new(|| {
    phrase_regex(&[
        "prefer", "prefers", "preferred", "preferring", "preference", "preferences", "favourite",
        "favorite", "favourites", "favorites", "dislike", "dislikes", "disliked", "i like",
        "we like", "i love", "we love", "i hate", "we hate", "i enjoy", "we enjoy", "i really like",
        "we really like", "i don't like", "we don't like", "i do not like", "we do not like",
        "likes", "liked", "loves", "hates", "always use", "always uses", "always using",
        "never use", "never uses", "never using", "i'd rather", "we'd rather", "would rather",
        // French
        "préfère", "préfères", "préférons", "préférez", "préfèrent", "préféré", "préférée",
        "préférés", "préférées", "préférence", "préférences", "favori", "favoris", "favorite",
        "j'aime", "j'adore", "je déteste", "je n'aime pas", "nous aimons", "on aime",
        "nous adorons", "on adore", "nous détestons", "toujours utiliser", "jamais utiliser",
        "n'utilise jamais", "n'utilisons jamais", "utilise toujours", "utilisons toujours",
    ])
});

/// Weak cues of a debug log (after decisions and preferences).
#[rustfmt::skip]
static DEBUG_WEAK: LazyLock<Regex> = LazyLock::new(|| {
    phrase_regex(&[
        "error", "errors", "exception", "exceptions", "failed", "failure", "failures", "timed out",
        "broken", "workaround", "erreur", "erreurs", "échec", "échecs", "échoué", "échoue",
        "contournement",
    ])
});

/// Words after a weak cue that make it a topic, not an incident ("error handling").
#[rustfmt::skip]
const WEAK_NEXT_EXCLUDED: &[&str] = &[
    "handling", "handler", "handlers", "message", "messages", "code", "codes", "type", "types",
    "rate", "rates", "budget", "page", "pages", "boundary", "boundaries", "tracking", "reporting",
    "model", "class", "classes", "mode", "policy", "policies", "value", "values", "strategy",
    "tolerance", "correction", "bar", "domain", "format", "formats",
];

/// Words before a weak cue that make it a topic ("handle errors", "gestion des erreurs").
#[rustfmt::skip]
const WEAK_PREV_EXCLUDED: &[&str] = &[
    "handle", "handles", "handling", "catch", "catches", "report", "reports", "gestion",
    "traitement", "remontée", "remontées",
];

/// State verbs of facts (also used for key facts).
#[rustfmt::skip]
pub(crate) static STATE_VERB: LazyLock<Regex> = LazyLock::new(|| {
    phrase_regex(&[
        "is", "are", "was", "were", "has", "have", "contains", "contain", "equals", "means",
        "requires", "require", "supports", "runs on", "uses", "costs", "weighs", "measures",
        "holds", "hold", "stores", "serves", "handles",
        "listens on", "defaults to", "set to", "takes", "returns", "went from", "went to",
        "dropped to", "grew to", "increased to", "decreased to", "reduced to", "rose to",
        "fell to", "changed to", "=", "est", "sont", "était", "étaient", "est passé à",
        "est passée à", "passe à",
        "contient", "vaut", "utilise", "utilisent", "nécessite", "requiert", "supporte",
        "tourne sur", "écoute sur", "coûte", "pèse", "dure",
    ])
});

/// Data-like tokens of facts (also used for key facts).
pub(crate) static DATA_TOKEN: LazyLock<Regex> = LazyLock::new(|| {
    let number = r"(?:\d{2,}|\d+(?:[.,]\d+)+|v\d+|version\s+\d+|port\s+\d+|\p{L}{2,}\d+|\p{L}+(?:-\p{L}+)*-\d+|\d+\s*(?:ms|s|sec|min|h|kb|mb|gb|tb|kib|mib|gib|ko|mo|go|%|x|k|am|pm|thousand|million|billion))";
    let switch = r"(?:enabled|disabled|activée?s?|désactivée?s?)";
    let boolean = r"(?:true|false|vrai|faux|enabled|disabled|on|off|yes|no)";
    Regex::new(&format!(
        r"(?i){WORD_START}(?:{number}|(?:is|are|was|were|est|sont)\s+{switch}){WORD_END}|{WORD_START}(?:is|are|was|est|vaut|to|à)\s+\d|https?://|\d%|=\s*(?:\d|{boolean}{WORD_END})|:\s*(?:true|false|enabled|disabled){WORD_END}"
    ))
    .expect("literal regex")
});

/// A rule stated as an imperative at the start of a sentence ("Never deploy on Fridays.").
static IMPERATIVE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)(?:^|[.!?]\s+)(?:please\s+)?(?:never|always|do not|don't|make sure(?:\s+to|\s+that)?|remember to|be sure to|avoid)\s+(\p{L}+)")
        .expect("literal regex")
});

/// Words after an imperative cue that make it a phrase, not a rule ("never mind").
#[rustfmt::skip]
const IMPERATIVE_NEXT_EXCLUDED: &[&str] = &[
    "mind", "happy", "glad", "a", "an", "the", "been", "fun", "nice", "good", "worry", "know",
    "knew", "thought", "forget", "ever", "feel",
];

/// An obligation: "must (not|never|always) VERB", and fixed forms ("is not allowed").
static OBLIGATION: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(&format!(
        r"(?i){WORD_START}(?:must|mustn't|shall)\s+(?:not\s+|never\s+|always\s+|also\s+)?(\p{{L}}+)(?:\s+(\p{{L}}+))?|{WORD_START}(?:is|are)\s+(?:not allowed|forbidden|mandatory|prohibited|required){WORD_END}"
    ))
    .expect("literal regex")
});

/// Verbs after "must" that speak of the speaker, not of a rule ("I must say").
const OBLIGATION_VERB_EXCLUDED: &[&str] = &[
    "say", "admit", "confess", "agree", "feel", "love", "enjoy", "know", "think", "mean",
];

/// Past participles of "must have …" that make it a guess ("you must have felt …").
const IRREGULAR_PARTICIPLES: &[&str] = &[
    "been", "had", "taken", "felt", "made", "seen", "known", "got", "gotten", "done", "given",
];

/// Second-person words: text that speaks to someone is conversation, not a note.
static SECOND_PERSON: LazyLock<Regex> =
    LazyLock::new(|| phrase_regex(&["you", "your", "you're", "yours", "you've", "you'll", "ya"]));

/// Whether `content` reads like a turn of a conversation (an exclamation, or addressed to
/// someone): rules, commitments and named states are not read from chit-chat.
fn is_conversational(content: &str) -> bool {
    content.contains('!') || SECOND_PERSON.is_match(content)
}

fn is_participle(word: &str) -> bool {
    word.ends_with("ed") || word.ends_with("en") || IRREGULAR_PARTICIPLES.contains(&word)
}

/// A future action ("will implement", "is going to migrate"); the verb is captured.
static FUTURE_ACTION: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(&format!(
        r"(?i){WORD_START}(?:will|shall|'ll|is going to|are going to|am going to)\s+(\p{{L}}+)"
    ))
    .expect("literal regex")
});

/// Verbs of a future action that are talk, not a commitment ("we will see tomorrow").
#[rustfmt::skip]
const FUTURE_VERB_EXCLUDED: &[&str] = &[
    "see", "talk", "chat", "speak", "catch", "be", "think", "try", "let", "miss", "love", "like",
    "have", "get", "go",
];

/// When a commitment is due: "by Friday", "next week", "on March 3", "tomorrow".
static DUE: LazyLock<Regex> = LazyLock::new(|| {
    let day = r"(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)";
    let month = r"(?:january|february|march|april|may|june|july|august|september|october|november|december)";
    Regex::new(&format!(
        r"(?i){WORD_START}(?:(?:by|on|before|until)\s+(?:the\s+end|end|eod|eow|{day}|{month}|\d|tomorrow|next)|next\s+(?:week|month|quarter|sprint|{day})|tomorrow|tonight|this\s+(?:week|month|quarter|sprint|{day})){WORD_END}"
    ))
    .expect("literal regex")
});

/// A statement that something uses, runs, is or holds a named thing ("We use MySQL for …",
/// "Our CI runs on GitHub Actions"): the subject is the team, a definite thing or a name; a
/// capitalised word (not the first) must follow the verb within the clause.
static NAMED_STATE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i)(?:^|[.!?:]\s+)(?:we|our|the|their|its|this|all)(?:\s[^.?!]{0,60}?)?\s(?:use|uses|run|runs|runs on|is|are|is written in|are written in|is stored in|are stored in|is hosted on|are hosted on|talks to|talk to|deploys to|is deployed on|holds|hold|leads|owns|manages|maintains)\s+",
    )
    .expect("literal regex")
});

/// A configured state in the passive ("The main branch is protected", "Logs are shipped to …").
static CONFIGURED: LazyLock<Regex> = LazyLock::new(|| {
    phrase_regex(&[
        "is used",
        "are used",
        "is stored",
        "are stored",
        "is hosted",
        "are hosted",
        "is deployed",
        "are deployed",
        "is configured",
        "are configured",
        "is protected",
        "are protected",
        "is written in",
        "are written in",
        "is kept",
        "are kept",
        "is shipped",
        "are shipped",
        "is backed up",
        "are backed up",
        "is pinned",
        "are pinned",
        "is replicated",
        "are replicated",
        "is encrypted",
        "are encrypted",
        "is cached",
        "are cached",
        "is managed",
        "are managed",
        "is owned",
        "are owned",
        "is maintained",
        "are maintained",
        "is scheduled",
        "are scheduled",
        "changes every",
        "change every",
        "runs every",
        "run every",
        "happens every",
        "rotates every",
    ])
});

/// A switch of tools: "we switched from MySQL to PostgreSQL".
static SWITCH: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(&format!(
        r"(?i){WORD_START}(?:switched|switching|migrated|migrating)\s+from\s+[^.?!;]+?\s+to\s"
    ))
    .expect("literal regex")
});

/// Who does what: "Alice leads the platform team".
static ROLE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?-i:\p{Lu}\p{Ll}+)\s+(?i:leads|owns|manages|maintains|heads|is responsible for|is in charge of)\s+(?i:the|our|all)\s")
        .expect("literal regex")
});

/// A team rule: an imperative at the start of a sentence, or an obligation, outside questions.
fn is_rule(content: &str) -> bool {
    if is_conversational(content) {
        return false;
    }
    let imperative = IMPERATIVE.captures_iter(content).any(|c| {
        let next = c[1].to_lowercase();
        !IMPERATIVE_NEXT_EXCLUDED.contains(&next.as_str())
            && !in_question(content, c.get(1).map_or(0, |m| m.end()))
    });
    imperative
        || OBLIGATION.captures_iter(content).any(|c| {
            let end = c.get(0).map_or(0, |m| m.end());
            if in_question(content, end) {
                return false;
            }
            let Some(verb) = c.get(1).map(|m| m.as_str().to_lowercase()) else {
                return true;
            };
            let next = c.get(2).map(|m| m.as_str().to_lowercase());
            // "must be" is a rule with a participle ("must be reviewed"), else a guess ("must be
            // hard"); "must have felt" is a guess too.
            !OBLIGATION_VERB_EXCLUDED.contains(&verb.as_str())
                && (verb != "be" || next.as_deref().is_some_and(is_participle))
                && (verb != "have" || !next.as_deref().is_some_and(is_participle))
        })
}

/// A commitment: a future action with a due time ("Bob will implement the login page by Friday").
fn is_commitment(content: &str) -> bool {
    if is_conversational(content) {
        return false;
    }
    FUTURE_ACTION.captures_iter(content).any(|c| {
        let verb = c[1].to_lowercase();
        let end = c.get(0).map_or(0, |m| m.end());
        !FUTURE_VERB_EXCLUDED.contains(&verb.as_str())
            && !in_question(content, end)
            && DUE.is_match(clause_at(content, end))
    })
}

/// A stable fact: a state verb with data, a named thing used or held, or a configured state.
fn is_fact(content: &str) -> bool {
    if STATE_VERB.is_match(content) && DATA_TOKEN.is_match(content) {
        return true;
    }
    !is_conversational(content)
        && (phrase_matches(&CONFIGURED, content).any(|m| !in_question(content, m.end()))
            || ROLE.is_match(content)
            || NAMED_STATE.find_iter(content).any(|m| {
                !in_question(content, m.end())
                    && word_spans(clause_at(content, m.end()))
                        .take(6)
                        .any(|(_, w)| is_name(w))
            }))
}

/// Whether `word` looks like a name: a capital letter anywhere ("I" and its contractions
/// excepted).
fn is_name(word: &str) -> bool {
    let pronoun = word == "I" || word.starts_with("I'") || word.starts_with("I\u{2019}");
    !pronoun && word.chars().any(char::is_uppercase)
}

/// Classifies `content` by the rules in the module docs (reading its
/// [`extraction_prefix`]).
pub fn classify(content: &str) -> MemoryType {
    let content = extraction_prefix(content);
    if DEBUG_STRONG.is_match(content) {
        MemoryType::DebugLog
    } else if has_asserted_cue(&DECISION_CUES, content) {
        MemoryType::Decision
    } else if has_asserted_cue(&PREFERENCE_CUES, content) {
        MemoryType::Preference
    } else if is_rule(content) || is_commitment(content) || SWITCH.is_match(content) {
        MemoryType::Decision
    } else if has_weak_debug_cue(content) {
        MemoryType::DebugLog
    } else if is_fact(content) {
        MemoryType::Fact
    } else {
        MemoryType::SessionNote
    }
}

/// Whether a cue of `cues` occurs outside a question ("What made you decide to…?").
fn has_asserted_cue(cues: &Regex, content: &str) -> bool {
    phrase_matches(cues, content).any(|cue| !in_question(content, cue.end()))
}

/// Whether a weak debug cue occurs outside topic phrases such as "error handling".
fn has_weak_debug_cue(content: &str) -> bool {
    phrase_matches(&DEBUG_WEAK, content).any(|cue| {
        let next = word_spans(&content[cue.end()..])
            .next()
            .map(|(_, w)| w.to_lowercase());
        if next.is_some_and(|w| WEAK_NEXT_EXCLUDED.contains(&w.as_str())) {
            return false;
        }
        !previous_words(&content[..cue.start()], 2)
            .iter()
            .any(|w| WEAK_PREV_EXCLUDED.contains(&w.as_str()))
    })
}

/// The last `n` words of `before`, lower-cased, nearest first, elisions stripped.
fn previous_words(before: &str, n: usize) -> Vec<String> {
    let start = before.char_indices().rev().nth(60).map_or(0, |(i, _)| i);
    let mut words: Vec<String> = word_spans(&before[start..])
        .map(|(_, w)| strip_elision(w).to_lowercase())
        .collect();
    words.reverse();
    words.truncate(n);
    words
}

#[cfg(test)]
mod tests {
    use super::*;
    use MemoryType::*;

    #[test]
    fn reference_fixtures() {
        assert_eq!(
            classify("The team decided to adopt Kubernetes for deployment."),
            Decision
        );
        assert_eq!(
            classify("I prefer using Go over Python for this service."),
            Preference
        );
        assert_eq!(classify("I prefer tabs"), Preference);
        assert_eq!(
            classify("The database connection pool max is 100 connections."),
            Fact
        );
        assert_eq!(
            classify("We had a good discussion about the roadmap today."),
            SessionNote
        );
        assert_eq!(
            classify("Fixed the panic in the HTTP handler because the request body was nil"),
            DebugLog
        );
    }

    #[test]
    fn seed_is_a_decision() {
        let seed = "We decided to migrate to PostgreSQL for v2. Rejected: MySQL (not ACID), \
                    MongoDB (not relational). Reason: ACID and team expertise. Approved by CTO. \
                    Assigned to Jean.";
        assert_eq!(classify(seed), Decision);
    }

    #[test]
    fn word_boundaries_are_respected() {
        assert_ne!(classify("The likely outcome is unclear"), Preference);
        assert_eq!(classify("The likely outcome is unclear"), SessionNote);
        assert_ne!(classify("Unlike Go, this is unclear"), Preference);
        assert_eq!(classify("This debugger is great"), SessionNote);
        assert_eq!(classify("The price is fixed at 100 euros"), Fact);
    }

    #[test]
    fn debug_logs_are_detected() {
        assert_eq!(
            classify("Got a stack trace when the worker started"),
            DebugLog
        );
        assert_eq!(
            classify("Root cause: the cache was never invalidated"),
            DebugLog
        );
        assert_eq!(
            classify("This fix resolves the timeout issue because the pool was too small."),
            DebugLog
        );
        assert_eq!(classify("The import failed with a timeout"), DebugLog);
        assert_eq!(
            classify("Traceback (most recent call last): KeyError"),
            DebugLog
        );
    }

    #[test]
    fn topic_mentions_of_errors_are_not_debug_logs() {
        assert_eq!(
            classify("We decided to use anyhow for error handling."),
            Decision
        );
        assert_eq!(classify("The error rate is 2% this week."), Fact);
        assert_eq!(classify("Let us discuss how we handle errors"), SessionNote);
    }

    #[test]
    fn other_fact_shapes() {
        assert_eq!(
            classify("The API rate limit is 100 requests per minute."),
            Fact
        );
        assert_eq!(classify("The server listens on port 8080"), Fact);
        assert_eq!(classify("Docs are at https://docs.example.com"), Fact);
        assert_eq!(classify("Feature flag dark_mode = true"), Fact);
        assert_eq!(classify("The dark mode flag is enabled"), Fact);
        assert_eq!(classify("The retry count is 3"), Fact);
    }

    #[test]
    fn french_examples() {
        assert_eq!(
            classify("Nous avons décidé d'utiliser PostgreSQL pour la v2."),
            Decision
        );
        assert_eq!(
            classify("Décision : on part sur Redis pour le cache."),
            Decision
        );
        assert_eq!(
            classify("Je préfère les tabulations aux espaces."),
            Preference
        );
        assert_eq!(
            classify("Je n'aime pas les emojis dans les commits."),
            Preference
        );
        assert_eq!(classify("Le serveur écoute sur le port 8080."), Fact);
        assert_eq!(classify("La limite est de 500 requêtes par minute."), Fact);
        assert_eq!(
            classify("Plantage du service à cause d'une fuite mémoire."),
            DebugLog
        );
        assert_eq!(classify("Erreur lors de l'import du fichier."), DebugLog);
        assert_eq!(
            classify("Nous avons revu la gestion des erreurs."),
            SessionNote
        );
        assert_eq!(
            classify("Réunion sur la feuille de route aujourd'hui."),
            SessionNote
        );
    }

    #[test]
    fn conversation_turns() {
        assert_eq!(
            classify("Melanie: What made you decide to transition?"),
            SessionNote
        );
        assert_eq!(
            classify("Caroline: What's a favorite book you remember?"),
            SessionNote
        );
        assert_eq!(
            classify("Caroline: It made me even more determined to adopt."),
            SessionNote
        );
        assert_eq!(
            classify("Caroline: It's true! Be your true self, it is freeing."),
            SessionNote
        );
        assert_eq!(
            classify("Melanie: I love camping trips with my fam."),
            Preference
        );
    }

    #[test]
    fn empty_and_odd_input() {
        assert_eq!(classify(""), SessionNote);
        assert_eq!(classify("   \n\t"), SessionNote);
        assert_eq!(classify("🦀🦀🦀"), SessionNote);
    }
}
