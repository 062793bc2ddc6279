//! Schedule review: does each planned peak still match the demand it was written for? Seed
//! practice says to keep schedules tied to real demand, since old schedules become wasteful or
//! insufficient. Over the last week's occurrences of each recurring peak, from the same demand
//! history the forecast reads:
//! - `insufficient`: in at least two occurrences, demand needed more than the floor for more
//!   than a quarter of the window's periods. Sustained, not once: a surge of a few minutes is
//!   the guard's and target tracking's to answer, and raising a floor for the whole window
//!   would pay for it every day;
//! - `wasteful`: the window's busiest period used less than half the floor in at least three
//!   occurrences (and none was short);
//! - `shifted`: demand reached most of the floor more than 30 minutes before the window starts,
//!   or only more than 30 minutes after it starts, in most occurrences;
//! - `ok` otherwise. Fewer than three occurrences with data give no verdict.
//!
//! Beside an active forecast (its claim takes part in arbitration), a peak is one claim of two,
//! and it is judged as one:
//! - a period counts against the floor only where the forecast asked for no more than it (the
//!   peak was the largest claim). Where the forecast asked for more, demand above the peak is the
//!   forecast's to serve, and its error is scored in `score.rs`. Judged on the peak alone, every
//!   peak `plan suggest` writes (floors at the quiet days' level, with the forecast stacked above)
//!   read `insufficient` every week, and an operator would learn to ignore the reviews;
//! - `shifted` is not judged: the forecast's slots follow demand's timing by themselves, so a
//!   peak's timing costs something only as waste or shortfall, which the other two measure.
//!   (`plan suggest` starts a ramp's peak where the climb starts, before the demand, on purpose.)
//!
//! What the forecast would have asked comes from its [`Hindcast`]: the forecast as it now
//! stands, replayed over the last days. Pure; the hourly forecast refresh stores the verdicts
//! with the forecast, `headroom status` shows them and the refresh logs a WARN when one is not
//! `ok`.

use chrono::{DateTime, Duration, Utc};
use serde::{Deserialize, Serialize};

use crate::forecast::build::Hindcast;
use crate::forecast::DemandSeries;
use crate::plan::{PeakWhen, TargetPlan};

pub const LOOKBACK_DAYS: i64 = 7;
pub const MIN_OCCURRENCES: usize = 3;
/// How far before and after a window's start demand onset is looked for.
pub const ONSET_SEARCH: Duration = Duration::hours(2);
pub const SHIFT_TOLERANCE: Duration = Duration::minutes(30);
/// Share of the floor that counts as "demand reached it".
pub const ONSET_SHARE: f64 = 0.8;
/// An occurrence is short when demand needed more than the floor in more than this share of
/// its periods.
pub const SHORT_SHARE: f64 = 0.25;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    Ok,
    Wasteful,
    Insufficient,
    Shifted,
}

impl Verdict {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Ok => "ok",
            Self::Wasteful => "wasteful",
            Self::Insufficient => "insufficient",
            Self::Shifted => "shifted",
        }
    }
}

/// One planned peak's verdict, with its evidence.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PeakReview {
    pub peak: String,
    pub verdict: Verdict,
    pub occurrences: u32,
    pub evidence: String,
}

/// Reviews every recurring peak of `target` against `series` (requests per minute), beside the
/// floors its active forecast would have claimed (`forecast`; `None`: no forecast claim, as in
/// `forecast_only` mode or without enough history). An occurrence is judged once it has ended
/// within the history read (never after `now`), not with its last minutes unread.
pub fn review_schedule(
    target: &TargetPlan,
    series: &DemandSeries,
    invocations_per_instance: f64,
    forecast: Option<&Hindcast>,
    now: DateTime<Utc>,
) -> Vec<PeakReview> {
    let needed = |v: f32| {
        (f64::from(v) / invocations_per_instance - 1e-9)
            .ceil()
            .max(0.0)
    };
    let read_until = series.end().min(now);
    let mut out = Vec::new();
    for peak in &target.peaks {
        let PeakWhen::Recurring { cron, timezone } = &peak.when else {
            continue;
        };
        let dur = peak.duration.to_chrono();
        let floor = f64::from(peak.floor);
        let starts = cron.occurrences(
            *timezone,
            now - Duration::days(LOOKBACK_DAYS),
            read_until - dur,
        );
        let (mut seen, mut short, mut idle, mut early, mut late) = (0u32, 0u32, 0u32, 0u32, 0u32);
        let (mut worst_used, mut max_need, mut worst_short) = (f64::INFINITY, 0.0f64, 0.0f64);
        // Periods in the windows, and those in which the forecast asked for more than the floor.
        let (mut periods, mut forecast_above) = (0u32, 0u32);
        for s in starts {
            let (mut busiest, mut in_window, mut above) = (None::<f64>, 0u32, 0u32);
            let mut onset = None;
            for (at, v) in series.points_between(s - ONSET_SEARCH, s + dur) {
                let n = needed(v);
                if onset.is_none() && n >= ONSET_SHARE * floor {
                    onset = Some(at);
                }
                if at >= s {
                    busiest = Some(busiest.map_or(n, |b: f64| b.max(n)));
                    let forecast_larger = forecast
                        .and_then(|f| f.floor_at(at))
                        .is_some_and(|f| f64::from(f) > floor);
                    in_window += 1;
                    forecast_above += u32::from(forecast_larger);
                    above += u32::from(n > floor && !forecast_larger);
                }
            }
            let Some(busiest) = busiest else { continue };
            seen += 1;
            periods += in_window;
            max_need = max_need.max(busiest);
            let used = if floor > 0.0 { busiest / floor } else { 1.0 };
            worst_used = worst_used.min(used);
            let share_above = f64::from(above) / f64::from(in_window);
            if share_above > SHORT_SHARE {
                short += 1;
                worst_short = worst_short.max(share_above);
            } else if used < 0.5 {
                idle += 1;
            }
            match onset {
                Some(o) if o < s - SHIFT_TOLERANCE => early += 1,
                Some(o) if o > s + SHIFT_TOLERANCE => late += 1,
                None => late += 1,
                _ => {}
            }
        }
        if (seen as usize) < MIN_OCCURRENCES {
            continue;
        }
        let beside_forecast = match forecast {
            Some(_) => format!(
                "; the forecast asked for more than the floor in {:.0} % of the windows' periods",
                f64::from(forecast_above) * 100.0 / f64::from(periods.max(1))
            ),
            None => String::new(),
        };
        let (verdict, evidence) = if short >= 2 {
            (
                Verdict::Insufficient,
                format!(
                    "demand needed more than the floor {}{} for over {:.0} % of the window in {short} of {seen} occurrences (up to {:.0} % of it; up to {max_need} instances)",
                    peak.floor,
                    if forecast.is_some() { " where the forecast asked for no more" } else { "" },
                    SHORT_SHARE * 100.0,
                    worst_short * 100.0,
                ),
            )
        } else if idle >= 3 && short == 0 {
            (
                Verdict::Wasteful,
                format!("the busiest period used under half the floor {} in {idle} of {seen} occurrences (as little as {:.0} %)", peak.floor, worst_used * 100.0),
            )
        } else if forecast.is_none() && (early * 2 > seen || late * 2 > seen) {
            (
                Verdict::Shifted,
                format!(
                    "demand reached {:.0} % of the floor {} more than {} min {} the window starts in {} of {seen} occurrences",
                    ONSET_SHARE * 100.0,
                    peak.floor,
                    SHIFT_TOLERANCE.num_minutes(),
                    if early > late { "before" } else { "after" },
                    early.max(late)
                ),
            )
        } else {
            (
                Verdict::Ok,
                format!(
                    "{seen} occurrences matched the floor {}{beside_forecast}",
                    peak.floor
                ),
            )
        };
        out.push(PeakReview {
            peak: peak.name.clone(),
            verdict,
            occurrences: seen,
            evidence,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse_plan;

    fn utc(s: &str) -> DateTime<Utc> {
        s.parse().expect("instant")
    }

    fn target(floor: u32, cron: &str) -> TargetPlan {
        parse_plan(
            "t.toml",
            &format!("version = 1\n[[target]]\nresource_id = \"endpoint/shop/variant/AllTraffic\"\nmin_capacity = 1\nmax_capacity = 80\n[[target.peak]]\nname = \"morning\"\ncron = \"{cron}\"\nduration = \"2h\"\nfloor = {floor}\n"),
        )
        .expect("plan")
        .targets
        .remove(0)
    }

    /// A week of 5-minute demand from Monday: `busy` per minute from 09:00 to 11:00, else 30.
    fn week(busy: f32, from_minute: usize) -> DemandSeries {
        let values = (0..7 * 288)
            .map(|i| {
                let m = (i % 288) * 5;
                if (from_minute..from_minute + 120).contains(&m) {
                    busy
                } else {
                    30.0
                }
            })
            .collect();
        DemandSeries::new(utc("2026-03-02T00:00:00Z"), 300, values)
    }

    fn verdict(floor: u32, series: &DemandSeries) -> Verdict {
        let t = target(floor, "0 9 * * MON-FRI");
        let r = review_schedule(&t, series, 30.0, None, utc("2026-03-09T00:00:00Z"));
        assert_eq!(r.len(), 1, "{r:?}");
        assert_eq!(r[0].occurrences, 5);
        r[0].verdict
    }

    #[test]
    fn each_verdict_from_its_evidence() {
        // 600/min at 30/min per instance needs 20.
        assert_eq!(verdict(20, &week(600.0, 540)), Verdict::Ok);
        assert_eq!(verdict(10, &week(600.0, 540)), Verdict::Insufficient);
        assert_eq!(verdict(60, &week(600.0, 540)), Verdict::Wasteful);
        // Demand from 08:00: it reaches the floor an hour before the window.
        assert_eq!(verdict(20, &week(600.0, 480)), Verdict::Shifted);
    }

    /// A week of 5-minute demand from Monday: 30 per minute, 600 per minute from 09:00 to 11:00
    /// except `surge` per minute in the first `surge_minutes` minutes of that window.
    fn week_with_surge(surge: f32, surge_minutes: usize) -> DemandSeries {
        let mut s = week(600.0, 540);
        for (i, v) in s.values.iter_mut().enumerate() {
            let m = (i % 288) * 5;
            if (540..540 + surge_minutes).contains(&m) {
                *v = surge;
            }
        }
        s
    }

    #[test]
    fn a_floor_is_insufficient_only_when_demand_is_above_it_for_a_sustained_share() {
        // The floor 20 covers the window's 600/min; a 15-minute surge to 1200 every morning is
        // an eighth of the 2-hour window: target tracking's and the guard's, not the schedule's.
        assert_eq!(verdict(20, &week_with_surge(1200.0, 15)), Verdict::Ok);
        // Above it for 35 minutes of 120 (29 %) each morning: the floor no longer fits.
        assert_eq!(
            verdict(20, &week_with_surge(1200.0, 35)),
            Verdict::Insufficient
        );
    }

    /// The target with its peak at `floor` and a forecast claiming at most `max_floor`, and the
    /// forecast's hindcast built on `series` at `now`.
    fn beside_forecast(
        floor: u32,
        max_floor: u32,
        series: &DemandSeries,
        now: DateTime<Utc>,
    ) -> (TargetPlan, Hindcast) {
        let t = parse_plan(
            "t.toml",
            &format!("version = 1\n[[target]]\nresource_id = \"endpoint/shop/variant/AllTraffic\"\nmin_capacity = 1\nmax_capacity = 80\n[[target.peak]]\nname = \"morning\"\ncron = \"0 9 * * MON-FRI\"\nduration = \"2h\"\nfloor = {floor}\n[target.forecast]\ninvocations_per_instance = 30.0\nmax_floor = {max_floor}\n"),
        )
        .expect("plan")
        .targets
        .remove(0);
        let policy = t.forecast.clone().expect("forecast");
        let (_, hindcast) = crate::forecast::build::forecast_with_hindcast(
            &policy,
            series,
            crate::duration::Span::minutes(15),
            now,
            None,
        );
        (t, hindcast.expect("a week of history is enough"))
    }

    #[test]
    fn demand_the_forecast_claimed_is_not_held_against_the_peak() {
        let now = utc("2026-03-09T00:00:00Z");
        let series = week(600.0, 540);
        // The peak's floor 10 is half the 20 instances the window needs, but the forecast asked
        // for them: the peak is one claim of two, and it is not short.
        let (t, hindcast) = beside_forecast(10, 80, &series, now);
        let r = review_schedule(&t, &series, 30.0, Some(&hindcast), now);
        assert_eq!(r[0].verdict, Verdict::Ok, "{r:?}");
        assert!(
            r[0].evidence
                .contains("the forecast asked for more than the floor in 100 %"),
            "{r:?}"
        );
        // Judged alone (forecast_only, or no forecast yet), the same peak is short.
        let alone = review_schedule(&t, &series, 30.0, None, now);
        assert_eq!(alone[0].verdict, Verdict::Insufficient, "{alone:?}");
        // A forecast held under the floor (max_floor 5) leaves the peak the largest claim.
        let (t, capped) = beside_forecast(10, 5, &series, now);
        let r = review_schedule(&t, &series, 30.0, Some(&capped), now);
        assert_eq!(r[0].verdict, Verdict::Insufficient, "{r:?}");
        assert!(
            r[0].evidence
                .contains("where the forecast asked for no more"),
            "{r:?}"
        );
    }

    #[test]
    fn beside_a_forecast_timing_is_not_judged_but_waste_is() {
        let now = utc("2026-03-09T00:00:00Z");
        // Demand from 08:00: alone, the peak is shifted (as `each_verdict_from_its_evidence`).
        let early = week(600.0, 480);
        let (t, hindcast) = beside_forecast(20, 80, &early, now);
        let r = review_schedule(&t, &early, 30.0, Some(&hindcast), now);
        assert_eq!(r[0].verdict, Verdict::Ok, "{r:?}");
        // A floor three times the need is wasteful with or without a forecast.
        let series = week(600.0, 540);
        let (t, hindcast) = beside_forecast(60, 80, &series, now);
        let r = review_schedule(&t, &series, 30.0, Some(&hindcast), now);
        assert_eq!(r[0].verdict, Verdict::Wasteful, "{r:?}");
    }

    #[test]
    fn too_few_occurrences_give_no_verdict() {
        let t = target(20, "0 9 * * MON-FRI");
        let r = review_schedule(
            &t,
            &week(600.0, 540),
            30.0,
            None,
            utc("2026-03-04T00:00:00Z"),
        );
        assert!(r.is_empty(), "{r:?}");
    }
}
