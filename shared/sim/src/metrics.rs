//! The CloudWatch side: per-target metric series built from what the endpoint did, each datapoint
//! visible only after its period ends plus the metric's delay, in fixed-size rings (no allocation
//! per step).
//!
//! Modelling assumptions, with their sources in `aws-facts.md`:
//! - Standard SageMaker metrics are 1-minute datapoints aligned to the clock minute that reach
//!   CloudWatch `metrics.standard_delay` late (default 2 min: "a few minutes late").
//! - `ConcurrentRequestsPerModel` also comes as 10-second datapoints, `high_resolution_delay` late.
//! - `InvocationsPerInstance` counts every request sent to the variant in the minute (served or
//!   not) divided by the mean number of instances in service over the minute; with none in service
//!   there is no datapoint (missing data).
//! - `ConcurrentRequestsPerModel` is the requests in flight (in service at the rate they are served
//!   times `service_time`, plus those waiting) per instance in service.
//! - `ApproximateBacklogSizePerInstance` divides the backlog by the instances in service, or by 1
//!   when none are: that is why, without the step policy, target tracking leaves zero only once
//!   the backlog exceeds its target ("scale-out from zero waits until the backlog exceeds the
//!   tracking target").

use crate::world::Metric;

/// Ring length: a power of two above `world::MAX_LOOKBACK_PERIODS`.
const RING: usize = 64;

/// One metric's recent datapoints, indexed by period number (Unix seconds / period length).
/// `NaN` marks a missing datapoint.
#[derive(Debug, Clone)]
pub struct Series {
    values: [f64; RING],
    /// The newest period pushed, `i64::MIN` before the first.
    newest: i64,
}

impl Default for Series {
    fn default() -> Self {
        Self {
            values: [f64::NAN; RING],
            newest: i64::MIN,
        }
    }
}

impl Series {
    /// Records the datapoint of `period`; periods skipped since the last push become missing.
    pub fn push(&mut self, period: i64, value: f64) {
        if self.newest != i64::MIN && period > self.newest + 1 {
            let gap = (period - self.newest - 1).min(RING as i64);
            for p in (period - gap)..period {
                self.values[slot(p)] = f64::NAN;
            }
        }
        self.values[slot(period)] = value;
        self.newest = self.newest.max(period);
    }

    /// The datapoint of `period`, or `NaN` when it is missing, not yet pushed or too old.
    pub fn get(&self, period: i64) -> f64 {
        if self.newest == i64::MIN || period > self.newest || period <= self.newest - RING as i64 {
            return f64::NAN;
        }
        self.values[slot(period)]
    }
}

fn slot(period: i64) -> usize {
    period.rem_euclid(RING as i64) as usize
}

/// The newest period whose datapoint is visible at `now` (Unix seconds), for a period length and
/// a delivery delay: period `p` covers `[p*len, (p+1)*len)` and is visible from `(p+1)*len + delay`.
pub fn newest_visible(now: i64, period_len: i64, delay: i64) -> i64 {
    (now - delay).div_euclid(period_len) - 1
}

/// What the endpoint did in one 10-second step, as the metrics see it.
#[derive(Debug, Clone, Copy, Default)]
pub struct StepSample {
    pub arrivals: f64,
    pub served: f64,
    /// Requests waiting at the end of the step.
    pub backlog: f64,
    pub in_service: u32,
}

/// Accumulates steps into per-minute datapoints for every metric of one target, plus the
/// 10-second concurrency series.
#[derive(Debug, Clone)]
pub struct Meter {
    service_time: f64,
    minute: i64,
    steps: u32,
    arrivals: f64,
    in_service_sum: f64,
    backlog_sum: f64,
    concurrency_sum: f64,
    concurrency_steps: u32,
    without_capacity_steps: u32,
    /// One series per [`Metric`], 1-minute datapoints.
    pub minute_series: [Series; 6],
    /// `ConcurrentRequestsPerModel` every 10 s.
    pub ten_second: Series,
}

impl Meter {
    pub fn new(service_time: f64) -> Self {
        Self {
            service_time,
            minute: i64::MIN,
            steps: 0,
            arrivals: 0.0,
            in_service_sum: 0.0,
            backlog_sum: 0.0,
            concurrency_sum: 0.0,
            concurrency_steps: 0,
            without_capacity_steps: 0,
            minute_series: Default::default(),
            ten_second: Series::default(),
        }
    }

    pub fn series(&self, metric: Metric) -> &Series {
        &self.minute_series[metric.index()]
    }

    /// Records the step starting at `at` (Unix seconds). The last step of a minute publishes the
    /// minute's datapoints.
    pub fn record(&mut self, at: i64, s: StepSample) {
        let minute = at.div_euclid(60);
        if minute != self.minute {
            self.close_minute();
            self.minute = minute;
        }
        let concurrency = (s.in_service > 0).then(|| {
            (s.served / crate::trace::STEP_SECS as f64 * self.service_time + s.backlog)
                / f64::from(s.in_service)
        });
        self.ten_second
            .push(at.div_euclid(10), concurrency.unwrap_or(f64::NAN));
        self.steps += 1;
        self.arrivals += s.arrivals;
        self.in_service_sum += f64::from(s.in_service);
        self.backlog_sum += s.backlog;
        if let Some(c) = concurrency {
            self.concurrency_sum += c;
            self.concurrency_steps += 1;
        }
        if s.backlog > crate::endpoint::EPSILON && s.in_service == 0 {
            self.without_capacity_steps += 1;
        }
        if (at + crate::trace::STEP_SECS).rem_euclid(60) == 0 {
            self.close_minute();
        }
    }

    fn close_minute(&mut self) {
        if self.minute == i64::MIN || self.steps == 0 {
            return;
        }
        let steps = f64::from(self.steps);
        let in_service = self.in_service_sum / steps;
        let backlog = self.backlog_sum / steps;
        let per_instance = |v: f64| {
            if in_service > 0.0 {
                v / in_service
            } else {
                f64::NAN
            }
        };
        let values = [
            self.arrivals,
            per_instance(self.arrivals),
            if self.concurrency_steps > 0 {
                self.concurrency_sum / f64::from(self.concurrency_steps)
            } else {
                f64::NAN
            },
            backlog,
            backlog / in_service.max(1.0),
            f64::from(self.without_capacity_steps) / steps,
        ];
        for (series, value) in self.minute_series.iter_mut().zip(values) {
            series.push(self.minute, value);
        }
        self.minute = i64::MIN;
        self.steps = 0;
        self.arrivals = 0.0;
        self.in_service_sum = 0.0;
        self.backlog_sum = 0.0;
        self.concurrency_sum = 0.0;
        self.concurrency_steps = 0;
        self.without_capacity_steps = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_minute_is_visible_only_after_its_delay() {
        // Minute 10 covers [600, 660); with a 120 s delay it is visible from 780.
        assert_eq!(newest_visible(779, 60, 120), 9);
        assert_eq!(newest_visible(780, 60, 120), 10);
        assert_eq!(newest_visible(30, 10, 20), 0);
    }

    #[test]
    fn series_marks_gaps_missing_and_forgets_old_points() {
        let mut s = Series::default();
        s.push(5, 1.0);
        s.push(8, 2.0);
        assert_eq!(s.get(5), 1.0);
        assert!(s.get(6).is_nan() && s.get(7).is_nan());
        assert_eq!(s.get(8), 2.0);
        assert!(s.get(9).is_nan());
        s.push(8 + RING as i64, 3.0);
        assert!(s.get(8).is_nan(), "too old");
    }

    #[test]
    fn meter_publishes_invocations_per_instance_per_minute() {
        let mut m = Meter::new(1.0);
        for k in 0..6 {
            m.record(
                600 + k * 10,
                StepSample {
                    arrivals: 100.0,
                    served: 100.0,
                    backlog: 0.0,
                    in_service: 2,
                },
            );
        }
        let ipi = m.series(Metric::InvocationsPerInstance).get(10);
        assert!((ipi - 300.0).abs() < 1e-9, "{ipi}");
        assert!((m.series(Metric::Invocations).get(10) - 600.0).abs() < 1e-9);
        // 10 req/s served for 1 s each, over 2 instances.
        assert!((m.ten_second.get(60) - 5.0).abs() < 1e-9);
    }
}
