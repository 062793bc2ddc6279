//! Where a run's breach minutes fall on a real trace, whose bursts nobody labelled: how many a
//! forecast could not have known. A forecast learns each slot of the day from the days before,
//! so a minute whose demand is above anything seen in its slot on any earlier day (or that comes
//! before any earlier day exists) is beyond what history could tell; the rest were, at least in
//! principle, foreseeable.
//!
//! Walk-forward like the forecast: a minute is judged only against the days before its own.

use serde::Serialize;

use crate::stats::BreachSpan;
use crate::trace::Trace;

/// The slot of the day the judgement is made in: the forecast's default slot.
pub const SLOT_SECS: i64 = 600;

/// Breach minutes by what history could say of them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Novelty {
    /// On the trace's first day: no earlier day to learn from.
    pub no_history: u64,
    /// Demand above the highest of its slot on every earlier day.
    pub above_all_seen: u64,
    /// Demand within what earlier days showed in that slot.
    pub foreseeable: u64,
}

impl Novelty {
    pub fn total(&self) -> u64 {
        self.no_history + self.above_all_seen + self.foreseeable
    }

    /// The share of the breach minutes no forecast could have known, in percent.
    pub fn unknowable_percent(&self) -> f64 {
        match self.total() {
            0 => 0.0,
            n => 100.0 * (self.no_history + self.above_all_seen) as f64 / n as f64,
        }
    }
}

/// Splits the breach minutes of `spans` by the demand of `trace` (its rows, in any unit: only
/// their order matters) at each minute.
pub fn split_by_novelty(spans: &[BreachSpan], trace: &Trace) -> Novelty {
    let start = trace.start.timestamp();
    let interval = trace.interval_secs.max(1);
    let slot = SLOT_SECS.max(interval);
    let slots_per_day = (86_400 / slot).max(1) as usize;
    let day_of = |t: i64| t.div_euclid(86_400);
    let slot_of = |t: i64| (t.rem_euclid(86_400) / slot) as usize;
    // For each row: the highest count of its slot on the days before its own.
    let mut seen_before = vec![None::<f64>; trace.counts.len()];
    let mut best = vec![None::<f64>; slots_per_day];
    let mut today = vec![None::<f64>; slots_per_day];
    let mut current_day = None;
    for (i, &n) in trace.counts.iter().enumerate() {
        let t = start + interval * i as i64;
        if current_day != Some(day_of(t)) {
            for (b, d) in best.iter_mut().zip(today.iter_mut()) {
                *b = higher(*b, d.take());
            }
            current_day = Some(day_of(t));
        }
        let s = slot_of(t);
        seen_before[i] = best[s];
        today[s] = higher(today[s], Some(n));
    }
    let first_day = day_of(start);
    let mut out = Novelty::default();
    for span in spans {
        for k in 0..i64::from(span.minutes) {
            let at = span.start + 60 * k;
            let row = (at - start).div_euclid(interval);
            let Some(&n) = usize::try_from(row).ok().and_then(|r| trace.counts.get(r)) else {
                continue;
            };
            match seen_before[row as usize] {
                _ if day_of(at) == first_day => out.no_history += 1,
                None => out.no_history += 1,
                Some(max) if n > max => out.above_all_seen += 1,
                Some(_) => out.foreseeable += 1,
            }
        }
    }
    out
}

/// The higher of two maybe-seen counts.
fn higher(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.max(b)),
        (a, None) => a,
        (None, b) => b,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Three days of hourly rows: 10 everywhere, 50 at 12:00 on day 2, 30 at 12:00 on day 3.
    fn trace() -> Trace {
        let mut counts = vec![10u64; 72];
        counts[24 + 12] = 50;
        counts[48 + 12] = 30;
        let text: String = std::iter::once("timestamp,requests\n".to_owned())
            .chain(counts.iter().enumerate().map(|(i, n)| {
                format!(
                    "{},{n}\n",
                    (chrono::DateTime::parse_from_rfc3339("2026-03-02T00:00:00Z").unwrap()
                        + chrono::Duration::hours(i as i64))
                    .to_rfc3339()
                )
            }))
            .collect();
        Trace::parse("t", &text).unwrap()
    }

    fn span(day: i64, hour: i64) -> BreachSpan {
        BreachSpan {
            start: trace().start.timestamp() + day * 86_400 + hour * 3_600,
            minutes: 2,
            in_planned_peak: false,
        }
    }

    #[test]
    fn each_breach_minute_is_judged_against_the_days_before_it() {
        let t = trace();
        // Day 1: nothing to learn from. Day 2 at 12:00: 50, above day 1's 10. Day 3 at 12:00:
        // 30, below day 2's 50: foreseeable. Day 3 at 05:00: 10, seen before.
        let n = split_by_novelty(&[span(0, 12), span(1, 12), span(2, 12), span(2, 5)], &t);
        assert_eq!(
            n,
            Novelty {
                no_history: 2,
                above_all_seen: 2,
                foreseeable: 4,
            }
        );
        assert_eq!(n.total(), 8);
        assert!((n.unknowable_percent() - 50.0).abs() < 1e-9);
    }
}
