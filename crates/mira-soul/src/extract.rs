//! Capture: rule-based extraction of identity observations from conversation text.
//!
//! Only the agent's turns are read ([`crate::text::agent_turns`]). Every observation has a
//! weight or a confidence, so that weak evidence moves the identity little:
//!
//! - **traits**: 18 keyword patterns (6 categories × 3, the reference's, with inflections).
//!   A pattern's score is the sum of the weights of the distinct phrases found (1, or 0.4 for
//!   weak phrases such as "might") plus 0.25 per repeat; its confidence is
//!   `1 − e^(−score/1.5)` (one strong phrase: 0.49, two: 0.74, three: 0.86; one weak phrase:
//!   0.23). Its intensity is the pattern's base intensity scaled by the share of sentences
//!   showing it: `base · (0.5 + 0.5 · min(1, 3 · share))`. (The reference's broken `log1p`
//!   gave intensity 0 to any phrase seen twice; it also counted substrings, so "fun" matched
//!   "function".)
//! - **levels** (voice, communication, values, behaviour, emotion): each measured value comes
//!   with an evidence weight in [0, 1] that grows with the amount of text or of markers seen;
//!   a level with weight 0 was not observed. Rates use `x/(1+x)` to map onto [0, 1).
//! - **flags** (emojis, Markdown, sentence structure, disagreement style, …): set only when
//!   the text says something about them.

use crate::model::Dimension;
use crate::text::{self, saturate, Lexicon};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::sync::LazyLock;

/// A trait seen in one capture.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ObservedTrait {
    /// Trait name.
    pub name: String,
    /// Trait category.
    pub category: String,
    /// Intensity in [0, 1].
    pub intensity: f64,
    /// Confidence in [0, 1].
    pub confidence: f64,
    /// The longest sentence that showed it.
    pub evidence: String,
    /// The phrases that matched.
    pub phrases: Vec<String>,
}

/// A level measured in one capture.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Measure {
    /// The value, in [0, 1].
    pub value: f64,
    /// How much evidence backs it, in (0, 1].
    pub weight: f64,
}

/// Everything one capture observed.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Observation {
    /// Traits, strongest first (all of them: the capture filters by the confidence threshold).
    pub traits: Vec<ObservedTrait>,
    /// Levels by key (see [`crate::model::LEVELS`]).
    pub levels: BTreeMap<String, Measure>,
    /// Whether emojis were used (None: too little text to say).
    pub uses_emojis: Option<bool>,
    /// Whether Markdown was used.
    pub uses_markdown: Option<bool>,
    /// Sentence structure, from the mean sentence length.
    pub sentence_structure: Option<String>,
    /// Mean words per sentence.
    pub avg_sentence_length: Option<f64>,
    /// List structure (bulleted, numbered) when lists dominate.
    pub structure_preference: Option<String>,
    /// Whether the agent acknowledges before answering.
    pub acknowledges_before_answering: Option<bool>,
    /// Whether it offers alternatives.
    pub provides_alternatives: Option<bool>,
    /// Whether it admitted a mistake.
    pub admits_mistakes: Option<bool>,
    /// How it disagreed.
    pub disagreement_style: Option<String>,
    /// Repeated 3-5 word expressions.
    pub catch_phrases: Vec<String>,
    /// Agent turns read.
    pub turns: usize,
    /// Agent sentences read.
    pub sentences: usize,
    /// Agent words read.
    pub words: usize,
}

impl Observation {
    /// Whether the capture saw nothing at all about the agent.
    pub fn is_empty(&self) -> bool {
        self.traits.is_empty() && self.levels.is_empty()
    }

    /// The measured levels of one dimension.
    pub fn levels_of(&self, dim: Dimension) -> impl Iterator<Item = (&String, &Measure)> {
        self.levels
            .iter()
            .filter(move |(k, _)| crate::model::level_dimension(k) == Some(dim))
    }
}

struct Pattern {
    name: &'static str,
    category: &'static str,
    base: f64,
    lexicon: Lexicon,
}

#[rustfmt::skip]
static PATTERNS: LazyLock<Vec<Pattern>> = LazyLock::new(|| {
    let p = |name, category, base, phrases: &[&str]| Pattern { name, category, base, lexicon: Lexicon::new(phrases) };
    vec![
        p("analytical", "cognitive", 0.8, &["analyze", "analyse", "analyzing", "analysing", "analysis", "examine", "examining", "break down", "break it down", "deconstruct", "let's look at", "root cause", "trade-off", "trade-offs", "methodical", "systematically"]),
        p("creative", "cognitive", 0.7, &["imagine", "innovative", "novel", "unique approach", "creative", "brainstorm", "what if we", "out of the box"]),
        p("logical", "cognitive", 0.8, &["therefore", "thus", "consequently", "logically", "it follows that", "follows that", "hence", "as a result", "accordingly"]),
        p("empathetic", "emotional", 0.8, &["i understand", "that must be", "i hear you", "you're feeling", "that sounds frustrating", "that sounds", "i'm sorry to hear", "i can imagine", "totally understandable", "understandable"]),
        p("patient", "emotional", 0.7, &["take your time", "no rush", "step by step", "at your pace", "one step at a time", "no worries"]),
        p("enthusiastic", "emotional", 0.8, &["excited", "thrilled", "love this", "love it", "amazing", "fantastic", "awesome", "so cool", "super cool", "wow", "yay"]),
        p("collaborative", "social", 0.7, &["together", "let's", "we can", "our approach", "as a team", "work with you", "shall we"]),
        p("direct", "social", 0.8, &["frankly", "to be direct", "straightforward", "plainly", "bottom line", "the answer is", "simply put", "you should"]),
        p("diplomatic", "social", 0.7, &["~perhaps", "~might", "could be", "one perspective", "another way", "respectfully", "with respect", "i would suggest"]),
        p("curious", "epistemic", 0.8, &["wonder", "i wonder", "curious", "explore", "discover", "interesting question", "fascinating", "tell me more"]),
        p("intellectually_humble", "epistemic", 0.7, &["i might be wrong", "i'm not sure", "not sure", "could be mistaken", "my understanding", "i may be wrong", "correct me if"]),
        p("open_minded", "epistemic", 0.7, &["alternative view", "different perspective", "valid point", "~consider", "on the other hand", "both approaches"]),
        p("humorous", "expressive", 0.7, &["haha", "hehe", "lol", "funny", "joke", "kidding", "pun", "amusing", "hilarious"]),
        p("metaphorical", "expressive", 0.8, &["like a", "picture this", "analogy", "metaphor", "think of it as", "akin to", "as if"]),
        p("concise", "expressive", 0.7, &["in short", "briefly", "to sum up", "tl;dr", "tldr", "essentially", "in a nutshell"]),
        p("transparent", "ethical", 0.8, &["to be transparent", "full disclosure", "honestly", "candidly", "to be honest", "i should note", "please note"]),
        p("benevolent", "ethical", 0.7, &["help you", "your best interest", "for your benefit", "want to help", "happy to help", "glad to help"]),
        p("fair", "ethical", 0.7, &["fair", "balanced view", "both sides", "equitable", "objective", "unbiased"]),
    ]
});

macro_rules! lexicon {
    ($name:ident, $($p:literal),+ $(,)?) => {
        static $name: LazyLock<Lexicon> = LazyLock::new(|| Lexicon::new(&[$($p),+]));
    };
}

lexicon!(
    FORMAL,
    "furthermore",
    "moreover",
    "however",
    "therefore",
    "regarding",
    "sincerely",
    "kindly",
    "please note",
    "i would",
    "shall",
    "accordingly",
    "nevertheless",
    "consequently",
    "in addition",
    "dear",
    "certainly",
    "i would recommend",
    "it is",
    "do not",
    "cannot",
    "thus",
    "hence",
    "recommend",
    "appropriate",
    "ensure",
    "subsequently",
    "respectively",
    "whereas",
    "additionally",
    "i am",
    "you are",
    "we are",
    "it would"
);
lexicon!(
    INFORMAL,
    "hey",
    "yeah",
    "yep",
    "yup",
    "nope",
    "gonna",
    "wanna",
    "kinda",
    "sorta",
    "btw",
    "lol",
    "cool",
    "awesome",
    "gotcha",
    "okay",
    "ok",
    "no worries",
    "stuff",
    "super",
    "dude",
    "totally",
    "wow",
    "haha",
    "omg",
    "yay",
    "lemme",
    "gimme",
    "y'all",
    "ya",
    "nah",
    "tbh",
    "imo",
    "pretty much"
);
lexicon!(
    CONTRACTIONS,
    "i'm",
    "you're",
    "it's",
    "that's",
    "don't",
    "can't",
    "won't",
    "let's",
    "we're",
    "they're",
    "isn't",
    "aren't",
    "didn't",
    "doesn't",
    "i've",
    "you'll",
    "we'll",
    "there's",
    "what's"
);
lexicon!(
    HUMOR,
    "haha",
    "hehe",
    "lol",
    "joke",
    "funny",
    "pun",
    "hilarious",
    "kidding",
    "lmao",
    "rofl",
    "xd"
);
lexicon!(
    EMPATHY,
    "i understand",
    "that sounds",
    "i hear you",
    "that must be",
    "i can imagine",
    "i'm sorry to hear",
    "frustrating",
    "understandable",
    "you're not alone",
    "i feel"
);
lexicon!(
    TECHNICAL,
    "implementation",
    "architecture",
    "component",
    "api",
    "function",
    "algorithm",
    "latency",
    "throughput",
    "database",
    "schema",
    "query",
    "index",
    "concurrency",
    "thread",
    "memory",
    "compile",
    "compiler",
    "runtime",
    "protocol",
    "configuration",
    "parameter",
    "module",
    "interface",
    "deploy",
    "deployment",
    "cache",
    "endpoint",
    "transaction",
    "complexity",
    "async",
    "mutex",
    "kernel",
    "binary",
    "dependency",
    "refactor",
    "benchmark"
);
lexicon!(
    ENTHUSIASM,
    "awesome",
    "amazing",
    "love",
    "great",
    "fantastic",
    "excited",
    "thrilled",
    "super",
    "wow",
    "yay",
    "brilliant",
    "wonderful",
    "incredible"
);
lexicon!(
    DIRECT,
    "clearly",
    "definitely",
    "you should",
    "you must",
    "the answer is",
    "simply",
    "frankly",
    "straightforward",
    "to be direct",
    "bottom line",
    "do this",
    "always",
    "never"
);
lexicon!(
    HEDGES, "perhaps", "maybe", "might", "possibly", "i think", "it seems", "could be", "somewhat",
    "arguably", "probably", "i guess", "not sure"
);
lexicon!(
    METAPHOR,
    "like a",
    "as if",
    "imagine",
    "think of it as",
    "picture",
    "analogy",
    "metaphor",
    "akin to",
    "it's like"
);
lexicon!(
    WARMTH,
    "glad",
    "happy",
    "pleased",
    "delighted",
    "welcome",
    "appreciate",
    "thank you",
    "thanks",
    "warmly",
    "my pleasure",
    "happy to help",
    "kind"
);
lexicon!(
    CALM,
    "calm",
    "steady",
    "no rush",
    "take your time",
    "relax",
    "no worries",
    "gently",
    "step by step",
    "patience"
);
lexicon!(
    ENCOURAGE,
    "great job",
    "well done",
    "you can do",
    "excellent",
    "keep going",
    "you've got this",
    "nice work",
    "proud",
    "good progress",
    "great question",
    "you're on the right track"
);
lexicon!(
    ACCURACY,
    "accurate",
    "accuracy",
    "correct",
    "precise",
    "precision",
    "exact",
    "verify",
    "evidence",
    "double-check",
    "fact",
    "facts",
    "truth"
);
lexicon!(
    HELPFUL,
    "help",
    "assist",
    "support",
    "useful",
    "happy to help",
    "benefit"
);
lexicon!(
    EFFICIENT,
    "efficient",
    "efficiency",
    "quick",
    "quickly",
    "fast",
    "optimize",
    "optimise",
    "streamline",
    "save time"
);
lexicon!(
    CLARITY,
    "clear",
    "clarify",
    "clarity",
    "simple",
    "explicit",
    "understandable",
    "to be clear"
);
lexicon!(
    SAFETY, "safe", "safely", "safety", "risk", "risks", "careful", "caution", "secure", "backup"
);
lexicon!(
    CREATIVITY,
    "creative",
    "creativity",
    "imagine",
    "novel",
    "idea",
    "ideas",
    "brainstorm",
    "original"
);
lexicon!(
    ACKNOWLEDGE,
    "i see",
    "understood",
    "got it",
    "makes sense",
    "good question",
    "great question",
    "thanks for",
    "thank you for"
);
lexicon!(
    ALTERNATIVES,
    "alternatively",
    "another option",
    "you could also",
    "or you might",
    "another approach",
    "instead, you could"
);
lexicon!(
    APOLOGY,
    "sorry",
    "i apologize",
    "i apologise",
    "my bad",
    "i was wrong",
    "my mistake",
    "i made a mistake"
);
lexicon!(
    CORRECTION,
    "in fact",
    "actually",
    "correction",
    "i meant",
    "to be precise",
    "let me correct",
    "to clarify"
);
lexicon!(
    DISAGREE_DIRECT,
    "i disagree",
    "that's not right",
    "that is not correct",
    "that's incorrect",
    "that won't work"
);
lexicon!(
    DISAGREE_POLITE,
    "i see it differently",
    "another perspective",
    "i would argue",
    "respectfully",
    "with respect"
);
lexicon!(
    DISAGREE_SOCRATIC,
    "what if",
    "have you considered",
    "could it be that",
    "let's examine"
);
lexicon!(
    PERSIST,
    "let's try",
    "another way",
    "don't give up",
    "keep trying",
    "let's dig",
    "try again"
);

/// Confidence of a trait pattern from its score (see the module docs).
pub fn trait_confidence(score: f64) -> f64 {
    1.0 - (-score / 1.5).exp()
}

/// Extracts what a conversation says about the agent.
pub fn extract(conversation: &str) -> Observation {
    let turns = text::agent_turns(conversation);
    let joined = turns.join("\n");
    let sentences = text::sentences(&joined);
    let words = text::words(&joined);
    let (s, w) = (sentences.len(), words.len());
    let mut obs = Observation {
        turns: turns.len(),
        sentences: s,
        words: w,
        ..Observation::default()
    };
    if s == 0 {
        return obs;
    }
    obs.traits = traits(&sentences);
    let sf = s as f64;
    let text_weight = (sf / 5.0).min(1.0);
    let count = |l: &Lexicon| l.count(&joined) as f64;
    let mut put = |key: &str, value: f64, weight: f64| {
        if weight > 0.0 {
            obs.levels.insert(
                key.to_owned(),
                Measure {
                    value: value.clamp(0.0, 1.0),
                    weight: weight.min(1.0),
                },
            );
        }
    };
    let emojis = text::emoji_count(&joined) as f64;
    let exclamations = joined.matches('!').count() as f64;
    let questions = joined.matches('?').count() as f64;

    // Voice.
    let formal = count(&FORMAL);
    let informal = count(&INFORMAL) + 0.5 * count(&CONTRACTIONS) + 0.5 * exclamations + emojis;
    put(
        "voice.formality_level",
        (formal + 0.5) / (formal + informal + 1.0),
        (formal + informal) / 3.0,
    );
    let humor = count(&HUMOR) + 0.5 * emojis;
    put("voice.humor_level", saturate(4.0 * humor / sf), text_weight);
    put(
        "voice.empathy_level",
        saturate(4.0 * count(&EMPATHY) / sf),
        text_weight,
    );
    if w > 0 {
        put(
            "voice.technical_depth",
            saturate(40.0 * count(&TECHNICAL) / w as f64),
            (w as f64 / 50.0).min(1.0),
        );
    }
    let enthusiasm = count(&ENTHUSIASM) + exclamations;
    put(
        "voice.enthusiasm_level",
        saturate(2.0 * enthusiasm / sf),
        text_weight,
    );
    let (direct, hedges) = (count(&DIRECT), count(&HEDGES));
    put(
        "voice.directness_level",
        (direct + 0.5) / (direct + hedges + 1.0),
        (direct + hedges) / 3.0,
    );
    if w >= 20 {
        let long: Vec<&String> = words
            .iter()
            .filter(|x| x.chars().count() >= 3)
            .take(200)
            .collect();
        let distinct: std::collections::HashSet<&&String> = long.iter().collect();
        let ttr = distinct.len() as f64 / long.len().max(1) as f64;
        put(
            "voice.vocabulary_richness",
            (ttr - 0.35) / 0.5,
            (w as f64 / 60.0).min(1.0),
        );
    }
    put(
        "voice.metaphor_usage",
        saturate(4.0 * count(&METAPHOR) / sf),
        text_weight,
    );

    // Communication.
    let mean_words = w as f64 / turns.len().max(1) as f64;
    let length = match mean_words {
        m if m < 15.0 => 0.0,
        m if m < 30.0 => 0.25,
        m if m < 80.0 => 0.5,
        m if m < 150.0 => 0.75,
        _ => 1.0,
    };
    put(
        "communication.length_level",
        length,
        (turns.len() as f64 / 2.0).min(1.0),
    );
    put(
        "communication.question_rate",
        saturate(3.0 * questions / sf),
        text_weight,
    );
    let lines: Vec<&str> = joined
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    let bullets = lines
        .iter()
        .filter(|l| l.starts_with(['-', '*', '•', '+']) && l.len() > 2)
        .count();
    let numbered = lines
        .iter()
        .filter(|l| {
            let digits = l.chars().take_while(char::is_ascii_digit).count();
            digits > 0 && l[digits..].starts_with(['.', ')'])
        })
        .count();
    let nl = lines.len().max(1) as f64;
    put(
        "communication.list_usage",
        saturate(3.0 * (bullets + numbered) as f64 / nl),
        (nl / 6.0).min(1.0),
    );
    if numbered > bullets && numbered > 1 {
        obs.structure_preference = Some("numbered".into());
    } else if bullets > 1 {
        obs.structure_preference = Some("bulleted".into());
    } else if lines.len() >= 4 && bullets + numbered == 0 {
        obs.structure_preference = Some("freeform".into());
    }
    let ack = count(&ACKNOWLEDGE);
    let alternatives = count(&ALTERNATIVES);
    if s >= 3 {
        obs.acknowledges_before_answering = Some(ack > 0.0);
        obs.provides_alternatives = Some(alternatives > 0.0);
    }

    // Values: mentions are evidence; silence says nothing about priorities.
    for (key, lex) in [
        ("values.accuracy", &*ACCURACY),
        ("values.helpfulness", &*HELPFUL),
        ("values.efficiency", &*EFFICIENT),
        ("values.clarity", &*CLARITY),
        ("values.safety", &*SAFETY),
        ("values.creativity", &*CREATIVITY),
    ] {
        let hits = count(lex);
        if hits > 0.0 {
            put(key, 0.5 + 0.5 * saturate(3.0 * hits / sf), hits / 3.0);
        }
    }

    // Behaviour.
    put(
        "behaviour.curiosity_level",
        saturate(3.0 * questions / sf),
        text_weight,
    );
    let persist = count(&PERSIST);
    if persist > 0.0 {
        put(
            "behaviour.persistence_level",
            0.6 + 0.4 * saturate(persist),
            persist / 2.0,
        );
    }
    put(
        "behaviour.self_correction",
        saturate(3.0 * count(&CORRECTION) / sf),
        text_weight,
    );
    let apologies = count(&APOLOGY);
    if apologies > 0.0 {
        obs.admits_mistakes = Some(true);
    }
    obs.disagreement_style = if count(&DISAGREE_DIRECT) > 0.0 {
        Some("direct".into())
    } else if count(&DISAGREE_POLITE) > 0.0 {
        Some("polite".into())
    } else if count(&DISAGREE_SOCRATIC) > 0.0 {
        Some("socratic".into())
    } else {
        None
    };

    // Emotion.
    let playful = saturate(2.0 * (count(&HUMOR) + emojis) / sf);
    put(
        "emotion.warmth",
        saturate(2.5 * count(&WARMTH) / sf),
        text_weight,
    );
    put(
        "emotion.calmness",
        0.5 + 0.5 * saturate(3.0 * count(&CALM) / sf) - 0.3 * saturate(exclamations / sf),
        text_weight,
    );
    put(
        "emotion.enthusiasm",
        saturate(2.0 * enthusiasm / sf),
        text_weight,
    );
    put("emotion.playfulness", playful, text_weight);
    // Seriousness is not measured: without jokes it would only restate the absence of humour
    // and the formality. An edit ("be serious") sets it.
    put(
        "emotion.encouragement_level",
        saturate(2.0 * count(&ENCOURAGE) / sf),
        text_weight,
    );

    // Flags.
    if emojis > 0.0 {
        obs.uses_emojis = Some(true);
    } else if s >= 5 {
        obs.uses_emojis = Some(false);
    }
    let markdown = joined.contains('`')
        || joined.contains("**")
        || lines.iter().any(|l| l.starts_with('#'))
        || bullets + numbered > 0;
    if markdown {
        obs.uses_markdown = Some(true);
    } else if s >= 5 {
        obs.uses_markdown = Some(false);
    }
    let avg = sentences
        .iter()
        .map(|x| text::words(x).len())
        .sum::<usize>() as f64
        / sf;
    obs.avg_sentence_length = Some((avg * 10.0).round() / 10.0);
    if s >= 3 {
        obs.sentence_structure = Some(
            match avg {
                a if a < 8.0 => "punchy",
                a if a < 12.0 => "concise",
                a if a <= 22.0 => "balanced",
                _ => "elaborate",
            }
            .into(),
        );
    }
    obs.catch_phrases = catch_phrases(&turns);
    obs
}

fn traits(sentences: &[&str]) -> Vec<ObservedTrait> {
    let mut out = Vec::new();
    for p in PATTERNS.iter() {
        let mut total: BTreeMap<String, usize> = BTreeMap::new();
        let mut showing = 0usize;
        let mut evidence = "";
        for s in sentences {
            let hits = p.lexicon.hits(s);
            if hits.is_empty() {
                continue;
            }
            showing += 1;
            if s.len() > evidence.len() {
                evidence = s;
            }
            for (k, n) in hits {
                *total.entry(k).or_insert(0) += n;
            }
        }
        if total.is_empty() {
            continue;
        }
        let score: f64 = total
            .iter()
            .map(|(k, n)| p.lexicon.weight(k) + 0.25 * (*n as f64 - 1.0))
            .sum();
        let share = showing as f64 / sentences.len() as f64;
        out.push(ObservedTrait {
            name: p.name.into(),
            category: p.category.into(),
            intensity: (p.base * (0.5 + 0.5 * (3.0 * share).min(1.0))).clamp(0.0, 1.0),
            confidence: trait_confidence(score),
            evidence: text::shorten(evidence, 200),
            phrases: total.into_keys().collect(),
        });
    }
    out.sort_by(|a, b| {
        (b.intensity * b.confidence)
            .total_cmp(&(a.intensity * a.confidence))
            .then_with(|| a.name.cmp(&b.name))
    });
    out
}

/// 3–5 word expressions used at least twice (in different places), not starting or ending
/// with a stop word; the 5 most frequent (then longest).
fn catch_phrases(turns: &[String]) -> Vec<String> {
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    for turn in turns {
        for sentence in text::sentences(turn) {
            let ws = text::words(sentence);
            for n in 3..=5 {
                for g in ws.windows(n) {
                    let (first, last) = (&g[0], &g[n - 1]);
                    if mira_core::text::is_stop_word(first) || mira_core::text::is_stop_word(last) {
                        continue;
                    }
                    let phrase = g.join(" ");
                    if phrase.len() > 12 {
                        *counts.entry(phrase).or_insert(0) += 1;
                    }
                }
            }
        }
    }
    let mut repeated: Vec<(String, usize)> = counts.into_iter().filter(|(_, c)| *c > 1).collect();
    repeated.sort_by(|a, b| b.1.cmp(&a.1).then(b.0.len().cmp(&a.0.len())));
    let mut out: Vec<String> = Vec::new();
    for (p, _) in repeated {
        // Skip phrases contained in one already chosen (the 3-gram inside a 4-gram).
        if out.iter().any(|o| o.contains(&p) || p.contains(o.as_str())) {
            continue;
        }
        out.push(p);
        if out.len() == 5 {
            break;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const FORMAL: &str = "User: Can you review my database design?
Assistant: Certainly. I would recommend that we analyze the schema systematically. Furthermore, the index on the orders table is not appropriate for this query. Therefore, I would suggest a composite index. Please note that the migration must be verified before deployment. It is important to ensure the transaction isolation is correct.";

    const CASUAL: &str = "User: can u look at my db?
Assistant: hey, sure thing! lol that schema is kinda wild 😄 gonna be honest, the index thing is totally off. yeah just add a combo index and you're good! awesome stuff btw, haha. no worries, it's super easy!";

    #[test]
    fn formal_and_casual_voices_differ() {
        let f = extract(FORMAL);
        let c = extract(CASUAL);
        let fl = f.levels["voice.formality_level"];
        let cl = c.levels["voice.formality_level"];
        assert!(fl.value > 0.75 && fl.weight == 1.0, "{fl:?}");
        assert!(cl.value < 0.25, "{cl:?}");
        assert!(c.levels["voice.humor_level"].value > f.levels["voice.humor_level"].value + 0.3);
        assert_eq!(c.uses_emojis, Some(true));
        let names: Vec<&str> = f.traits.iter().map(|t| t.name.as_str()).collect();
        assert!(
            names.contains(&"analytical") && names.contains(&"logical"),
            "{names:?}"
        );
        assert!(f
            .traits
            .iter()
            .all(|t| t.confidence > 0.0 && t.confidence < 1.0));
        assert!(c.traits.iter().any(|t| t.name == "humorous"));
    }

    #[test]
    fn only_the_agent_is_read() {
        let o = extract(
            "User: haha lol this is so funny, I'm excited!\nAssistant: I will examine the logs.",
        );
        assert!(o
            .traits
            .iter()
            .all(|t| t.name != "humorous" && t.name != "enthusiastic"));
        assert!(o.traits.iter().any(|t| t.name == "analytical"));
    }

    #[test]
    fn confidence_grows_with_evidence_and_weak_phrases_stay_low() {
        assert!(trait_confidence(0.4) < 0.3);
        assert!(trait_confidence(1.0) > 0.45 && trait_confidence(1.0) < 0.5);
        assert!(trait_confidence(2.0) > trait_confidence(1.0));
        let weak = extract("Perhaps we try the other branch first.");
        let d = weak
            .traits
            .iter()
            .find(|t| t.name == "diplomatic")
            .expect("diplomatic");
        assert!(d.confidence < 0.3, "{d:?}");
    }

    #[test]
    fn empty_text_observes_nothing() {
        assert!(extract("   ").is_empty());
        assert!(extract("User: hello there friend").is_empty());
    }

    #[test]
    fn repeated_expressions_become_catch_phrases() {
        let o = extract("Happy to dig deeper into this anytime. Here is the fix.\n\nHappy to dig deeper into this anytime, really.");
        assert!(
            o.catch_phrases
                .iter()
                .any(|p| p.contains("happy to dig deeper")),
            "{:?}",
            o.catch_phrases
        );
    }
}
