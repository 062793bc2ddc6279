//! What Application Auto Scaling reports for a target.

use serde::{Deserialize, Serialize};

use super::{Bounds, Suspended};
use crate::ids::ScalableTargetId;

/// What Application Auto Scaling reports for a target.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Observed {
    pub id: ScalableTargetId,
    pub min: u32,
    pub max: u32,
    pub suspended: Suspended,
}

impl Observed {
    pub fn bounds(&self) -> Bounds {
        Bounds {
            min: self.min,
            max: self.max,
            suspend_scale_in: self.suspended.dynamic_in,
        }
    }
}
