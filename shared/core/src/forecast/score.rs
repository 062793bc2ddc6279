//! Scoring: once a forecast slot has passed, how it compared with the demand that came. Every
//! slot is scored once (`scored_until` moves forward only), so refreshing twice counts nothing
//! twice.

use crate::forecast::series::DemandSeries;
use crate::forecast::state::{ForecastScore, ForecastState};

/// Adds the slots of `previous` (its `unscored` ones first, being earlier) that ended before the
/// end of `series` and were not scored yet.
pub fn score_previous(
    score: &mut ForecastScore,
    previous: &ForecastState,
    series: &DemandSeries,
    invocations_per_instance: f64,
) {
    let len = chrono::Duration::seconds(previous.slot_secs);
    let data_end = series.end();
    let period_hours = series.period_secs as f64 / 3600.0;
    let period_minutes = (series.period_secs / 60).max(1) as u32;
    for slot in previous.unscored.iter().chain(&previous.slots) {
        let end = slot.start + len;
        if end > data_end || score.scored_until.is_some_and(|u| end <= u) {
            continue;
        }
        let mut covered = false;
        for (_, demand) in series.points_between(slot.start, end) {
            covered = true;
            let needed = (f64::from(demand) / invocations_per_instance - 1e-9)
                .ceil()
                .max(0.0);
            let floor = f64::from(slot.floor);
            if needed > floor {
                score.under_minutes += period_minutes;
            } else {
                score.over_instance_hours += (floor - needed) * period_hours;
            }
        }
        if covered {
            score.slots += 1;
            score.since.get_or_insert(slot.start);
        }
        score.scored_until = Some(score.scored_until.map_or(end, |u| u.max(end)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::forecast::state::ForecastSlot;
    use chrono::{DateTime, Utc};

    fn utc(s: &str) -> DateTime<Utc> {
        s.parse().expect("instant")
    }

    fn previous() -> ForecastState {
        ForecastState {
            computed_at: utc("2026-03-02T08:00:00Z"),
            slot_secs: 600,
            slots: vec![
                ForecastSlot {
                    start: utc("2026-03-02T08:00:00Z"),
                    demand: 100.0,
                    floor: 4,
                    level: 1.0,
                    reason: Default::default(),
                },
                ForecastSlot {
                    start: utc("2026-03-02T08:10:00Z"),
                    demand: 100.0,
                    floor: 4,
                    level: 1.0,
                    reason: Default::default(),
                },
            ],
            unscored: Vec::new(),
            margin: 1.0,
            level: 1.0,
            history_days: 3,
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
    fn each_ended_slot_is_scored_once_for_under_and_over_provisioning() {
        // GIVEN 5-minute demand 50, 150 (08:00 slot) and 100, 100 (08:10 slot) at 25/min each
        let series = DemandSeries::new(
            utc("2026-03-02T08:00:00Z"),
            300,
            vec![50.0, 150.0, 100.0, 100.0],
        );
        let mut score = ForecastScore::default();
        score_previous(&mut score, &previous(), &series, 25.0);
        // THEN 150/min needed 6 > 4 for 5 minutes; 50/min needed 2, 2 instances spare for 5 min
        assert_eq!(score.slots, 2);
        assert_eq!(score.under_minutes, 5);
        assert!((score.over_instance_hours - 2.0 * 5.0 / 60.0).abs() < 1e-9);
        assert_eq!(score.scored_until, Some(utc("2026-03-02T08:20:00Z")));
        // WHEN scored again with the same data THEN nothing is counted twice
        let before = score.clone();
        score_previous(&mut score, &previous(), &series, 25.0);
        assert_eq!(score, before);
    }

    #[test]
    fn a_slot_not_yet_over_waits() {
        let series = DemandSeries::new(utc("2026-03-02T08:00:00Z"), 300, vec![50.0]);
        let mut score = ForecastScore::default();
        score_previous(&mut score, &previous(), &series, 25.0);
        assert_eq!(score, ForecastScore::default());
    }
}
