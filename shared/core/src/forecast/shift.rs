//! A lasting change of level: the newest days all ran well above (or all well below) the days
//! before them, so the days before are scaled to the new level.
//!
//! The estimate (`profile.rs`) is a recency-weighted quantile of earlier days' slot peaks, so it
//! follows a new level only as the days after the change outweigh the days before. At a low
//! quantile that takes about two weeks: the new days must carry nine tenths of the weight. Today's
//! level (`level.rs`) moves a day's floor by a fifth at most. On a held-out web-like trace whose
//! traffic stepped up by two thirds after its first week (a launch), the forecast stayed near
//! target tracking's cost, and its breach minutes, for those two weeks.
//!
//! So each refresh gives every whole day a level: the median of its slot peaks against its
//! kind's typical day now (the median of that kind's newest [`TYPICAL_DAYS`]), so weekdays and
//! weekends compare. It then looks for the longest run of the newest days (at least
//! [`MIN_RUN_DAYS`], with [`MIN_OLD_DAYS`] before it) that all lie more than [`SHIFT_BAND`]
//! above the median level of the days before the run, or all below it. After a step the run is
//! the days since the step; after a steady climb, the newer part of it. The days before the run
//! are scaled by the run's median level over theirs, within [`SHIFT_BOUNDS`], for the estimate,
//! the margin's hindcast and today's level alike. The run is found again at each refresh from
//! the same history, so the shift stays until its old days age out of the history read, with
//! no state kept.
//!
//! Two days at least: one busy day is news or weather, two in a row a level. The band leaves the
//! ordinary day-to-day spread to the quantile and the margin, which already price it. Measured
//! with `plan suggest` at 1.15x over the shipped learned scenarios and the seventeen held-out
//! ones: the launch trace went from -55.2 % to -69.4 % of target tracking's breach minutes (at
//! 1.036x to 1.061x); the others moved by -0.2 to +1.2 points and by at most 0.003x, none
//! crossing 1.15x (tweets-goog 1.146x to 1.149x). A band of 1.1 found shifts in more
//! of the ordinary traces' noise: the launch gained less (-66.5 %) and tweets-goog went over
//! budget (1.151x). A steady decline by half over four weeks stays too slow for the band, and
//! costs 1.169x there as before.
//!
//! Why the days before are scaled rather than left out: with two or three days since a step,
//! a quantile of those alone is a quantile of two or three samples. Scaled, the old days keep
//! lending their shape and their day-to-day spread at the new level.

use chrono::NaiveDate;
use serde::{Deserialize, Serialize};

use crate::forecast::profile::{weighted_quantile, Day, DayKind, Profile};

/// A run needs this many judged days at least.
pub const MIN_RUN_DAYS: usize = 2;
/// Each day of a run lies at least this factor above (or below, its inverse) its kind's median
/// before the run.
pub const SHIFT_BAND: f64 = 1.2;
/// The factor the earlier days are scaled by stays within these.
pub const SHIFT_BOUNDS: (f64, f64) = (0.5, 2.0);
/// A run is judged against at least this many days before it.
pub const MIN_OLD_DAYS: usize = 2;
/// Each kind's typical day is the median of its newest this many days: the level now.
pub const TYPICAL_DAYS: usize = 3;

/// The days from `since` on ran at `factor` times the level of the days before: those are
/// scaled by it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct LevelShift {
    pub since: NaiveDate,
    pub factor: f64,
}

impl LevelShift {
    /// ", level since 2026-01-12 x1.65" for claim reasons, the refresh note and `status`.
    pub fn note(&self) -> String {
        format!(", level since {} x{:.2}", self.since, self.factor)
    }

    /// [`LevelShift::note`] of `shift`, nothing without one.
    pub fn note_of(shift: Option<&LevelShift>) -> String {
        shift.map_or_else(String::new, LevelShift::note)
    }
}

/// The newest run of whole days before `today` that agrees on a new level, if any.
pub fn level_shift(profile: &Profile, today: NaiveDate) -> Option<LevelShift> {
    let levels = day_levels(profile, today);
    let mut found = None;
    let mut scratch = Vec::with_capacity(levels.len());
    for run in MIN_RUN_DAYS..=levels.len().saturating_sub(MIN_OLD_DAYS) {
        let (recent, before) = levels.split_at(run);
        scratch.clear();
        scratch.extend(before.iter().map(|(_, l)| *l));
        let typical = median(&mut scratch);
        let up = recent.iter().all(|(_, l)| *l > typical * SHIFT_BAND);
        let down = recent.iter().all(|(_, l)| *l * SHIFT_BAND < typical);
        if up || down {
            scratch.clear();
            scratch.extend(recent.iter().map(|(_, l)| *l));
            let factor = median(&mut scratch) / typical;
            found = Some(LevelShift {
                since: recent[run - 1].0,
                factor: factor.clamp(SHIFT_BOUNDS.0, SHIFT_BOUNDS.1),
            });
        }
    }
    found
}

/// Each whole day's level before `today`, newest first: the weighted median of its slot peaks
/// against the median of the newest [`TYPICAL_DAYS`] of its kind (each kind's days against its
/// own typical day, so weekdays and weekends compare), weighted by that median. A kind with
/// fewer days is left out.
fn day_levels(profile: &Profile, today: NaiveDate) -> Vec<(NaiveDate, f64)> {
    let whole: Vec<&Day> = profile
        .days
        .iter()
        .rev()
        .filter(|d| d.date < today && d.observed())
        .collect();
    let mut samples = Vec::new();
    let mut ratios = Vec::new();
    let typicals: Vec<(DayKind, Vec<Option<f32>>)> = [DayKind::Weekday, DayKind::Weekend]
        .into_iter()
        .filter_map(|kind| {
            let newest: Vec<&Day> = whole
                .iter()
                .copied()
                .filter(|d| d.kind == kind)
                .take(TYPICAL_DAYS)
                .collect();
            (newest.len() == TYPICAL_DAYS).then(|| {
                let slots = profile.slots_per_day();
                let typical = (0..slots)
                    .map(|slot| Profile::estimate_with(&mut samples, &newest, slot, 0.5))
                    .collect();
                (kind, typical)
            })
        })
        .collect();
    whole
        .iter()
        .filter_map(|day| {
            let (_, typical) = typicals.iter().find(|(k, _)| *k == day.kind)?;
            ratios.clear();
            for (actual, typical) in day.peaks.iter().zip(typical) {
                if let Some(t) = typical.filter(|t| *t > 0.0 && actual.is_finite()) {
                    ratios.push((actual / t, f64::from(t)));
                }
            }
            let level = weighted_quantile(&mut ratios, 0.5)?;
            Some((day.date, f64::from(level)))
        })
        .collect()
}

/// The lower median of `values` (not empty).
fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len().div_ceil(2) - 1]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::forecast::series::DemandSeries;
    use chrono_tz::Tz;

    fn date(s: &str) -> NaiveDate {
        s.parse().expect("date")
    }

    /// `days` days of 10-minute datapoints from Monday 2026-03-02: a daily cycle (100 at night,
    /// 400 by day) times `level(day)`, weekends at half.
    fn profile(days: usize, level: impl Fn(usize) -> f32) -> Profile {
        let values = (0..days * 144)
            .map(|i| {
                let (day, minute) = (i / 144, (i % 144) * 10);
                let by_day = if (480..1080).contains(&minute) {
                    400.0
                } else {
                    100.0
                };
                let weekend = if day % 7 >= 5 { 0.5 } else { 1.0 };
                by_day * weekend * level(day)
            })
            .collect();
        let start = "2026-03-02T00:00:00Z".parse().expect("instant");
        Profile::build(&DemandSeries::new(start, 600, values), Tz::UTC, 600)
    }

    /// Day-to-day wobble within the band: +-8 %.
    fn wobble(day: usize) -> f32 {
        [1.0, 1.08, 0.94, 1.05, 0.92, 1.03, 0.97][day % 7]
    }

    #[test]
    fn steady_traffic_has_no_shift() {
        let p = profile(21, wobble);
        assert_eq!(level_shift(&p, date("2026-03-23")), None);
    }

    #[test]
    fn a_step_up_is_found_from_its_first_day_once_two_days_agree() {
        // From Monday 2026-03-09 (day 7) on, two thirds more traffic.
        let p = profile(14, |d| if d < 7 { 0.6 } else { 1.0 } * wobble(d));
        // One day of the new level is not yet a run.
        assert_eq!(level_shift(&p, date("2026-03-10")), None);
        let shift = level_shift(&p, date("2026-03-11")).expect("two days agree");
        assert_eq!(shift.since, date("2026-03-09"));
        assert!((1.55..1.8).contains(&shift.factor), "{shift:?}");
        // A week on (the new weekend judged too), the run still starts at the step.
        let later = level_shift(&p, date("2026-03-16")).expect("still shifted");
        assert_eq!(later.since, date("2026-03-09"));
        assert!((1.55..1.8).contains(&later.factor), "{later:?}");
    }

    #[test]
    fn a_step_down_is_found_too() {
        let p = profile(14, |d| if d < 7 { 1.0 } else { 0.6 });
        let shift = level_shift(&p, date("2026-03-13")).expect("shifted down");
        assert_eq!(shift.since, date("2026-03-09"));
        assert!((0.55..0.65).contains(&shift.factor), "{shift:?}");
    }

    #[test]
    fn two_busy_days_within_the_band_or_apart_are_not_a_shift() {
        // Busy by 15 %: within the band.
        let p = profile(14, |d| if d >= 12 { 1.15 } else { 1.0 });
        assert_eq!(level_shift(&p, date("2026-03-16")), None);
        // Busy by half, but a normal day between them.
        let p = profile(14, |d| if d == 11 || d == 13 { 1.5 } else { 1.0 });
        assert_eq!(level_shift(&p, date("2026-03-16")), None);
        // Busy then quiet: they do not agree.
        let p = profile(14, |d| match d {
            12 => 1.5,
            13 => 0.6,
            _ => 1.0,
        });
        assert_eq!(level_shift(&p, date("2026-03-16")), None);
    }

    #[test]
    fn a_shift_is_clamped() {
        let p = profile(14, |d| if d < 7 { 1.0 } else { 5.0 });
        let shift = level_shift(&p, date("2026-03-13")).expect("shifted");
        assert_eq!(shift.factor, SHIFT_BOUNDS.1);
    }

    #[test]
    fn scaled_days_raise_the_estimate_to_the_new_level() {
        let mut p = profile(14, |d| if d < 7 { 0.6 } else { 1.0 });
        let today = date("2026-03-13");
        let slot = 60; // 10:00, by day
        let weekdays = |p: &Profile| {
            let (days, same_kind) = p.reference_days(today, 2).expect("history");
            assert!(same_kind);
            Profile::estimate(&days, slot, 0.1).expect("estimate")
        };
        assert!(weekdays(&p) < 300.0, "before: mostly the old level");
        let shift = level_shift(&p, today).expect("shifted");
        p.scale_before(shift.since, shift.factor);
        assert!((390.0..410.0).contains(&weekdays(&p)), "{}", weekdays(&p));
    }

    /// Day levels whose ratios never lie near the band (1.2), so rounding cannot flip a test.
    const LEVELS: [f32; 6] = [0.5, 0.7, 0.9, 1.0, 1.35, 1.7];

    proptest::proptest! {
        #[test]
        fn an_ordinary_spread_is_no_shift_at_any_volume(
            levels in proptest::collection::vec(92u8..=108, 21),
            volume in 1u32..10_000,
        ) {
            // Each day within 8 % of the usual level: no two of them a fifth apart.
            let scale = volume as f32 / 100.0;
            let p = profile(21, |d| f32::from(levels[d]) / 100.0 * scale);
            proptest::prop_assert_eq!(level_shift(&p, date("2026-03-23")), None);
        }

        #[test]
        fn a_shift_does_not_depend_on_the_volume_and_stays_bounded(
            picks in proptest::collection::vec(0usize..LEVELS.len(), 14),
            volume in 1u32..10_000,
        ) {
            let today = date("2026-03-16");
            let level = |d: usize| LEVELS[picks[d]];
            let shift = level_shift(&profile(14, level), today);
            let scale = volume as f32 / 100.0;
            let again = level_shift(&profile(14, |d| level(d) * scale), today);
            proptest::prop_assert_eq!(shift.map(|s| s.since), again.map(|s| s.since));
            if let (Some(a), Some(b)) = (shift, again) {
                proptest::prop_assert!((a.factor - b.factor).abs() < 1e-4 * a.factor);
                proptest::prop_assert!((SHIFT_BOUNDS.0..=SHIFT_BOUNDS.1).contains(&a.factor));
                proptest::prop_assert!(a.since < today);
            }
        }
    }
}
