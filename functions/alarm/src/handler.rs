//! Maps an alarm event to domain input and the outcome to a response. The rules live in
//! `headroom_core::alarms`; this file parses, routes, reads the counts the rules need, and
//! reconciles each routed target at once (the tick keeps releasing on time).

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use headroom_core::alarms::{
    apply_transition, beyond_skew, idempotency_key, route, route_in, wake_already_served,
    AlarmRole, AlarmTransition, Home,
};
use headroom_core::capacity_port::CurrentCapacity;
use headroom_core::ports::{PortError, ScalingTargets, StateStore};
use headroom_core::reconcile::{load_plan, reconcile_named, EventChange, ReconcileError};
use headroom_core::text::cut;
use headroom_core::{ScalableTargetId, TargetPlan, TargetState};
use headroom_events::{parse_trigger, EventError, Trigger};
use serde::Serialize;

#[derive(Debug, thiserror::Error)]
pub enum HandlerError {
    #[error(transparent)]
    BadEvent(#[from] EventError),
    #[error("the alarm function handles CloudWatch alarm transitions, not a {kind}: route it to {route}")]
    WrongFunction {
        kind: &'static str,
        route: &'static str,
    },
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
    #[error("this function cannot tell its own account and region from its ARN {arn:?}: alarm events are refused until it can")]
    UnknownHome { arn: String },
    #[error("{failed} of {total} targets of alarm {alarm} failed with retryable errors: {first}")]
    Incomplete {
        alarm: String,
        failed: usize,
        total: usize,
        first: String,
    },
}

impl HandlerError {
    /// Retryable errors fail the invocation (Lambda retries, then the failure destination keeps
    /// the event); permanent ones are answered as rejected, since a retry would fail the same way.
    pub fn is_retryable(&self) -> bool {
        match self {
            Self::BadEvent(_)
            | Self::WrongFunction { .. }
            | Self::Refused { .. }
            | Self::UnknownHome { .. } => false,
            Self::Plan(e) => e.is_retryable(),
            Self::Capacity { source, .. } => source.is_retryable(),
            Self::Incomplete { .. } => true,
        }
    }
}

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
    counts: Option<(u32, u32)>,
) -> impl Fn(&mut TargetState) -> Vec<String> + Send + Sync + 'a {
    move |state: &mut TargetState| {
        let mut notes = Vec::new();
        for role in roles {
            notes.extend(apply_transition(
                target,
                *role,
                t,
                counts.map(|c| c.0),
                state,
            ));
            if let (AlarmRole::Wake, Some((_, current))) = (role, counts) {
                notes.extend(wake_already_served(target, state, current));
            }
        }
        notes
    }
}

/// Handles one event at `now` against the given ports, without checking where it comes from
/// (`headroom explain`, tests); the Lambda uses [`handle_in`].
pub async fn handle<A: ScalingTargets, S: StateStore, C: CurrentCapacity>(
    aas: &A,
    store: &S,
    capacity: &C,
    event: &serde_json::Value,
    now: DateTime<Utc>,
) -> Result<AlarmReport, HandlerError> {
    handle_from(aas, store, capacity, event, now, None).await
}

/// Handles one event at `now` for the function running in `home`: a transition from another
/// account or region is refused unless the plan names its alarm by ARN.
pub async fn handle_in<A: ScalingTargets, S: StateStore, C: CurrentCapacity>(
    aas: &A,
    store: &S,
    capacity: &C,
    event: &serde_json::Value,
    now: DateTime<Utc>,
    home: &Home,
) -> Result<AlarmReport, HandlerError> {
    handle_from(aas, store, capacity, event, now, Some(home)).await
}

async fn handle_from<A: ScalingTargets, S: StateStore, C: CurrentCapacity>(
    aas: &A,
    store: &S,
    capacity: &C,
    event: &serde_json::Value,
    now: DateTime<Utc>,
    home: Option<&Home>,
) -> Result<AlarmReport, HandlerError> {
    let t = match parse_trigger(event)? {
        Trigger::Alarm(t) => t,
        other => {
            return Err(HandlerError::WrongFunction {
                kind: other.kind(),
                route: match other {
                    Trigger::Tick(_) | Trigger::Peak(_) => "headroom-tick",
                    _ => "headroom-deploy",
                },
            })
        }
    };
    let key = idempotency_key(&t);
    let mut report = AlarmReport {
        alarm: t.alarm_name.to_string(),
        state: t.state.to_string(),
        at: t.at,
        idempotency_key: key.clone(),
        not_ours: false,
        targets: Vec::new(),
        rejected: Vec::new(),
    };
    let (_, plan) = load_plan(store).await.map_err(HandlerError::Plan)?;
    let routes = match home {
        None => route(&plan, &t),
        Some(home) => match route_in(&plan, &t, home) {
            (_, Some(reason)) => {
                tracing::warn!(alarm = %cut(&t.alarm_name), decision = "refuse", reason = %reason, "alarm transition refused");
                return Err(HandlerError::Refused { reason });
            }
            (routes, None) => routes,
        },
    };
    // Only an alarm that matters here is checked against the clock: one the plan does not name
    // is "not ours" whatever its time.
    if let Some(reason) = beyond_skew(&t, now).filter(|_| !routes.is_empty()) {
        tracing::warn!(alarm = %cut(&t.alarm_name), at = %t.at, decision = "refuse", reason = %reason, "alarm transition refused");
        return Err(HandlerError::Refused { reason });
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
        let counts = match capacity.desired_and_current(id).await {
            Ok(c) => c,
            Err(e) if e.is_retryable() => {
                return Err(HandlerError::Capacity {
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
        let apply = alarm_change(target, roles, &t, counts);
        let change = EventChange {
            key: key.clone(),
            apply: &apply,
        };
        match reconcile_named(aas, store, &plan, id, now, &t.trigger_name(), Some(&change)).await {
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
                    registered: matches!(d.action, headroom_core::Action::Register { .. }),
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
        return Err(HandlerError::Incomplete {
            alarm: t.alarm_name.to_string(),
            failed: retryable.len(),
            total: routes.len(),
            first: first.clone(),
        });
    }
    Ok(report)
}

impl headroom_lambda::Classified for HandlerError {
    fn is_retryable(&self) -> bool {
        HandlerError::is_retryable(self)
    }
}

#[cfg(test)]
mod tests {
    //! The handler against the memory ports, driven by the fixtures in events/alarms.

    use super::*;
    use headroom_core::capacity_port::MemoryCapacity;
    use headroom_core::memory::{block_on, Calls, MemoryScalingTargets, MemoryStateStore};
    use headroom_core::ClaimSource;

    /// This package's directory as cargo gives it when the test runs. The compile-time value would
    /// be another clone's when cargo reuses a test binary from a target dir shared between clones.
    fn manifest_dir() -> String {
        std::env::var("CARGO_MANIFEST_DIR")
            .unwrap_or_else(|_| env!("CARGO_MANIFEST_DIR").to_owned())
    }

    fn fixture(path: &str) -> serde_json::Value {
        let full = format!("{}/../../events/{path}", manifest_dir());
        let text = std::fs::read_to_string(&full).unwrap_or_else(|e| panic!("read {full}: {e}"));
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{full}: {e}"))
    }

    fn plan_text() -> String {
        let full = format!("{}/../../events/plans/example.toml", manifest_dir());
        std::fs::read_to_string(&full).unwrap_or_else(|e| panic!("read {full}: {e}"))
    }

    fn id(s: &str) -> ScalableTargetId {
        s.parse().expect("valid id")
    }

    fn now() -> DateTime<Utc> {
        "2026-03-14T09:43:00Z".parse().expect("time")
    }

    struct World {
        aas: MemoryScalingTargets,
        store: MemoryStateStore,
        capacity: MemoryCapacity,
    }

    fn world() -> World {
        let chat = id("endpoint/chat-prod/variant/AllTraffic");
        let summarize = id("endpoint/summarize-async/variant/AllTraffic");
        World {
            aas: MemoryScalingTargets::default()
                .with_target(chat.clone(), 2, 12)
                .with_target(summarize.clone(), 0, 4),
            store: MemoryStateStore::default().with_plan(&plan_text()),
            capacity: MemoryCapacity::default()
                .with(chat, 7, 7)
                .with(summarize, 0, 0),
        }
    }

    fn run(
        w: &World,
        event: &serde_json::Value,
        at: DateTime<Utc>,
    ) -> Result<AlarmReport, HandlerError> {
        block_on(handle(&w.aas, &w.store, &w.capacity, event, at))
    }

    #[test]
    fn a_burst_alarm_guards_its_target_at_the_desired_count_at_once() {
        let w = world();
        let report =
            run(&w, &fixture("alarms/eventbridge-burst-alarm.json"), now()).expect("handled");
        assert_eq!(report.targets.len(), 1);
        let t = &report.targets[0];
        assert_eq!((t.min, t.suspend_scale_in, t.registered), (7, true, true));
        assert_eq!(t.winner.as_deref(), Some("guard"));
        let seen = w
            .aas
            .get(&id("endpoint/chat-prod/variant/AllTraffic"))
            .expect("target");
        assert_eq!((seen.min, seen.suspended.dynamic_in), (7, true));
    }

    #[test]
    fn the_same_transition_by_both_envelopes_has_one_effect() {
        let w = world();
        run(&w, &fixture("alarms/eventbridge-burst-alarm.json"), now()).expect("handled");
        let report =
            run(&w, &fixture("alarms/direct-action-burst-alarm.json"), now()).expect("handled");
        let t = &report.targets[0];
        assert!(!t.duplicate, "another envelope is another idempotency key");
        assert!(
            t.notes
                .iter()
                .any(|n| n.starts_with("duplicate transition")),
            "{:?}",
            t.notes
        );
        assert!(!t.registered);
        assert_eq!(Calls::get(&w.aas.calls.register), 1);
        // Its key is remembered, so a third delivery is a plain duplicate.
        let again =
            run(&w, &fixture("alarms/direct-action-burst-alarm.json"), now()).expect("handled");
        assert!(again.targets[0].duplicate);
    }

    #[test]
    fn an_alarm_the_plan_does_not_name_changes_nothing() {
        let w = world();
        let report =
            run(&w, &fixture("alarms/eventbridge-unknown-alarm.json"), now()).expect("handled");
        assert!(report.not_ours);
        assert_eq!(w.aas.calls.mutations() + w.store.calls.mutations(), 0);
        assert_eq!(w.capacity.call_count(), 0);
    }

    #[test]
    fn a_backlog_wakes_the_async_endpoint_and_its_ok_releases_after_the_quiet_period() {
        let w = world();
        let summarize = id("endpoint/summarize-async/variant/AllTraffic");
        let at = "2026-03-14T06:03:30Z".parse().expect("time");
        let report =
            run(&w, &fixture("alarms/eventbridge-backlog-alarm.json"), at).expect("handled");
        assert_eq!(report.targets[0].min, 1);
        assert_eq!(w.aas.get(&summarize).map(|o| o.min), Some(1));
        assert!(w.store.state(&summarize).wake_pending_since.is_some());

        let at = "2026-03-14T06:14:10Z".parse().expect("time");
        let report =
            run(&w, &fixture("alarms/direct-action-backlog-ok.json"), at).expect("handled");
        assert_eq!(report.targets[0].min, 1, "the quiet period holds");
        let claim = w
            .store
            .state(&summarize)
            .claim(&ClaimSource::Wake)
            .cloned()
            .expect("wake");
        assert_eq!(
            claim.full_until,
            "2026-03-14T06:29:00.640Z"
                .parse::<DateTime<Utc>>()
                .expect("time")
        );
    }

    #[test]
    fn non_alarm_events_and_bad_payloads_are_refused_permanently() {
        let w = world();
        let err = run(&w, &fixture("schedule/tick-rule.json"), now()).expect_err("a tick");
        assert!(!err.is_retryable());
        assert!(err.to_string().contains("headroom-tick"), "{err}");
        let err = run(
            &w,
            &serde_json::json!({"detail-type": "CloudWatch Alarm State Change", "detail": {}}),
            now(),
        )
        .expect_err("no alarm name");
        assert!(!err.is_retryable());
        assert!(err.to_string().contains("detail.alarmName"), "{err}");
        assert_eq!(w.aas.calls.mutations() + w.store.calls.mutations(), 0);
    }

    #[test]
    fn without_a_stored_plan_the_event_is_rejected_permanently() {
        let w = World {
            aas: MemoryScalingTargets::default(),
            store: MemoryStateStore::default(),
            capacity: MemoryCapacity::default(),
        };
        let err =
            run(&w, &fixture("alarms/eventbridge-burst-alarm.json"), now()).expect_err("no plan");
        assert!(!err.is_retryable());
        assert!(err.to_string().contains("headroom plan apply"), "{err}");
    }

    fn home() -> Home {
        Home::from_function_arn("arn:aws:lambda:us-east-1:123456789012:function:headroom-alarm")
            .expect("a function ARN")
    }

    fn run_in(
        w: &World,
        event: &serde_json::Value,
        at: DateTime<Utc>,
    ) -> Result<AlarmReport, HandlerError> {
        block_on(handle_in(&w.aas, &w.store, &w.capacity, event, at, &home()))
    }

    /// The composite fixture (named by ARN in the plan) as if sent from another account/region.
    fn composite_from(account: &str, region: &str) -> serde_json::Value {
        let mut ev = fixture("alarms/eventbridge-composite-alarm.json");
        ev["account"] = account.into();
        ev["region"] = region.into();
        ev["resources"] = serde_json::json!([format!(
            "arn:aws:cloudwatch:{region}:{account}:alarm:headroom-chat-prod-burst-composite"
        )]);
        ev
    }

    #[test]
    fn an_alarm_from_another_account_or_region_is_refused_without_any_mutation() {
        for (account, region) in [("999999999999", "eu-west-1"), ("123456789012", "eu-west-1")] {
            let w = world();
            // GIVEN a same-named alarm from elsewhere, by ARN and by name
            let mut by_name = fixture("alarms/eventbridge-burst-alarm.json");
            by_name["account"] = account.into();
            by_name["region"] = region.into();
            by_name["resources"] = serde_json::json!([]);
            for ev in [composite_from(account, region), by_name] {
                // WHEN the function in 123456789012/us-east-1 receives it
                let err = run_in(&w, &ev, now()).expect_err("refused");
                // THEN it is refused permanently, naming both origins, and nothing changes
                assert!(!err.is_retryable(), "{err}");
                assert!(err.to_string().contains(account), "{err}");
                assert!(err.to_string().contains("123456789012"), "{err}");
            }
            assert_eq!(w.aas.calls.mutations() + w.store.calls.mutations(), 0);
            assert_eq!(
                w.aas
                    .get(&id("endpoint/chat-prod/variant/AllTraffic"))
                    .map(|o| o.min),
                Some(2)
            );
        }
    }

    #[test]
    fn an_alarm_from_home_still_acts_and_a_foreign_one_the_plan_names_by_arn_is_accepted() {
        let w = world();
        let report =
            run_in(&w, &fixture("alarms/eventbridge-burst-alarm.json"), now()).expect("handled");
        assert_eq!(report.targets[0].min, 7);

        // GIVEN a plan that names a foreign alarm by its ARN
        let foreign =
            "arn:aws:cloudwatch:eu-west-1:999999999999:alarm:headroom-chat-prod-burst-composite";
        let text = plan_text().replace(
            "arn:aws:cloudwatch:us-east-1:123456789012:alarm:headroom-chat-prod-burst-composite",
            foreign,
        );
        assert!(text.contains(foreign));
        let w = World {
            store: MemoryStateStore::default().with_plan(&text),
            ..world()
        };
        let report = run_in(&w, &composite_from("999999999999", "eu-west-1"), now())
            .expect("the plan names it");
        assert_eq!(report.targets.len(), 1, "{report:?}");
    }

    #[test]
    fn a_transition_a_few_minutes_ahead_of_our_clock_is_within_the_skew() {
        let w = world();
        // 09:42:31 is 4.5 minutes after 09:38: CloudWatch's clock may run ahead of ours.
        let at: DateTime<Utc> = "2026-03-14T09:38:00Z".parse().expect("time");
        run(&w, &fixture("alarms/eventbridge-burst-alarm.json"), at).expect("accepted");
    }

    #[test]
    fn a_future_dated_alarm_is_refused_and_does_not_silence_the_real_ones() {
        let w = world();
        let chat = id("endpoint/chat-prod/variant/AllTraffic");
        // GIVEN an ALARM stamped 2036
        let mut forged = fixture("alarms/eventbridge-burst-alarm.json");
        forged["id"] = "forged-2036".into();
        forged["detail"]["state"]["timestamp"] = "2036-03-14T09:42:31.412+0000".into();
        let err = run(&w, &forged, now()).expect_err("refused");
        assert!(!err.is_retryable());
        assert!(err.to_string().contains("2036-03-14T09:42:31Z"), "{err}");
        assert_eq!(w.aas.calls.mutations() + w.store.calls.mutations(), 0);
        // WHEN the real ALARM arrives
        let report =
            run(&w, &fixture("alarms/eventbridge-burst-alarm.json"), now()).expect("handled");
        // THEN it applies
        assert_eq!(report.targets[0].min, 7);
        assert!(w.store.state(&chat).claim(&ClaimSource::Guard).is_some());
    }
}
