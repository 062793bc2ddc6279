//! Application Auto Scaling's suspension flags.

use serde::{Deserialize, Serialize};

/// AAS's three suspension flags. headroom steers only dynamic scale-in and passes the other two
/// through as it finds them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Suspended {
    pub dynamic_in: bool,
    pub dynamic_out: bool,
    pub scheduled: bool,
}
