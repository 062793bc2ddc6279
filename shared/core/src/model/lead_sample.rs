//! One measured scale-out, as the target state keeps it: what pre-scaling's lead time is learned
//! from (`lead_time.rs`) and what a review reports of the old model (`review.rs`).

use chrono::{DateTime, Duration, Utc};
use serde::{Deserialize, Serialize};

use super::ModelFingerprint;

/// Samples kept per target, newest by end time (the plan's `min_samples` cannot ask for more).
pub const LEAD_SAMPLES_KEPT: usize = 50;
/// Longer than this is an endpoint stuck or a lost event, not a measurement.
pub const LONGEST_SAMPLE: Duration = Duration::hours(6);

/// Whether capacity that started at `started` and was in service at `ended` is a measurement.
pub fn is_plausible(started: DateTime<Utc>, ended: DateTime<Utc>) -> bool {
    ended > started && ended - started <= LONGEST_SAMPLE
}

/// One measured scale-out: how long it took from the decision to capacity in service.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LeadSample {
    pub ended_at: DateTime<Utc>,
    pub seconds: i64,
    /// Model identity fingerprint in force when it was measured.
    #[serde(default)]
    pub model: Option<ModelFingerprint>,
    pub source: SampleSource,
}

/// Where a scale-out was measured. Stored as these names since the first samples, so a sample
/// from any build loads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SampleSource {
    /// A successful AAS scaling activity, start to end (`lead_samples::activity_samples`).
    AasActivity,
    /// The endpoint's UPDATING (or CREATING) to IN_SERVICE (`endpoint_transitions.rs`).
    EndpointState,
}

impl SampleSource {
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::AasActivity => "aas-activity",
            Self::EndpointState => "endpoint-state",
        }
    }
}

impl std::fmt::Display for SampleSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}
