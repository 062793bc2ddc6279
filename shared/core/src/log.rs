//! Decision-log records: every change headroom makes, with its claims and reasons, what triggered
//! it and the model identity in force, so scaling can be read against deployments.

use chrono::{DateTime, Utc};
use serde::Serialize;

use crate::decide::Decision;

/// How long decision-log records are kept (DynamoDB TTL).
pub const LOG_TTL_DAYS: i64 = 30;

#[derive(Debug, Clone, Serialize)]
pub struct DecisionRecord {
    /// What made headroom look: "tick", "peak-event:<id>", "alarm:<name>:<state>", ...
    pub trigger: String,
    #[serde(flatten)]
    pub decision: Decision,
    /// Model identity fingerprint in force, when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Notes from the event that led here (e.g. how late a peak event arrived).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

impl DecisionRecord {
    pub fn at(&self) -> DateTime<Utc> {
        self.decision.at
    }
}
