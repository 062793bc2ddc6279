//! What a strategy achieved: breach minutes (overall and inside planned peaks), failed and late
//! requests, instance-hours, launches and the largest backlog. Accumulated in O(1) per step.

use serde::Serialize;

use crate::endpoint::{StepOutcome, EPSILON};
use crate::trace::STEP_SECS;

/// The figures of one strategy (for one target, or summed over targets).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Summary {
    /// Minutes in which some request waited past the latency objective or failed.
    pub breach_minutes: u64,
    /// Those of them inside a planned peak window.
    pub breach_minutes_in_peaks: u64,
    pub failed_requests: u64,
    /// Served, but after waiting past the latency objective.
    pub late_requests: u64,
    pub instance_hours: f64,
    /// Instances launched.
    pub launches: u64,
    /// The most requests waiting at once.
    pub max_backlog: u64,
    pub requests: u64,
    /// Minutes of planned peak windows within the trace.
    pub peak_minutes: u64,
}

impl Summary {
    /// Adds another target's figures (the largest backlog is the largest of the two).
    pub fn add(&mut self, o: &Summary) {
        self.breach_minutes += o.breach_minutes;
        self.breach_minutes_in_peaks += o.breach_minutes_in_peaks;
        self.failed_requests += o.failed_requests;
        self.late_requests += o.late_requests;
        self.instance_hours += o.instance_hours;
        self.launches += o.launches;
        self.max_backlog = self.max_backlog.max(o.max_backlog);
        self.requests += o.requests;
        self.peak_minutes += o.peak_minutes;
    }
}

/// A run of consecutive breach minutes of one target: where a strategy fell short.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct BreachSpan {
    /// The first breach minute, RFC 3339 in the JSON.
    #[serde(serialize_with = "rfc3339")]
    pub start: i64,
    pub minutes: u32,
    /// Some minute of it falls inside a planned peak window.
    pub in_planned_peak: bool,
}

fn rfc3339<S: serde::Serializer>(at: &i64, s: S) -> Result<S::Ok, S::Error> {
    let text = chrono::DateTime::from_timestamp(*at, 0)
        .map(|t| t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true))
        .unwrap_or_default();
    s.serialize_str(&text)
}

/// The figures of one quarter hour of a run, for a backtest that weighs its days
/// (`tune.rs`). Quarters of the clock (:00, :15, :30, :45 UTC), so a day in any time zone
/// (offsets in whole quarters) is a run of them whatever instant the trace starts at.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Quarter {
    pub breach_minutes: u32,
    pub instance_seconds: f64,
}

/// Seconds in a [`Quarter`].
pub const QUARTER_SECS: i64 = 900;

/// Running totals for one target.
#[derive(Debug, Clone)]
pub struct Stats {
    /// The clock quarter holding the run's first instant: [`Stats::quarters`] starts there.
    first_quarter: i64,
    quarters: Vec<Quarter>,
    breach_minutes: u64,
    breach_minutes_in_peaks: u64,
    last_breach_minute: i64,
    failed: f64,
    late: f64,
    requests: f64,
    instance_seconds: f64,
    max_backlog: f64,
    /// Planned peak windows, merged and sorted, and the first one not yet over.
    peaks: Vec<(i64, i64)>,
    cursor: usize,
    peak_minutes: u64,
    spans: Vec<BreachSpan>,
}

impl Stats {
    /// `peaks`: the planned peak windows `[start, end)` in Unix seconds, within `[from, to)`.
    pub fn new(mut peaks: Vec<(i64, i64)>, from: i64, to: i64) -> Self {
        peaks.sort_unstable();
        let mut merged: Vec<(i64, i64)> = Vec::with_capacity(peaks.len());
        for (s, e) in peaks {
            match merged.last_mut() {
                Some(last) if s <= last.1 => last.1 = last.1.max(e),
                _ => merged.push((s, e)),
            }
        }
        let peak_minutes = merged
            .iter()
            .map(|&(s, e)| ((e.min(to) - s.max(from)).max(0) + 59) / 60)
            .sum::<i64>() as u64;
        Self {
            first_quarter: from.div_euclid(QUARTER_SECS),
            quarters: Vec::with_capacity(((to - from).max(0) / QUARTER_SECS + 1) as usize),
            breach_minutes: 0,
            breach_minutes_in_peaks: 0,
            last_breach_minute: i64::MIN,
            failed: 0.0,
            late: 0.0,
            requests: 0.0,
            instance_seconds: 0.0,
            max_backlog: 0.0,
            peaks: merged,
            cursor: 0,
            peak_minutes,
            spans: Vec::new(),
        }
    }

    fn in_peak(&mut self, now: i64) -> bool {
        while self.cursor < self.peaks.len() && self.peaks[self.cursor].1 <= now {
            self.cursor += 1;
        }
        self.peaks.get(self.cursor).is_some_and(|&(s, _)| s <= now)
    }

    /// Records the step starting at `now` with `billed` instances paid for.
    pub fn record(&mut self, now: i64, out: &StepOutcome, billed: u32) {
        self.instance_seconds += f64::from(billed) * STEP_SECS as f64;
        let q = (now.div_euclid(QUARTER_SECS) - self.first_quarter).max(0) as usize;
        if self.quarters.len() <= q {
            self.quarters.resize(q + 1, Quarter::default());
        }
        self.quarters[q].instance_seconds += f64::from(billed) * STEP_SECS as f64;
        self.requests += out.arrivals;
        self.failed += out.failed;
        self.late += out.late;
        self.max_backlog = self.max_backlog.max(out.backlog);
        let peak = self.in_peak(now);
        if out.breach {
            let minute = now.div_euclid(60);
            if minute != self.last_breach_minute {
                let continues = minute == self.last_breach_minute.saturating_add(1);
                match self.spans.last_mut() {
                    Some(span) if continues => {
                        span.minutes += 1;
                        span.in_planned_peak |= peak;
                    }
                    _ => self.spans.push(BreachSpan {
                        start: minute * 60,
                        minutes: 1,
                        in_planned_peak: peak,
                    }),
                }
                self.last_breach_minute = minute;
                self.breach_minutes += 1;
                self.quarters[q].breach_minutes += 1;
                if peak {
                    self.breach_minutes_in_peaks += 1;
                }
            }
        }
    }

    /// The breach spans so far, in time order.
    pub fn spans(&self) -> &[BreachSpan] {
        &self.spans
    }

    /// Each clock quarter hour's figures, from the one holding the run's start (the oracle's
    /// instance-seconds are not split: see [`Stats::set_instance_seconds`]).
    pub fn quarters(&self) -> &[Quarter] {
        &self.quarters
    }

    /// The oracle pays for its instances its own way (see `oracle.rs`).
    pub fn set_instance_seconds(&mut self, s: f64) {
        self.instance_seconds = s;
    }

    pub fn summary(&self, launches: u64) -> Summary {
        let round = |v: f64| if v < EPSILON { 0 } else { v.round() as u64 };
        Summary {
            breach_minutes: self.breach_minutes,
            breach_minutes_in_peaks: self.breach_minutes_in_peaks,
            failed_requests: round(self.failed),
            late_requests: round(self.late),
            instance_hours: (self.instance_seconds / 3600.0 * 100.0).round() / 100.0,
            launches,
            max_backlog: round(self.max_backlog),
            requests: round(self.requests),
            peak_minutes: self.peak_minutes,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn breach_minutes_count_once_per_minute_and_inside_peaks() {
        let mut s = Stats::new(vec![(120, 240)], 0, 600);
        let breach = StepOutcome {
            breach: true,
            ..StepOutcome::default()
        };
        for now in (0..300).step_by(10) {
            s.record(now, &breach, 1);
        }
        let sum = s.summary(0);
        assert_eq!(sum.breach_minutes, 5);
        assert_eq!(sum.breach_minutes_in_peaks, 2);
        assert_eq!(sum.peak_minutes, 2);
        assert!((sum.instance_hours - 300.0 / 3600.0).abs() < 0.01);
        // All of it in the first quarter hour.
        assert_eq!(
            s.quarters(),
            [Quarter {
                breach_minutes: 5,
                instance_seconds: 300.0
            }]
        );
    }

    #[test]
    fn quarters_split_the_figures_by_clock_quarter_hour() {
        // GIVEN a run starting 100 s into a quarter hour
        let mut s = Stats::new(Vec::new(), 100, 100 + 3 * QUARTER_SECS);
        let breach = StepOutcome {
            breach: true,
            ..StepOutcome::default()
        };
        // WHEN one step breaches at the start, and one with two instances in the third clock
        // quarter (which starts 800 s after the first step, not 1800 s)
        s.record(100, &breach, 1);
        s.record(2 * QUARTER_SECS + 30, &breach, 2);
        // THEN each lands in its own clock quarter
        let q = s.quarters();
        assert_eq!(q.len(), 3);
        assert_eq!(q[0].breach_minutes, 1);
        assert_eq!(q[1], Quarter::default());
        assert_eq!(q[2].breach_minutes, 1);
        assert!((q[2].instance_seconds - 2.0 * STEP_SECS as f64).abs() < 1e-9);
    }

    #[test]
    fn consecutive_breach_minutes_make_one_span_and_a_gap_starts_another() {
        let mut s = Stats::new(vec![(180, 240)], 0, 900);
        let step = |breach| StepOutcome {
            breach,
            ..StepOutcome::default()
        };
        // Breach in minutes 1, 2, 3 (the last inside the peak), none in 4, breach again in 6.
        for now in (0..600).step_by(10) {
            let minute = now / 60;
            s.record(now, &step(matches!(minute, 1..=3 | 6)), 1);
        }
        let span = |start, minutes, in_planned_peak| BreachSpan {
            start,
            minutes,
            in_planned_peak,
        };
        assert_eq!(s.spans(), [span(60, 3, true), span(360, 1, false)]);
        let json = serde_json::to_value(s.spans()[0]).expect("serialises");
        assert_eq!(json["start"], "1970-01-01T00:01:00Z");
    }
}
