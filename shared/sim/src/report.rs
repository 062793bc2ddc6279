//! The comparison an operator reads: a table side by side, the same as one JSON object, and the
//! issue's goals checked against the figures.

use std::fmt::{self, Write as _};

use serde::Serialize;
use serde_json::{json, Map, Value};

use crate::engine::{Strategy, StrategyResult};
use crate::novelty::{split_by_novelty, Novelty};
use crate::scenario::Scenario;
use crate::stats::{BreachSpan, Summary};
use crate::trace::STEP_SECS;

/// The goals headroom is held to (issue 5).
pub const GOAL_BREACH_REDUCTION_PERCENT: f64 = 80.0;
pub const GOAL_EXTRA_INSTANCE_HOURS_PERCENT: f64 = 15.0;
pub const GOAL_ORACLE_RATIO: f64 = 1.5;

#[derive(Debug, Clone, Serialize)]
pub struct ScenarioInfo {
    pub name: String,
    pub trace: String,
    pub start: String,
    pub end: String,
    pub interval_seconds: i64,
    pub steps: usize,
    pub step_seconds: i64,
    pub targets: Vec<String>,
    pub seed: u64,
    /// The pure lower bound: `ceil(demand / capacity)` instances at every step, no provisioning
    /// time, no minimum. No strategy can cost less.
    pub lower_bound_instance_hours: f64,
}

/// headroom against target tracking and the oracle.
#[derive(Debug, Clone, Serialize)]
pub struct Goals {
    /// No breach minute inside a planned peak window (`None`: no peak is planned).
    pub peaks_breach_free: Option<bool>,
    /// How many fewer breach minutes than target tracking alone, in percent.
    pub breach_reduction_percent: f64,
    /// Extra instance-hours over target tracking alone, in percent.
    pub extra_instance_hours_percent: f64,
    /// headroom's instance-hours over the oracle's.
    pub oracle_ratio: f64,
    /// The oracle's own breach minutes: when it breaches (MaxCapacity too low for the demand),
    /// its instance-hours are no yardstick and the ratio is not a verdict.
    pub oracle_breach_minutes: u64,
    /// headroom's instance-hours over the pure lower bound.
    pub lower_bound_ratio: f64,
    /// Neither target tracking nor headroom breached (the reduction then reads 100 %).
    pub no_breach_either_way: bool,
    pub met: bool,
}

#[derive(Debug, Clone)]
pub struct Report {
    pub scenario: ScenarioInfo,
    pub results: Vec<StrategyResult>,
    /// headroom's breach minutes by what the trace's history could have told of them
    /// (`novelty.rs`).
    pub breach_novelty: Option<Novelty>,
}

impl Report {
    pub fn new(scenario: &Scenario, results: Vec<StrategyResult>) -> Self {
        let t = &scenario.trace;
        let secs = chrono::SecondsFormat::Secs;
        Self {
            scenario: ScenarioInfo {
                name: scenario.name.clone(),
                trace: t.source.clone(),
                start: t.start.to_rfc3339_opts(secs, true),
                end: t.end().to_rfc3339_opts(secs, true),
                interval_seconds: t.interval_secs,
                steps: t.steps(),
                step_seconds: STEP_SECS,
                targets: scenario
                    .world
                    .targets
                    .iter()
                    .map(|t| t.id.to_string())
                    .collect(),
                seed: scenario.world.seed,
                lower_bound_instance_hours: lower_bound(scenario),
            },
            breach_novelty: results
                .iter()
                .find(|r| r.strategy == Strategy::Headroom)
                .map(|r| {
                    let spans: Vec<BreachSpan> = r
                        .per_target
                        .iter()
                        .flat_map(|t| t.breach_spans.iter().copied())
                        .collect();
                    split_by_novelty(&spans, t)
                }),
            results,
        }
    }

    pub fn get(&self, s: Strategy) -> Option<&StrategyResult> {
        self.results.iter().find(|r| r.strategy == s)
    }

    fn total(&self, s: Strategy) -> Summary {
        self.get(s).map(|r| r.total.clone()).unwrap_or_default()
    }

    pub fn goals(&self) -> Goals {
        let tt = self.total(Strategy::TargetTracking);
        let hr = self.total(Strategy::Headroom);
        let or = self.total(Strategy::Oracle);
        let reduction = if tt.breach_minutes == 0 {
            if hr.breach_minutes == 0 {
                100.0
            } else {
                -100.0
            }
        } else {
            100.0 * (1.0 - hr.breach_minutes as f64 / tt.breach_minutes as f64)
        };
        let extra = if tt.instance_hours > 0.0 {
            100.0 * (hr.instance_hours / tt.instance_hours - 1.0)
        } else {
            0.0
        };
        let ratio = if or.instance_hours > 0.0 {
            hr.instance_hours / or.instance_hours
        } else {
            1.0
        };
        let round1 = |v: f64| (v * 10.0).round() / 10.0;
        let peaks = (hr.peak_minutes > 0).then_some(hr.breach_minutes_in_peaks == 0);
        let lb = self.scenario.lower_bound_instance_hours;
        let oracle_ok = ratio <= GOAL_ORACLE_RATIO && or.breach_minutes == 0;
        Goals {
            peaks_breach_free: peaks,
            oracle_breach_minutes: or.breach_minutes,
            lower_bound_ratio: if lb > 0.0 {
                ((hr.instance_hours / lb) * 100.0).round() / 100.0
            } else {
                1.0
            },
            breach_reduction_percent: round1(reduction),
            extra_instance_hours_percent: round1(extra),
            oracle_ratio: (ratio * 100.0).round() / 100.0,
            no_breach_either_way: tt.breach_minutes == 0 && hr.breach_minutes == 0,
            met: peaks != Some(false)
                && reduction >= GOAL_BREACH_REDUCTION_PERCENT
                && extra <= GOAL_EXTRA_INSTANCE_HOURS_PERCENT
                && oracle_ok,
        }
    }

    /// `{"scenario": .., "strategies": {"target_tracking": {..}, "headroom": {..}, "oracle": {..}}, "goals": ..}`
    pub fn to_json(&self) -> Value {
        let mut strategies = Map::new();
        for r in &self.results {
            let mut v = serde_json::to_value(r).unwrap_or(Value::Null);
            if let Some(o) = v.as_object_mut() {
                o.remove("strategy");
            }
            strategies.insert(r.strategy.name().to_owned(), v);
        }
        json!({
            "scenario": self.scenario,
            "strategies": strategies,
            "goals": self.goals(),
            "breach_novelty": self.breach_novelty,
        })
    }

    /// The table, side by side.
    pub fn table(&self) -> String {
        let mut out = String::new();
        let s = &self.scenario;
        let hours = (s.steps as i64 * s.step_seconds) as f64 / 3600.0;
        let span = if hours >= 48.0 {
            format!("{:.1} days", hours / 24.0)
        } else {
            format!("{hours:.1} h")
        };
        let _ = writeln!(
            out,
            "scenario {}: {span} of {} ({} s rows, simulated in {} s steps), {} target{}",
            s.name,
            s.trace,
            s.interval_seconds,
            s.step_seconds,
            s.targets.len(),
            if s.targets.len() == 1 { "" } else { "s" }
        );
        let _ = writeln!(out);
        let names: Vec<&str> = self.results.iter().map(|r| r.strategy.name()).collect();
        let _ = write!(out, "{:<26}", "");
        for n in &names {
            let _ = write!(out, "{n:>17}");
        }
        let _ = writeln!(out);
        type Row = (&'static str, fn(&Summary) -> String);
        let rows: [Row; 8] = [
            ("breach_minutes", |s| group(s.breach_minutes)),
            ("  in planned peaks", |s| group(s.breach_minutes_in_peaks)),
            ("failed_requests", |s| group(s.failed_requests)),
            ("late_requests", |s| group(s.late_requests)),
            ("instance_hours", |s| format!("{:.1}", s.instance_hours)),
            ("launches", |s| group(s.launches)),
            ("max_backlog", |s| group(s.max_backlog)),
            ("requests", |s| group(s.requests)),
        ];
        for (label, value) in rows {
            let _ = write!(out, "{label:<26}");
            for r in &self.results {
                let _ = write!(out, "{:>17}", value(&r.total));
            }
            let _ = writeln!(out);
        }
        if self.get(Strategy::TargetTracking).is_some() && self.get(Strategy::Headroom).is_some() {
            let g = self.goals();
            let _ = writeln!(out);
            let _ = writeln!(out, "{g}");
        }
        if let Some(activity) = self
            .get(Strategy::Headroom)
            .and_then(|r| r.headroom.as_ref())
        {
            let f = &activity.forecast_score;
            if activity.forecast_refreshes > 0 {
                let _ = writeln!(out);
                let _ = writeln!(
                    out,
                    "forecast: {} refreshes; of {} slots scored, {} minutes under-forecast, {:.1} instance-hours held beyond need",
                    activity.forecast_refreshes, f.slots, f.under_minutes, f.over_instance_hours
                );
            }
            for r in &activity.schedule_reviews {
                let _ = writeln!(out, "schedule review: {r}");
            }
            for w in &activity.window_scores {
                let _ = writeln!(out, "window scores: {w}");
            }
        }
        if let Some(n) = self.breach_novelty.filter(|n| n.total() > 0) {
            let _ = writeln!(out);
            let _ = writeln!(
                out,
                "headroom's breach minutes no forecast could have known: {:.0} % ({} on the first day, {} above anything seen in their 10-minute slot on an earlier day); {} within what earlier days showed",
                n.unknowable_percent(),
                group(n.no_history),
                group(n.above_all_seen),
                group(n.foreseeable)
            );
        }
        if let Some(hr) = self.get(Strategy::Headroom) {
            self.write_spans(&mut out, hr);
        }
        out
    }

    /// headroom's longest breach spans: where an operator may add a peak or an announcement.
    fn write_spans(&self, out: &mut String, hr: &StrategyResult) {
        let mut spans: Vec<(&str, &BreachSpan)> = hr
            .per_target
            .iter()
            .flat_map(|t| t.breach_spans.iter().map(move |s| (t.target.as_str(), s)))
            .collect();
        if spans.is_empty() {
            return;
        }
        // Longest first; among equals, earliest first.
        spans.sort_by_key(|(_, s)| (std::cmp::Reverse(s.minutes), s.start));
        let shown = spans.len().min(SPANS_SHOWN);
        let _ = writeln!(out);
        let _ = writeln!(
            out,
            "where headroom still breaches, longest first ({shown} of {}; --json lists all):",
            spans.len()
        );
        let many_targets = self.scenario.targets.len() > 1;
        for (target, span) in &spans[..shown] {
            let at = chrono::DateTime::from_timestamp(span.start, 0)
                .map(|t| t.format("%a %Y-%m-%d %H:%M UTC").to_string())
                .unwrap_or_default();
            let _ = write!(out, "  {at}  {:>3} min", span.minutes);
            if span.in_planned_peak {
                let _ = write!(out, "  in a planned peak");
            }
            if many_targets {
                let _ = write!(out, "  {target}");
            }
            let _ = writeln!(out);
        }
        let _ = writeln!(
            out,
            "If you can see such a span coming, add a [[target.peak]] to the plan or send a \
             headroom.peak/v1 event ahead of it."
        );
    }
}

/// The pure lower bound's instance-hours: at every trace row, the instances its rate needs at
/// full capacity, for exactly as long as the row lasts.
fn lower_bound(scenario: &Scenario) -> f64 {
    let trace = &scenario.trace;
    let hours = trace.interval_secs as f64 / 3600.0;
    scenario
        .world
        .targets
        .iter()
        .map(|t| {
            let per_instance = t.capacity_per_instance * trace.interval_secs as f64;
            trace
                .counts
                .iter()
                .map(|&n| {
                    let need = n * t.trace_scale / per_instance;
                    (need - 1e-9).ceil().max(0.0) * hours
                })
                .sum::<f64>()
        })
        .sum()
}

/// How many breach spans the table lists.
const SPANS_SHOWN: usize = 5;

impl fmt::Display for Goals {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mark = |ok: bool| if ok { "ok" } else { "MISSED" };
        writeln!(f, "headroom against target tracking alone and the oracle:")?;
        match self.peaks_breach_free {
            Some(free) => writeln!(
                f,
                "  planned peaks breach-free:  {:<8} {}",
                if free { "yes" } else { "no" },
                mark(free)
            )?,
            None => writeln!(
                f,
                "  planned peaks breach-free:  n/a      (no peak planned)"
            )?,
        }
        let breach = if self.no_breach_either_way {
            "none".to_owned()
        } else {
            format!("{:+.1} %", -self.breach_reduction_percent)
        };
        writeln!(
            f,
            "  breach minutes:             {breach:<8} {} (goal: at least {GOAL_BREACH_REDUCTION_PERCENT} % fewer)",
            mark(self.breach_reduction_percent >= GOAL_BREACH_REDUCTION_PERCENT)
        )?;
        writeln!(
            f,
            "  instance-hours:             {:<8} {} (goal: at most {GOAL_EXTRA_INSTANCE_HOURS_PERCENT} % more)",
            format!("{:+.1} %", self.extra_instance_hours_percent),
            mark(self.extra_instance_hours_percent <= GOAL_EXTRA_INSTANCE_HOURS_PERCENT)
        )?;
        if self.oracle_breach_minutes > 0 {
            writeln!(
                f,
                "  instance-hours vs oracle:   {:<8} n/a (the oracle itself breaches {} minutes: MaxCapacity is below the demand)",
                format!("{:.2}x", self.oracle_ratio),
                self.oracle_breach_minutes
            )?;
        } else {
            writeln!(
                f,
                "  instance-hours vs oracle:   {:<8} {} (goal: at most {GOAL_ORACLE_RATIO}x)",
                format!("{:.2}x", self.oracle_ratio),
                mark(self.oracle_ratio <= GOAL_ORACLE_RATIO)
            )?;
        }
        write!(
            f,
            "  vs pure lower bound:        {:<8} (ceil(demand / capacity) at every step: no strategy costs less)",
            format!("{:.2}x", self.lower_bound_ratio)
        )
    }
}

/// 1234567 -> "1,234,567".
fn group(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    // The first group takes what does not divide into threes.
    let mut left_in_group = match digits.len() % 3 {
        0 => 3,
        r => r,
    };
    for c in digits.chars() {
        if left_in_group == 0 {
            out.push(',');
            left_in_group = 3;
        }
        out.push(c);
        left_in_group -= 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::group;

    #[test]
    fn groups_thousands() {
        assert_eq!(group(0), "0");
        assert_eq!(group(999), "999");
        assert_eq!(group(1000), "1,000");
        assert_eq!(group(1_234_567), "1,234,567");
    }
}
