//! Alarm automation: CloudWatch alarm transitions become `guard` claims (hold capacity after a
//! burst, release slowly) and `wake` claims (scale out from zero on a backlog).
//!
//! Alarm events arrive duplicated, late and out of order. Instead of applying each event as a
//! step of a state machine, headroom keeps two facts per alarm and *derives* the claim from them:
//! - the alarm's mark: the newest transition applied (`TargetState::alarm_marks`);
//! - the last instant the alarm was known to be in ALARM (a transition to ALARM, or away from it),
//!   kept in `TargetState::alarm_facts`;
//!
//! plus, for the guard, the high-water mark (`TargetState::high_water`). All three only ever move
//! forward (newest time, highest count), so any interleaving of duplicated and reordered
//! deliveries ends in the same facts, and therefore the same claims, as the ordered sequence.
//! A transition older than the mark is stale: it moves no mark and no timing, and the log says so;
//! only the proof of ALARM it carries (its time, and the desired count seen) still counts.
//!
//! The rules, per alarm, from its mark (newest transition at `m`) and its last ALARM time `a`:
//! - mark is ALARM: the claim holds fully until `m + max_duration`, the hard bound that keeps a lost
//!   OK from pinning capacity;
//! - mark is INSUFFICIENT_DATA straight out of ALARM (its previous state is ALARM, so `m == a`):
//!   the metric stopped mid-burst, and the section's fallback (`on_insufficient_data`) decides.
//!   `keep_current` (the default) holds the desired count seen then (at least the claim's own
//!   floor), `hold` the claim's own floor, both until `m + keep_for + hold` (guard) or
//!   `m + keep_for + quiet_period` (wake): as if the alarm had cleared `keep_for` after the data
//!   stopped. `release` reads it as OK (next rule). `keep_for` is at most `max_duration`, so a
//!   metric that never comes back holds no longer than a lost OK does.
//! - mark is OK or INSUFFICIENT_DATA (the alarm left ALARM) and `m <= a + max_duration`: the claim
//!   holds until `m + hold` (guard) or `m + quiet_period` (wake); the guard then steps down
//!   through its ramp. (An OK whose previous state is ALARM proves ALARM until its own time.)
//!   The guard's `hold` is `hold_without_forecast` when no active forecast's stored slots cover
//!   `m` (`RoleTiming::after_clear_at`): the stored forecast is a fact read as it is when the
//!   claim is derived, so a refresh between two deliveries may change the hold they derive.
//! - otherwise the alarm asks for nothing. With several alarms, the one holding longest wins.
//!
//! The claim carries its own end, so the tick releases a fallback on time without any further
//! alarm event; an OK (or a new ALARM) that does arrive replaces the fallback as any newer mark
//! replaces an older one.
//!
//! Time is always the alarm's own state timestamp, never the clock: a late delivery computes the
//! same claim as a prompt one.

use std::collections::BTreeMap;
use std::fmt;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::claim::{Claim, ClaimSource};
use crate::duration::Span;
use crate::forecast::claiming_span;
use crate::ids::ScalableTargetId;
use crate::model::{AlarmName, AlarmState};
use crate::plan::{
    alarm_matches, AlarmArn, Fallback, FallbackMode, GuardFloor, GuardPolicy, Plan, TargetPlan,
    WakePolicy,
};
use crate::state::{AlarmMark, ScaleOut, TargetState, WakeLatency};
use crate::surge::{scale_out_floor, AlarmReading};

/// At most this many wake latencies are kept per target (most recent last).
pub const WAKE_LATENCIES_KEPT: usize = 50;

/// Tie-break for two transitions of one alarm with the same timestamp (CloudWatch never sends
/// those, but a deterministic answer keeps the result independent of arrival order): ALARM wins,
/// as the conservative choice.
fn rank(state: AlarmState) -> u8 {
    match state {
        AlarmState::Ok => 0,
        AlarmState::InsufficientData => 1,
        AlarmState::Alarm => 2,
    }
}

/// One alarm state change, whichever envelope it came in.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AlarmTransition {
    pub alarm_name: AlarmName,
    pub alarm_arn: Option<String>,
    pub state: AlarmState,
    pub previous: Option<AlarmState>,
    /// The alarm's own state timestamp (when the state changed), not the delivery time.
    pub at: DateTime<Utc>,
    /// The alarm's metric dimensions when present (empty for composite alarms).
    #[serde(default)]
    pub dimensions: BTreeMap<String, String>,
    /// The AWS/SageMaker metric of a metric alarm (e.g. `InvocationsPerInstance`); `None` for
    /// metric-math and composite alarms, whose inputs do not make one metric.
    #[serde(default)]
    pub metric_name: Option<String>,
    /// The envelope's event id when it has one (EventBridge does, the direct action does not).
    #[serde(default)]
    pub event_id: Option<String>,
    /// The account and region the event says it comes from (EventBridge's `account`/`region`,
    /// the direct action's `accountId`/`region`), when it says so.
    #[serde(default)]
    pub account: Option<String>,
    #[serde(default)]
    pub region: Option<String>,
    /// The newest datapoint and the threshold (the state's `reasonData`), when the event has
    /// them: the guard scales out from it (`surge.rs`).
    #[serde(default)]
    pub reading: Option<AlarmReading>,
}

impl AlarmTransition {
    /// A transition with no ARN, previous state, dimensions or event id (tests, the simulator).
    pub fn new(alarm_name: impl Into<AlarmName>, state: AlarmState, at: DateTime<Utc>) -> Self {
        Self {
            alarm_name: alarm_name.into(),
            alarm_arn: None,
            state,
            previous: None,
            at,
            dimensions: BTreeMap::new(),
            metric_name: None,
            event_id: None,
            account: None,
            region: None,
            reading: None,
        }
    }

    /// The same transition with the newest datapoint and threshold its `reasonData` gives
    /// (tests, the simulator); a non-finite value or a threshold not above zero gives none.
    pub fn with_reading(mut self, newest: f64, threshold: f64) -> Self {
        self.reading = AlarmReading::new(newest, threshold);
        self
    }

    /// The same transition as coming from `account` in `region` (tests, the simulator).
    pub fn from_account(mut self, account: &str, region: &str) -> Self {
        self.account = Some(account.to_owned());
        self.region = Some(region.to_owned());
        self
    }

    /// Every (account, region) this transition claims to come from: the envelope's and the
    /// alarm ARN's. Both must be the function's own for a name to route it.
    fn origins(&self) -> Vec<(&str, &str)> {
        let mut out = Vec::new();
        if let Some(arn) = self.alarm_arn.as_deref() {
            match AlarmArn::parse(arn) {
                Ok(a) => out.push((a.account, a.region)),
                // An ARN that is not one: nothing to trust, nothing that can match.
                Err(_) => out.push(("", "")),
            }
        }
        if self.account.is_some() || self.region.is_some() {
            out.push((
                self.account.as_deref().unwrap_or(""),
                self.region.as_deref().unwrap_or(""),
            ));
        }
        out
    }
    /// The same transition as a metric alarm on the AWS/SageMaker `metric` with `dimensions`
    /// (tests, the simulator).
    pub fn on_metric(mut self, metric: impl Into<String>, dimensions: &[(&str, &str)]) -> Self {
        self.metric_name = Some(metric.into());
        self.dimensions = dimensions
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        self
    }

    pub fn with_previous(mut self, previous: AlarmState) -> Self {
        self.previous = Some(previous);
        self
    }

    /// The trigger name used in decision-log records.
    pub fn trigger_name(&self) -> String {
        format!("alarm:{}:{}", self.alarm_name, self.state)
    }

    /// Whether this transition proves the alarm was in ALARM at `self.at`.
    fn proves_alarm(&self) -> bool {
        self.state == AlarmState::Alarm || self.previous == Some(AlarmState::Alarm)
    }
}

/// How far ahead of the function's clock an alarm's state timestamp may lie. CloudWatch stamps
/// transitions with its own clock, a few seconds off at most; a time beyond this is wrong (a
/// forged or corrupt event) and, once stored as the alarm's mark, would make every real later
/// transition look stale until that time. Such a transition is refused; a mark already stored
/// beyond it is dropped (`prune_alarm_facts`).
pub const MAX_CLOCK_SKEW: chrono::Duration = chrono::Duration::minutes(5);

/// Why `t` is refused at `now`, if its timestamp lies more than [`MAX_CLOCK_SKEW`] ahead.
pub fn beyond_skew(t: &AlarmTransition, now: DateTime<Utc>) -> Option<String> {
    (t.at > now + MAX_CLOCK_SKEW).then(|| {
        format!(
            "alarm {} {} is stamped {}, more than {} minutes after now ({}): refused, so a wrong \
             clock cannot make the real transitions look stale",
            crate::text::cut(&t.alarm_name),
            t.state,
            stamp(t.at),
            MAX_CLOCK_SKEW.num_minutes(),
            stamp(now)
        )
    })
}

/// The account and region headroom runs in (the Lambda's own, from its ARN). Alarm events from
/// elsewhere are refused unless the plan names the alarm by its ARN.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Home {
    pub account: String,
    pub region: String,
}

impl Home {
    /// From a Lambda function ARN, `arn:<partition>:lambda:<region>:<account>:function:<name>`
    /// (the invocation context's `invoked_function_arn`).
    pub fn from_function_arn(arn: &str) -> Option<Self> {
        let parts: Vec<&str> = arn.split(':').collect();
        match parts[..] {
            ["arn", _, "lambda", region, account, "function", _, ..]
                if !region.is_empty() && !account.is_empty() =>
            {
                Some(Self {
                    account: account.to_owned(),
                    region: region.to_owned(),
                })
            }
            _ => None,
        }
    }

    /// Why an AWS service event about `what` is foreign here, if it is: something in it names
    /// another account or region. headroom only acts on its own account's endpoints, whatever
    /// their names (an event bus that forwards another account's events would otherwise let
    /// that account's endpoint of the same name rewrite this one's model identity).
    pub fn foreign_event(
        &self,
        what: &str,
        provenance: &crate::model::Provenance,
    ) -> Option<String> {
        provenance
            .origins()
            .into_iter()
            .find(|(account, region)| *account != self.account || *region != self.region)
            .map(|(account, region)| {
                format!(
                    "{} comes from account {:?} in region {:?}, not this function's {} in {}: \
                     headroom acts only on its own account's endpoints",
                    crate::text::cut(what),
                    crate::text::cut(account),
                    crate::text::cut(region),
                    self.account,
                    self.region
                )
            })
    }

    /// Why `t` is foreign here, if it is: it comes from another account or region.
    pub fn foreign(&self, t: &AlarmTransition) -> Option<String> {
        t.origins()
            .into_iter()
            .find(|(account, region)| *account != self.account || *region != self.region)
            .map(|(account, region)| {
                format!(
                    "alarm {} comes from account {:?} in region {:?}, not this function's {} in {}: \
                     name it in the plan by its ARN to accept it",
                    crate::text::cut(&t.alarm_name),
                    crate::text::cut(account),
                    crate::text::cut(region),
                    self.account,
                    self.region
                )
            })
    }
}

/// What an alarm means for a target.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AlarmRole {
    /// A burst alarm: hold capacity while it fires and for a while after.
    Guard,
    /// A backlog alarm: scale out from zero.
    Wake,
}

impl AlarmRole {
    pub fn source(self) -> ClaimSource {
        match self {
            AlarmRole::Guard => ClaimSource::Guard,
            AlarmRole::Wake => ClaimSource::Wake,
        }
    }
}

impl fmt::Display for AlarmRole {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            AlarmRole::Guard => "guard",
            AlarmRole::Wake => "wake",
        })
    }
}

fn named(alarms: &[String], t: &AlarmTransition) -> bool {
    alarms
        .iter()
        .any(|a| alarm_matches(a, &t.alarm_name, t.alarm_arn.as_deref()))
}

/// Whether the alarm's AWS/SageMaker dimensions name the target: `EndpointName` and, when the
/// alarm has one, `VariantName` for a variant (endpoint-level metrics such as
/// `HasBacklogWithoutCapacity` carry no variant); `InferenceComponentName` for a component.
pub fn dimensions_name(id: &ScalableTargetId, t: &AlarmTransition) -> bool {
    let dim = |key: &str| t.dimensions.get(key).map(String::as_str);
    match id {
        ScalableTargetId::Variant {
            endpoint, variant, ..
        } => {
            dim("EndpointName") == Some(endpoint.as_str())
                && dim("VariantName").is_none_or(|v| v == variant.as_str())
        }
        ScalableTargetId::InferenceComponent(name) => {
            dim("InferenceComponentName") == Some(name.as_str())
        }
    }
}

/// The AWS/SageMaker metric a plan may route this alarm by for this target: the metric of a
/// metric alarm whose dimensions name the target (never for metric-math or composite alarms).
pub fn routed_metric<'a>(id: &ScalableTargetId, t: &'a AlarmTransition) -> Option<&'a str> {
    t.metric_name.as_deref().filter(|_| dimensions_name(id, t))
}

/// Whether `alarms` (by name or ARN) or `metrics` (by metric and dimensions) select the alarm.
fn selects(
    alarms: &[String],
    metrics: &[String],
    id: &ScalableTargetId,
    t: &AlarmTransition,
) -> bool {
    named(alarms, t) || routed_metric(id, t).is_some_and(|m| metrics.iter().any(|x| x == m))
}

/// Which managed targets (and in which role) a transition concerns under the plan; empty = not
/// ours. An alarm may matter to several targets, and to one target in both roles. A role takes
/// the alarms it names and, with `metrics`, the metric alarms on those metrics that measure the
/// target.
pub fn route(plan: &Plan, t: &AlarmTransition) -> Vec<(ScalableTargetId, AlarmRole)> {
    route_from(plan, t, false)
}

/// [`route`] for the function running in `home`: a transition from another account or region
/// is routed only where the plan names its exact ARN (never by name or metric). Returns the
/// routes, and why the transition was refused when it is foreign and the plan does not name it.
pub fn route_in(
    plan: &Plan,
    t: &AlarmTransition,
    home: &Home,
) -> (Vec<(ScalableTargetId, AlarmRole)>, Option<String>) {
    match home.foreign(t) {
        None => (route(plan, t), None),
        Some(why) => {
            let routes = route_from(plan, t, true);
            let refused = routes.is_empty().then_some(why);
            (routes, refused)
        }
    }
}

fn route_from(
    plan: &Plan,
    t: &AlarmTransition,
    arn_only: bool,
) -> Vec<(ScalableTargetId, AlarmRole)> {
    let by_arn = |alarms: &[String]| {
        alarms
            .iter()
            .any(|a| a.starts_with("arn:") && t.alarm_arn.as_deref() == Some(a.as_str()))
    };
    if arn_only {
        let mut out = Vec::new();
        for target in &plan.targets {
            if target.guard.as_ref().is_some_and(|g| by_arn(&g.alarms)) {
                out.push((target.id.clone(), AlarmRole::Guard));
            }
            if target.wake.as_ref().is_some_and(|w| by_arn(&w.alarms)) {
                out.push((target.id.clone(), AlarmRole::Wake));
            }
        }
        return out;
    }
    let mut out = Vec::new();
    for target in &plan.targets {
        let id = &target.id;
        if target
            .guard
            .as_ref()
            .is_some_and(|g| selects(&g.alarms, &g.metrics, id, t))
        {
            out.push((id.clone(), AlarmRole::Guard));
        }
        if target
            .wake
            .as_ref()
            .is_some_and(|w| selects(&w.alarms, &w.metrics, id, t))
        {
            out.push((id.clone(), AlarmRole::Wake));
        }
    }
    out
}

/// Idempotency key: event id, else alarm ARN/name + state + state timestamp. Two deliveries of the
/// same EventBridge event share the id; the direct alarm action has none, and its (alarm, state,
/// timestamp) triple identifies the transition.
pub fn idempotency_key(t: &AlarmTransition) -> String {
    match &t.event_id {
        Some(id) if !id.trim().is_empty() => format!("event:{id}"),
        _ => format!(
            "alarm:{}:{}:{}",
            t.alarm_arn.as_deref().unwrap_or(&t.alarm_name),
            t.state,
            t.at.timestamp_millis()
        ),
    }
}

fn stamp(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}

/// Where a transition stands against the alarm's mark.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Freshness {
    New,
    Duplicate,
    Stale,
}

fn freshness(state: &TargetState, t: &AlarmTransition) -> Freshness {
    let Some(mark) = state.alarm_marks.get(&t.alarm_name) else {
        return Freshness::New;
    };
    match (t.at, rank(t.state)).cmp(&(mark.at, rank(mark.state))) {
        std::cmp::Ordering::Greater => Freshness::New,
        std::cmp::Ordering::Equal => Freshness::Duplicate,
        std::cmp::Ordering::Less => Freshness::Stale,
    }
}

/// A hint when the alarm's AWS/SageMaker dimensions name another resource than the target the
/// plan routes it to by name (a copy-paste slip in the plan, most likely). Named alarms are not
/// checked against their dimensions: those of metric-math and composite alarms are partial or
/// absent. (An alarm routed by metric always names the target, so it never gets this hint.)
pub fn dimension_mismatch(id: &ScalableTargetId, t: &AlarmTransition) -> Option<String> {
    let named = |key: &str| t.dimensions.get(key).map(String::as_str);
    let differs = |key: &str, ours: &str| named(key).is_some_and(|v| v != ours);
    let mismatch = match id {
        ScalableTargetId::Variant {
            endpoint, variant, ..
        } => differs("EndpointName", endpoint.as_str()) || differs("VariantName", variant.as_str()),
        ScalableTargetId::InferenceComponent(name) => {
            differs("InferenceComponentName", name.as_str())
        }
    };
    mismatch.then(|| {
        let dims: Vec<String> = t
            .dimensions
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        format!(
            "alarm {} measures {} but the plan routes it to {id}: check the plan",
            t.alarm_name,
            dims.join(", ")
        )
    })
}

/// Pure: applies the transition to the target's state (guard/wake claims, alarm marks, high-water,
/// wake bookkeeping). `desired_now` = the target's current desired count (instances or copies) if
/// known. Returns notes for the decision log (e.g. "stale transition ignored").
pub fn apply_transition(
    target: &TargetPlan,
    role: AlarmRole,
    t: &AlarmTransition,
    desired_now: Option<u32>,
    state: &mut TargetState,
) -> Vec<String> {
    let mut notes: Vec<String> = dimension_mismatch(&target.id, t).into_iter().collect();
    let fresh = freshness(state, t);
    match fresh {
        Freshness::Stale => {
            if let Some(mark) = state.alarm_marks.get(&t.alarm_name) {
                notes.push(format!(
                    "stale transition ignored: {} {} at {} is older than {} at {}, the last applied",
                    t.alarm_name,
                    t.state,
                    stamp(t.at),
                    mark.state,
                    stamp(mark.at)
                ));
            }
        }
        Freshness::Duplicate => notes.push(format!(
            "duplicate transition: {} {} at {} was already applied",
            t.alarm_name,
            t.state,
            stamp(t.at)
        )),
        Freshness::New => {}
    }

    let before = state.claim(&role.source()).cloned();
    if let (AlarmState::InsufficientData, Some(AlarmState::Alarm), Some(desired)) = (
        t.state,
        t.previous,
        desired_now.filter(|d| is_demand_evidence(state, *d)),
    ) {
        // What `keep_current` keeps. Stale or not: the fact only moves forward (newest
        // transition), so any order of deliveries records the same count. A count that only
        // echoes the MinCapacity headroom applied (another claim's floor) is not recorded: the
        // fallback must not prolong a peak's floor past the peak.
        state
            .alarm_facts
            .record_no_data_count(&t.alarm_name, t.at, desired);
    }
    match role {
        AlarmRole::Guard => {
            let Some(policy) = &target.guard else {
                notes.push(format!(
                    "{} has no guard policy: alarm {} ignored",
                    target.id, t.alarm_name
                ));
                return notes;
            };
            record_guard_evidence(policy, t, fresh, desired_now, state);
        }
        AlarmRole::Wake => {
            let Some(policy) = &target.wake else {
                notes.push(format!(
                    "{} has no wake policy: alarm {} ignored",
                    target.id, t.alarm_name
                ));
                return notes;
            };
            if t.proves_alarm() {
                state.alarm_facts.raise_last_in_alarm(&t.alarm_name, t.at);
            }
            if fresh == Freshness::New && t.state == AlarmState::Alarm {
                // Measure from the earliest ALARM of this wake; a pending mark older than the
                // wake's hard bound belongs to a wake that never got capacity.
                let bound = t.at - policy.max_duration.to_chrono();
                state.wake_pending_since = Some(
                    state
                        .wake_pending_since
                        .filter(|p| *p >= bound)
                        .map_or(t.at, |p| p.min(t.at)),
                );
            }
        }
    }
    if fresh == Freshness::New {
        state.alarm_marks.insert(
            t.alarm_name.clone(),
            AlarmMark {
                state: t.state,
                at: t.at,
            },
        );
        state
            .alarm_facts
            .set_metric(&t.alarm_name, routed_metric(&target.id, t));
    }

    let after = derive_claim(target, role, state);
    match &after {
        Some(claim) => state.put_claim(claim.clone()),
        None => {
            state.remove_claim(&role.source());
        }
    }
    notes.extend(describe_change(role, before.as_ref(), after.as_ref()));
    notes
}

fn record_guard_evidence(
    policy: &GuardPolicy,
    t: &AlarmTransition,
    fresh: Freshness,
    desired_now: Option<u32>,
    state: &mut TargetState,
) {
    if !t.proves_alarm() {
        return;
    }
    // A fresh burst after the previous guard has fully run out starts a new high-water mark; one
    // that arrives while the previous guard steps down starts from what is held now, never from
    // the old mark (restoring it would ratchet: a burst of 3 brought back a floor of 29).
    // Stale transitions never reset: they belong to a burst already accounted for.
    if fresh == Freshness::New {
        let guard = state.claim(&ClaimSource::Guard);
        if guard.is_none_or(|c| c.is_expired(t.at)) {
            state.high_water = None;
        } else if guard.is_some_and(|c| t.at >= c.full_until) {
            state.high_water = guard.and_then(|c| c.at(t.at)).map(|c| c.floor);
        }
    }
    if let Some(desired) = desired_now.filter(|d| is_demand_evidence(state, *d)) {
        state.high_water = match policy.floor {
            GuardFloor::HighWater => Some(state.high_water.map_or(desired, |h| h.max(desired))),
            // The count when the alarm fired: the first one seen for this guard.
            GuardFloor::Current => Some(state.high_water.unwrap_or(desired)),
        };
    }
    state.alarm_facts.raise_last_in_alarm(&t.alarm_name, t.at);
}

/// Whether SageMaker's desired count says something about demand: a count at or below the
/// MinCapacity headroom itself applied is only headroom's own floor echoed back, and must never
/// feed the high-water mark the guard holds (that loop held MinCapacity at MaxCapacity for hours
/// on a bursty trace).
fn is_demand_evidence(state: &TargetState, desired: u32) -> bool {
    state.last_applied.is_none_or(|b| desired > b.min)
}

/// How one alarm's mark reads for its role.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reading {
    /// In ALARM: the claim holds fully until the hard bound.
    Firing,
    /// From ALARM to INSUFFICIENT_DATA, and the fallback (`keep_current` or `hold`) keeps the
    /// claim for `keep_for` before the alarm counts as cleared.
    NoData(FallbackMode),
    /// Left ALARM (OK, or INSUFFICIENT_DATA under `release`): the hold or quiet period runs.
    Cleared,
}

/// The timings of one role (guard or wake) that its alarms' marks are read with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RoleTiming {
    /// The hard bound after a transition to ALARM.
    pub max_duration: chrono::Duration,
    /// After the alarm left ALARM: the guard's `hold`, the wake's `quiet_period`.
    pub after_clear: chrono::Duration,
    /// After the alarm left ALARM outside `forecast_span`: the guard's `hold_without_forecast`
    /// (the wake's quiet period again).
    pub after_clear_without_forecast: chrono::Duration,
    /// The span the target's active forecast covers with its stored slots (`None`: none).
    pub forecast_span: Option<(DateTime<Utc>, DateTime<Utc>)>,
    pub fallback: Fallback,
}

impl RoleTiming {
    /// The guard's timings: its hold depends on whether the forecast covered the clear
    /// ([`RoleTiming::after_clear_at`]).
    pub fn guard(p: &GuardPolicy, forecast_span: Option<(DateTime<Utc>, DateTime<Utc>)>) -> Self {
        Self {
            max_duration: p.max_duration.to_chrono(),
            after_clear: p.hold.to_chrono(),
            after_clear_without_forecast: p.hold_without_forecast.to_chrono(),
            forecast_span,
            fallback: p.fallback,
        }
    }

    pub fn wake(p: &WakePolicy) -> Self {
        Self {
            max_duration: p.max_duration.to_chrono(),
            after_clear: p.quiet_period.to_chrono(),
            after_clear_without_forecast: p.quiet_period.to_chrono(),
            forecast_span: None,
            fallback: p.fallback,
        }
    }

    /// Whether the forecast's stored slots cover `m`. Read at the mark's own time, like every
    /// other rule here, so a late or repeated delivery finds the same hold; a forecast refreshed
    /// since may still change it (the hold follows the forecast as stored).
    pub fn forecast_covers(&self, m: DateTime<Utc>) -> bool {
        self.forecast_span
            .is_some_and(|(from, until)| from <= m && m < until)
    }

    /// How long the claim holds after the alarm left ALARM at `m`: `after_clear` while the
    /// forecast covers `m` (a short hold counts on the forecast's floor to carry the lull after
    /// a burst), else `after_clear_without_forecast`.
    pub fn after_clear_at(&self, m: DateTime<Utc>) -> chrono::Duration {
        if self.forecast_covers(m) {
            self.after_clear
        } else {
            self.after_clear_without_forecast
        }
    }
}

/// Pure: what one alarm's mark (newest transition `mark` at `m`, last known in ALARM at
/// `last_in_alarm`) asks of its role: how it reads, and until when the claim holds its floor
/// fully; `None` when it asks for nothing (the rules are in the module docs).
pub fn alarm_hold(
    mark: &AlarmMark,
    last_in_alarm: Option<DateTime<Utc>>,
    timing: &RoleTiming,
) -> Option<(Reading, DateTime<Utc>)> {
    let m = mark.at;
    if mark.state == AlarmState::Alarm {
        return Some((Reading::Firing, m + timing.max_duration));
    }
    let a = last_in_alarm?;
    if m > a + timing.max_duration {
        return None;
    }
    // The mark itself proves ALARM until its own time only when its previous state was ALARM:
    // the data stopped while the alarm fired. An INSUFFICIENT_DATA after an OK finds the burst
    // already over, and reads as OK.
    let out_of_alarm = mark.state == AlarmState::InsufficientData && a == m;
    match timing.fallback.mode {
        FallbackMode::KeepCurrent | FallbackMode::Hold if out_of_alarm => Some((
            Reading::NoData(timing.fallback.mode),
            m + timing.fallback.keep_for.to_chrono() + timing.after_clear_at(m),
        )),
        _ => Some((Reading::Cleared, m + timing.after_clear_at(m))),
    }
}

/// Pure: the floor a role's claim holds for an alarm that reads `reading`: the role's `own`
/// floor (the guard's high-water mark or count when it fired, the wake's capacity), or under
/// `keep_current` the desired count seen when the data stopped, when that is higher (what was
/// running then, warm, is kept).
pub fn held_floor(own: u32, reading: Reading, no_data_count: Option<u32>) -> u32 {
    match reading {
        Reading::NoData(FallbackMode::KeepCurrent) => no_data_count.map_or(own, |c| c.max(own)),
        _ => own,
    }
}

/// One alarm's say on the claim: when the full hold starts and ends, and how its mark reads.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Candidate {
    full_until: DateTime<Utc>,
    reading: Reading,
    starts_at: DateTime<Utc>,
    alarm: AlarmName,
    /// The desired count seen when this alarm lost its data at `starts_at`, if it did.
    no_data_count: Option<u32>,
}

impl Candidate {
    fn firing(&self) -> bool {
        self.reading == Reading::Firing
    }
}

/// The marks of the alarms a role listens to: named in `alarms`, or recorded on one of `metrics`
/// (the metric is recorded only when the alarm's dimensions named this target).
fn candidates<'a>(
    alarms: &'a [String],
    metrics: &'a [String],
    state: &'a TargetState,
) -> impl Iterator<
    Item = (
        &'a AlarmName,
        AlarmState,
        DateTime<Utc>,
        Option<DateTime<Utc>>,
    ),
> + 'a {
    state.alarm_marks.iter().filter_map(move |(name, mark)| {
        // Marks are keyed by alarm name, and a mark exists only for a transition the routing
        // accepted (which checked the ARN): here an ARN entry stands for its name.
        let by_name = alarms.iter().any(|a| configured_name(a) == name.as_str());
        let by_metric = || {
            state
                .alarm_facts
                .metric(name)
                .is_some_and(|m| metrics.iter().any(|x| x == m))
        };
        if !by_name && !by_metric() {
            return None;
        }
        Some((
            name,
            mark.state,
            mark.at,
            state.alarm_facts.last_in_alarm(name),
        ))
    })
}

/// The alarm name of a plan entry: the entry itself, or the name part of an ARN.
fn configured_name(configured: &str) -> &str {
    AlarmArn::name_in(configured)
}

fn best(cands: impl Iterator<Item = Candidate>) -> Option<Candidate> {
    cands.max_by(|a, b| {
        (a.full_until, a.firing(), a.starts_at, &a.alarm).cmp(&(
            b.full_until,
            b.firing(),
            b.starts_at,
            &b.alarm,
        ))
    })
}

/// The alarm of `alarms` whose claim lasts longest ([`alarm_hold`] for each).
fn winning_alarm(
    alarms: &[String],
    metrics: &[String],
    state: &TargetState,
    timing: &RoleTiming,
) -> Option<Candidate> {
    best(
        candidates(alarms, metrics, state).filter_map(|(name, s, at, last_alarm)| {
            let mark = AlarmMark { state: s, at };
            let (reading, full_until) = alarm_hold(&mark, last_alarm, timing)?;
            Some(Candidate {
                full_until,
                reading,
                starts_at: at,
                alarm: name.clone(),
                no_data_count: state.alarm_facts.no_data_count(name, at),
            })
        }),
    )
}

/// The guard's timings for this target: its hold follows the forecast as stored in `state`.
fn guard_timing(target: &TargetPlan, policy: &GuardPolicy, state: &TargetState) -> RoleTiming {
    let span = claiming_span(target.forecast.as_ref(), state.forecast.as_deref());
    RoleTiming::guard(policy, span)
}

/// The alarms whose marks set the target's guard and wake claims now (pruning keeps them).
pub(crate) fn claim_setting_alarms(target: &TargetPlan, state: &TargetState) -> Vec<AlarmName> {
    let guard = target.guard.as_ref().and_then(|p| {
        let timing = guard_timing(target, p, state);
        winning_alarm(&p.alarms, &p.metrics, state, &timing)
    });
    let wake = target
        .wake
        .as_ref()
        .and_then(|p| winning_alarm(&p.alarms, &p.metrics, state, &RoleTiming::wake(p)));
    guard.into_iter().chain(wake).map(|c| c.alarm).collect()
}

/// The role's claim as the alarm facts in `state` say it should be (`None`: no claim).
pub fn derive_claim(target: &TargetPlan, role: AlarmRole, state: &TargetState) -> Option<Claim> {
    match role {
        AlarmRole::Guard => target
            .guard
            .as_ref()
            .and_then(|p| derive_guard(target, p, state)),
        AlarmRole::Wake => target.wake.as_ref().and_then(|p| derive_wake(p, state)),
    }
}

fn derive_guard(target: &TargetPlan, policy: &GuardPolicy, state: &TargetState) -> Option<Claim> {
    let timing = guard_timing(target, policy, state);
    let pick = winning_alarm(&policy.alarms, &policy.metrics, state, &timing)?;
    // The hold the claim was given (`RoleTiming::after_clear_at` holds the rule), as a span.
    let hold = Span::seconds(timing.after_clear_at(pick.starts_at).num_seconds());
    let (own, what) = match (state.high_water, policy.floor) {
        (Some(h), GuardFloor::HighWater) => (h, "the high-water mark"),
        (Some(h), GuardFloor::Current) => (h, "the desired count when it fired"),
        (None, _) => (
            target.min_capacity,
            "the plan minimum (desired count not yet seen)",
        ),
    };
    // The scale-out counts while its own ALARM transition is the alarm's mark and that alarm
    // holds the claim firing.
    let scale_out = state
        .scale_out
        .as_ref()
        .filter(|s| pick.firing() && s.alarm == pick.alarm && s.is_current(&state.alarm_marks))
        .map(|s| s.floor)
        .filter(|f| *f > own);
    let (own, what) = scale_out.map_or((own, what), |f| {
        (f, "the scale-out on its newest datapoint")
    });
    let floor = held_floor(own, pick.reading, pick.no_data_count);
    let what = if floor > own {
        "the desired count when its data stopped"
    } else {
        what
    };
    // Said only where the two holds differ, so a plan without `hold_without_forecast` reads as
    // it always did.
    let why_hold = if hold != policy.hold {
        " (hold_without_forecast: no active forecast covered the clear)"
    } else {
        ""
    };
    let reason = match pick.reading {
        Reading::Firing => format!(
            "burst alarm {} in ALARM since {}: holding {floor} ({what}) until it clears, at most until {}",
            pick.alarm,
            stamp(pick.starts_at),
            stamp(pick.full_until)
        ),
        Reading::NoData(mode) => format!(
            "burst alarm {} went from ALARM to INSUFFICIENT_DATA at {}: on_insufficient_data = {mode} \
             holds {floor} ({what}) for {}, then {hold}{why_hold} more, then steps down",
            pick.alarm,
            stamp(pick.starts_at),
            policy.fallback.keep_for,
        ),
        Reading::Cleared => format!(
            "burst alarm {} cleared at {}: holding {floor} ({what}) for {hold}{why_hold}, then stepping down",
            pick.alarm,
            stamp(pick.starts_at),
        ),
    };
    Some(
        Claim::new(
            ClaimSource::Guard,
            floor,
            pick.starts_at,
            pick.full_until,
            Some(policy.step_down),
            reason,
        )
        .suspending_scale_in(policy.suspend_scale_in),
    )
}

fn derive_wake(policy: &WakePolicy, state: &TargetState) -> Option<Claim> {
    let pick = winning_alarm(
        &policy.alarms,
        &policy.metrics,
        state,
        &RoleTiming::wake(policy),
    )?;
    let floor = held_floor(policy.capacity, pick.reading, pick.no_data_count);
    let reason = match pick.reading {
        Reading::Firing => format!(
            "backlog alarm {} in ALARM since {}: waking to {floor} until it clears, at most until {}",
            pick.alarm,
            stamp(pick.starts_at),
            stamp(pick.full_until)
        ),
        Reading::NoData(mode) => format!(
            "backlog alarm {} went from ALARM to INSUFFICIENT_DATA at {}: on_insufficient_data = \
             {mode} keeps {floor} until {} (keep_for {} plus the quiet period)",
            pick.alarm,
            stamp(pick.starts_at),
            stamp(pick.full_until),
            policy.fallback.keep_for
        ),
        Reading::Cleared => format!(
            "backlog alarm {} cleared at {}: keeping {floor} for the quiet period until {}",
            pick.alarm,
            stamp(pick.starts_at),
            stamp(pick.full_until)
        ),
    };
    Some(Claim::new(
        ClaimSource::Wake,
        floor,
        pick.starts_at,
        pick.full_until,
        None,
        reason,
    ))
}

fn describe_change(role: AlarmRole, before: Option<&Claim>, after: Option<&Claim>) -> Vec<String> {
    match (before, after) {
        (None, None) => vec![format!(
            "no {role} claim: no alarm of this {role} asks for capacity"
        )],
        (Some(b), Some(a)) if b == a => vec![format!("{role} claim unchanged")],
        (_, Some(a)) => vec![format!(
            "{role} claim {}: floor {}, full hold until {}, expires {}: {}",
            if before.is_some() { "changed" } else { "added" },
            a.floor,
            stamp(a.full_until),
            stamp(a.expires_at),
            a.reason
        )],
        (Some(_), None) => vec![format!(
            "{role} claim removed: no alarm of this {role} asks for capacity any more"
        )],
    }
}

/// Pure: what the tick (or an endpoint state event) learns from the target's desired and in-service
/// counts at `now`:
/// - while a guard alarm fires, a higher desired count raises the high-water mark (and the floor);
/// - a pending wake whose capacity is now in service records its latency (alarm time to `now`);
/// - a pending wake whose claim has ended without capacity is dropped, said so in the notes.
pub fn observe_capacity(
    target: &TargetPlan,
    state: &mut TargetState,
    desired: u32,
    current: u32,
    now: DateTime<Utc>,
) -> Vec<String> {
    let mut notes = Vec::new();
    if let Some(policy) = &target.guard {
        if guard_firing(policy, state, now)
            && policy.floor == GuardFloor::HighWater
            && is_demand_evidence(state, desired)
            && state.high_water.is_none_or(|h| desired > h)
        {
            state.high_water = Some(desired);
            if let Some(claim) = derive_claim(target, AlarmRole::Guard, state) {
                notes.push(format!(
                    "guard high-water mark raised to {desired} while the burst alarm fires"
                ));
                state.put_claim(claim);
            }
        }
    }
    if let (Some(policy), Some(since)) = (&target.wake, state.wake_pending_since) {
        if current >= policy.capacity {
            let latency = WakeLatency {
                alarm_at: since,
                in_service_at: now,
                seconds: (now - since).num_seconds().max(0),
            };
            notes.push(format!(
                "woke from the backlog alarm at {}: {current} in service after {} s",
                stamp(since),
                latency.seconds
            ));
            state.wake_latencies.push(latency);
            crate::newest::keep_newest(&mut state.wake_latencies, WAKE_LATENCIES_KEPT);
            state.wake_pending_since = None;
        } else if state
            .claim(&ClaimSource::Wake)
            .is_none_or(|c| c.at(now).is_none())
        {
            notes.push(format!(
                "the wake from {} ended with {current} of {} in service: no latency recorded",
                stamp(since),
                policy.capacity
            ));
            state.wake_pending_since = None;
        }
    }
    notes
}

/// Pure: the guard's scale-out on a burst (`surge.rs`), after [`apply_transition`] recorded `t`:
/// when `t` is the guard alarm's newest transition and it is to ALARM, the guard's floor is raised,
/// while that transition stays the alarm's mark, to the instances that bring the alarm's newest
/// datapoint back to its threshold, read from the `in_service` count. It is not held after the
/// alarm clears (the high-water mark of the desired count is, as before): a burst that ended
/// before target tracking asked for the capacity never needed it held. A duplicate asks for the
/// same number; a stale transition (an older ALARM) for nothing: its datapoint describes an
/// earlier minute.
pub fn guard_scale_out(
    target: &TargetPlan,
    t: &AlarmTransition,
    in_service: u32,
    state: &mut TargetState,
) -> Vec<String> {
    let Some(policy) = target.guard.as_ref().filter(|p| p.scale_out) else {
        return Vec::new();
    };
    let newest = state
        .alarm_marks
        .get(&t.alarm_name)
        .is_some_and(|m| m.at == t.at && m.state == t.state);
    if t.state != AlarmState::Alarm || !newest {
        return Vec::new();
    }
    let Some(reading) = t.reading else {
        return Vec::new();
    };
    // The alarm's own metric (a metric alarm names it; metric-math and composite alarms do not).
    let metric = t.metric_name.as_deref();
    let level = per_instance_level(target, metric);
    let Some(floor) = scale_out_floor(metric, reading, level, in_service) else {
        return Vec::new();
    };
    let same = state
        .scale_out
        .as_ref()
        .filter(|s| s.alarm == t.alarm_name && s.at == t.at);
    if same.is_some_and(|s| s.floor >= floor) {
        return Vec::new();
    }
    state.scale_out = Some(ScaleOut {
        alarm: t.alarm_name.clone(),
        at: t.at,
        floor,
    });
    let Some(claim) = derive_guard(target, policy, state) else {
        return Vec::new();
    };
    state.put_claim(claim);
    vec![format!(
        "guard scales out to {floor}: {in_service} in service at {} {} each, brought back to {} \
         (target tracking would wait for its own alarm)",
        reading.newest(),
        metric.unwrap_or("?"),
        level.map_or(reading.threshold(), |l| l.min(reading.threshold()))
    )]
}

/// What one instance should carry of the alarm's metric, when the plan says: the forecast's
/// `invocations_per_instance` (target tracking's target value) for `InvocationsPerInstance`.
fn per_instance_level(target: &TargetPlan, metric: Option<&str>) -> Option<f64> {
    let f = target.forecast.as_ref()?;
    (metric == Some("InvocationsPerInstance")
        && f.demand == crate::plan::forecast::DemandKind::Invocations)
        .then_some(f.invocations_per_instance)
}

/// Pure: when the target already has the wake capacity in service as the backlog alarm fires,
/// there is nothing to wake and no latency to measure; the handler calls this after
/// [`apply_transition`] with the in-service count it read.
pub fn wake_already_served(
    target: &TargetPlan,
    state: &mut TargetState,
    current: u32,
) -> Vec<String> {
    match (&target.wake, state.wake_pending_since) {
        (Some(policy), Some(_)) if current >= policy.capacity => {
            state.wake_pending_since = None;
            vec![format!(
                "{current} already in service: no wake latency to measure"
            )]
        }
        _ => Vec::new(),
    }
}

/// A guard alarm is in ALARM and within its hard bound (a lost OK stops counting after it).
fn guard_firing(policy: &GuardPolicy, state: &TargetState, now: DateTime<Utc>) -> bool {
    candidates(&policy.alarms, &policy.metrics, state)
        .any(|(_, s, at, _)| s == AlarmState::Alarm && now < at + policy.max_duration.to_chrono())
}

/// Whether the target's state has anything [`observe_capacity`] would look at, so the tick reads
/// SageMaker only for those targets.
pub fn wants_capacity_observation(
    target: &TargetPlan,
    state: &TargetState,
    now: DateTime<Utc>,
) -> bool {
    let guard = target
        .guard
        .as_ref()
        .is_some_and(|p| p.floor == GuardFloor::HighWater && guard_firing(p, state, now));
    guard || (target.wake.is_some() && state.wake_pending_since.is_some())
}
