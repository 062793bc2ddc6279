//! What `headroom status` says of a target's forecast: whether there is one (and why not), what it
//! claims or would claim now, the next slots and the score of the past ones.

use chrono::{DateTime, Utc};
use serde::Serialize;

use crate::duration::Span;
use crate::forecast::claims::would_claim;
use crate::forecast::schedule_review::PeakReview;
use crate::forecast::state::{ForecastScore, ForecastState, RefreshFailed};
use crate::forecast::window_score::WindowScore;
use crate::plan::{ForecastMode, ForecastPolicy};

#[derive(Debug, Clone, Serialize)]
pub struct ForecastSummary {
    pub mode: ForecastMode,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub computed_at: Option<DateTime<Utc>>,
    /// Why there is no forecast (never refreshed yet, too little history).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unavailable: Option<String>,
    pub margin: f64,
    /// The level the last refresh found for its day, which scaled that day's slots
    /// (`level.rs`).
    pub level: f64,
    pub history_days: u32,
    /// The floor the forecast claims now (forecast-only mode: would claim).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub floor_now: Option<u32>,
    /// `(slot start, floor)` of the next three slots.
    pub next: Vec<(DateTime<Utc>, u32)>,
    pub score: ForecastScore,
    /// The planned peaks' verdicts (`schedule_review.rs`).
    pub schedule: Vec<PeakReview>,
    /// The last [`SHOWN_WINDOWS`] planned windows scored, newest last (`window_score.rs`).
    pub windows: Vec<WindowScore>,
    /// The last refresh that failed for good, when it is newer than the forecast shown.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub refresh_failed: Option<RefreshFailed>,
}

/// Window scores `headroom status` shows per target (the state keeps more).
pub const SHOWN_WINDOWS: usize = 3;

pub fn summarize(
    policy: &ForecastPolicy,
    state: Option<&ForecastState>,
    lead_time: Span,
    now: DateTime<Utc>,
) -> ForecastSummary {
    let Some(f) = state else {
        return ForecastSummary {
            mode: policy.mode,
            computed_at: None,
            unavailable: Some("not refreshed yet: the tick refreshes it within the hour".into()),
            margin: 1.0,
            level: 1.0,
            history_days: 0,
            floor_now: None,
            next: Vec::new(),
            score: ForecastScore::default(),
            schedule: Vec::new(),
            windows: Vec::new(),
            refresh_failed: None,
        };
    };
    ForecastSummary {
        mode: policy.mode,
        computed_at: Some(f.computed_at),
        unavailable: f.unavailable.clone(),
        margin: f.margin,
        level: f.level,
        history_days: f.history_days,
        floor_now: would_claim(f, policy.demand, lead_time, now).map(|c| c.floor),
        next: f
            .slots
            .iter()
            .filter(|s| s.start > now)
            .take(3)
            .map(|s| (s.start, s.floor))
            .collect(),
        score: f.score.clone(),
        schedule: f.schedule.clone(),
        windows: f.windows[f.windows.len().saturating_sub(SHOWN_WINDOWS)..].to_vec(),
        refresh_failed: f.refresh_failed.clone(),
    }
}
