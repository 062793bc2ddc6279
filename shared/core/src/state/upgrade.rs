//! Loading a state stored before the typed sub-states existed (up to d96561e). Those versions
//! kept some feature facts in a `notes` map of JSON values under these keys:
//!
//! | key | what | now |
//! |---|---|---|
//! | `deploy.models` | the deployment watcher's model history | `deploy.models` |
//! | `deploy.transition` | its endpoint transition bookkeeping | `deploy.transition` |
//! | `alarm_last_in_alarm` | per alarm, its last ALARM instant (RFC 3339 text) | `alarm_facts.last_in_alarm` |
//! | `alarm_metric` | per alarm, the metric its mark was routed by | `alarm_facts.metric` |
//!
//! As a state loads, each entry that parses moves into its typed field and leaves the map. What
//! does not parse, and any key not listed here (a newer build's), stays in the map as found
//! (`TargetState::unrecognised_notes`) and is stored again: the old code ignored such values,
//! so keeping them changes no decision, and dropping them would lose what a newer build wrote.
//!
//! No build writes a fact both ways (the old code drops the typed fields it does not know when
//! it stores a state, and this code never writes these keys), so a typed fact and its old note
//! meet only after a downgrade and an upgrade again: then the typed one, if any, stands.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::TargetState;
use crate::endpoint_transitions::Transitions;
use crate::identity::ModelHistory;
use crate::model::AlarmName;

const MODEL_HISTORY: &str = "deploy.models";
const TRANSITION: &str = "deploy.transition";
const LAST_IN_ALARM: &str = "alarm_last_in_alarm";
const ALARM_METRIC: &str = "alarm_metric";

/// Moves what the old `notes` map held into the typed fields (see the module docs).
pub(super) fn lift_notes(state: &mut TargetState) {
    let notes = &mut state.unrecognised_notes;
    if notes.is_empty() {
        return;
    }
    if let Some(models) = take::<ModelHistory>(notes, MODEL_HISTORY) {
        if state.deploy.models.is_empty() {
            state.deploy.models = models;
        }
    }
    if let Some(transition) = take::<Transitions>(notes, TRANSITION) {
        if state.deploy.transition.is_empty() {
            state.deploy.transition = transition;
        }
    }
    for (alarm, at) in take_per_alarm::<DateTime<Utc>>(notes, LAST_IN_ALARM) {
        state.alarm_facts.raise_last_in_alarm(&alarm, at);
    }
    for (alarm, metric) in take_per_alarm::<String>(notes, ALARM_METRIC) {
        state.alarm_facts.metric.entry(alarm).or_insert(metric);
    }
}

/// `key`'s value as a `T`, taken out of `notes`; a value that is not one stays as found.
fn take<T: DeserializeOwned>(notes: &mut BTreeMap<String, Value>, key: &str) -> Option<T> {
    let value = notes.remove(key)?;
    match T::deserialize(&value) {
        Ok(typed) => Some(typed),
        Err(_) => {
            notes.insert(key.to_owned(), value);
            None
        }
    }
}

/// The entries of `key`'s per-alarm map that are `T`s, taken out of `notes`; the others (or a
/// value that is no map) stay as found.
fn take_per_alarm<T: DeserializeOwned>(
    notes: &mut BTreeMap<String, Value>,
    key: &str,
) -> BTreeMap<AlarmName, T> {
    let mut typed = BTreeMap::new();
    let Some(value) = notes.remove(key) else {
        return typed;
    };
    let Value::Object(entries) = value else {
        notes.insert(key.to_owned(), value);
        return typed;
    };
    let mut rest = serde_json::Map::new();
    for (alarm, entry) in entries {
        match T::deserialize(&entry) {
            Ok(fact) => {
                typed.insert(AlarmName::from(alarm), fact);
            }
            Err(_) => {
                rest.insert(alarm, entry);
            }
        }
    }
    if !rest.is_empty() {
        notes.insert(key.to_owned(), Value::Object(rest));
    }
    typed
}
