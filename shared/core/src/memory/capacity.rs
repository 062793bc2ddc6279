//! SageMaker's counts in memory.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use crate::capacity_port::{Counts, CurrentCapacity};
use crate::ids::ScalableTargetId;
use crate::ports::PortError;

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
    ) -> Result<Option<Counts>, PortError> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        Ok(self
            .counts
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .get(id)
            .copied())
    }
}
