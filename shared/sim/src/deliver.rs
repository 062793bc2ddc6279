//! Alarm transitions reach headroom as a real account's would: the simulated CloudWatch alarm's
//! state change becomes an `AlarmTransition` (the alarm's own state time, its previous state),
//! routed by the plan, keyed for idempotency and applied through `reconcile_named`, exactly the
//! alarm Lambda's path through the core (`headroom_core::alarms`). Announced peaks take the tick
//! Lambda's path for `headroom.peak/v1` events (`headroom_core::peaks::peak_change`). Delivery is
//! immediate: we assume EventBridge's seconds of latency are below the simulator's 10-second step.

use headroom_core::alarms::{
    apply_transition, idempotency_key, route, wake_already_served, AlarmRole, AlarmTransition,
};
use headroom_core::memory::{block_on, MemoryStateStore};
use headroom_core::peaks::{peak_change, PeakRequest};
use headroom_core::reconcile::{reconcile_named, EventChange, ReconcileError, TargetOutcome};
use headroom_core::{Action, Plan, ScalableTargetId, TargetState};

use crate::cloudwatch::Transition;
use crate::engine::{instant, HeadroomActivity, SimAas};

/// Delivers one transition of a plan-named alarm to headroom.
pub fn deliver(
    aas: &SimAas,
    store: &MemoryStateStore,
    plan: &Plan,
    t: &Transition,
    activity: &mut HeadroomActivity,
) {
    let at = instant(t.at);
    let transition = AlarmTransition::new(t.alarm.clone(), t.to, at).with_previous(t.from);
    let routes = route(plan, &transition);
    if routes.is_empty() {
        return;
    }
    activity.alarm_events += 1;
    let key = idempotency_key(&transition);
    let trigger = transition.trigger_name();
    for (id, role) in &routes {
        let Some(target) = plan.target(id) else {
            continue;
        };
        // What the alarm Lambda reads from SageMaker before applying the transition.
        let (desired, current) = aas.counts(id).map_or((None, 0), |(d, c)| (Some(d), c));
        let apply = |state: &mut TargetState| {
            let mut notes = apply_transition(target, *role, &transition, desired, state);
            if *role == AlarmRole::Wake {
                notes.extend(wake_already_served(target, state, current));
            }
            notes
        };
        // One transition may concern a target in both roles: each role is its own change.
        let both_roles = routes.iter().filter(|(other, _)| other == id).count() > 1;
        let change = EventChange {
            key: if both_roles {
                format!("{key}#{role}")
            } else {
                key.clone()
            },
            apply: &apply,
        };
        let result = block_on(reconcile_named(
            aas,
            store,
            plan,
            id,
            at,
            &trigger,
            Some(&change),
        ));
        record(activity, id, result);
    }
}

/// Delivers one announced peak at `now`, as the tick Lambda applies a `headroom.peak/v1` event.
pub fn deliver_peak(
    aas: &SimAas,
    store: &MemoryStateStore,
    plan: &Plan,
    request: &PeakRequest,
    now: i64,
    activity: &mut HeadroomActivity,
) {
    // The world only announces its own targets, and every world target is in the plan.
    let Some(target) = plan.target(&request.target) else {
        return;
    };
    activity.peak_events += 1;
    let at = instant(now);
    let apply = peak_change(target, request, at);
    let change = EventChange {
        key: request.idempotency_key(),
        apply: &apply,
    };
    let trigger = format!("peak-event:{}", request.name);
    let result = block_on(reconcile_named(
        aas,
        store,
        plan,
        &request.target,
        at,
        &trigger,
        Some(&change),
    ));
    record(activity, &request.target, result);
}

fn record(
    activity: &mut HeadroomActivity,
    id: &ScalableTargetId,
    result: Result<TargetOutcome, ReconcileError>,
) {
    match result {
        Ok(outcome) => {
            if matches!(outcome.decision.action, Action::Register { .. }) {
                activity.registers += 1;
            }
        }
        Err(e) => {
            activity.errors += 1;
            activity
                .first_error
                .get_or_insert_with(|| format!("{id}: {e}"));
        }
    }
}
