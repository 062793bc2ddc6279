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
use crate::forecast::state::{ForecastSlot, ForecastState, RefreshFailed};
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
    forecast_with_hindcast(policy, series, lead_time, now, previous).0
}

/// [`build_forecast`], and what the forecast as it now stands would have claimed over the last
/// days (`None` without a forecast): the schedule review judges planned peaks beside it.
pub fn forecast_with_hindcast(
    policy: &ForecastPolicy,
    series: &DemandSeries,
    lead_time: Span,
    now: DateTime<Utc>,
    previous: Option<&ForecastState>,
) -> (ForecastState, Option<Hindcast>) {
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
        let state = ForecastState {
            computed_at: now,
            slot_secs,
            slots: Vec::new(),
            unscored: Vec::new(),
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
            refresh_failed: None,
        };
        return (state, None);
    };
    let gap = refresh_gap(lead_time, REFRESH_EVERY, slot_secs);
    let mut hindcast = Hindcast::of(&profile, policy, gap);
    let margin = learn_margin(&profile, &hindcast);
    hindcast.margin = margin;
    let level = TodayLevel {
        date: today,
        factor: today_level(&profile, policy, today, now_slot),
    };
    let slots = upcoming_slots(&profile, policy, margin, level, lead_time, now);
    let state = ForecastState {
        computed_at: now,
        slot_secs,
        slots,
        unscored: unscored_before(previous, slot_secs, series.end(), now),
        margin,
        level: level.factor,
        history_days,
        same_kind,
        unavailable: None,
        score,
        schedule: Vec::new(),
        windows: Vec::new(),
        windows_scored_until: None,
        refresh_failed: None,
    };
    (state, Some(hindcast))
}

/// The slots of `previous` (its `unscored` ones too) before the one holding `now` that the
/// history read (up to `history_end`) does not cover yet: the minutes before a refresh may not
/// be published (`metrics_port::PUBLISH_DELAY`). A slot is scored by the first refresh whose
/// history covers it, against the forecast stored before that refresh; the next forecast begins
/// at `now` and would not hold these, so without them they would never be scored. Only those
/// that ended within a refresh interval are kept: a history that stops short for longer (an
/// idle metric) must not carry slots from refresh to refresh.
fn unscored_before(
    previous: Option<&ForecastState>,
    slot_secs: i64,
    history_end: DateTime<Utc>,
    now: DateTime<Utc>,
) -> Vec<ForecastSlot> {
    let Some(p) = previous.filter(|p| p.slot_secs == slot_secs) else {
        return Vec::new();
    };
    let now_slot = now.timestamp().div_euclid(slot_secs) * slot_secs;
    let len = chrono::Duration::seconds(slot_secs);
    let oldest_end = now - REFRESH_EVERY.to_chrono();
    p.unscored
        .iter()
        .chain(&p.slots)
        .filter(|s| {
            let end = s.start + len;
            end > history_end && end > oldest_end && s.start.timestamp() < now_slot
        })
        .cloned()
        .collect()
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
    estimates_with(&mut Vec::with_capacity(refs.len()), refs, policy, slots)
}

/// [`estimates_of`] in a caller's buffer.
fn estimates_with(
    samples: &mut Vec<(f32, f64)>,
    refs: &[&Day],
    policy: &ForecastPolicy,
    slots: usize,
) -> Vec<Option<f32>> {
    (0..slots)
        .map(|slot| Profile::estimate_with(samples, refs, slot, policy.quantile))
        .collect()
}

/// The margin: the `margin_quantile` of actual / estimated slot peaks over the last
/// [`BACKTEST_DAYS`] days of the [`Hindcast`] (each day left out and estimated from all the
/// other days, levelled as a refresh `gap` slots earlier saw it), weighted by the estimate (busy
/// slots matter more than quiet ones), within `[1, max_margin]`.
///
/// Why every other day, and not only the days before the judged one: the margin stands for the
/// error of today's estimate, which is made from the whole history. Judged from the days before
/// it only, the first week's days are estimated from as few as `min_history` days, some of the
/// other kind, and err more than today's estimate will: the margin was higher in the first
/// week (on one synthetic web trace at its cap) and fell as history grew, so a week's backtest (`plan suggest --budget`) promised more than
/// later weeks gave. Left out one at a time, each day is estimated from about as many days as
/// today's. No datapoint at or after `now` is read either way.
fn learn_margin(profile: &Profile, hindcast: &Hindcast) -> f64 {
    let mut samples = Vec::new();
    for day in profile.days.iter().rev().take(BACKTEST_DAYS) {
        let Some(judged) = hindcast.days.iter().find(|d| d.date == day.date) else {
            continue;
        };
        for (actual, est) in day.peaks.iter().zip(&judged.estimates) {
            match est {
                Some(est) if actual.is_finite() && *est > 0.0 => {
                    samples.push((actual / est, f64::from(*est)));
                }
                _ => {}
            }
        }
    }
    weighted_quantile(&mut samples, hindcast.policy_margin_quantile)
        .map_or(1.0, f64::from)
        .clamp(1.0, hindcast.max_margin)
}

/// What the forecast, as it now stands, would have asked of every slot of the last days: each
/// day left out and estimated from all the other days of the history (as the margin judges
/// it), levelled as a refresh a lead time and half an hour earlier saw that day, then raised by
/// the margin. The margin is learned from these estimates; the schedule review reads their
/// floors, so that demand the forecast's own claim was there to serve is not blamed on a
/// planned peak. A reconstruction from the whole history, not the floors applied at the time
/// (those came from fewer days in a target's first week, and are not kept).
#[derive(Debug, Clone)]
pub struct Hindcast {
    tz: chrono_tz::Tz,
    slot_secs: i64,
    /// Newest first: [`BACKTEST_DAYS`] for the margin, plus one so that a review reaching back a
    /// whole week finds its first day.
    days: Vec<HindcastDay>,
    /// Set once learned ([`learn_margin`]): the floors include it.
    margin: f64,
    policy_margin_quantile: f64,
    max_margin: f64,
    invocations_per_instance: f64,
    max_floor: u32,
}

#[derive(Debug, Clone)]
struct HindcastDay {
    date: NaiveDate,
    /// The levelled estimate of each slot, requests per minute, before the margin.
    estimates: Vec<Option<f32>>,
}

impl Hindcast {
    fn of(profile: &Profile, policy: &ForecastPolicy, gap: usize) -> Self {
        let mut samples = Vec::new();
        let mut ratios = Vec::new();
        let days = profile
            .days
            .iter()
            .rev()
            .take(BACKTEST_DAYS + 1)
            .filter_map(|day| {
                let (refs, same_kind) = profile.days_around(day.date, policy.min_days())?;
                let raw = estimates_with(&mut samples, &refs, policy, day.peaks.len());
                let estimates = (0..raw.len())
                    .map(|slot| {
                        let level = match slot.checked_sub(gap) {
                            Some(seen) => level_within_with(
                                &mut ratios,
                                &day.peaks,
                                &raw,
                                profile.slot_secs,
                                seen,
                                level_bounds(same_kind),
                            ),
                            None => 1.0,
                        };
                        raw[slot].map(|est| (f64::from(est) * level) as f32)
                    })
                    .collect();
                Some(HindcastDay {
                    date: day.date,
                    estimates,
                })
            })
            .collect();
        Self {
            tz: profile.tz,
            slot_secs: profile.slot_secs,
            days,
            margin: 1.0,
            policy_margin_quantile: policy.margin_quantile,
            max_margin: policy.max_margin,
            invocations_per_instance: policy.invocations_per_instance,
            max_floor: policy.max_floor,
        }
    }

    /// The floor the forecast would have claimed at `at`, `None` outside the days it covers.
    pub fn floor_at(&self, at: DateTime<Utc>) -> Option<u32> {
        let (date, slot) = slot_of(self.tz, self.slot_secs, at);
        let est = self
            .days
            .iter()
            .find(|d| d.date == date)?
            .estimates
            .get(slot)?
            .as_ref()?;
        let demand = (f64::from(*est) * self.margin) as f32;
        Some(instances_at(
            demand,
            self.invocations_per_instance,
            self.max_floor,
        ))
    }
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
                reason: Default::default(),
            });
        }
        t += slot_secs;
    }
    out
}

/// Instances for `demand` requests per minute, at most the policy's `max_floor`.
pub fn instances_for(demand: f32, policy: &ForecastPolicy) -> u32 {
    instances_at(demand, policy.invocations_per_instance, policy.max_floor)
}

fn instances_at(demand: f32, per_instance: f64, max_floor: u32) -> u32 {
    let n = (f64::from(demand) / per_instance - 1e-9).ceil();
    if n.is_finite() && n > 0.0 {
        (n.min(f64::from(max_floor))) as u32
    } else {
        0
    }
}

/// Whether the stored forecast is due for a refresh at `now`: an hour after the last refresh,
/// or after the last attempt that failed for good (a retryable failure stores nothing and is
/// tried again by the next tick).
pub fn is_due(state: Option<&ForecastState>, now: DateTime<Utc>) -> bool {
    state.is_none_or(|f| {
        let last = f
            .refresh_failed
            .as_ref()
            .map_or(f.computed_at, |failed| failed.at.max(f.computed_at));
        now - last >= REFRESH_EVERY.to_chrono() || f.computed_at > now
    })
}

/// `previous` (or, without one, a forecast that has none) marked with a refresh that failed
/// for good at `now`: the claim `previous` makes stands until its slots run out.
pub fn with_refresh_failed(
    previous: Option<&ForecastState>,
    slot_secs: i64,
    failed: RefreshFailed,
) -> ForecastState {
    let mut next = previous.cloned().unwrap_or_else(|| ForecastState {
        computed_at: failed.at,
        slot_secs,
        slots: Vec::new(),
        unscored: Vec::new(),
        margin: 1.0,
        level: 1.0,
        history_days: 0,
        same_kind: false,
        // The failure itself (error, code) is `refresh_failed`, shown beside this.
        unavailable: Some("the demand history could not be read".into()),
        score: Default::default(),
        schedule: Vec::new(),
        windows: Vec::new(),
        windows_scored_until: None,
        refresh_failed: None,
    });
    next.refresh_failed = Some(failed);
    next
}
