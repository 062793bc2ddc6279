//! The state item stays bounded whatever arrives (issue 11, item 8): thousands of metric-routed
//! alarm names once grew one target's item to 404 KB, past DynamoDB's 400 KB, and every later
//! write failed. The budget is `alarm_prune::STATE_BUDGET_BYTES` (64 KB).

mod common;

use chrono::{DateTime, Duration, Utc};
use common::{at, t};
use headroom_core::alarm_prune::{MAX_ALARM_MARKS, STATE_BUDGET_BYTES};
use headroom_core::alarms::{apply_transition, idempotency_key, AlarmRole, AlarmTransition};
use headroom_core::memory::{block_on, MemoryScalingTargets, MemoryStateStore};
use headroom_core::model::{AlarmName, AlarmState};
use headroom_core::plan::{parse_plan, Plan};
use headroom_core::reconcile::{reconcile_target, EventChange};
use headroom_core::state::{AlarmMark, TargetState};
use headroom_core::usecase::tick::tick_plan_observing;
use headroom_core::{ClaimSource, ScalableTargetId};

const PLAN: &str = r#"
version = 1
[[target]]
resource_id = "endpoint/chat/variant/AllTraffic"
min_capacity = 1
max_capacity = 12
  [target.guard]
  alarms = ["burst"]
  metrics = ["InvocationsPerInstance"]
"#;

fn plan() -> Plan {
    parse_plan("budget.toml", PLAN).expect("valid plan")
}

fn chat() -> ScalableTargetId {
    "endpoint/chat/variant/AllTraffic"
        .parse()
        .expect("valid id")
}

/// A metric alarm on the target, with a long (but CloudWatch-valid) name, delivered by the
/// direct alarm action (no event id: the idempotency key carries the ARN).
fn metric_alarm(i: usize, state: AlarmState, at: DateTime<Utc>) -> AlarmTransition {
    let name = format!("{i:06}-{}", "n".repeat(240));
    let mut tr = AlarmTransition::new(name.clone(), state, at)
        .on_metric(
            "InvocationsPerInstance",
            &[("EndpointName", "chat"), ("VariantName", "AllTraffic")],
        )
        .from_account("123456789012", "us-east-1");
    tr.alarm_arn = Some(format!(
        "arn:aws:cloudwatch:us-east-1:123456789012:alarm:{name}"
    ));
    tr
}

fn deliver(
    aas: &MemoryScalingTargets,
    store: &MemoryStateStore,
    plan: &Plan,
    tr: &AlarmTransition,
    now: DateTime<Utc>,
) {
    let target = &plan.targets[0];
    let apply = |s: &mut TargetState| apply_transition(target, AlarmRole::Guard, tr, Some(3), s);
    let change = EventChange {
        key: idempotency_key(tr),
        apply: &apply,
    };
    block_on(reconcile_target(
        aas,
        store,
        target,
        now,
        &tr.trigger_name(),
        Some(&change),
    ))
    .expect("applied");
}

fn size(store: &MemoryStateStore) -> usize {
    serde_json::to_string(&store.state(&chat()))
        .expect("serializes")
        .len()
}

#[test]
fn thousands_of_alarm_names_keep_the_state_under_budget() {
    let plan = plan();
    let aas = MemoryScalingTargets::default().with_target(chat(), 1, 12);
    let store = MemoryStateStore::default();
    // GIVEN 2,000 distinct metric alarms on the target, firing and clearing over a day and a half
    let start = at("00:00");
    let mut largest = 0;
    for i in 0..2_000 {
        let fired = start + Duration::minutes(i as i64);
        deliver(
            &aas,
            &store,
            &plan,
            &metric_alarm(i, AlarmState::Alarm, fired),
            fired,
        );
        let cleared = fired + Duration::seconds(30);
        deliver(
            &aas,
            &store,
            &plan,
            &metric_alarm(i, AlarmState::Ok, cleared),
            cleared,
        );
        largest = largest.max(size(&store));
    }
    // THEN the stored item never grew past the budget
    assert!(
        largest < STATE_BUDGET_BYTES,
        "the state reached {largest} bytes (budget {STATE_BUDGET_BYTES})"
    );
    let s = store.state(&chat());
    assert!(
        s.alarm_marks.len() <= MAX_ALARM_MARKS,
        "{}",
        s.alarm_marks.len()
    );
    // AND the guard still holds from the newest alarm
    assert!(s.claim(&ClaimSource::Guard).is_some());
}

#[test]
fn thousands_of_alarms_firing_at_once_keep_the_state_under_budget_and_the_guard() {
    let plan = plan();
    let aas = MemoryScalingTargets::default().with_target(chat(), 1, 12);
    let store = MemoryStateStore::default();
    // GIVEN 1,000 alarms in ALARM within the same quarter hour
    let start = at("09:00");
    for i in 0..1_000 {
        let fired = start + Duration::seconds(i as i64);
        deliver(
            &aas,
            &store,
            &plan,
            &metric_alarm(i, AlarmState::Alarm, fired),
            fired,
        );
    }
    let size = size(&store);
    assert!(size < STATE_BUDGET_BYTES, "{size} bytes");
    // THEN the guard holds (the alarm setting it is kept)
    let s = store.state(&chat());
    let guard = s.claim(&ClaimSource::Guard).expect("guard");
    assert_eq!(guard.floor, 3);
}

#[test]
fn a_tick_prunes_the_facts_of_alarms_that_no_longer_matter_and_future_marks() {
    let plan = plan();
    let aas = MemoryScalingTargets::default().with_target(chat(), 1, 12);
    let store = MemoryStateStore::default();
    // GIVEN a state holding an old mark, a mark of an alarm the plan no longer names, a mark
    // stamped 2036, and a current one
    let mut s = TargetState::default();
    let mark = |at| AlarmMark {
        state: AlarmState::Ok,
        at,
    };
    s.alarm_marks.insert("burst".into(), mark(at("09:00")));
    s.alarm_marks
        .insert("renamed-long-ago".into(), mark(at("08:00")));
    s.alarm_marks
        .insert("forged".into(), mark(t("2036-03-14T09:00:00Z")));
    store.put_state(&chat(), s);
    // WHEN the tick runs at 09:30, and again two weeks later
    block_on(tick_plan_observing(
        &aas,
        &store,
        None::<&()>,
        &plan,
        1,
        at("09:30"),
    ));
    let names: Vec<AlarmName> = store.state(&chat()).alarm_marks.into_keys().collect();
    // THEN only the alarm that can still matter keeps its facts
    assert_eq!(names, ["burst"]);
    block_on(tick_plan_observing(
        &aas,
        &store,
        None::<&()>,
        &plan,
        1,
        at("09:30") + Duration::days(14),
    ));
    assert!(store.state(&chat()).alarm_marks.is_empty());
}

#[test]
fn long_idempotency_keys_are_stored_compactly() {
    let mut s = TargetState::default();
    let now = at("09:00");
    for i in 0..500 {
        s.mark_seen(
            &format!(
                "alarm:arn:aws:cloudwatch:us-east-1:123456789012:alarm:{i}-{}:OK:1",
                "k".repeat(240)
            ),
            now,
        );
    }
    let key = format!(
        "alarm:arn:aws:cloudwatch:us-east-1:123456789012:alarm:7-{}:OK:1",
        "k".repeat(240)
    );
    assert!(!s.has_seen(&key, now), "only the newest 200 keys are kept");
    let newest = format!(
        "alarm:arn:aws:cloudwatch:us-east-1:123456789012:alarm:499-{}:OK:1",
        "k".repeat(240)
    );
    assert!(s.has_seen(&newest, now));
    let size = serde_json::to_string(&s.seen_events).expect("json").len();
    assert!(size < 24 * 1024, "{size} bytes of idempotency keys");
}
