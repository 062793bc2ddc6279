//! A decision-log record as the table stores it. Here rather than in `log.rs`, which builds
//! records from decisions: the target state keeps entries that are still to be appended
//! (`TargetState::pending_log`), and the state must not depend on the decision.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::ids::ScalableTargetId;

/// A decision-log record as the table stores it: its target, its instant and its JSON body.
/// The body is built once, from the record (`LogEntry::of` in `log.rs`), and kept as is (also
/// while it waits in the state as pending), so every append of one record writes the same bytes
/// under the same key: a repeated append overwrites itself instead of adding a second record.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LogEntry {
    pub target: ScalableTargetId,
    pub at: DateTime<Utc>,
    pub body: serde_json::Value,
}
