//! A target's demand history as CloudWatch returns it: equally spaced periods, each the mean
//! request rate over the period in requests per minute (an `Invocations` Sum divided by the
//! period's minutes), `NaN` where CloudWatch has no datapoint.

use chrono::{DateTime, Utc};

#[derive(Debug, Clone, PartialEq)]
pub struct DemandSeries {
    /// Start of the first period.
    pub start: DateTime<Utc>,
    pub period_secs: i64,
    /// Requests per minute, one value per period, `NaN` for a missing datapoint.
    pub values: Vec<f32>,
}

impl DemandSeries {
    pub fn new(start: DateTime<Utc>, period_secs: i64, values: Vec<f32>) -> Self {
        Self {
            start,
            period_secs: period_secs.max(1),
            values,
        }
    }

    /// An empty series (no datapoints at all).
    pub fn empty(start: DateTime<Utc>, period_secs: i64) -> Self {
        Self::new(start, period_secs, Vec::new())
    }

    /// The start of period `i`.
    pub fn at(&self, i: usize) -> DateTime<Utc> {
        self.start + chrono::Duration::seconds(self.period_secs * i as i64)
    }

    /// The end of the last period.
    pub fn end(&self) -> DateTime<Utc> {
        self.at(self.values.len())
    }

    /// `(period start, requests per minute)` for every period that has a datapoint.
    pub fn points(&self) -> impl Iterator<Item = (DateTime<Utc>, f32)> + '_ {
        self.values
            .iter()
            .enumerate()
            .filter(|(_, v)| v.is_finite())
            .map(|(i, v)| (self.at(i), *v))
    }

    /// [`points`](Self::points) whose period starts in `[from, to)`, found by index rather than
    /// by a scan (the refresh asks this of a week's series for every slot and window).
    pub fn points_between(
        &self,
        from: DateTime<Utc>,
        to: DateTime<Utc>,
    ) -> impl Iterator<Item = (DateTime<Utc>, f32)> + '_ {
        let index = |t: DateTime<Utc>| {
            let secs = (t - self.start).num_seconds();
            // The first period starting at or after `t`.
            (secs.max(0) + self.period_secs - 1).div_euclid(self.period_secs) as usize
        };
        let (a, b) = (
            index(from).min(self.values.len()),
            index(to).min(self.values.len()),
        );
        self.values[a..b.max(a)]
            .iter()
            .enumerate()
            .filter(|(_, v)| v.is_finite())
            .map(move |(i, v)| (self.at(a + i), *v))
    }

    /// How much time the datapoints cover (missing periods do not count).
    pub fn covered_secs(&self) -> i64 {
        self.values.iter().filter(|v| v.is_finite()).count() as i64 * self.period_secs
    }

    /// Re-buckets into periods of `period_secs` (a multiple of this series' period): each new
    /// period holds the mean of the datapoints it covers, `NaN` when it covers none.
    pub fn coarsen(&self, period_secs: i64) -> DemandSeries {
        if period_secs <= self.period_secs || period_secs % self.period_secs != 0 {
            return self.clone();
        }
        let per = (period_secs / self.period_secs) as usize;
        // Align the new periods to the clock, as CloudWatch aligns its periods.
        let offset = self.start.timestamp().rem_euclid(period_secs);
        let lead = ((period_secs - offset) % period_secs / self.period_secs) as usize;
        let mut out = Vec::with_capacity(self.values.len() / per + 2);
        let first_start = self.start - chrono::Duration::seconds(offset);
        let mut i = 0usize;
        // The partial first bucket, then whole ones.
        let mut take = if lead == 0 { per } else { lead };
        while i < self.values.len() {
            let end = (i + take).min(self.values.len());
            let (sum, n) = self.values[i..end]
                .iter()
                .filter(|v| v.is_finite())
                .fold((0.0f64, 0u32), |(s, n), v| (s + f64::from(*v), n + 1));
            out.push(if n == 0 {
                f32::NAN
            } else {
                (sum / f64::from(n)) as f32
            });
            i = end;
            take = per;
        }
        DemandSeries::new(first_start, period_secs, out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(s: &str) -> DateTime<Utc> {
        s.parse().expect("instant")
    }

    #[test]
    fn coarsening_averages_aligned_buckets_and_keeps_gaps_missing() {
        // GIVEN minutes from 00:03: 1, 2, NaN, 4, 5, 6, 7, 8
        let s = DemandSeries::new(
            at("2026-01-01T00:03:00Z"),
            60,
            vec![1.0, 2.0, f32::NAN, 4.0, 5.0, 6.0, 7.0, 8.0],
        );
        // WHEN re-bucketed to clock-aligned 5-minute periods
        let c = s.coarsen(300);
        // THEN 00:00 holds 00:03-00:04, 00:05 the next five (one missing), 00:10 the last one
        assert_eq!(c.start, at("2026-01-01T00:00:00Z"));
        assert_eq!(c.values, vec![1.5, 5.5, 8.0]);
        assert_eq!(s.covered_secs(), 7 * 60);
    }

    #[test]
    fn points_between_are_the_points_a_scan_finds() {
        let s = DemandSeries::new(
            at("2026-01-01T00:00:00Z"),
            300,
            (0..48)
                .map(|i| if i % 7 == 3 { f32::NAN } else { i as f32 })
                .collect(),
        );
        let bounds = [
            ("2025-12-31T23:00:00Z", "2026-01-01T00:20:00Z"),
            ("2026-01-01T00:02:00Z", "2026-01-01T01:07:00Z"),
            ("2026-01-01T01:00:00Z", "2026-01-01T01:00:00Z"),
            ("2026-01-01T03:00:00Z", "2026-01-02T00:00:00Z"),
            ("2026-01-01T02:00:00Z", "2026-01-01T01:00:00Z"),
        ];
        for (from, to) in bounds {
            let (from, to) = (at(from), at(to));
            let scan: Vec<_> = s.points().filter(|(t, _)| *t >= from && *t < to).collect();
            assert_eq!(
                s.points_between(from, to).collect::<Vec<_>>(),
                scan,
                "{from} {to}"
            );
        }
    }

    #[test]
    fn coarsening_to_a_finer_or_odd_period_changes_nothing() {
        let s = DemandSeries::new(at("2026-01-01T00:00:00Z"), 300, vec![1.0, 2.0]);
        assert_eq!(s.coarsen(60), s);
        assert_eq!(s.coarsen(420), s);
    }
}
