//! Decision-log records: every change headroom makes, with its claims and reasons, what triggered
//! it and the model identity in force, so scaling can be read against deployments.

use chrono::{DateTime, Utc};
use serde::Serialize;

use crate::decide::Decision;
use crate::model::{LogEntry, ModelFingerprint};

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
    pub model: Option<ModelFingerprint>,
    /// Notes from the event that led here (e.g. how late a peak event arrived).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

impl DecisionRecord {
    pub fn at(&self) -> DateTime<Utc> {
        self.decision.at
    }
}

/// Built here rather than where `LogEntry` lives (`model/`): the vocabulary does not know
/// decisions.
impl LogEntry {
    pub fn of(record: &DecisionRecord) -> Result<Self, serde_json::Error> {
        Ok(Self {
            target: record.decision.target.clone(),
            at: record.at(),
            body: serde_json::to_value(record)?,
        })
    }
}

impl DecisionRecord {
    /// The structured log line every change leaves: flat fields a person filters on in
    /// CloudWatch Logs Insights (README, "Logs"), each present only when it says something.
    pub fn emit(&self) {
        use crate::decide::Action;
        let d = &self.decision;
        let (action, paused_until, suspended) = match &d.action {
            Action::None => ("none", None, None),
            Action::Register { suspended, .. } => ("register", None, Some(*suspended)),
            Action::Paused { until } => ("paused", Some(until.to_rfc3339()), None),
        };
        let winner = d.winner.as_ref().map(ToString::to_string);
        let notes = (!self.notes.is_empty()).then(|| self.notes.join("; "));
        let drift = d.drift.as_ref();
        tracing::info!(
            target_id = %d.target,
            trigger = %self.trigger,
            action,
            min = d.desired.min,
            max = d.desired.max,
            suspend_scale_in = d.desired.suspend_scale_in,
            dynamic_scale_in_suspended = suspended.map(|s| s.dynamic_in),
            paused_until = paused_until.as_deref(),
            winner = winner.as_deref(),
            model = self.model.as_deref(),
            reasons = %d.reasons.join("; "),
            notes = notes.as_deref(),
            drift_observed_min = drift.map(|x| x.observed.min),
            drift_expected_min = drift.map(|x| x.expected.min),
            "headroom decision"
        );
    }
}
