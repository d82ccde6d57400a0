//! What a command reads besides its arguments.

use anyhow::{Context, Result};
use std::path::PathBuf;

/// The text of `path` ("-": standard input), which must be UTF-8.
pub(super) fn read_text(path: &PathBuf) -> Result<String> {
    let bytes = if path.as_os_str() == "-" {
        let mut buf = Vec::new();
        std::io::Read::read_to_end(&mut std::io::stdin(), &mut buf)
            .context("cannot read standard input")?;
        buf
    } else {
        std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?
    };
    String::from_utf8(bytes).map_err(|e| {
        anyhow::anyhow!(
            "{} is not valid UTF-8 (first bad byte at offset {}): convert it to UTF-8",
            path.display(),
            e.utf8_error().valid_up_to()
        )
    })
}
