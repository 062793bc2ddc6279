//! The forecast claim: each stored slot asks for its floor from `slot start - lead time` to the
//! slot's end, so capacity ordered a lead time ahead is in service when the slot begins. Derived
//! at every reconcile from the stored slots (never stored as a claim), bounded by the slot's end,
//! never suspending scale-in: target tracking still scales above it.

use chrono::{DateTime, Utc};

use crate::claim::{Claim, ClaimSource};
use crate::duration::Span;
use crate::forecast::level::level_note;
use crate::forecast::state::ForecastState;
use crate::plan::forecast::DemandKind;
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
    would_claim(state?, policy.demand, lead_time, now)
}

/// The span the stored forecast covers with its slots, from the first slot's start to the last
/// one's end, when `policy` is active: a burst guard's alarm that clears inside it is followed by
/// the short `hold`, one outside it (no forecast yet, a forecast-only mode, or slots gone stale
/// because refreshes failed) by `hold_without_forecast`.
pub fn claiming_span(
    policy: Option<&ForecastPolicy>,
    state: Option<&ForecastState>,
) -> Option<(DateTime<Utc>, DateTime<Utc>)> {
    if policy?.mode != ForecastMode::Active {
        return None;
    }
    let state = state?;
    Some((state.slots.first()?.start, state.horizon()?))
}

/// The claim the stored forecast asks for at `now`, whatever the mode (`status` and
/// forecast-only mode show it as "would set"); its reason writes the slot's level of `demand`.
pub fn would_claim(
    state: &ForecastState,
    demand: DemandKind,
    lead_time: Span,
    now: DateTime<Utc>,
) -> Option<Claim> {
    let len = chrono::Duration::seconds(state.slot_secs);
    let lead = lead_time.to_chrono();
    let slot = state
        .slots
        .iter()
        .filter(|s| s.floor > 0 && s.start - lead <= now && now < s.start + len)
        .max_by_key(|s| (s.floor, s.start))?;
    let end = slot.start + len;
    let reason = slot.reason.get_or((lead_time.as_secs(), demand), || {
        format!(
            "forecast {:.0}{} for {} to {} (margin x{:.2}{}, {} days of history, lead time {lead_time})",
            slot.demand,
            demand.unit(),
            Minute(slot.start),
            Clock(end),
            state.margin,
            level_note(slot.level),
            state.history_days,
        )
    });
    Some(Claim::new(
        ClaimSource::Forecast,
        slot.floor,
        slot.start - lead,
        end,
        None,
        reason,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::forecast::state::{ForecastScore, ForecastSlot};

    fn state() -> ForecastState {
        let at = |s: &str| s.parse::<DateTime<Utc>>().expect("instant");
        ForecastState {
            computed_at: at("2026-03-02T08:00:00Z"),
            slot_secs: 600,
            slots: vec![ForecastSlot {
                start: at("2026-03-02T09:00:00Z"),
                demand: 612.5,
                floor: 21,
                level: 1.0,
                reason: Default::default(),
            }],
            unscored: Vec::new(),
            margin: 1.05,
            level: 1.0,
            history_days: 6,
            same_kind: true,
            unavailable: None,
            score: ForecastScore::default(),
            schedule: Vec::new(),
            windows: Vec::new(),
            windows_scored_until: None,
            refresh_failed: None,
        }
    }

    #[test]
    fn a_slots_reason_is_made_once_per_lead_time_and_says_the_same_each_time() {
        let state = state();
        let now = "2026-03-02T08:50:00Z".parse().expect("instant");
        let reason = |lead: Span| {
            would_claim(&state, DemandKind::Invocations, lead, now)
                .expect("live")
                .reason
        };
        let first = reason(Span::minutes(15));
        assert_eq!(
            first,
            "forecast 612/min for 2026-03-02T09:00Z to 09:10Z (margin x1.05, 6 days of history, lead time 15m)"
        );
        assert_eq!(reason(Span::minutes(15)), first);
        // Another lead time is said as it is, not as the kept one.
        assert!(reason(Span::minutes(12)).ends_with("lead time 12m)"));
        assert_eq!(reason(Span::minutes(15)), first);
        // Another demand is written in its own unit, not as the kept reason.
        let in_flight = would_claim(&state, DemandKind::Concurrency, Span::minutes(15), now);
        assert!(in_flight
            .expect("live")
            .reason
            .starts_with("forecast 612 in flight for 2026-03-02T09:00Z"));
        assert_eq!(reason(Span::minutes(15)), first);
        // Copies of the state share nothing they could disagree on.
        assert_eq!(state.clone(), state);
    }
}
