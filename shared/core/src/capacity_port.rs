//! The port through which headroom reads how much capacity a target really has: SageMaker's
//! desired and in-service counts (instances for a variant, copies for an inference component).
//! Used to measure wake latency and to follow the high-water mark of a burst. Kept apart from
//! `ports.rs` because only the alarm automation and the tick's capacity check need it.

use std::future::Future;

use crate::ids::ScalableTargetId;
use crate::ports::PortError;

/// A target's desired and in-service counts as SageMaker reports them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Counts {
    pub desired: u32,
    pub current: u32,
}

/// SageMaker, as the alarm automation reads it.
pub trait CurrentCapacity: Send + Sync {
    /// The target's counts, or `None` when SageMaker does not know it (the endpoint, variant or
    /// inference component does not exist).
    fn desired_and_current(
        &self,
        id: &ScalableTargetId,
    ) -> impl Future<Output = Result<Option<Counts>, PortError>> + Send;
}

/// No capacity port: for callers that do not read SageMaker (then nothing is observed).
impl CurrentCapacity for () {
    async fn desired_and_current(
        &self,
        _id: &ScalableTargetId,
    ) -> Result<Option<Counts>, PortError> {
        Ok(None)
    }
}
