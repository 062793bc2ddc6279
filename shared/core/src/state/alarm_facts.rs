//! What the alarm automation remembers per alarm (`alarms.rs` derives the guard and wake claims
//! from it): the alarm's mark, the newest transition applied, and beside it the last instant the
//! alarm was known to be in ALARM and the metric its mark was routed by.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::model::{AlarmName, AlarmState};

/// The newest transition applied for one alarm (`TargetState::alarm_marks`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AlarmMark {
    pub state: AlarmState,
    pub at: DateTime<Utc>,
}

/// Per alarm name, the facts that live beside its mark. Both only describe alarms that have a
/// mark: `alarm_prune` drops them with the mark.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct AlarmFacts {
    /// The last instant the alarm was known to be in ALARM (a transition to ALARM, or away from
    /// it). Only ever moves forward.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub last_in_alarm: BTreeMap<AlarmName, DateTime<Utc>>,
    /// The AWS/SageMaker metric of the alarm's mark, when the alarm's dimensions named this
    /// target: how the claims recognise an alarm the plan routes by metric rather than by name.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub metric: BTreeMap<AlarmName, String>,
}

impl AlarmFacts {
    pub fn is_empty(&self) -> bool {
        self.last_in_alarm.is_empty() && self.metric.is_empty()
    }

    pub fn last_in_alarm(&self, alarm: &str) -> Option<DateTime<Utc>> {
        self.last_in_alarm.get(alarm).copied()
    }

    /// Moves the alarm's last ALARM instant forward to `at` (never back).
    pub fn raise_last_in_alarm(&mut self, alarm: &AlarmName, at: DateTime<Utc>) {
        if self.last_in_alarm(alarm).is_some_and(|known| known >= at) {
            return;
        }
        self.last_in_alarm.insert(alarm.clone(), at);
    }

    pub fn metric(&self, alarm: &str) -> Option<&str> {
        self.metric.get(alarm).map(String::as_str)
    }

    /// Records (or clears) the routed metric along with a new mark, so that it always describes
    /// the mark's transition.
    pub fn set_metric(&mut self, alarm: &AlarmName, metric: Option<&str>) {
        match metric {
            Some(m) => {
                self.metric.insert(alarm.clone(), m.to_owned());
            }
            None => {
                self.metric.remove(alarm.as_str());
            }
        }
    }

    /// Keeps the facts of the alarms `keep` accepts.
    pub fn retain(&mut self, keep: impl Fn(&AlarmName) -> bool) {
        self.last_in_alarm.retain(|name, _| keep(name));
        self.metric.retain(|name, _| keep(name));
    }
}
