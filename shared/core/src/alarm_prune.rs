//! Keeps a target's alarm facts bounded (issue 11, item 8). Every alarm a target's guard or
//! wake listens to leaves a mark and up to two facts in the state (`alarms.rs`); with
//! metric-routed alarms that is any number of names, and an item over DynamoDB's 400 KB fails
//! every later write. So the facts of an alarm are dropped once they can no longer matter:
//!
//! - its mark lies more than [`MAX_CLOCK_SKEW`] in the future (a wrong clock: such a mark would
//!   make every real transition of the alarm look stale);
//! - the plan no longer listens to it (by name, ARN or metric);
//! - it is older than the longest any transition at or before it could still hold a claim: the
//!   role's `max_duration`, plus the hold (guard: the longer of `hold` and
//!   `hold_without_forecast`, with its step-down from `max_capacity`) or the
//!   quiet period (wake) (which also covers an INSUFFICIENT_DATA fallback: its `keep_for` is at
//!   most `max_duration`). A late delivery of an even older transition then derives only a claim
//!   that has already expired, so dropping the mark changes no claim;
//! - beyond [`MAX_ALARM_MARKS`] per target, the oldest marks go first; the alarm that sets each
//!   role's claim is always kept. (Only then can a late, out-of-order delivery of a dropped alarm
//!   count again: the price of a bounded item.)
//!
//! Pure, with `now` as a parameter; called by `decide` on every reconcile, so the stored item
//! shrinks at the next write. The high-water mark is not touched here.

use chrono::{DateTime, Utc};

use crate::alarms::{claim_setting_alarms, MAX_CLOCK_SKEW};
use crate::model::AlarmName;
use crate::plan::{AlarmArn, TargetPlan};
use crate::state::TargetState;

/// At most this many alarms' facts are kept per target. Names are at most 255 characters, so
/// this bounds the alarm facts to about 30 KB of the state item (see [`STATE_BUDGET_BYTES`]).
pub const MAX_ALARM_MARKS: usize = 32;

/// The size a target's serialized state stays under, whatever arrives (tested with thousands of
/// alarm names): far below DynamoDB's 400 KB item limit.
pub const STATE_BUDGET_BYTES: usize = 64 * 1024;

/// The name a plan entry stands for: itself, or the name part of an ARN.
fn entry_name(entry: &str) -> &str {
    AlarmArn::name_in(entry)
}

fn listened(target: &TargetPlan, state: &TargetState, name: &str) -> bool {
    let selects = |alarms: &[String], metrics: &[String]| {
        alarms.iter().any(|a| entry_name(a) == name)
            || state
                .alarm_facts
                .metric(name)
                .is_some_and(|m| metrics.iter().any(|x| x == m))
    };
    target
        .guard
        .as_ref()
        .is_some_and(|g| selects(&g.alarms, &g.metrics))
        || target
            .wake
            .as_ref()
            .is_some_and(|w| selects(&w.alarms, &w.metrics))
}

/// How long after its mark an alarm may still matter to this target. An INSUFFICIENT_DATA
/// fallback holds for `keep_for` plus the hold or quiet period, and validation keeps `keep_for`
/// within `max_duration`: the bound below covers it.
fn horizon(target: &TargetPlan) -> chrono::Duration {
    let guard = target.guard.as_ref().map(|g| {
        g.max_duration.to_chrono()
            + g.longest_hold().to_chrono()
            + g.step_down.length(target.max_capacity)
    });
    let wake = target
        .wake
        .as_ref()
        .map(|w| w.max_duration.to_chrono() + w.quiet_period.to_chrono());
    guard
        .into_iter()
        .chain(wake)
        .max()
        .unwrap_or_else(chrono::Duration::zero)
}

/// Drops the alarm facts that can no longer matter (see the module docs).
pub fn prune_alarm_facts(target: &TargetPlan, state: &mut TargetState, now: DateTime<Utc>) {
    let oldest = now - horizon(target);
    let latest = now + MAX_CLOCK_SKEW;
    let mut drop: Vec<AlarmName> = state
        .alarm_marks
        .iter()
        .filter(|(name, mark)| {
            mark.at > latest || mark.at < oldest || !listened(target, state, name)
        })
        .map(|(name, _)| name.clone())
        .collect();
    let left = state.alarm_marks.len() - drop.len();
    if left > MAX_ALARM_MARKS {
        for name in &drop {
            state.alarm_marks.remove(name);
        }
        let keep = claim_setting_alarms(target, state);
        let mut rest: Vec<(DateTime<Utc>, AlarmName)> = state
            .alarm_marks
            .iter()
            .filter(|(name, _)| !keep.contains(name))
            .map(|(name, mark)| (mark.at, name.clone()))
            .collect();
        // Newest first; the name breaks ties so the result does not depend on map order.
        rest.sort_by(|a, b| b.cmp(a));
        let room = MAX_ALARM_MARKS.saturating_sub(keep.len());
        drop.extend(rest.into_iter().skip(room).map(|(_, name)| name));
    }
    for name in &drop {
        state.alarm_marks.remove(name);
    }
    // The facts follow the marks: an alarm without a mark has none. Likewise the guard's
    // scale-out, once its ALARM transition is no longer its alarm's mark.
    let marks = &state.alarm_marks;
    state.alarm_facts.retain(|name| marks.contains_key(name));
    if state
        .scale_out
        .as_ref()
        .is_some_and(|s| !s.is_current(marks))
    {
        state.scale_out = None;
    }
}
