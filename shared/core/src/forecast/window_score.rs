//! Window scoring: after each planned window (a recurring or one-off `[[target.peak]]`), how it
//! went. Three questions an operator asks of a peak:
//! - was capacity in service at its start? From the measured scale-outs (`lead_samples`): the
//!   one that started between a lead time (plus slack) before the window and its end is the
//!   window's raise; it was ready `ready_s` seconds after the start (negative: before it). No
//!   such measurement: nothing was raised for it (capacity was already there) or it was not seen;
//! - how much of the floor was used: the busiest period's need over the floor;
//! - how much demand exceeded the floor: minutes in which demand needed more than the floor
//!   (target tracking then had to catch up).
//!
//! The forecast's own error per target is `score.rs`. Pure: the hourly refresh scores every
//! window that ended since the last one it scored, from the same history the forecast reads.

use chrono::{DateTime, Duration, Utc};
use serde::{Deserialize, Serialize};

use crate::forecast::DemandSeries;
use crate::model::LeadSample;
use crate::plan::{PeakWhen, TargetPlan};

/// Scores a target keeps (newest last).
pub const KEPT_SCORES: usize = 20;
/// A raise may start this much earlier than the lead time before the window (the tick's minute,
/// a lead time that changed since).
const RAISE_SLACK: Duration = Duration::minutes(10);

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WindowScore {
    /// `peak:<name>`.
    pub window: String,
    pub start: DateTime<Utc>,
    pub end: DateTime<Utc>,
    pub floor: u32,
    /// The busiest period's need, in instances.
    pub busiest: u32,
    /// `busiest / floor`, in percent.
    pub floor_used_pct: u32,
    /// Minutes in which demand needed more than the floor.
    pub minutes_above_floor: u32,
    /// When the window's raise was in service, seconds after its start (negative: before).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ready_s: Option<i64>,
}

impl WindowScore {
    /// One line for the decision log and `headroom status`.
    pub fn describe(&self) -> String {
        let ready = match self.ready_s {
            Some(s) if s <= 0 => format!("in service {} s before the start", -s),
            Some(s) => format!("in service only {s} s after the start: raise the lead time"),
            None => "no scale-out measured for it".to_owned(),
        };
        format!(
            "window {} {}: floor {} used {} % (busiest need {}), {} min above the floor, {ready}",
            self.window,
            self.start.format("%Y-%m-%dT%H:%MZ"),
            self.floor,
            self.floor_used_pct,
            self.busiest,
            self.minutes_above_floor
        )
    }
}

/// Scores the windows of `target`'s peaks that ended in `(after, series end]`, at most `limit`
/// (the oldest first), from `series` (requests per minute) at `per_instance` requests per minute
/// per instance, with the measured scale-outs `samples` and the lead time `lead`.
pub fn score_windows(
    target: &TargetPlan,
    series: &DemandSeries,
    samples: &[LeadSample],
    per_instance: f64,
    lead: Duration,
    after: DateTime<Utc>,
) -> Vec<WindowScore> {
    let until = series.end();
    let mut windows: Vec<(String, DateTime<Utc>, DateTime<Utc>, u32)> = Vec::new();
    for peak in &target.peaks {
        let dur = peak.duration.to_chrono();
        let starts: Vec<DateTime<Utc>> = match &peak.when {
            PeakWhen::Recurring { cron, timezone } => {
                cron.occurrences(*timezone, after - dur, until - dur)
            }
            PeakWhen::Once(at) => vec![*at],
        };
        for s in starts {
            let e = s + dur;
            if e > after && e <= until && s >= series.start {
                windows.push((format!("peak:{}", peak.name), s, e, peak.floor));
            }
        }
    }
    windows.sort_by_key(|w| (w.2, w.0.clone()));
    windows
        .into_iter()
        .filter_map(|(window, start, end, floor)| {
            score_one(
                series,
                samples,
                per_instance,
                lead,
                window,
                start,
                end,
                floor,
            )
        })
        .collect()
}

#[allow(clippy::too_many_arguments)] // one window's facts, each named at the call
fn score_one(
    series: &DemandSeries,
    samples: &[LeadSample],
    per_instance: f64,
    lead: Duration,
    window: String,
    start: DateTime<Utc>,
    end: DateTime<Utc>,
    floor: u32,
) -> Option<WindowScore> {
    let period_minutes = (series.period_secs / 60).max(1) as u32;
    let mut busiest = None::<u32>;
    let mut above = 0u32;
    for (_, demand) in series.points_between(start, end) {
        let need = (f64::from(demand) / per_instance - 1e-9).ceil().max(0.0) as u32;
        busiest = Some(busiest.map_or(need, |b| b.max(need)));
        if need > floor {
            above += period_minutes;
        }
    }
    // A window with no datapoint says nothing.
    let busiest = busiest?;
    let raise_from = start - lead - RAISE_SLACK;
    let ready_s = samples
        .iter()
        .filter(|s| {
            let began = s.ended_at - Duration::seconds(s.seconds);
            began >= raise_from && began < end
        })
        .map(|s| (s.ended_at - start).num_seconds())
        .min();
    Some(WindowScore {
        window,
        start,
        end,
        floor,
        busiest,
        floor_used_pct: if floor == 0 {
            100
        } else {
            (f64::from(busiest) * 100.0 / f64::from(floor)).round() as u32
        },
        minutes_above_floor: above,
        ready_s,
    })
}

/// `kept` followed by `new`, the newest [`KEPT_SCORES`].
pub fn keep_newest(mut kept: Vec<WindowScore>, new: Vec<WindowScore>) -> Vec<WindowScore> {
    kept.extend(new);
    crate::newest::keep_newest(&mut kept, KEPT_SCORES);
    kept
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // a test that cannot unwrap has failed
mod tests {
    use super::*;
    use crate::model::SampleSource;
    use crate::parse_plan;

    fn at(s: &str) -> DateTime<Utc> {
        s.parse().unwrap()
    }

    fn target(floor: u32) -> TargetPlan {
        parse_plan(
            "t.toml",
            &format!("version = 1\n[[target]]\nresource_id = \"endpoint/shop/variant/AllTraffic\"\nmin_capacity = 1\nmax_capacity = 80\n[[target.peak]]\nname = \"morning\"\ncron = \"0 9 * * *\"\nduration = \"1h\"\nfloor = {floor}\n"),
        )
        .unwrap()
        .targets
        .remove(0)
    }

    /// Two days from 2026-03-02 at 5 minutes: 30/min, and `busy`/min from 09:00 to 10:00, with
    /// 900/min in the window's last 10 minutes of the second day.
    fn series(busy: f32) -> DemandSeries {
        let values = (0..2 * 288)
            .map(|i| {
                let m = (i % 288) * 5;
                match m {
                    _ if i >= 288 && (590..600).contains(&m) => 900.0,
                    540..600 => busy,
                    _ => 30.0,
                }
            })
            .collect();
        DemandSeries::new(at("2026-03-02T00:00:00Z"), 300, values)
    }

    fn sample(began: &str, seconds: i64) -> LeadSample {
        LeadSample {
            ended_at: at(began) + Duration::seconds(seconds),
            seconds,
            model: None,
            source: SampleSource::AasActivity,
        }
    }

    #[test]
    fn each_window_says_its_use_its_excess_and_whether_capacity_was_ready() {
        // 600/min at 30/min per instance needs 20; 900/min needs 30.
        let samples = [
            // Day 1: raised at 08:45 (lead 15 min), in service at 08:52.
            sample("2026-03-02T08:45:00Z", 420),
            // Day 2: raised at 08:45, in service only at 09:05.
            sample("2026-03-03T08:45:00Z", 1_200),
            // Unrelated: a scale-out at night.
            sample("2026-03-03T02:00:00Z", 300),
        ];
        let scores = score_windows(
            &target(20),
            &series(600.0),
            &samples,
            30.0,
            Duration::minutes(15),
            at("2026-03-01T00:00:00Z"),
        );
        assert_eq!(scores.len(), 2, "{scores:?}");
        let (a, b) = (&scores[0], &scores[1]);
        assert_eq!(
            (a.floor_used_pct, a.minutes_above_floor, a.ready_s),
            (100, 0, Some(-480))
        );
        assert_eq!(
            (
                b.busiest,
                b.floor_used_pct,
                b.minutes_above_floor,
                b.ready_s
            ),
            (30, 150, 10, Some(300))
        );
        assert!(
            a.describe().contains("in service 480 s before the start"),
            "{}",
            a.describe()
        );
        assert!(
            b.describe().contains("raise the lead time"),
            "{}",
            b.describe()
        );
    }

    #[test]
    fn a_floor_too_high_shows_low_use_and_no_measured_raise() {
        let scores = score_windows(
            &target(60),
            &series(600.0),
            &[],
            30.0,
            Duration::minutes(15),
            at("2026-03-01T00:00:00Z"),
        );
        assert_eq!(scores[0].floor_used_pct, 33);
        assert_eq!(scores[0].ready_s, None);
        assert!(scores[0].describe().contains("no scale-out measured"));
    }

    #[test]
    fn only_windows_ended_since_the_last_scored_are_scored() {
        let s = series(600.0);
        let t = target(20);
        let lead = Duration::minutes(15);
        let first = score_windows(&t, &s, &[], 30.0, lead, at("2026-03-01T00:00:00Z"));
        let again = score_windows(&t, &s, &[], 30.0, lead, first.last().unwrap().end);
        assert_eq!(first.len(), 2);
        assert!(again.is_empty(), "{again:?}");
        // A window still running at the series' end waits for the next refresh.
        let cut = DemandSeries::new(s.start, 300, s.values[..288 + 114].to_vec());
        assert_eq!(
            score_windows(&t, &cut, &[], 30.0, lead, at("2026-03-01T00:00:00Z")).len(),
            1
        );
    }

    #[test]
    fn the_kept_scores_are_bounded() {
        let s = score_windows(
            &target(20),
            &series(600.0),
            &[],
            30.0,
            Duration::minutes(15),
            at("2026-03-01T00:00:00Z"),
        );
        let mut kept = Vec::new();
        for _ in 0..KEPT_SCORES {
            kept = keep_newest(kept, s.clone());
        }
        assert_eq!(kept.len(), KEPT_SCORES);
    }
}
