//! The ports: one small trait per AWS service, in headroom's terms. Adapters implement them with
//! the AWS SDK (`headroom-adapters`), the simulator and the tests with memory. Ports return domain
//! types and classified errors, never SDK output structs.

use std::error::Error as StdError;
use std::future::Future;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::decide::{Observed, Suspended};
use crate::ids::ScalableTargetId;
use crate::log::{DecisionRecord, LogEntry};
use crate::state::TargetState;

/// Whether trying again can help.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorClass {
    /// Throttling, timeouts, 5xx, connection resets: retry with backoff.
    Retryable,
    /// Validation, access denied, missing resources: a retry gives the same answer.
    Permanent,
}

/// An AWS call that failed, with the operation named and the SDK error kept as the source.
#[derive(Debug, thiserror::Error)]
#[error("failed to {operation} ({class:?}): {source}")]
pub struct PortError {
    pub operation: String,
    pub class: ErrorClass,
    #[source]
    pub source: Box<dyn StdError + Send + Sync>,
}

impl PortError {
    pub fn new(
        operation: impl Into<String>,
        class: ErrorClass,
        source: impl Into<Box<dyn StdError + Send + Sync>>,
    ) -> Self {
        Self {
            operation: operation.into(),
            class,
            source: source.into(),
        }
    }

    pub fn is_retryable(&self) -> bool {
        self.class == ErrorClass::Retryable
    }
}

/// DescribeScalableTargets accepts at most this many resource ids per call.
pub const DESCRIBE_PAGE: usize = 50;

/// Application Auto Scaling, as headroom uses it.
pub trait ScalingTargets: Send + Sync {
    /// The registered targets among `ids` (at most [`DESCRIBE_PAGE`]); unregistered ones are absent.
    fn describe(
        &self,
        ids: &[ScalableTargetId],
    ) -> impl Future<Output = Result<Vec<Observed>, PortError>> + Send;

    /// RegisterScalableTarget: creates or updates the target's bounds and suspension flags.
    fn register(
        &self,
        id: &ScalableTargetId,
        min: u32,
        max: u32,
        suspended: Suspended,
    ) -> impl Future<Output = Result<(), PortError>> + Send;
}

/// Outcome of a conditional write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SaveOutcome {
    Saved,
    /// Someone else wrote first: re-read and decide again.
    Conflict,
}

/// The plan as stored: its text (validated before it was stored) and its version.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoredPlan {
    pub version: u64,
    pub text: String,
    pub source_name: String,
    pub applied_at: DateTime<Utc>,
}

/// headroom's state table.
pub trait StateStore: Send + Sync {
    fn load_plan(&self) -> impl Future<Output = Result<Option<StoredPlan>, PortError>> + Send;

    /// Stores a new plan version if the current one is still `expected_version` (0: none yet).
    fn save_plan(
        &self,
        plan: &StoredPlan,
        expected_version: u64,
    ) -> impl Future<Output = Result<SaveOutcome, PortError>> + Send;

    /// The states of `ids` in one read; a target never stored comes back as the default state.
    fn load_states(
        &self,
        ids: &[ScalableTargetId],
    ) -> impl Future<Output = Result<Vec<(ScalableTargetId, TargetState)>, PortError>> + Send;

    /// Writes `state` as version `state.version + 1` if the stored version is still
    /// `state.version`. `token` identifies this write so that a retried write that already
    /// landed counts as saved (the ambiguous-write case).
    fn save_state(
        &self,
        id: &ScalableTargetId,
        state: &TargetState,
        token: &str,
    ) -> impl Future<Output = Result<SaveOutcome, PortError>> + Send;

    /// Appends a decision-log record (kept for a bounded time).
    fn append_log(
        &self,
        record: &DecisionRecord,
    ) -> impl Future<Output = Result<(), PortError>> + Send {
        let entry = LogEntry::of(record);
        async move {
            let entry = entry.map_err(|e| {
                PortError::new("encode a decision-log record", ErrorClass::Permanent, e)
            })?;
            self.append_log_entry(&entry).await
        }
    }

    /// Appends a decision-log entry under a key derived from its target, instant and body: the
    /// same entry appended twice is one record.
    fn append_log_entry(
        &self,
        entry: &LogEntry,
    ) -> impl Future<Output = Result<(), PortError>> + Send;

    /// The newest decision-log records of a target, newest first.
    fn recent_log(
        &self,
        id: &ScalableTargetId,
        limit: usize,
    ) -> impl Future<Output = Result<Vec<serde_json::Value>, PortError>> + Send;
}
