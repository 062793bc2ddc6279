//! The periodic safety-net tick: "reconcile every managed target now".

use chrono::{DateTime, Utc};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tick {
    /// The envelope's `time`; without one, handlers fall back to the clock.
    pub at: Option<DateTime<Utc>>,
    pub id: Option<String>,
}
