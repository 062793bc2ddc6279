//! What the alarm automation remembers per alarm (`alarms.rs` derives the guard and wake claims
//! from it): the alarm's mark, the newest transition applied, and beside it the last instant the
//! alarm was known to be in ALARM, the metric its mark was routed by, and the desired count seen
//! when it lost its data.

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

/// The guard's scale-out of one burst (`alarms::guard_scale_out`): the floor the ALARM transition
/// of `alarm` at `at` asked for. It counts only while that transition is still the alarm's mark,
/// so it ends with the burst (an OK or a newer ALARM replaces it) whatever the order of delivery.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ScaleOut {
    pub alarm: crate::model::AlarmName,
    pub at: DateTime<Utc>,
    pub floor: u32,
}

impl ScaleOut {
    /// Whether its ALARM transition is still the alarm's mark. Once another transition has
    /// replaced it, it never counts again (a mark only moves forward), and `alarm_prune` drops it.
    pub fn is_current(&self, marks: &BTreeMap<AlarmName, AlarmMark>) -> bool {
        marks
            .get(&self.alarm)
            .is_some_and(|m| m.at == self.at && m.state == AlarmState::Alarm)
    }
}

/// Per alarm name, the facts that live beside its mark. They only describe alarms that have a
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
    /// The target's desired count seen with the alarm's newest transition from ALARM to
    /// INSUFFICIENT_DATA: what the `keep_current` fallback keeps. Absent in items stored before
    /// the fallback existed (they load with none: the fallback then keeps the claim's own floor).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub no_data_count: BTreeMap<AlarmName, NoDataCount>,
}

/// A desired count seen when an alarm lost its data (`AlarmFacts::no_data_count`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct NoDataCount {
    /// The INSUFFICIENT_DATA transition's own state timestamp.
    pub at: DateTime<Utc>,
    pub count: u32,
}

impl AlarmFacts {
    pub fn is_empty(&self) -> bool {
        self.last_in_alarm.is_empty() && self.metric.is_empty() && self.no_data_count.is_empty()
    }

    /// The desired count seen when the alarm lost its data at `at`, if one was seen then.
    pub fn no_data_count(&self, alarm: &str, at: DateTime<Utc>) -> Option<u32> {
        self.no_data_count
            .get(alarm)
            .filter(|seen| seen.at == at)
            .map(|seen| seen.count)
    }

    /// Records `count` as seen when the alarm lost its data at `at`. Like the other facts it only
    /// moves forward, so any order of deliveries ends in the same fact: a newer transition
    /// replaces an older one's count; another delivery of the same one keeps the higher count.
    pub fn record_no_data_count(&mut self, alarm: &AlarmName, at: DateTime<Utc>, count: u32) {
        let next = match self.no_data_count.get(alarm) {
            Some(seen) if seen.at > at => return,
            Some(seen) if seen.at == at => seen.count.max(count),
            _ => count,
        };
        self.no_data_count
            .insert(alarm.clone(), NoDataCount { at, count: next });
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
        self.no_data_count.retain(|name, _| keep(name));
    }
}
