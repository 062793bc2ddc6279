//! Where a run's breach minutes fall on a generated trace whose bursts are known: inside a planned
//! peak, in the first wave of a burst episode, in a rebound wave, or elsewhere.
//!
//! The split tells an operator which breach minutes a controller could have prevented. A planned
//! peak is known in advance and a rebound follows an alarm that already fired. A first wave is
//! announced by nothing, so capacity ordered when it starts arrives after the fastest provisioning
//! time at best. With waves of 5 to 9 minutes and 4.5 to 9 minutes of provisioning, that is about
//! when the wave ends.

use serde::Serialize;

use crate::stats::BreachSpan;
use crate::synthetic::BurstWave;

/// Minutes after a wave's last minute whose breach still belongs to it: the queue built up
/// during the wave takes this long to drain on the capacity at hand.
pub const DRAIN_MINUTES: i64 = 2;

/// Breach minutes by where they fall. Each minute is counted once: a planned peak before a wave,
/// and a first wave before a rebound when the two overlap.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct BreachCauses {
    pub planned_peaks: u64,
    pub first_waves: u64,
    pub rebound_waves: u64,
    pub elsewhere: u64,
}

impl BreachCauses {
    pub fn total(&self) -> u64 {
        self.planned_peaks + self.first_waves + self.rebound_waves + self.elsewhere
    }
}

/// Splits the breach minutes of one target's `spans` (see `TargetResult::breach_spans`).
/// `trace_start` is the Unix second the waves' minutes count from; `peaks` are the planned peak
/// windows `[start, end)` in Unix seconds.
pub fn attribute(
    spans: &[BreachSpan],
    trace_start: i64,
    peaks: &[(i64, i64)],
    waves: &[BurstWave],
) -> BreachCauses {
    let mut causes = BreachCauses::default();
    let minutes = spans
        .iter()
        .flat_map(|s| (0..i64::from(s.minutes)).map(move |k| s.start + 60 * k));
    for at in minutes {
        if peaks.iter().any(|&(s, e)| s <= at && at < e) {
            causes.planned_peaks += 1;
            continue;
        }
        let minute = (at - trace_start).div_euclid(60);
        let in_wave = |w: &&BurstWave| {
            minute >= w.start_minute && minute < w.start_minute + w.minutes + DRAIN_MINUTES
        };
        let hit: Vec<&BurstWave> = waves.iter().filter(in_wave).collect();
        if hit.iter().any(|w| w.first) {
            causes.first_waves += 1;
        } else if hit.is_empty() {
            causes.elsewhere += 1;
        } else {
            causes.rebound_waves += 1;
        }
    }
    causes
}

#[cfg(test)]
mod tests {
    use super::*;

    const START: i64 = 1_000_020;

    /// One span per breach minute (spans are merged or not: the split is the same).
    fn spans(minutes: &[i64]) -> Vec<BreachSpan> {
        minutes
            .iter()
            .map(|m| BreachSpan {
                start: START + m * 60,
                minutes: 1,
                in_planned_peak: false,
            })
            .collect()
    }

    fn wave(start_minute: i64, minutes: i64, first: bool) -> BurstWave {
        BurstWave {
            start_minute,
            minutes,
            factor: 2.0,
            first,
        }
    }

    #[test]
    fn each_breach_minute_goes_to_one_cause_peaks_first() {
        // Breach at minutes 2, 3 (peak), 10, 16 (first wave 10..15 + 2 drain), 17 (elsewhere),
        // 40 (rebound 38..43) and 44 (its drain).
        let breach = [2, 3, 10, 16, 17, 40, 44];
        let peaks = [(START + 60, START + 4 * 60)];
        let waves = [wave(10, 5, true), wave(38, 5, false), wave(2, 3, true)];
        let causes = attribute(&spans(&breach), START, &peaks, &waves);
        assert_eq!(
            causes,
            BreachCauses {
                planned_peaks: 2,
                first_waves: 2,
                rebound_waves: 2,
                elsewhere: 1,
            }
        );
        assert_eq!(causes.total(), breach.len() as u64);
        // A span of several minutes splits the same way as its minutes one by one.
        let merged = [BreachSpan {
            start: START + 14 * 60,
            minutes: 4,
            in_planned_peak: false,
        }];
        let split = attribute(&merged, START, &peaks, &waves);
        assert_eq!((split.first_waves, split.elsewhere), (3, 1));
    }

    #[test]
    fn a_first_wave_overlapping_a_rebound_counts_as_first() {
        let waves = [wave(0, 4, false), wave(5, 5, true)];
        assert_eq!(attribute(&spans(&[5]), START, &[], &waves).first_waves, 1);
    }
}
