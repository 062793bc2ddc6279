//! Today's level: how far the day so far runs above or below its seasonal estimate.
//!
//! The estimate (`profile.rs`) knows the shape of a day and its usual level, but not whether
//! today is a busy day or a quiet one: a rainy Tuesday for a taxi service, a day of news for a
//! market feed, a slow week in August. When the last hour's slots have nearly all come in above
//! their estimates, the next ones probably will too; when nearly all came in below, the usual
//! floor would be held for demand that is not coming. So each refresh scales today's upcoming
//! slots by today's level, learned from the last [`LEVEL_WINDOW`] of today:
//!
//! - **Only agreement counts.** The level is raised only when more than [`AGREEING_SHARE`] of
//!   the window (weighted by estimate, so busy slots count more than quiet ones) ran above the
//!   estimate, and then by the ratio that share reached; lowered likewise. One burst in a calm
//!   hour, or noise around the estimate, leaves the level at 1: a short burst is the guard's
//!   business, not the forecast's.
//! - **Bounded** to [`LEVEL_BOUNDS`]: a day of twice the usual traffic is target tracking's to
//!   follow (it still scales above any floor); the level only moves the floor part of the way.
//!   A day estimated from the other kind's days (a first weekend, from weekdays) may go down to
//!   [`BORROWED_LEVEL_BOUNDS`]: its estimate's level was never measured, and holding a weekday's
//!   floor through a quiet weekend cost most of a first week's extra instance-hours.
//! - **Today only.** The window does not reach back over midnight (the slots before it were
//!   estimated from other reference days, and the night says little about the day's level),
//!   and a slot after midnight keeps its estimate: it belongs to a day not yet begun.
//!
//! The margin (`build.rs`) is learned from the estimate *with* the level applied, each past
//! slot's level taken as a refresh would have seen it, so the two do not count the same error
//! twice.

use chrono::NaiveDate;

use crate::duration::Span;
use crate::forecast::profile::{weighted_quantile, weighted_quantile_sorted};

/// The stretch of today the level is read from.
pub const LEVEL_WINDOW: Span = Span::hours(1);
/// The share of the window that must agree (above, or below, the estimate) before the level
/// moves: strictly more than this.
pub const AGREEING_SHARE: f64 = 0.75;
/// The level stays within these factors of the estimate. Measured over 23 scenarios with `plan
/// suggest` at 1.15x: a floor of 0.65 moved two (one quiet low-traffic trace -75.6 % to -82.0 % as
/// the tuner spent what it saved, one busy web-like trace 2.3 points weaker and cheaper), left the
/// rest within half a point, and one load-balancer-like trace at 1.153x; a ceiling of 1.4 cost
/// 3.7-6 points on two low-traffic web-like traces and took tweets-goog over budget (1.154x), for
/// 1-2 points on four others.
pub const LEVEL_BOUNDS: (f64, f64) = (0.8, 1.2);
/// ... and within these on a day whose estimate borrows the other kind's days (a first
/// weekend, from weekdays): there the estimate's level is a guess, and a quiet weekend found
/// in its first hour may bring the floor down to half a weekday's.
pub const BORROWED_LEVEL_BOUNDS: (f64, f64) = (0.5, 1.2);

/// The bounds for a day estimated from its own kind's days (`same_kind`), or from borrowed ones.
pub fn level_bounds(same_kind: bool) -> (f64, f64) {
    if same_kind {
        LEVEL_BOUNDS
    } else {
        BORROWED_LEVEL_BOUNDS
    }
}

/// The level a refresh found for its day: it scales that day's slots and no other's.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TodayLevel {
    pub date: NaiveDate,
    pub factor: f64,
}

impl TodayLevel {
    /// The factor for a slot of `date`: 1 for any other day than the refresh's.
    pub fn for_date(&self, date: NaiveDate) -> f64 {
        if date == self.date {
            self.factor
        } else {
            1.0
        }
    }
}

/// ", today's level x1.12" when `level` moved a slot, else nothing: for claim reasons, the
/// refresh note and `headroom status`.
pub fn level_note(level: f64) -> String {
    if (level - 1.0).abs() < 0.005 {
        String::new()
    } else {
        format!(", today's level x{level:.2}")
    }
}

/// Today's level from the day's slot `peaks` before `until` (exclusive), against each slot's
/// seasonal estimate in `estimates`: 1 when the window holds fewer than half its slots or does
/// not agree.
pub fn level_before(peaks: &[f32], estimates: &[Option<f32>], slot_secs: i64, until: usize) -> f64 {
    level_within(peaks, estimates, slot_secs, until, LEVEL_BOUNDS)
}

/// [`level_before`] within `bounds`.
pub fn level_within(
    peaks: &[f32],
    estimates: &[Option<f32>],
    slot_secs: i64,
    until: usize,
    bounds: (f64, f64),
) -> f64 {
    level_within_with(&mut Vec::new(), peaks, estimates, slot_secs, until, bounds)
}

/// [`level_within`] in a caller's buffer: the margin asks it of every slot of a week.
pub fn level_within_with(
    ratios: &mut Vec<(f32, f64)>,
    peaks: &[f32],
    estimates: &[Option<f32>],
    slot_secs: i64,
    until: usize,
    bounds: (f64, f64),
) -> f64 {
    let window = (LEVEL_WINDOW.as_secs() / slot_secs.max(1)).max(1) as usize;
    ratios.clear();
    ratios.extend((until.saturating_sub(window)..until).filter_map(|slot| {
        let actual = peaks.get(slot).copied().filter(|v| v.is_finite())?;
        let est = estimates
            .get(slot)
            .copied()
            .flatten()
            .filter(|e| *e > 0.0)?;
        Some((actual / est, f64::from(est)))
    }));
    if ratios.len() * 2 < window {
        return 1.0;
    }
    // The lower quantile exceeds 1 only when more than `AGREEING_SHARE` of the weight lies above
    // 1 (`weighted_quantile` takes the lower value on a tie); and the other way round.
    let low = weighted_quantile(ratios, 1.0 - AGREEING_SHARE).map_or(1.0, f64::from);
    // Sorted by the first.
    let high = weighted_quantile_sorted(ratios, AGREEING_SHARE).map_or(1.0, f64::from);
    let level = if low > 1.0 {
        low
    } else if high < 1.0 {
        high
    } else {
        1.0
    };
    level.clamp(bounds.0, bounds.1)
}

/// Slots between the last slot a refresh reads and the slot its claim covers, on average. A
/// refresh at T reads the slots before T's; the slot it claims for starts the lead time plus up
/// to one refresh interval after T, half of one on average, and lies half a slot further on
/// average from the end of the slot T falls in. The history read ends a few minutes before T
/// (`metrics_port::PUBLISH_DELAY` and up to a period); counted in, that moves the gap by a slot
/// for some lead times, and the margin's week-against-month test
/// (`the_first_weeks_margin_is_about_the_margin_a_month_learns`) then differs by 0.003: left
/// out, measured.
pub fn refresh_gap(lead_time: Span, refresh_every: Span, slot_secs: i64) -> usize {
    let secs = lead_time.as_secs() + refresh_every.as_secs() / 2;
    (secs as f64 / slot_secs.max(1) as f64 + 0.5).round() as usize
}

#[cfg(test)]
mod tests {
    use super::*;

    const SLOT: i64 = 600;

    /// An estimate of 100 in every slot; today as given.
    fn level(today: &[f32], until: usize) -> f64 {
        let mut peaks = today.to_vec();
        peaks.resize(144, f32::NAN);
        level_before(&peaks, &[Some(100.0); 144], SLOT, until)
    }

    #[test]
    fn an_hour_above_the_estimate_raises_the_level_by_what_most_of_it_reached() {
        let today = [110.0, 112.0, 115.0, 111.0, 113.0, 130.0];
        assert!(
            (level(&today, 6) - 1.11).abs() < 1e-6,
            "{}",
            level(&today, 6)
        );
    }

    #[test]
    fn an_hour_below_lowers_it() {
        let today = [90.0, 88.0, 85.0, 89.0, 87.0, 95.0];
        assert!(
            (level(&today, 6) - 0.90).abs() < 1e-6,
            "{}",
            level(&today, 6)
        );
    }

    #[test]
    fn one_burst_in_a_calm_hour_leaves_it_alone() {
        let today = [100.0, 98.0, 300.0, 250.0, 101.0, 99.0];
        assert_eq!(level(&today, 6), 1.0);
    }

    #[test]
    fn noise_around_the_estimate_leaves_it_alone() {
        let today = [105.0, 95.0, 108.0, 93.0, 104.0, 97.0];
        assert_eq!(level(&today, 6), 1.0);
    }

    #[test]
    fn it_stays_within_its_bounds() {
        assert_eq!(level(&[400.0; 6], 6), LEVEL_BOUNDS.1);
        assert_eq!(level(&[10.0; 6], 6), LEVEL_BOUNDS.0);
    }

    #[test]
    fn a_borrowed_estimate_may_be_lowered_further_but_not_raised_further() {
        let within = |today: &[f32]| {
            let mut peaks = vec![f32::NAN; 144];
            peaks[..today.len()].copy_from_slice(today);
            level_within(
                &peaks,
                &[Some(100.0); 144],
                SLOT,
                today.len(),
                BORROWED_LEVEL_BOUNDS,
            )
        };
        // A quiet first weekend day at 30 % of the weekdays' estimate: down to half, not 0.8.
        assert_eq!(within(&[30.0; 6]), BORROWED_LEVEL_BOUNDS.0);
        assert!((within(&[60.0; 6]) - 0.6).abs() < 1e-6);
        assert_eq!(within(&[400.0; 6]), LEVEL_BOUNDS.1);
    }

    #[test]
    fn only_the_window_before_the_cut_counts() {
        // A busy morning, then an hour as usual: as usual.
        let mut today = vec![150.0; 12];
        today.extend([100.0; 6]);
        assert_eq!(level(&today, 18), 1.0);
        // The slots from `until` on are not read (they are the future).
        assert_eq!(level(&today, 12), LEVEL_BOUNDS.1);
    }

    #[test]
    fn too_little_of_today_says_nothing() {
        assert_eq!(level(&[150.0, 150.0], 2), 1.0);
        let gaps = [150.0, f32::NAN, f32::NAN, f32::NAN, f32::NAN, 150.0];
        assert_eq!(level(&gaps, 6), 1.0);
    }

    #[test]
    fn the_gap_is_the_lead_time_half_a_refresh_and_half_a_slot() {
        // (12 + 30) / 10 + 0.5 = 4.7 slots; (0 + 30) / 5 + 0.5 = 6.5
        assert_eq!(refresh_gap(Span::minutes(12), Span::hours(1), SLOT), 5);
        assert_eq!(refresh_gap(Span::minutes(0), Span::hours(1), 300), 7);
    }

    #[test]
    fn exactly_three_quarters_is_not_more_than_three_quarters() {
        // 9 of 12 five-minute slots above: does not move; 10 of 12: moves
        let at = |above: usize| {
            let peaks: Vec<f32> = (0..12)
                .map(|i| if i < above { 110.0 } else { 100.0 })
                .collect();
            level_before(&peaks, &[Some(100.0); 12], 300, 12)
        };
        assert_eq!(at(9), 1.0);
        assert!((at(10) - 1.1).abs() < 1e-6, "{}", at(10));
    }

    #[test]
    fn a_level_scales_its_own_day_only() {
        let date = NaiveDate::from_ymd_opt(2026, 3, 6).expect("date");
        let level = TodayLevel { date, factor: 1.15 };
        assert_eq!(level.for_date(date), 1.15);
        assert_eq!(level.for_date(date.succ_opt().expect("date")), 1.0);
        assert_eq!(level_note(1.15), ", today's level x1.15");
        assert_eq!(level_note(1.0), "");
    }
}
