//! Token counting with cl100k_base, the tokenizer the budget is measured in.

use std::sync::OnceLock;
use tiktoken_rs::CoreBPE;

fn bpe() -> &'static CoreBPE {
    static BPE: OnceLock<CoreBPE> = OnceLock::new();
    BPE.get_or_init(|| tiktoken_rs::cl100k_base().expect("the embedded cl100k_base table is valid"))
}

/// Builds the BPE table now (it takes ~200 ms) so that the first count is fast.
pub fn warm_up() {
    bpe();
}

/// Number of cl100k_base tokens of `text` (special tokens are counted as plain text).
pub fn count(text: &str) -> usize {
    if text.is_empty() {
        return 0;
    }
    bpe().encode_ordinary(text).len()
}

#[cfg(test)]
mod tests {
    #[test]
    fn counts_known_strings() {
        assert_eq!(super::count(""), 0);
        assert_eq!(super::count("hello world"), 2);
        assert!(super::count(&"alpha ".repeat(1500)) >= 1500);
    }
}
