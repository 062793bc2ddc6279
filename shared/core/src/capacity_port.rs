//! The port through which headroom reads how much capacity a target really has: SageMaker's
//! desired and in-service counts (instances for a variant, copies for an inference component).
//! Used to measure wake latency and to follow the high-water mark of a burst. Kept apart from
//! `ports.rs` because only the alarm automation and the tick's capacity check need it.

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

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
    /// `(desired, current)` for the target, or `None` when SageMaker does not know it (the
    /// endpoint, variant or inference component does not exist).
    fn desired_and_current(
        &self,
        id: &ScalableTargetId,
    ) -> impl Future<Output = Result<Option<(u32, u32)>, PortError>> + Send;
}

/// In-memory capacity for the simulator, `headroom explain` and tests; counts its calls.
#[derive(Debug, Default)]
pub struct MemoryCapacity {
    counts: Mutex<BTreeMap<ScalableTargetId, Counts>>,
    pub calls: AtomicUsize,
}

impl MemoryCapacity {
    pub fn with(self, id: ScalableTargetId, desired: u32, current: u32) -> Self {
        self.set(id, desired, current);
        self
    }

    pub fn set(&self, id: ScalableTargetId, desired: u32, current: u32) {
        self.counts
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .insert(id, Counts { desired, current });
    }

    pub fn call_count(&self) -> usize {
        self.calls.load(Ordering::SeqCst)
    }
}

impl CurrentCapacity for MemoryCapacity {
    async fn desired_and_current(
        &self,
        id: &ScalableTargetId,
    ) -> Result<Option<(u32, u32)>, PortError> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        Ok(self
            .counts
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .get(id)
            .map(|c| (c.desired, c.current)))
    }
}

/// No capacity port: for callers that do not read SageMaker (then nothing is observed).
#[derive(Debug, Clone, Copy, Default)]
pub struct NoCapacity;

impl CurrentCapacity for NoCapacity {
    async fn desired_and_current(
        &self,
        _id: &ScalableTargetId,
    ) -> Result<Option<(u32, u32)>, PortError> {
        Ok(None)
    }
}
