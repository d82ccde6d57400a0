//! `hooks:`: what `mira hook` does for a coding agent's client.

use super::checks::{check, in_range};
use anyhow::Result;
use serde::{Deserialize, Serialize};

/// `hooks:`, what `mira hook` does for a coding agent's client.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct HooksConfig {
    /// Keep what sessions leave (`pre-compact`, `session-end`, `stop`); `false` in a project's
    /// `.mira/config.yaml` turns capture off for that project.
    pub capture: bool,
    /// Wings never captured (a per-project switch in a configuration shared by every project).
    pub capture_skip_wings: Vec<String>,
    /// The wing of the hooks' sessions; unset: `$MIRA_WING`, else the git repository's name,
    /// else the working directory's name.
    pub wing: Option<String>,
    /// Tokens of the briefing `session-start` puts before the agent.
    pub session_start_budget: u32,
    /// Tokens of what `user-prompt` adds for a prompt (when something stands out).
    pub user_prompt_budget: u32,
}
impl Default for HooksConfig {
    fn default() -> Self {
        HooksConfig {
            capture: true,
            capture_skip_wings: Vec::new(),
            wing: None,
            session_start_budget: 1500,
            user_prompt_budget: 600,
        }
    }
}

impl HooksConfig {
    /// Checks `hooks:`.
    pub(super) fn validate(&self) -> Result<()> {
        in_range(
            self.session_start_budget,
            100..=100_000,
            "hooks.session_start_budget",
        )?;
        in_range(
            self.user_prompt_budget,
            100..=100_000,
            "hooks.user_prompt_budget",
        )?;
        for (key, name) in self
            .capture_skip_wings
            .iter()
            .map(|w| ("hooks.capture_skip_wings", w))
            .chain(self.wing.iter().map(|w| ("hooks.wing", w)))
        {
            check(
                crate::usecases::validate::is_name(name),
                key,
                "must be wing names: 1-64 ASCII letters, digits, '-', '_' or '.'",
            )?;
        }
        Ok(())
    }
}
