//! Text helpers shared by extraction and recall: cleaning, word splitting, stop words.

/// English and French stop words (lower case), ignored by keywords, query expansion and reranking.
pub const STOP_WORDS: &[&str] = &[
    // English
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
    // French
    "le", "la", "les", "un", "une", "des", "du", "de", "et", "ou", "mais", "donc", "or", "ni",
    "car", "si", "que", "qui", "quoi", "dont", "où", "comment", "pourquoi", "quand", "à", "au",
    "aux", "en", "dans", "sur", "sous", "par", "pour", "avec", "sans", "contre", "vers", "chez",
    "je", "tu", "il", "elle", "nous", "vous", "ils", "elles", "on", "me", "te", "se", "moi",
    "toi", "lui", "leur", "leurs", "mon", "ton", "son", "ma", "ta", "sa", "mes", "tes", "ses",
    "notre", "votre", "nos", "vos", "ce", "cet", "cette", "ces", "est", "sont", "été", "être",
    "avoir", "ai", "as", "a", "ont", "était", "ne", "pas", "plus", "très", "y",
];

/// Whether `word` (already lower case) is a stop word.
pub fn is_stop_word(word: &str) -> bool {
    STOP_WORDS.contains(&word)
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
    clean(text).split(' ').filter(|w| !w.is_empty()).map(str::to_owned).collect()
}

/// The content words of `text`: cleaned words of at least `min_chars` characters that are not
/// stop words, in order of first appearance, without repeats.
pub fn keywords(text: &str, min_chars: usize) -> Vec<String> {
    let mut seen = std::collections::HashSet::new();
    words(text)
        .into_iter()
        .filter(|w| w.chars().count() >= min_chars && !is_stop_word(w))
        .filter(|w| seen.insert(w.clone()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clean_keeps_accented_words() {
        assert_eq!(clean("Règles de langue, FRANÇAIS!"), "règles de langue français");
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
}
