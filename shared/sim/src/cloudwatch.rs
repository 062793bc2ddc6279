//! CloudWatch metric alarms over the simulated series: "M of N" evaluation once per period, on
//! the datapoints visible by then.
//!
//! Modelling assumptions: an alarm is ALARM when at least M of its last N visible datapoints
//! breach, INSUFFICIENT_DATA when all N are missing, OK otherwise (CloudWatch's default
//! `TreatMissingData = missing`, simplified: missing datapoints count as not breaching).

pub use headroom_core::model::AlarmState;

use crate::metrics::{newest_visible, Series};
use crate::world::{AlarmDef, Comparison, Period};

/// What to compare: `m` of the last `n` datapoints against `threshold`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rule {
    pub comparison: Comparison,
    pub threshold: f64,
    pub n: u32,
    pub m: u32,
}

/// Evaluates `rule` on the datapoints of `series` up to period `newest`.
pub fn evaluate(series: &Series, newest: i64, rule: Rule) -> AlarmState {
    let mut present = 0;
    let mut breaching = 0;
    for p in (newest - i64::from(rule.n) + 1)..=newest {
        let v = series.get(p);
        if v.is_nan() {
            continue;
        }
        present += 1;
        if rule.comparison.breaches(v, rule.threshold) {
            breaching += 1;
        }
    }
    if present == 0 {
        AlarmState::InsufficientData
    } else if breaching >= rule.m {
        AlarmState::Alarm
    } else {
        AlarmState::Ok
    }
}

/// A plan-named alarm in flight: its definition and current state.
#[derive(Debug, Clone)]
pub struct LiveAlarm {
    pub def: AlarmDef,
    pub state: AlarmState,
    /// The newest datapoint the last evaluation saw, and its value (for `reasonData`).
    pub last_value: f64,
}

/// A state change, as CloudWatch would publish it.
#[derive(Debug, Clone, PartialEq)]
pub struct Transition {
    pub alarm: String,
    pub target: usize,
    pub from: AlarmState,
    pub to: AlarmState,
    /// Unix seconds.
    pub at: i64,
    pub value: f64,
    pub threshold: f64,
    /// The alarm's AWS/SageMaker metric name.
    pub metric: &'static str,
}

impl LiveAlarm {
    pub fn new(def: AlarmDef) -> Self {
        Self {
            def,
            state: AlarmState::InsufficientData,
            last_value: f64::NAN,
        }
    }

    /// Evaluates at `now` if a period ends then; returns the transition, if any.
    pub fn evaluate(&mut self, now: i64, series: &Series, delay: i64) -> Option<Transition> {
        let len = self.def.period.secs();
        if now.rem_euclid(len) != 0 {
            return None;
        }
        let newest = newest_visible(now, len, delay);
        let rule = Rule {
            comparison: self.def.comparison,
            threshold: self.def.threshold,
            n: self.def.evaluation_periods,
            m: self.def.datapoints_to_alarm,
        };
        let state = evaluate(series, newest, rule);
        self.last_value = series.get(newest);
        if state == self.state {
            return None;
        }
        let from = std::mem::replace(&mut self.state, state);
        Some(Transition {
            alarm: self.def.name.clone(),
            target: self.def.target,
            from,
            to: state,
            at: now,
            value: self.last_value,
            threshold: self.def.threshold,
            metric: self.def.metric.name(),
        })
    }

    pub fn period(&self) -> Period {
        self.def.period
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn series(values: &[f64]) -> Series {
        let mut s = Series::default();
        for (i, v) in values.iter().enumerate() {
            s.push(i as i64, *v);
        }
        s
    }

    #[test]
    fn m_of_n_counts_breaching_datapoints() {
        let rule = Rule {
            comparison: Comparison::GreaterThan,
            threshold: 10.0,
            n: 3,
            m: 2,
        };
        let s = series(&[11.0, 5.0, 12.0, 4.0]);
        assert_eq!(evaluate(&s, 2, rule), AlarmState::Alarm);
        assert_eq!(evaluate(&s, 3, rule), AlarmState::Ok);
        let empty = series(&[f64::NAN, f64::NAN, f64::NAN]);
        assert_eq!(evaluate(&empty, 2, rule), AlarmState::InsufficientData);
    }
}
