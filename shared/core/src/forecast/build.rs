//! Turns a demand history into the stored forecast: the seasonal estimate of each upcoming slot
//! (`profile.rs`), scaled by today's level (`level.rs`), raised by a margin learned from those
//! estimates' own errors on the last days, turned into instances at the plan's
//! `invocations_per_instance`. Pure: the caller fetches the history and passes `now`; only
//! datapoints before `now` are read.

use chrono::{DateTime, NaiveDate, Utc};

use crate::duration::Span;
use crate::forecast::level::{
    level_bounds, level_within, level_within_with, refresh_gap, TodayLevel,
};
use crate::forecast::profile::{slot_of, weighted_quantile, Day, Profile};
use crate::forecast::score::score_previous;
use crate::forecast::series::DemandSeries;
use crate::forecast::state::{ForecastSlot, ForecastState};
use crate::plan::ForecastPolicy;

/// How often the forecast is refreshed.
pub const REFRESH_EVERY: Span = Span::hours(1);
/// The margin is learned from this many most recent days.
pub const BACKTEST_DAYS: usize = 7;

/// Builds the forecast at `now` from `series` (datapoints at or after `now` are ignored).
pub fn build_forecast(
    policy: &ForecastPolicy,
    series: &DemandSeries,
    lead_time: Span,
    now: DateTime<Utc>,
    previous: Option<&ForecastState>,
) -> ForecastState {
    let series = past_only(&series.coarsen(policy.resolution.as_secs()), now);
    let slot_secs = policy.slot.as_secs();
    let profile = Profile::build(&series, policy.timezone, slot_secs);
    let history_days = profile.days.len() as u32;
    let mut score = previous.map(|p| p.score.clone()).unwrap_or_default();
    if let Some(p) = previous {
        score_previous(&mut score, p, &series, policy.invocations_per_instance);
    }
    let (today, now_slot) = slot_of(policy.timezone, slot_secs, now);
    let Some((_, same_kind)) = profile.reference_days(today, policy.min_days()) else {
        return ForecastState {
            computed_at: now,
            slot_secs,
            slots: Vec::new(),
            margin: 1.0,
            level: 1.0,
            history_days,
            same_kind: false,
            unavailable: Some(format!(
                "only {} whole day(s) of demand history; the forecast needs at least {} \
                 (min_history {})",
                profile
                    .days
                    .iter()
                    .filter(|d| d.date < today && d.observed())
                    .count(),
                policy.min_days(),
                policy.min_history
            )),
            score,
            schedule: Vec::new(),
            windows: Vec::new(),
            windows_scored_until: None,
        };
    };
    let gap = refresh_gap(lead_time, REFRESH_EVERY, slot_secs);
    let margin = learn_margin(&profile, policy, gap);
    let level = TodayLevel {
        date: today,
        factor: today_level(&profile, policy, today, now_slot),
    };
    let slots = upcoming_slots(&profile, policy, margin, level, lead_time, now);
    ForecastState {
        computed_at: now,
        slot_secs,
        slots,
        margin,
        level: level.factor,
        history_days,
        same_kind,
        unavailable: None,
        score,
        schedule: Vec::new(),
        windows: Vec::new(),
        windows_scored_until: None,
    }
}

/// The series cut at `now`: the walk-forward guarantee that no later datapoint is read.
fn past_only(series: &DemandSeries, now: DateTime<Utc>) -> DemandSeries {
    let keep = ((now - series.start).num_seconds() / series.period_secs).max(0) as usize;
    let mut s = series.clone();
    s.values.truncate(keep.min(s.values.len()));
    s
}

/// The seasonal estimate of slot `slot` of `date`, from the days before it.
fn estimate(
    profile: &Profile,
    policy: &ForecastPolicy,
    date: NaiveDate,
    slot: usize,
) -> Option<f32> {
    let (days, _) = profile.reference_days(date, policy.min_days())?;
    Profile::estimate(&days, slot, policy.quantile)
}

/// Today's level at `now_slot` (the slots before it, today's so far), 1 without today's day or
/// reference days.
fn today_level(
    profile: &Profile,
    policy: &ForecastPolicy,
    today: NaiveDate,
    now_slot: usize,
) -> f64 {
    let Some(day) = profile.days.iter().rev().find(|d| d.date == today) else {
        return 1.0;
    };
    let Some((refs, same_kind)) = profile.reference_days(today, policy.min_days()) else {
        return 1.0;
    };
    let estimates = estimates_of(&refs, policy, profile.slots_per_day());
    level_within(
        &day.peaks,
        &estimates,
        profile.slot_secs,
        now_slot,
        level_bounds(same_kind),
    )
}

/// The estimate of every slot of a day from its reference days `refs`.
fn estimates_of(refs: &[&Day], policy: &ForecastPolicy, slots: usize) -> Vec<Option<f32>> {
    let mut samples = Vec::with_capacity(refs.len());
    (0..slots)
        .map(|slot| Profile::estimate_with(&mut samples, refs, slot, policy.quantile))
        .collect()
}

/// The margin: the `margin_quantile` of actual / estimated slot peaks over the last
/// [`BACKTEST_DAYS`] days, each day left out and estimated from all the other days of the
/// history before `now`, nearest first (their classes, weekday or weekend by behaviour, judged
/// on that whole history), scaled by its day's level as a refresh `gap` slots earlier saw it,
/// weighted by the estimate (busy slots matter more than quiet ones), within `[1, max_margin]`.
///
/// Why every other day, and not only the days before the judged one: the margin stands for the
/// error of today's estimate, which is made from the whole history. Judged from the days before
/// it only, the first week's days are estimated from as few as `min_history` days, some of the
/// other kind, and err more than today's estimate will: the margin was higher in the first
/// week (on one synthetic web trace at its cap) and fell as history grew, so a week's backtest (`plan suggest --budget`) promised more than
/// later weeks gave. Left out one at a time, each day is estimated from about as many days as
/// today's. No datapoint at or after `now` is read either way.
fn learn_margin(profile: &Profile, policy: &ForecastPolicy, gap: usize) -> f64 {
    let mut samples = Vec::new();
    let mut ratios = Vec::new();
    for day in profile.days.iter().rev().take(BACKTEST_DAYS) {
        let Some((refs, same_kind)) = profile.days_around(day.date, policy.min_days()) else {
            continue;
        };
        let estimates = estimates_of(&refs, policy, day.peaks.len());
        for (slot, actual) in day.peaks.iter().enumerate() {
            if !actual.is_finite() {
                continue;
            }
            let Some(est) = estimates[slot] else {
                continue;
            };
            let level = match slot.checked_sub(gap) {
                Some(seen) => level_within_with(
                    &mut ratios,
                    &day.peaks,
                    &estimates,
                    profile.slot_secs,
                    seen,
                    level_bounds(same_kind),
                ),
                None => 1.0,
            };
            let est = (f64::from(est) * level) as f32;
            if est > 0.0 {
                samples.push((actual / est, f64::from(est)));
            }
        }
    }
    weighted_quantile(&mut samples, policy.margin_quantile)
        .map_or(1.0, f64::from)
        .clamp(1.0, policy.max_margin)
}

/// The slots from the one holding `now` until the next refresh is due plus the lead time and
/// one slot, so a claim is always known a lead time before its slot starts; `level` scales its
/// own day's slots only.
fn upcoming_slots(
    profile: &Profile,
    policy: &ForecastPolicy,
    margin: f64,
    level: TodayLevel,
    lead_time: Span,
    now: DateTime<Utc>,
) -> Vec<ForecastSlot> {
    let slot_secs = policy.slot.as_secs();
    let first = now.timestamp().div_euclid(slot_secs) * slot_secs;
    let until = now.timestamp()
        + REFRESH_EVERY.as_secs()
        + Span::minutes(10).as_secs()
        + lead_time.as_secs()
        + slot_secs;
    let mut out = Vec::new();
    let mut t = first;
    while t < until {
        let start = DateTime::from_timestamp(t, 0).unwrap_or(now);
        let (date, slot) = slot_of(policy.timezone, slot_secs, start);
        if let Some(est) = estimate(profile, policy, date, slot) {
            let slot_level = level.for_date(date);
            let demand = (f64::from(est) * margin * slot_level) as f32;
            out.push(ForecastSlot {
                start,
                demand,
                floor: instances_for(demand, policy),
                level: slot_level,
            });
        }
        t += slot_secs;
    }
    out
}

/// Instances for `demand` requests per minute, at most the policy's `max_floor`.
pub fn instances_for(demand: f32, policy: &ForecastPolicy) -> u32 {
    let n = (f64::from(demand) / policy.invocations_per_instance - 1e-9).ceil();
    if n.is_finite() && n > 0.0 {
        (n.min(f64::from(policy.max_floor))) as u32
    } else {
        0
    }
}

/// Whether the stored forecast is due for a refresh at `now`.
pub fn is_due(state: Option<&ForecastState>, now: DateTime<Utc>) -> bool {
    state.is_none_or(|f| now - f.computed_at >= REFRESH_EVERY.to_chrono() || f.computed_at > now)
}
