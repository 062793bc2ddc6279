//! A CloudWatch alarm transition (EventBridge rule or direct alarm action): `guard` and `wake`
//! claims on the targets the plan names for the alarm, applied at once (the tick keeps
//! releasing them on time). The rules are in `crate::alarms`; this is the flow.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde::Serialize;

use crate::alarms::{
    apply_transition, beyond_skew, guard_scale_out, idempotency_key, route, route_in,
    wake_already_served, AlarmRole, AlarmTransition,
};
use crate::capacity_port::{Counts, CurrentCapacity};
use crate::ids::ScalableTargetId;
use crate::plan::{Plan, TargetPlan};
use crate::ports::{PortError, ScalingTargets, StateStore};
use crate::reconcile::{load_plan, reconcile_named, EventChange, ReconcileError};
use crate::state::TargetState;
use crate::text::cut;

use super::Ports;

#[derive(Debug, thiserror::Error)]
pub enum AlarmError {
    #[error(transparent)]
    Plan(ReconcileError),
    #[error("failed to read the capacity of {target}: {source}")]
    Capacity {
        target: String,
        #[source]
        source: PortError,
    },
    /// A transition headroom will not act on: from another account or region the plan does not
    /// name, or stamped too far in the future.
    #[error("alarm transition refused: {reason}")]
    Refused { reason: String },
    #[error("this function cannot tell its own account and region from its ARN {arn:?}: alarm events are refused until it can (a local runtime that sends no Lambda ARN, such as `cargo lambda watch`, needs HEADROOM_FUNCTION_ARN=arn:aws:lambda:<region>:<account>:function:headroom-alarm)")]
    UnknownHome { arn: String },
    #[error("{failed} of {total} targets of alarm {alarm} failed with retryable errors: {first}")]
    Incomplete {
        alarm: String,
        failed: usize,
        total: usize,
        first: String,
    },
}

impl AlarmError {
    /// Retryable errors fail the invocation (Lambda retries, then the failure destination keeps
    /// the event); permanent ones are answered as rejected, since a retry would fail the same way.
    pub fn is_retryable(&self) -> bool {
        match self {
            Self::Refused { .. } | Self::UnknownHome { .. } => false,
            Self::Plan(e) => e.is_retryable(),
            Self::Capacity { source, .. } => source.is_retryable(),
            Self::Incomplete { .. } => true,
        }
    }
}

pub use super::origin::Origin;

/// What the function did with one transition.
#[derive(Debug, Serialize)]
pub struct AlarmReport {
    pub alarm: String,
    pub state: String,
    pub at: DateTime<Utc>,
    pub idempotency_key: String,
    /// The plan names no target for this alarm: nothing was changed.
    pub not_ours: bool,
    pub targets: Vec<TargetReport>,
    /// Targets that failed permanently (logged; a retry would not help).
    pub rejected: Vec<Rejected>,
}

#[derive(Debug, Serialize)]
pub struct TargetReport {
    pub target: String,
    pub roles: Vec<AlarmRole>,
    pub duplicate: bool,
    pub min: u32,
    pub max: u32,
    pub suspend_scale_in: bool,
    pub winner: Option<String>,
    pub registered: bool,
    pub notes: Vec<String>,
}

#[derive(Debug, Serialize)]
pub struct Rejected {
    pub target: String,
    pub error: String,
}

/// The routes of a transition, grouped per target (an alarm may be both guard and wake for one
/// target: one reconcile applies both, under one idempotency key).
pub fn routes_by_target(
    routes: Vec<(ScalableTargetId, AlarmRole)>,
) -> BTreeMap<ScalableTargetId, Vec<AlarmRole>> {
    let mut by: BTreeMap<ScalableTargetId, Vec<AlarmRole>> = BTreeMap::new();
    for (id, role) in routes {
        by.entry(id).or_default().push(role);
    }
    by
}

/// The state change one transition makes to one target: every role applied, then, for a wake,
/// whether capacity was already in service (nothing to measure).
pub fn alarm_change<'a>(
    target: &'a TargetPlan,
    roles: &'a [AlarmRole],
    t: &'a AlarmTransition,
    counts: Option<Counts>,
) -> impl Fn(&mut TargetState) -> Vec<String> + Send + Sync + 'a {
    move |state: &mut TargetState| {
        let mut notes = Vec::new();
        for role in roles {
            notes.extend(apply_transition(
                target,
                *role,
                t,
                counts.map(|c| c.desired),
                state,
            ));
            match (role, counts) {
                (AlarmRole::Wake, Some(Counts { current, .. })) => {
                    notes.extend(wake_already_served(target, state, current));
                }
                (AlarmRole::Guard, Some(Counts { current, .. })) => {
                    notes.extend(guard_scale_out(target, t, current, state));
                }
                _ => {}
            }
        }
        notes
    }
}

/// Applies one transition at `now`: loads the plan, then [`alarm_with_plan`].
pub async fn on_alarm<T, H, C, E, S, R, D>(
    ports: Ports<'_, T, H, C, E, S, R, D>,
    t: &AlarmTransition,
    origin: Origin<'_>,
    now: DateTime<Utc>,
) -> Result<AlarmReport, AlarmError>
where
    T: ScalingTargets,
    C: CurrentCapacity,
    S: StateStore,
{
    let (_, plan) = load_plan(ports.state).await.map_err(AlarmError::Plan)?;
    alarm_with_plan(ports, &plan, t, origin, now).await
}

/// The transition with the plan in hand (the simulator holds its own, parsed once).
pub async fn alarm_with_plan<T, H, C, E, S, R, D>(
    ports: Ports<'_, T, H, C, E, S, R, D>,
    plan: &Plan,
    t: &AlarmTransition,
    origin: Origin<'_>,
    now: DateTime<Utc>,
) -> Result<AlarmReport, AlarmError>
where
    T: ScalingTargets,
    C: CurrentCapacity,
    S: StateStore,
{
    let key = idempotency_key(t);
    let mut report = AlarmReport {
        alarm: t.alarm_name.to_string(),
        state: t.state.to_string(),
        at: t.at,
        idempotency_key: key.clone(),
        not_ours: false,
        targets: Vec::new(),
        rejected: Vec::new(),
    };
    let routes = match origin {
        Origin::Anywhere => route(plan, t),
        Origin::Home(home) => match route_in(plan, t, home) {
            (_, Some(reason)) => {
                tracing::warn!(alarm = %cut(&t.alarm_name), decision = "refuse", reason = %reason, "alarm transition refused");
                return Err(AlarmError::Refused { reason });
            }
            (routes, None) => routes,
        },
    };
    // Only an alarm that matters here is checked against the clock: one the plan does not name
    // is "not ours" whatever its time.
    if let Some(reason) = beyond_skew(t, now).filter(|_| !routes.is_empty()) {
        tracing::warn!(alarm = %cut(&t.alarm_name), at = %t.at, decision = "refuse", reason = %reason, "alarm transition refused");
        return Err(AlarmError::Refused { reason });
    }
    let routes = routes_by_target(routes);
    if routes.is_empty() {
        tracing::info!(alarm = %t.alarm_name, state = %t.state, decision = "ignore", reason = "the plan names no target for this alarm", "alarm not ours");
        report.not_ours = true;
        return Ok(report);
    }

    let mut retryable: Vec<String> = Vec::new();
    for (id, roles) in &routes {
        let Some(target) = plan.target(id) else {
            continue;
        };
        // The desired count feeds the guard's high-water mark, the in-service count the wake's
        // latency. A permanent failure (e.g. access denied) still lets the claim apply: the
        // tick's capacity check fills the count in later.
        let mut read_note = None;
        let counts = match ports.capacity.desired_and_current(id).await {
            Ok(c) => c,
            Err(e) if e.is_retryable() => {
                return Err(AlarmError::Capacity {
                    target: id.to_string(),
                    source: e,
                })
            }
            Err(e) => {
                tracing::warn!(target_id = %id, error = %e, "capacity unknown; applying the alarm without it");
                read_note = Some(format!("capacity unknown ({e}): the tick fills it in"));
                None
            }
        };
        let apply = alarm_change(target, roles, t, counts);
        let change = EventChange {
            key: key.clone(),
            apply: &apply,
        };
        match reconcile_named(
            ports.targets,
            ports.state,
            plan,
            id,
            now,
            &t.trigger_name(),
            Some(&change),
        )
        .await
        {
            Ok(outcome) => {
                let d = &outcome.decision;
                let mut notes = outcome.notes.clone();
                notes.extend(read_note);
                tracing::info!(
                    target_id = %id,
                    alarm = %t.alarm_name,
                    state = %t.state,
                    roles = ?roles,
                    duplicate = outcome.duplicate,
                    min = d.desired.min,
                    suspend_scale_in = d.desired.suspend_scale_in,
                    "alarm applied"
                );
                report.targets.push(TargetReport {
                    target: id.to_string(),
                    roles: roles.clone(),
                    duplicate: outcome.duplicate,
                    min: d.desired.min,
                    max: d.desired.max,
                    suspend_scale_in: d.desired.suspend_scale_in,
                    winner: d.winner.as_ref().map(ToString::to_string),
                    registered: matches!(d.action, crate::Action::Register { .. }),
                    notes,
                });
            }
            Err(e) if e.is_retryable() => {
                tracing::error!(target_id = %id, error = %e, retryable = true, "alarm not applied");
                retryable.push(e.to_string());
            }
            Err(e) => {
                tracing::error!(target_id = %id, error = %e, retryable = false, "alarm rejected for this target");
                report.rejected.push(Rejected {
                    target: id.to_string(),
                    error: e.to_string(),
                });
            }
        }
    }
    if let Some(first) = retryable.first() {
        return Err(AlarmError::Incomplete {
            alarm: t.alarm_name.to_string(),
            failed: retryable.len(),
            total: routes.len(),
            first: first.clone(),
        });
    }
    Ok(report)
}
