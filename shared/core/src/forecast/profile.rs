//! The seasonal estimate: what demand a slot of the day will bring, from the same slot on earlier
//! days of the same kind.
//!
//! - A day is split into slots of the policy's length, in the plan's time zone, so "09:00" stays
//!   09:00 across daylight-saving changes.
//! - A past day contributes its slot *peak* (the highest period mean inside the slot): capacity
//!   must cover the busiest part of the slot, not its average.
//! - Days are of two kinds, weekdays and weekends, because traffic that follows people follows
//!   the working week. A kind with too few days of history borrows the other days (the daily
//!   cycle alone), and says so.
//! - The estimate is a recency-weighted quantile of those peaks: one burst or one outage on one
//!   day moves a quantile little (robust), and recent days weigh more (demand drifts).

use chrono::{DateTime, Datelike, NaiveDate, Timelike, Utc, Weekday};
use chrono_tz::Tz;

use crate::forecast::series::DemandSeries;

/// Each earlier day of the same kind weighs this much of the next more recent one.
pub const RECENCY_DECAY: f64 = 0.85;

/// Weekday or weekend, in the plan's time zone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DayKind {
    Weekday,
    Weekend,
}

impl DayKind {
    pub fn of(date: NaiveDate) -> Self {
        match date.weekday() {
            Weekday::Sat | Weekday::Sun => DayKind::Weekend,
            _ => DayKind::Weekday,
        }
    }
}

/// One local day's slot peaks (`NaN`: no datapoint in the slot).
#[derive(Debug, Clone)]
pub struct Day {
    pub date: NaiveDate,
    pub kind: DayKind,
    pub peaks: Vec<f32>,
}

/// The history cut into local days and slots.
#[derive(Debug, Clone)]
pub struct Profile {
    pub tz: Tz,
    pub slot_secs: i64,
    /// Oldest first.
    pub days: Vec<Day>,
}

/// Where an instant falls: its local date and slot of the day.
pub fn slot_of(tz: Tz, slot_secs: i64, at: DateTime<Utc>) -> (NaiveDate, usize) {
    let local = at.with_timezone(&tz);
    let secs = i64::from(local.num_seconds_from_midnight());
    (local.date_naive(), (secs / slot_secs.max(1)) as usize)
}

impl Profile {
    pub fn slots_per_day(&self) -> usize {
        (86_400 / self.slot_secs.max(1)) as usize
    }

    pub fn build(series: &DemandSeries, tz: Tz, slot_secs: i64) -> Self {
        let per_day = (86_400 / slot_secs.max(1)) as usize;
        let mut days: Vec<Day> = Vec::new();
        // A period longer than a slot fills every slot it covers.
        let per_point = (series.period_secs / slot_secs.max(1)).max(1);
        let covered = series.points().flat_map(|(at, v)| {
            (0..per_point).map(move |k| (at + chrono::Duration::seconds(k * slot_secs), v))
        });
        for (at, v) in covered {
            let (date, slot) = slot_of(tz, slot_secs, at);
            let day = match days.last_mut() {
                Some(d) if d.date == date => d,
                _ => {
                    days.push(Day {
                        date,
                        kind: DayKind::of(date),
                        peaks: vec![f32::NAN; per_day],
                    });
                    days.last_mut().expect("just pushed")
                }
            };
            if let Some(p) = day.peaks.get_mut(slot.min(per_day - 1)) {
                *p = if p.is_nan() { v } else { p.max(v) };
            }
        }
        // Points come in time order, so local dates only repeat across a DST fall-back hour:
        // merge any repeated date into its first entry.
        days.dedup_by(|later, first| {
            if later.date != first.date {
                return false;
            }
            for (f, l) in first.peaks.iter_mut().zip(&later.peaks) {
                if f.is_nan() || *l > *f {
                    *f = *l;
                }
            }
            true
        });
        Self {
            tz,
            slot_secs,
            days,
        }
    }

    /// Days before `date` with history, of `date`'s kind when at least `min_days` of them exist,
    /// else of any kind when at least `min_days` exist; newest first.
    pub fn reference_days(&self, date: NaiveDate, min_days: usize) -> Option<(Vec<&Day>, bool)> {
        let earlier = || self.days.iter().rev().filter(move |d| d.date < date);
        let kind = DayKind::of(date);
        let same: Vec<&Day> = earlier().filter(|d| d.kind == kind).collect();
        if same.len() >= min_days.max(1) {
            return Some((same, true));
        }
        let any: Vec<&Day> = earlier().collect();
        (any.len() >= min_days.max(1)).then_some((any, false))
    }

    /// The estimate for slot `slot` of `date` from `days` (newest first), at quantile `q`.
    pub fn estimate(days: &[&Day], slot: usize, q: f64) -> Option<f32> {
        let mut samples: Vec<(f32, f64)> = Vec::with_capacity(days.len());
        let mut weight = 1.0;
        for d in days {
            if let Some(v) = d.peaks.get(slot).copied().filter(|v| v.is_finite()) {
                samples.push((v, weight));
            }
            weight *= RECENCY_DECAY;
        }
        weighted_quantile(&mut samples, q)
    }
}

/// The value below which `q` of the total weight lies (the lower value on a tie).
pub fn weighted_quantile(samples: &mut [(f32, f64)], q: f64) -> Option<f32> {
    if samples.is_empty() {
        return None;
    }
    samples.sort_by(|a, b| a.0.total_cmp(&b.0));
    let total: f64 = samples.iter().map(|s| s.1).sum();
    let goal = q.clamp(0.0, 1.0) * total;
    let mut acc = 0.0;
    for (v, w) in samples.iter() {
        acc += w;
        if acc >= goal - 1e-12 {
            return Some(*v);
        }
    }
    samples.last().map(|s| s.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn utc(s: &str) -> DateTime<Utc> {
        s.parse().expect("instant")
    }

    /// `days` days of 10-minute datapoints from a Monday, with `f(day, minute_of_day)`.
    fn series(days: usize, f: impl Fn(usize, usize) -> f32) -> DemandSeries {
        let values = (0..days * 144)
            .map(|i| f(i / 144, (i % 144) * 10))
            .collect();
        DemandSeries::new(utc("2026-03-02T00:00:00Z"), 600, values)
    }

    #[test]
    fn quantiles_weigh_samples() {
        let mut s = vec![(1.0, 1.0), (10.0, 1.0), (5.0, 1.0)];
        assert_eq!(weighted_quantile(&mut s, 0.5), Some(5.0));
        assert_eq!(weighted_quantile(&mut s, 1.0), Some(10.0));
        assert_eq!(weighted_quantile(&mut s, 0.0), Some(1.0));
        let mut heavy = vec![(1.0, 5.0), (10.0, 1.0)];
        assert_eq!(weighted_quantile(&mut heavy, 0.5), Some(1.0));
        assert_eq!(weighted_quantile(&mut [], 0.5), None);
    }

    #[test]
    fn a_slot_peak_is_the_busiest_period_of_the_slot() {
        // GIVEN 5-minute datapoints 3 then 9 in one 10-minute slot
        let s = DemandSeries::new(utc("2026-03-02T08:00:00Z"), 300, vec![3.0, 9.0]);
        let p = Profile::build(&s, Tz::UTC, 600);
        assert_eq!(p.days.len(), 1);
        assert_eq!(p.days[0].peaks[48], 9.0);
    }

    #[test]
    fn one_burst_day_does_not_move_the_median() {
        // GIVEN five weekdays at 100 per minute, one of them with a 10x burst at 09:00
        let s = series(5, |day, minute| {
            if day == 2 && minute == 540 {
                1000.0
            } else {
                100.0
            }
        });
        let p = Profile::build(&s, Tz::UTC, 600);
        let (days, same_kind) = p
            .reference_days(NaiveDate::from_ymd_opt(2026, 3, 9).expect("date"), 3)
            .expect("enough days");
        assert!(same_kind);
        assert_eq!(Profile::estimate(&days, 54, 0.5), Some(100.0));
    }

    #[test]
    fn weekends_learn_from_weekends_or_borrow_the_daily_cycle() {
        // GIVEN 12 days from a Monday: weekdays 100, weekends 10
        let s = series(12, |day, _| if day % 7 >= 5 { 10.0 } else { 100.0 });
        let p = Profile::build(&s, Tz::UTC, 600);
        // A Saturday with only two weekend days behind it borrows every day.
        let sat = NaiveDate::from_ymd_opt(2026, 3, 14).expect("date");
        let (days, same) = p.reference_days(sat, 3).expect("days");
        assert!(!same);
        assert_eq!(days.len(), 12);
        // With three weekend days required and fewer than three days at all: no estimate.
        let early = NaiveDate::from_ymd_opt(2026, 3, 4).expect("date");
        assert!(p.reference_days(early, 3).is_none());
        // A weekday learns from weekdays only.
        let mon = NaiveDate::from_ymd_opt(2026, 3, 16).expect("date");
        let (days, same) = p.reference_days(mon, 3).expect("days");
        assert!(same);
        assert_eq!(Profile::estimate(&days, 0, 0.5), Some(100.0));
    }

    #[test]
    fn slots_follow_local_time_across_daylight_saving() {
        let tz: Tz = "Europe/Berlin".parse().expect("tz");
        // 07:00 UTC is 08:00 CET in winter and 09:00 CEST in summer.
        let (_, winter) = slot_of(tz, 3600, utc("2026-03-27T07:00:00Z"));
        let (_, summer) = slot_of(tz, 3600, utc("2026-03-30T07:00:00Z"));
        assert_eq!((winter, summer), (8, 9));
    }
}
