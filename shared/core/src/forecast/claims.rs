//! The forecast claim: each stored slot asks for its floor from `slot start - lead time` to the
//! slot's end, so capacity ordered a lead time ahead is in service when the slot begins. Derived
//! at every reconcile from the stored slots (never stored as a claim), bounded by the slot's end,
//! never suspending scale-in: target tracking still scales above it.

use chrono::{DateTime, Utc};

use crate::claim::{Claim, ClaimSource};
use crate::duration::Span;
use crate::forecast::level::level_note;
use crate::forecast::state::ForecastState;
use crate::plan::{ForecastMode, ForecastPolicy};
use crate::utc_text::{Clock, Minute};

/// The forecast's claim that matters at `now` (the largest floor among the slots live then), or
/// `None` (forecast-only mode, no forecast, or no slot live).
pub fn forecast_claim(
    policy: &ForecastPolicy,
    state: Option<&ForecastState>,
    lead_time: Span,
    now: DateTime<Utc>,
) -> Option<Claim> {
    if policy.mode != ForecastMode::Active {
        return None;
    }
    would_claim(state?, lead_time, now)
}

/// The claim the stored forecast asks for at `now`, whatever the mode (`status` and
/// forecast-only mode show it as "would set").
pub fn would_claim(state: &ForecastState, lead_time: Span, now: DateTime<Utc>) -> Option<Claim> {
    let len = chrono::Duration::seconds(state.slot_secs);
    let lead = lead_time.to_chrono();
    let slot = state
        .slots
        .iter()
        .filter(|s| s.floor > 0 && s.start - lead <= now && now < s.start + len)
        .max_by_key(|s| (s.floor, s.start))?;
    let end = slot.start + len;
    Some(Claim::new(
        ClaimSource::Forecast,
        slot.floor,
        slot.start - lead,
        end,
        None,
        format!(
            "forecast {:.0} requests/min for {} to {} (margin x{:.2}{}, {} days of history, lead time {lead_time})",
            slot.demand,
            Minute(slot.start),
            Clock(end),
            state.margin,
            level_note(slot.level),
            state.history_days,
        ),
    ))
}
