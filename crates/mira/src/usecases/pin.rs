//! Pinning: a pinned memory is shown in every recall of its wing, before anything else, within
//! `allocator.pinned_share` of the budget (rules like "never deploy on Fridays" stop competing
//! with everything else on relevance).

use super::access::Access;
use super::{load, UseCaseError, UseCaseResult};
use crate::App;
use mira_core::memory::MemoryId;
use serde::Serialize;

/// What a pin or unpin did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PinOutcome {
    /// The memory.
    pub id: MemoryId,
    /// Whether it is pinned now.
    pub pinned: bool,
}

/// Pins (`pinned: true`) or unpins memory `raw_id` (any printed form or unique prefix), in a
/// wing `access` may write to.
pub fn set_pinned(
    app: &App,
    access: &Access,
    raw_id: &str,
    pinned: bool,
) -> UseCaseResult<PinOutcome> {
    let m = load::existing(app, raw_id)?;
    access.check_write(&m.memory.wing)?;
    let id = m.memory.id;
    if !app.store.set_pinned(id, pinned)? {
        return Err(UseCaseError::NotFound(
            format!("no memory has id {id}: take ids from mira recall or mira timeline").into(),
        ));
    }
    app.sync_index();
    Ok(PinOutcome { id, pinned })
}

/// `Pinned <short id>: shown in every recall of its wing` or `Unpinned <short id>`.
pub fn render_text(o: &PinOutcome) -> String {
    let id = mira_core::render::short_id(o.id);
    if o.pinned {
        format!("Pinned {id}: shown in every recall of its wing, marked pinned\n")
    } else {
        format!("Unpinned {id}\n")
    }
}
