//! What can go wrong in the deployment watcher, one variant per step, each naming the thing
//! that failed and whether a retry can help.

use crate::ports::PortError;
use crate::reconcile::ReconcileError;
use crate::review::AckError;

#[derive(Debug, thiserror::Error)]
pub enum DeployError {
    #[error("failed to {step} for {subject}: {source}")]
    Port {
        subject: String,
        step: &'static str,
        #[source]
        source: PortError,
    },
    #[error(transparent)]
    Reconcile(#[from] ReconcileError),
    #[error("no review {id} among the managed targets' reviews: `headroom reviews list --all` shows them")]
    ReviewNotFound { id: String },
    #[error(transparent)]
    Ack(#[from] AckError),
    #[error("review {id} changed while it was being acknowledged: run the command again")]
    ReviewConflict { id: String },
    #[error("pending review {id} changed while its withdrawal was being stored (a duplicate event or an acknowledgement at the same moment): the event is retried")]
    WithdrawalConflict { id: String },
    /// An event from another account or region: nothing was read or written.
    #[error("SageMaker event refused: {reason}")]
    Refused { reason: String },
    #[error("this function cannot tell its own account and region from its ARN {arn:?}: SageMaker events are refused until it can (a local runtime that sends no Lambda ARN, such as `cargo lambda watch`, needs HEADROOM_FUNCTION_ARN=arn:aws:lambda:<region>:<account>:function:headroom-deploy)")]
    UnknownHome { arn: String },
}

impl DeployError {
    /// Whether the trigger should be retried (Lambda's retry, then its dead-letter destination).
    pub fn is_retryable(&self) -> bool {
        match self {
            Self::Port { source, .. } => source.is_retryable(),
            Self::Reconcile(e) => e.is_retryable(),
            Self::ReviewConflict { .. } | Self::WithdrawalConflict { .. } => true,
            Self::ReviewNotFound { .. }
            | Self::Ack(_)
            | Self::Refused { .. }
            | Self::UnknownHome { .. } => false,
        }
    }
}

/// Wraps a port error with the step and the subject (a target, an endpoint) it was for.
pub fn port(subject: impl ToString, step: &'static str) -> impl FnOnce(PortError) -> DeployError {
    let subject = subject.to_string();
    move |source| DeployError::Port {
        subject,
        step,
        source,
    }
}
