//! The bounds headroom steers on a scalable target.

use serde::{Deserialize, Serialize};

/// A scalable target's bounds as headroom steers them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Bounds {
    pub min: u32,
    pub max: u32,
    /// AAS `SuspendedState.DynamicScalingInSuspended`.
    pub suspend_scale_in: bool,
}
