//! Progress bars on standard error for the long commands (import, eval, index rebuild,
//! embed-missing): counts of items with the elapsed time and an estimate of the time left.
//! They are drawn only when stderr is a terminal, so that pipes, logs and tests stay clean.

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use std::time::Duration;

/// The bars of one command, drawn together (one line each).
#[derive(Debug, Clone)]
pub struct Progress {
    multi: MultiProgress,
}

impl Default for Progress {
    fn default() -> Self {
        Self::new()
    }
}

impl Progress {
    /// Bars drawn on stderr when it is a terminal, hidden otherwise.
    pub fn new() -> Self {
        let target = if std::io::stderr().is_terminal() {
            ProgressDrawTarget::stderr()
        } else {
            ProgressDrawTarget::hidden()
        };
        Progress {
            multi: MultiProgress::with_draw_target(target),
        }
    }

    /// A new line: `label`, then the count of `unit` (plural, e.g. "memories"; the bar's
    /// message, so it can change) out of `total` (`None`: unknown, a counter without a bar or
    /// an estimate).
    pub fn bar(&self, label: &str, total: Option<u64>, unit: &str) -> ProgressBar {
        let template = match total {
            Some(_) => "{prefix} {bar:30} {human_pos}/{human_len} {msg} · {elapsed} · ETA {eta}",
            None => "{prefix} {spinner} {human_pos} {msg} · {elapsed}",
        };
        let bar = match total {
            Some(n) => ProgressBar::new(n),
            None => ProgressBar::new_spinner(),
        };
        bar.set_style(
            ProgressStyle::with_template(template)
                .unwrap_or_else(|_| ProgressStyle::default_bar())
                .progress_chars("=> "),
        );
        bar.set_prefix(label.to_owned());
        bar.set_message(unit.to_owned());
        let bar = self.multi.add(bar);
        // Redrawn even while a long step (a model call, a graph build) reports nothing.
        bar.enable_steady_tick(Duration::from_millis(250));
        bar
    }
}
