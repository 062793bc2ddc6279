//! The ports: one small trait per AWS service, in headroom's terms. Adapters implement them with
//! the AWS SDK (`headroom-adapters`), the simulator and the tests with memory. Ports return domain
//! types and classified errors, never SDK output structs.

use std::error::Error as StdError;
use std::future::Future;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::ids::ScalableTargetId;
use crate::log::DecisionRecord;
use crate::model::{LogEntry, Observed, Suspended};
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

/// What kind of failure a [`PortError`] is, for the operator: it picks the hint and the CLI's
/// exit code. The retry decision is [`ErrorClass`]'s alone.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FailureKind {
    /// AWS answered with an error code not covered below (validation, throttling, a 5xx).
    Aws,
    /// The resource does not exist (the table, a target).
    NotFound,
    /// AWS refused the caller: a missing IAM permission, or credentials it does not accept.
    Access,
    /// The request never left: no region, no credentials found.
    Config,
    /// No answer: connection refused or reset, DNS, timeout.
    Unreachable,
    /// Not an AWS failure: a stored item headroom cannot read, work left undone.
    Local,
}

/// An AWS call that failed, described once: what failed (`operation`), AWS's error code and
/// message when AWS answered, and what to do about it. The SDK error is kept as the cause for
/// code that wants to inspect it, but it is deliberately not the `source()`: its own display
/// chain ("service error: ... service error: ...") says nothing the fields do not, so error
/// reporters that print the chain stop here. The details are boxed: every `Result` carrying a
/// port error stays small.
#[derive(Debug, thiserror::Error)]
#[error("{}", self.one_line())]
pub struct PortError {
    /// What headroom was doing, as a verb phrase ("read the current plan from table t").
    pub operation: String,
    pub class: ErrorClass,
    pub kind: FailureKind,
    details: Box<Details>,
}

#[derive(Debug)]
struct Details {
    code: Option<String>,
    message: String,
    hint: Option<String>,
    cause: Box<dyn StdError + Send + Sync>,
}

impl PortError {
    /// A failure that is not AWS's own answer: the message is `source`'s display.
    pub fn new(
        operation: impl Into<String>,
        class: ErrorClass,
        source: impl Into<Box<dyn StdError + Send + Sync>>,
    ) -> Self {
        let cause = source.into();
        Self {
            operation: operation.into(),
            class,
            kind: FailureKind::Local,
            details: Box::new(Details {
                code: None,
                message: cause.to_string(),
                hint: None,
                cause,
            }),
        }
    }

    /// Sets what AWS answered (or, for `code: None`, what the transport said).
    pub fn with_answer(
        mut self,
        kind: FailureKind,
        code: Option<String>,
        message: impl Into<String>,
    ) -> Self {
        self.kind = kind;
        self.details.code = code;
        self.details.message = message.into();
        self
    }

    pub fn with_hint(mut self, hint: impl Into<String>) -> Self {
        self.details.hint = Some(hint.into());
        self
    }

    /// AWS's error code (`ThrottlingException`, `AccessDeniedException`), when AWS answered.
    pub fn code(&self) -> Option<&str> {
        self.details.code.as_deref()
    }

    /// AWS's message, or what the transport reported, in one line.
    pub fn message(&self) -> &str {
        &self.details.message
    }

    /// What the operator should do, when headroom knows.
    pub fn hint(&self) -> Option<&str> {
        self.details.hint.as_deref()
    }

    /// The error as the SDK (or the failing step) gave it.
    pub fn cause(&self) -> &(dyn StdError + Send + Sync + 'static) {
        self.details.cause.as_ref()
    }

    pub fn is_retryable(&self) -> bool {
        self.class == ErrorClass::Retryable
    }

    /// `failed to OPERATION: CODE: MESSAGE; HINT`, each part once.
    pub fn one_line(&self) -> String {
        let mut line = format!("failed to {}: ", self.operation);
        let message = self.message();
        match self.code() {
            Some(code) if !message.is_empty() && message != code => {
                line.push_str(&format!("{code}: {message}"));
            }
            Some(code) => line.push_str(code),
            None if message.is_empty() => line.push_str("unknown error"),
            None => line.push_str(message),
        }
        if let Some(hint) = self.hint() {
            line.push_str("; ");
            line.push_str(hint);
        }
        // One line, whatever AWS or a stored item put in the message.
        line.replace(['\n', '\r'], " ")
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
    ) -> impl Future<Output = Result<Vec<LogEntry>, PortError>> + Send;
}
