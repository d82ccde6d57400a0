//! Text helpers shared by extraction and recall: cleaning, word splitting, stop words.

/// English stop words (lower case), dropped by the lexical analyzer ([`crate::lexical`]).
#[rustfmt::skip]
pub const ENGLISH_STOP_WORDS: &[&str] = &[
    "a", "about", "above", "after", "again", "against", "all", "also", "am", "an", "and", "any",
    "are", "as", "at", "be", "because", "been", "before", "being", "below", "between", "both",
    "but", "by", "can", "could", "did", "do", "does", "doing", "down", "during", "each", "few",
    "for", "from", "further", "had", "has", "have", "having", "he", "her", "here", "hers",
    "herself", "him", "himself", "his", "how", "i", "if", "in", "into", "is", "it", "its",
    "itself", "just", "me", "more", "most", "my", "myself", "no", "nor", "not", "now", "of",
    "off", "on", "once", "only", "or", "other", "our", "ours", "ourselves", "out", "over", "own",
    "same", "she", "should", "so", "some", "such", "than", "that", "the", "their", "theirs",
    "them", "themselves", "then", "there", "these", "they", "this", "those", "through", "to",
    "too", "under", "until", "up", "very", "was", "we", "were", "what", "when", "where", "which",
    "while", "who", "whom", "why", "will", "with", "would", "you", "your", "yours", "yourself",
    "yourselves", "although", "though", "yet", "ever", "let", "lets", "get", "got",
    // what is left of contractions and possessives once apostrophes split words
    "s", "t", "d", "ll", "m", "re", "ve",
];

/// French stop words (lower case).
#[rustfmt::skip]
pub const FRENCH_STOP_WORDS: &[&str] = &[
    "le", "la", "les", "un", "une", "des", "du", "de", "et", "ou", "mais", "donc", "or", "ni",
    "car", "si", "que", "qui", "quoi", "dont", "où", "comment", "pourquoi", "quand", "à", "au",
    "aux", "en", "dans", "sur", "sous", "par", "pour", "avec", "sans", "contre", "vers", "chez",
    "je", "tu", "il", "elle", "nous", "vous", "ils", "elles", "on", "me", "te", "se", "moi",
    "toi", "lui", "leur", "leurs", "mon", "ton", "son", "ma", "ta", "sa", "mes", "tes", "ses",
    "notre", "votre", "nos", "vos", "ce", "cet", "cette", "ces", "est", "sont", "été", "être",
    "avoir", "ai", "as", "a", "ont", "était", "ne", "pas", "plus", "très", "y",
];

static STOP_WORD_SET: std::sync::LazyLock<std::collections::HashSet<&'static str>> =
    std::sync::LazyLock::new(|| {
        ENGLISH_STOP_WORDS
            .iter()
            .chain(FRENCH_STOP_WORDS)
            .copied()
            .collect()
    });

static ENGLISH_STOP_WORD_SET: std::sync::LazyLock<std::collections::HashSet<&'static str>> =
    std::sync::LazyLock::new(|| ENGLISH_STOP_WORDS.iter().copied().collect());

/// Whether `word` (already lower case) is an English or French stop word (keywords, query
/// expansion and reranking ignore them).
pub fn is_stop_word(word: &str) -> bool {
    STOP_WORD_SET.contains(word)
}

/// Whether `word` (already lower case) is an English stop word.
pub fn is_english_stop_word(word: &str) -> bool {
    ENGLISH_STOP_WORD_SET.contains(word)
}

/// `word` in lower case, borrowed when it has no upper-case letter.
pub fn lowercase(word: &str) -> std::borrow::Cow<'_, str> {
    if word.chars().any(char::is_uppercase) {
        std::borrow::Cow::Owned(word.to_lowercase())
    } else {
        std::borrow::Cow::Borrowed(word)
    }
}

/// Lower-cases `text`, turns every character that is not a letter or a digit (Unicode-aware,
/// so "règles" stays one word) into a space, and collapses runs of spaces.
pub fn clean(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut pending_space = false;
    for ch in text.chars() {
        if ch.is_alphanumeric() || ch == '_' {
            if pending_space && !out.is_empty() {
                out.push(' ');
            }
            pending_space = false;
            out.extend(ch.to_lowercase());
        } else {
            pending_space = true;
        }
    }
    out
}

/// The words of `text` after [`clean`].
pub fn words(text: &str) -> Vec<String> {
    clean(text)
        .split(' ')
        .filter(|w| !w.is_empty())
        .map(str::to_owned)
        .collect()
}

/// The content words of `text`: cleaned words of at least `min_chars` characters that are not
/// stop words, in order of first appearance, without repeats.
pub fn keywords(text: &str, min_chars: usize) -> Vec<String> {
    let cleaned = clean(text);
    let mut seen = std::collections::HashSet::new();
    cleaned
        .split(' ')
        .filter(|w| !w.is_empty() && w.chars().count() >= min_chars && !is_stop_word(w))
        .filter(|w| seen.insert(*w))
        .map(str::to_owned)
        .collect()
}

/// Extraction (type, entities, fingerprint, tags, causal cues) reads only this many leading
/// bytes of a memory. The rules are linear, but a full 64 KiB memory would cost several
/// milliseconds, and what a memory is about is stated at its start (the embedding sees even
/// less: 256 tokens); recall's lexical search still indexes the whole text.
pub const EXTRACTION_PREFIX_BYTES: usize = 16 * 1024;

/// The leading part of `content` that extraction reads: all of it up to
/// [`EXTRACTION_PREFIX_BYTES`], else that many bytes cut at the last whitespace (or char
/// boundary) so that no word is split.
pub fn extraction_prefix(content: &str) -> &str {
    if content.len() <= EXTRACTION_PREFIX_BYTES {
        return content;
    }
    let end = floor_char_boundary(content, EXTRACTION_PREFIX_BYTES);
    let window = &content[..end];
    match window.rfind(char::is_whitespace) {
        Some(space) if space > end / 2 => &content[..space],
        _ => window,
    }
}

/// Regex fragment that matches the start of the text or one character that cannot be part of a
/// word. Extraction uses it (with [`WORD_END`]) instead of `\b`: a Unicode `\b` makes the regex
/// engine leave its DFA on the first non-ASCII byte, which is 20-100x slower on French text.
pub const WORD_START: &str = r"(?:^|[^\p{L}\p{N}_])";

/// Regex fragment that matches the end of the text or one character that cannot be part of a
/// word (see [`WORD_START`]).
pub const WORD_END: &str = r"(?:$|[^\p{L}\p{N}_])";

/// The regex source of a case-insensitive matcher of any of `phrases` as whole words. The
/// phrase is in capture group 1 or 2 (read it with [`phrase_matches`]). In a phrase, a space
/// matches any run of whitespace, `'` matches `'` or `’`, and `:` may be preceded by spaces
/// (French typography). Phrases are tried in the order given, so list longer phrases before
/// their prefixes.
pub fn phrase_pattern(phrases: &[&str]) -> String {
    let (mut words, mut others) = (Vec::new(), Vec::new());
    for phrase in phrases {
        let mut alt = String::new();
        for ch in phrase.chars() {
            match ch {
                ' ' => alt.push_str(r"\s+"),
                '\'' | '’' => alt.push_str("['’]"),
                ':' => alt.push_str(r"\s*:"),
                _ => alt.push_str(&regex::escape(ch.encode_utf8(&mut [0; 4]))),
            }
        }
        if phrase.chars().last().is_some_and(char::is_alphanumeric) {
            words.push(alt);
        } else {
            others.push(alt);
        }
    }
    let mut groups = Vec::new();
    if !words.is_empty() {
        groups.push(format!("((?:{})){WORD_END}", words.join("|")));
    }
    if !others.is_empty() {
        groups.push(format!("((?:{}))", others.join("|")));
    }
    format!("(?i){WORD_START}(?:{})", groups.join("|"))
}

/// Compiles [`phrase_pattern`] (for the crate's literal phrase lists).
pub fn phrase_regex(phrases: &[&str]) -> regex::Regex {
    regex::Regex::new(&phrase_pattern(phrases)).expect("phrase lists compile")
}

/// The phrases that a [`phrase_regex`] finds in `text`, without the delimiters around them.
pub fn phrase_matches<'r, 't>(
    re: &'r regex::Regex,
    text: &'t str,
) -> impl Iterator<Item = regex::Match<'t>> + use<'r, 't> {
    re.captures_iter(text)
        .filter_map(|caps| caps.get(1).or_else(|| caps.get(2)))
}

/// Whether `c` can be part of a word (a letter, a digit or `_`).
pub fn is_word_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// The largest char boundary of `s` at or before `index`.
pub fn floor_char_boundary(s: &str, index: usize) -> usize {
    let mut index = index.min(s.len());
    while !s.is_char_boundary(index) {
        index -= 1;
    }
    index
}

/// The word-like tokens of `text` with their byte offsets, as written (case kept): runs of
/// letters, digits and `_`, joined by single inner `.`, `'`, `’`, `+`, `#` or `-` ("Node.js",
/// "l'équipe", "1.4.3", "ACID-compliant"), with trailing `+` and `#` ("C++", "C#").
pub fn word_spans(text: &str) -> impl Iterator<Item = (usize, &str)> {
    WordSpans { text, pos: 0 }
}

/// Iterator of [`word_spans`].
struct WordSpans<'a> {
    text: &'a str,
    pos: usize,
}

impl<'a> Iterator for WordSpans<'a> {
    type Item = (usize, &'a str);

    fn next(&mut self) -> Option<Self::Item> {
        let rest = &self.text[self.pos..];
        let start = self.pos + rest.char_indices().find(|&(_, c)| is_word_char(c))?.0;
        let mut end = start;
        let mut chars = self.text[start..].char_indices().peekable();
        while let Some((i, c)) = chars.next() {
            if is_word_char(c) {
                end = start + i + c.len_utf8();
            } else if !(matches!(c, '.' | '\'' | '’' | '+' | '#' | '-')
                && chars.peek().is_some_and(|&(_, next)| is_word_char(next)))
            {
                break;
            }
        }
        end += self.text[end..].len() - self.text[end..].trim_start_matches(['+', '#']).len();
        self.pos = end;
        Some((start, &self.text[start..end]))
    }
}

/// Longest clause looked at after a cue, in bytes.
pub const MAX_CLAUSE_BYTES: usize = 400;

/// The clause of `text` that starts at byte `from`: up to a line break, `;`, or `.`, `!`, `?`,
/// `…` followed by whitespace or the end, and at most [`MAX_CLAUSE_BYTES`] long.
pub fn clause_at(text: &str, from: usize) -> &str {
    let rest = &text[from..];
    let mut chars = rest.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        let ends = match c {
            '\n' | '\r' | ';' => true,
            '.' | '!' | '?' | '…' => chars.peek().is_none_or(|&(_, next)| next.is_whitespace()),
            _ => i >= MAX_CLAUSE_BYTES,
        };
        if ends {
            return &rest[..i];
        }
    }
    rest
}

/// Whether the clause that starts at byte `from` ends with a question mark.
pub fn in_question(text: &str, from: usize) -> bool {
    text[from + clause_at(text, from).len()..].starts_with('?')
}

/// The part of the sentence of `text` that comes before byte `pos` (at most 300 bytes back,
/// from the last line break or `.`, `!`, `?` followed by whitespace).
pub fn sentence_before(text: &str, pos: usize) -> &str {
    let window = floor_char_boundary(text, pos.saturating_sub(300));
    let before = &text[window..pos];
    let mut start = 0;
    let mut chars = before.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        let next_is_space = chars.peek().is_some_and(|&(_, n)| n.is_whitespace());
        if c == '\n' || (matches!(c, '.' | '!' | '?') && next_is_space) {
            start = i + c.len_utf8();
        }
    }
    &before[start..]
}

/// French elided articles and pronouns that prefix a word ("l'API" → "API", "d'utiliser").
const ELISIONS: &[&str] = &[
    "l", "d", "j", "qu", "n", "s", "c", "m", "t", "jusqu", "lorsqu", "puisqu",
];

/// `word` without a French elided prefix ("l'", "d'", "qu'"…), or `word` itself.
pub fn strip_elision(word: &str) -> &str {
    if let Some(pos) = word.find(['\'', '’']) {
        let (head, tail) = word.split_at(pos);
        let rest = &tail[tail.chars().next().map_or(0, char::len_utf8)..];
        if !rest.is_empty() && ELISIONS.iter().any(|e| head.eq_ignore_ascii_case(e)) {
            return rest;
        }
    }
    word
}

/// The first word of `text` (see [`word_spans`]), lower-cased, or "" when there is none.
pub fn first_word_lower(text: &str) -> String {
    word_spans(text)
        .next()
        .map(|(_, w)| w.to_lowercase())
        .unwrap_or_default()
}

/// `s` cut to at most `max_chars` characters, at the last space when there is one in the
/// second half, with surrounding whitespace and trailing punctuation removed.
pub fn truncate_words(s: &str, max_chars: usize) -> &str {
    let s = s.trim();
    let cut = match s.char_indices().nth(max_chars) {
        None => s,
        Some((byte, _)) => {
            let head = &s[..byte];
            match head.rfind(char::is_whitespace) {
                Some(space) if head[..space].chars().count() >= max_chars / 2 => &head[..space],
                _ => head,
            }
        }
    };
    cut.trim_end_matches(|c: char| c.is_whitespace() || matches!(c, ',' | ';' | ':' | '.' | '-'))
}

/// `s` with its whitespace collapsed, whole when it has at most `max_chars` characters, else
/// the longest start of whole words that leaves room for `…` within `max_chars` (trailing
/// punctuation dropped), then `…`; a first word longer than that alone is cut.
pub fn cut_words(s: &str, max_chars: usize) -> String {
    let line = s.split_whitespace().collect::<Vec<_>>().join(" ");
    if line.chars().count() <= max_chars {
        return line;
    }
    let room = max_chars.saturating_sub(1);
    let mut out = String::new();
    for word in line.split(' ') {
        let sep = usize::from(!out.is_empty());
        if out.chars().count() + sep + word.chars().count() > room {
            if out.is_empty() {
                out = word.chars().take(room).collect();
            }
            break;
        }
        if sep == 1 {
            out.push(' ');
        }
        out.push_str(word);
    }
    let kept = out.trim_end_matches([',', ';', ':', '-', '—', '(']);
    format!("{}…", kept.trim_end())
}

/// `n` and the noun that counts it: `1 memory`, `2 memories`, `0 memories`.
pub fn plural(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// Words that make a clause after "since" a time expression ("since 2020", "since then",
/// "since we last spoke", "since I started").
#[rustfmt::skip]
const SINCE_TEMPORAL: &[&str] = &[
    "then", "yesterday", "today", "last", "ago", "first", "monday", "tuesday", "wednesday",
    "thursday", "friday", "saturday", "sunday", "january", "february", "march", "april", "may",
    "june", "july", "august", "september", "october", "november", "december", "forever", "ever",
    "morning", "noon", "launch", "release", "version", "childhood", "kid", "child", "young",
    "born", "started", "began", "met", "talked", "spoke", "chatted", "joined", "moved", "left",
    "graduated", "arrived",
];

/// Verbs and subject pronouns that show a clause after "since" is causal ("since it is faster").
const SINCE_CAUSAL: &[&str] = &[
    "we", "i", "you", "they", "he", "she", "it", "there", "is", "are", "was", "were", "has",
    "have", "had", "do", "does", "did", "can", "could", "will", "would", "should", "must", "need",
    "needs", "lacks", "doesn't", "don't", "isn't", "aren't", "wasn't", "it's", "we're", "they're",
    "there's",
];

/// Whether "since" followed by `after` is the conjunction "because" rather than a time
/// ("since the pool was too small" is causal; "since 2020", "since the migration, …" are not).
pub fn since_is_causal(after: &str) -> bool {
    let mut prev_end = 0;
    let words = word_spans(after)
        .take(12)
        .take_while(|&(start, word)| {
            let in_clause = !after[prev_end..start].contains([',', '.', ';', ':', '\n']);
            prev_end = start + word.len();
            in_clause
        })
        .map(|(_, w)| w.to_lowercase());
    let words: Vec<String> = words.collect();
    let Some(first) = words.first() else {
        return false;
    };
    let temporal = first.starts_with(|c: char| c.is_ascii_digit())
        || words
            .iter()
            .take(4)
            .any(|w| SINCE_TEMPORAL.contains(&w.as_str()));
    !temporal && words.iter().any(|w| SINCE_CAUSAL.contains(&w.as_str()))
}

/// French words that can follow the conjunction "car" ("car il est…"), unlike the English noun.
const CAR_FOLLOWERS: &[&str] = &[
    "il", "elle", "ils", "elles", "on", "nous", "vous", "je", "j", "c", "ce", "cela", "ça", "le",
    "la", "les", "l", "un", "une", "des", "notre", "nos", "votre", "leur", "leurs", "sa", "son",
    "ses", "mon", "ma", "mes", "cette", "cet", "ces", "aucun", "aucune", "tout", "tous", "rien",
    "personne", "sinon", "sans", "en", "trop", "pas",
];

/// Whether "car" followed by `after` is the French conjunction ("car le pool était trop petit").
pub fn car_is_causal(after: &str) -> bool {
    word_spans(after).next().is_some_and(|(_, w)| {
        let lower = w.to_lowercase();
        let head = lower.split(['\'', '’']).next().unwrap_or_default();
        CAR_FOLLOWERS.contains(&head)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clean_keeps_accented_words() {
        assert_eq!(
            clean("Règles de langue, FRANÇAIS!"),
            "règles de langue français"
        );
        assert_eq!(clean("  a--b  "), "a b");
        assert_eq!(clean(""), "");
    }

    #[test]
    fn keywords_drop_stop_words_and_repeats() {
        assert_eq!(
            keywords("The database and the Database connection pool", 4),
            vec!["database", "connection", "pool"]
        );
    }

    #[test]
    fn phrase_regex_matches_whole_words_only() {
        let re = phrase_regex(&["like", "décidé", "decision:", "décision:", "parce qu'"]);
        assert!(re.is_match("I like tabs"));
        let found: Vec<&str> = phrase_matches(&re, "I like it. Decision: go")
            .map(|m| m.as_str())
            .collect();
        assert_eq!(found, vec!["like", "Decision:"]);
        assert!(!re.is_match("The likely outcome"));
        assert!(!re.is_match("unlike Go"));
        assert!(re.is_match("Nous avons décidé."));
        assert!(!re.is_match("décidément"));
        assert!(re.is_match("Décision : Redis"));
        assert!(re.is_match("DECISION : Redis"));
        assert!(re.is_match("parce qu’il"));
    }

    #[test]
    fn word_spans_keep_inner_punctuation() {
        let words: Vec<&str> = word_spans("Use Node.js, C++ and l'API (v1.4.3). C# ok-ish --x 🦀é")
            .map(|(_, w)| w)
            .collect();
        assert_eq!(
            words,
            vec!["Use", "Node.js", "C++", "and", "l'API", "v1.4.3", "C#", "ok-ish", "x", "é"]
        );
        assert_eq!(
            word_spans("  Ça va.").collect::<Vec<_>>(),
            vec![(2, "Ça"), (6, "va")]
        );
        assert_eq!(word_spans(".,;").count(), 0);
        assert_eq!(strip_elision("l'API"), "API");
        assert_eq!(strip_elision("d’utiliser"), "utiliser");
        assert_eq!(strip_elision("don't"), "don't");
    }

    #[test]
    fn extraction_prefix_is_bounded_and_cut_between_words() {
        assert_eq!(extraction_prefix("short text"), "short text");
        let long = "word ".repeat(10_000);
        let prefix = extraction_prefix(&long);
        assert!(
            prefix.len() <= EXTRACTION_PREFIX_BYTES && prefix.len() > EXTRACTION_PREFIX_BYTES - 8
        );
        assert!(prefix.ends_with("word"));
        let accents = "é".repeat(20_000);
        assert!(extraction_prefix(&accents).len() <= EXTRACTION_PREFIX_BYTES);
    }

    #[test]
    fn clauses_questions_and_sentences() {
        let text =
            "We use Node.js; it is fast. Did you decide to move? Yes.\nI prefer Go over Rust";
        assert_eq!(clause_at(text, 3), "use Node.js");
        assert_eq!(clause_at(text, 16), "it is fast");
        assert!(in_question(text, text.find("decide").unwrap()));
        assert!(!in_question(text, 0));
        let over = text.find("over").unwrap();
        assert_eq!(sentence_before(text, over), "I prefer Go ");
        assert_eq!(
            sentence_before(text, text.find("it is").unwrap()),
            "We use Node.js; "
        );
        assert!(clause_at(&"x".repeat(1000), 0).len() <= MAX_CLAUSE_BYTES);
    }

    #[test]
    fn truncation_respects_words_and_chars() {
        assert_eq!(truncate_words("short", 10), "short");
        assert_eq!(truncate_words("alpha beta gamma delta", 12), "alpha beta");
        assert_eq!(truncate_words("ééééééé", 3), "ééé");
        assert_eq!(
            truncate_words("  ends with a comma, ", 40),
            "ends with a comma"
        );
    }

    #[test]
    fn cut_words_never_cuts_a_word() {
        assert_eq!(cut_words("  short\n text ", 20), "short text");
        assert_eq!(cut_words("alpha beta gamma delta", 16), "alpha beta…");
        assert_eq!(cut_words("alpha beta, gamma delta", 17), "alpha beta…");
        assert_eq!(cut_words("Supercalifragilistic", 8), "Superca…");
        assert_eq!(cut_words("ééé ééé ééé", 8), "ééé ééé…");
        assert_eq!(cut_words("ééé ééé ééé", 7), "ééé…");
        let long = "We decided to write the API in Rust with axum instead of Go, because the team knows Rust.";
        for max in 5..long.len() {
            let cut = cut_words(long, max);
            assert!(cut.chars().count() <= max, "{cut}");
            let kept = cut.trim_end_matches('…');
            assert!(long.starts_with(kept), "{cut}");
            let next = long[kept.len()..].chars().next();
            assert!(
                next.is_none_or(|c| !c.is_alphanumeric()),
                "cut mid-word at {max}: {cut}"
            );
        }
    }

    #[test]
    fn plurals() {
        assert_eq!(plural(1, "memory", "memories"), "1 memory");
        assert_eq!(plural(0, "memory", "memories"), "0 memories");
        assert_eq!(plural(2, "link", "links"), "2 links");
    }

    #[test]
    fn since_and_car_are_causal_only_as_conjunctions() {
        assert!(since_is_causal(" the pool was too small"));
        assert!(since_is_causal(" we need ACID"));
        assert!(!since_is_causal(" 2020 we use Go"));
        assert!(!since_is_causal(" the migration, latency doubled"));
        assert!(!since_is_causal(" then"));
        assert!(!since_is_causal(" we last spoke, things happened"));
        assert!(!since_is_causal(" I started transitioning"));
        assert!(car_is_causal(" le pool était trop petit"));
        assert!(car_is_causal(" c'est plus rapide"));
        assert!(!car_is_causal(" is red"));
    }
}
