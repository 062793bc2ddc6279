//! What a target keeps of its forecast between refreshes: the next few slots with the capacity
//! each asks for, the learned margin, and the running score of earlier forecasts. Small by
//! design (a few hours of slots), so the state item stays far below DynamoDB's item limit.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ForecastState {
    pub computed_at: DateTime<Utc>,
    pub slot_secs: i64,
    /// Upcoming slots, in time order (empty when `unavailable` says why).
    #[serde(default)]
    pub slots: Vec<ForecastSlot>,
    /// Slots of earlier forecasts that have ended but that no history read covers yet (their
    /// last minutes were unpublished at the refresh: `metrics_port::PUBLISH_DELAY`), in time
    /// order: kept only to be scored by the next refresh, against the forecast that claimed
    /// them. They claim nothing.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unscored: Vec<ForecastSlot>,
    /// The factor the seasonal estimate is raised by, learned from its own past errors.
    pub margin: f64,
    /// The level the refresh found for its day (`level.rs`), which scaled that day's slots; 1 in
    /// states stored before there was one.
    #[serde(default = "unit_level", skip_serializing_if = "is_unit_level")]
    pub level: f64,
    /// Days of history the forecast read.
    pub history_days: u32,
    /// Whether the slots came from days of the same kind (weekday or weekend) only.
    #[serde(default)]
    pub same_kind: bool,
    /// Why there is no forecast (too little history, no datapoints).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unavailable: Option<String>,
    #[serde(default)]
    pub score: ForecastScore,
    /// The planned peaks' verdicts from the same history (`schedule_review.rs`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub schedule: Vec<crate::forecast::schedule_review::PeakReview>,
    /// The planned windows scored so far, newest last (`window_score.rs`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub windows: Vec<crate::forecast::window_score::WindowScore>,
    /// The end of the history the windows were last scored from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub windows_scored_until: Option<DateTime<Utc>>,
    /// The last refresh that failed in a way retrying cannot mend (AWS answered AccessDenied, a
    /// validation error): `status` shows it, and the next attempt waits [`REFRESH_EVERY`] from
    /// it instead of coming every minute. A successful refresh starts without it.
    ///
    /// [`REFRESH_EVERY`]: crate::forecast::build::REFRESH_EVERY
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refresh_failed: Option<RefreshFailed>,
}

/// A refresh that failed for good: when, why, and AWS's error code when AWS answered.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RefreshFailed {
    pub at: DateTime<Utc>,
    pub error: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
}

fn unit_level() -> f64 {
    1.0
}

fn is_unit_level(level: &f64) -> bool {
    *level == 1.0
}

/// One forecast slot: `[start, start + slot_secs)`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ForecastSlot {
    pub start: DateTime<Utc>,
    /// Forecast demand including the margin, requests per minute.
    pub demand: f32,
    /// Instances that demand needs at the plan's `invocations_per_instance`.
    pub floor: u32,
    /// The level `demand` includes: the refresh's for a slot of its own day, else 1.
    #[serde(default = "unit_level", skip_serializing_if = "is_unit_level")]
    pub level: f64,
    /// The slot's claim reason, made once (`claims::would_claim`); never stored.
    #[serde(skip)]
    pub reason: ReasonCache,
}

/// A claim reason kept with the slot it describes, for the lead time and demand kind it was made
/// for. Every reconcile derives the forecast claim again, and formatting its reason (its demand and
/// margin as decimals) was a twelfth of a forecasting simulation; a stored forecast is shared
/// between state copies (`Arc`), so one slot's reason is made once per refresh there. A state read
/// from DynamoDB starts with none, as its claim is then derived once anyway. It takes no part in
/// equality: it is what the other fields already say.
#[derive(Debug, Clone, Default)]
pub struct ReasonCache(std::sync::OnceLock<(ReasonKey, std::sync::Arc<str>)>);

/// What a kept reason was made for: the lead time in seconds and the demand it writes.
pub type ReasonKey = (i64, crate::plan::forecast::DemandKind);

impl ReasonCache {
    /// The reason for `key`: the kept one, or `make()`'s (kept when none was).
    pub fn get_or(&self, key: ReasonKey, make: impl FnOnce() -> String) -> String {
        match self.0.get() {
            Some((kept, text)) if *kept == key => text.to_string(),
            Some(_) => make(),
            None => {
                let text: std::sync::Arc<str> = make().into();
                let _ = self.0.set((key, text.clone()));
                text.to_string()
            }
        }
    }
}

impl PartialEq for ReasonCache {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

/// How earlier forecasts compared with what happened, summed since `since`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ForecastScore {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub since: Option<DateTime<Utc>>,
    /// Slots scored: every slot is scored once, after it ends.
    pub slots: u32,
    /// Minutes in which demand needed more instances than the forecast floor.
    pub under_minutes: u32,
    /// Instance-hours the forecast floor held beyond what demand needed.
    pub over_instance_hours: f64,
    /// The end of the last slot scored.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scored_until: Option<DateTime<Utc>>,
}

impl ForecastState {
    /// The slot that covers `at`.
    pub fn slot_at(&self, at: DateTime<Utc>) -> Option<&ForecastSlot> {
        let len = chrono::Duration::seconds(self.slot_secs);
        self.slots
            .iter()
            .find(|s| s.start <= at && at < s.start + len)
    }

    /// The end of the last slot.
    pub fn horizon(&self) -> Option<DateTime<Utc>> {
        self.slots
            .last()
            .map(|s| s.start + chrono::Duration::seconds(self.slot_secs))
    }
}
