//! Builders for small scenarios written inline.

#![allow(dead_code)]

use chrono::{DateTime, Duration, Utc};
use headroom_sim::engine::{ChartPoint, StrategyResult};
use headroom_sim::{run_all, RunOptions, Scenario, Strategy};

pub fn t(s: &str) -> DateTime<Utc> {
    s.parse().expect("a test timestamp")
}

/// A one-minute trace from `start`, `minutes` long, with `rate(minute)` requests per second.
pub fn trace(start: &str, minutes: i64, rate: impl Fn(i64) -> f64) -> String {
    let start = t(start);
    let mut out = String::from("timestamp,requests\n");
    for m in 0..minutes {
        let at = start + Duration::minutes(m);
        out.push_str(&format!(
            "{},{}\n",
            at.format("%Y-%m-%dT%H:%M:%SZ"),
            (rate(m) * 60.0).round() as u64
        ));
    }
    out
}

pub fn scenario(plan: &str, world: &str, trace: &str) -> Scenario {
    Scenario::parse("test", ("plan", plan), ("world", world), ("trace", trace))
        .expect("a valid test scenario")
}

pub fn run(s: &Scenario) -> Vec<StrategyResult> {
    run_all(
        s,
        &mut RunOptions {
            chart: true,
            progress: None,
        },
    )
}

pub fn of(results: &[StrategyResult], s: Strategy) -> &StrategyResult {
    results
        .iter()
        .find(|r| r.strategy == s)
        .expect("every strategy runs")
}

/// The chart points of the first target within `[from, to)`.
pub fn window<'a>(r: &'a StrategyResult, from: &str, to: &str) -> Vec<&'a ChartPoint> {
    let (from, to) = (t(from).timestamp(), t(to).timestamp());
    r.chart[0]
        .iter()
        .filter(|p| p.at >= from && p.at < to)
        .collect()
}

pub fn breach_minutes(points: &[&ChartPoint]) -> usize {
    points.iter().filter(|p| p.breach).count()
}
