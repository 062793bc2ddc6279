//! Schedule review: does each planned peak still match the demand it was written for? Seed
//! practice says to keep schedules tied to real demand, since old schedules become wasteful or
//! insufficient. Over the last week's occurrences of each recurring peak, from the same demand
//! history the forecast reads:
//! - `insufficient`: demand needed more than the floor in at least two occurrences;
//! - `wasteful`: the window's busiest period used less than half the floor in at least three
//!   occurrences (and never more);
//! - `shifted`: demand reached most of the floor more than 30 minutes before the window starts,
//!   or only more than 30 minutes after it starts, in most occurrences;
//! - `ok` otherwise. Fewer than three occurrences with data give no verdict.
//!
//! Pure; the hourly forecast refresh stores the verdicts with the forecast, `headroom status`
//! shows them and the refresh logs a WARN when one is not `ok`.

use chrono::{DateTime, Duration, Utc};
use serde::{Deserialize, Serialize};

use crate::forecast::DemandSeries;
use crate::plan::{PeakWhen, TargetPlan};

pub const LOOKBACK_DAYS: i64 = 7;
pub const MIN_OCCURRENCES: usize = 3;
/// How far before and after a window's start demand onset is looked for.
pub const ONSET_SEARCH: Duration = Duration::hours(2);
pub const SHIFT_TOLERANCE: Duration = Duration::minutes(30);
/// Share of the floor that counts as "demand reached it".
pub const ONSET_SHARE: f64 = 0.8;

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

/// Reviews every recurring peak of `target` against `series` (requests per minute) up to `now`.
pub fn review_schedule(
    target: &TargetPlan,
    series: &DemandSeries,
    invocations_per_instance: f64,
    now: DateTime<Utc>,
) -> Vec<PeakReview> {
    let needed = |v: f32| {
        (f64::from(v) / invocations_per_instance - 1e-9)
            .ceil()
            .max(0.0)
    };
    let mut out = Vec::new();
    for peak in &target.peaks {
        let PeakWhen::Recurring { cron, timezone } = &peak.when else {
            continue;
        };
        let dur = peak.duration.to_chrono();
        let floor = f64::from(peak.floor);
        let starts = cron.occurrences(*timezone, now - Duration::days(LOOKBACK_DAYS), now - dur);
        let (mut seen, mut short, mut idle, mut early, mut late) = (0u32, 0u32, 0u32, 0u32, 0u32);
        let (mut worst_used, mut max_need) = (f64::INFINITY, 0.0f64);
        for s in starts {
            let mut busiest = None::<f64>;
            let mut over = false;
            let mut onset = None;
            for (at, v) in series.points_between(s - ONSET_SEARCH, s + dur) {
                let n = needed(v);
                if onset.is_none() && n >= ONSET_SHARE * floor {
                    onset = Some(at);
                }
                if at >= s {
                    busiest = Some(busiest.map_or(n, |b: f64| b.max(n)));
                    over |= n > floor;
                }
            }
            let Some(busiest) = busiest else { continue };
            seen += 1;
            max_need = max_need.max(busiest);
            let used = if floor > 0.0 { busiest / floor } else { 1.0 };
            worst_used = worst_used.min(used);
            if over {
                short += 1;
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
        let (verdict, evidence) = if short >= 2 {
            (
                Verdict::Insufficient,
                format!("demand needed more than the floor {} in {short} of {seen} occurrences (up to {max_need} instances)", peak.floor),
            )
        } else if idle >= 3 && short == 0 {
            (
                Verdict::Wasteful,
                format!("the busiest period used under half the floor {} in {idle} of {seen} occurrences (as little as {:.0} %)", peak.floor, worst_used * 100.0),
            )
        } else if early * 2 > seen || late * 2 > seen {
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
                format!("{seen} occurrences matched the floor {}", peak.floor),
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
        let r = review_schedule(&t, series, 30.0, utc("2026-03-09T00:00:00Z"));
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

    #[test]
    fn too_few_occurrences_give_no_verdict() {
        let t = target(20, "0 9 * * MON-FRI");
        let r = review_schedule(&t, &week(600.0, 540), 30.0, utc("2026-03-04T00:00:00Z"));
        assert!(r.is_empty(), "{r:?}");
    }
}
