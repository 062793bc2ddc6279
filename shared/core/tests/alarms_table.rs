//! Decision tables for the alarm automation: guard start, extend, release and step-down; wake
//! and release; stale and duplicate transitions; unknown alarms; the reconcile applying an alarm
//! at once through the memory ports. GIVEN a plan and earlier transitions, WHEN a transition (or a
//! capacity observation) is applied, THEN the claims and the decided bounds are as listed.

mod common;

use common::{at, target_id};
use headroom_core::alarms::{
    apply_transition, dimension_mismatch, idempotency_key, observe_capacity, route,
    wake_already_served, wants_capacity_observation, AlarmRole, AlarmTransition,
};
use headroom_core::decide::decide;
use headroom_core::memory::{block_on, Calls, MemoryScalingTargets, MemoryStateStore};
use headroom_core::model::AlarmState;
use headroom_core::plan::{parse_plan, Plan, TargetPlan};
use headroom_core::reconcile::{reconcile_named, EventChange};
use headroom_core::state::TargetState;
use headroom_core::{ClaimSource, ScalableTargetId, Span};

const PLAN: &str = r#"
version = 1
[[target]]
resource_id = "endpoint/chat/variant/AllTraffic"
min_capacity = 1
max_capacity = 12
  [target.guard]
  alarms = ["burst", "arn:aws:cloudwatch:us-east-1:123456789012:alarm:burst-math"]
  hold = "20m"
  max_duration = "6h"
  suspend_scale_in = true
  step_down = { step = "10m", keep_percent = 50 }

[[target]]
resource_id = "endpoint/steady/variant/AllTraffic"
min_capacity = 2
max_capacity = 12
  [target.guard]
  alarms = ["steady-burst"]
  hold = "10m"
  max_duration = "1h"
  floor = "current"
  suspend_scale_in = false

[[target]]
resource_id = "endpoint/summarize/variant/AllTraffic"
min_capacity = 0
max_capacity = 4
  [target.wake]
  alarms = ["backlog"]
  capacity = 2
  quiet_period = "15m"
  max_duration = "2h"

[[target]]
resource_id = "inference-component/ic"
min_capacity = 0
max_capacity = 4
  [target.wake]
  alarms = ["arn:aws:cloudwatch:us-east-1:123456789012:alarm:ic-no-capacity"]
  [target.guard]
  alarms = ["arn:aws:cloudwatch:us-east-1:123456789012:alarm:ic-no-capacity"]
"#;

fn plan() -> Plan {
    parse_plan("alarms.toml", PLAN).expect("the test plan is valid")
}

fn chat() -> TargetPlan {
    plan()
        .target(&target_id("endpoint/chat/variant/AllTraffic"))
        .cloned()
        .expect("chat target")
}

fn steady() -> TargetPlan {
    plan()
        .target(&target_id("endpoint/steady/variant/AllTraffic"))
        .cloned()
        .expect("steady target")
}

fn summarize() -> TargetPlan {
    plan()
        .target(&target_id("endpoint/summarize/variant/AllTraffic"))
        .cloned()
        .expect("summarize target")
}

fn tr(name: &str, state: AlarmState, previous: AlarmState, hm: &str) -> AlarmTransition {
    AlarmTransition::new(name, state, at(hm)).with_previous(previous)
}

use AlarmState::{Alarm, InsufficientData, Ok as Clear};

/// `target`'s guard seeing transition `t` with `desired` instances asked: its notes.
fn guard_sees(
    target: &TargetPlan,
    s: &mut TargetState,
    t: AlarmTransition,
    desired: Option<u32>,
) -> Vec<String> {
    apply_transition(target, AlarmRole::Guard, &t, desired, s)
}

/// `target`'s wake seeing transition `t` with `desired` instances asked: its notes.
fn wake_sees(
    target: &TargetPlan,
    s: &mut TargetState,
    t: AlarmTransition,
    desired: Option<u32>,
) -> Vec<String> {
    apply_transition(target, AlarmRole::Wake, &t, desired, s)
}

/// The min and suspension decide would set at `hm`.
fn bounds_at(target: &TargetPlan, state: &TargetState, hm: &str) -> (u32, bool) {
    let d = decide(target, None, state, Span::minutes(15), at(hm));
    (d.desired.min, d.desired.suspend_scale_in)
}

#[test]
fn guard_start_extend_release_and_step_down() {
    let target = chat();
    let mut s = TargetState::default();

    // GIVEN a burst alarm firing at 09:00 with 5 instances desired
    let notes = guard_sees(&target, &mut s, tr("burst", Alarm, Clear, "09:00"), Some(5));
    let g = s.claim(&ClaimSource::Guard).expect("guard claim").clone();
    assert_eq!(
        (g.floor, g.starts_at, g.full_until),
        (5, at("09:00"), at("15:00")),
        "hard bound 6 h"
    );
    assert!(g.suspend_scale_in);
    assert!(
        notes.iter().any(|n| n.starts_with("guard claim added")),
        "{notes:?}"
    );
    assert_eq!(bounds_at(&target, &s, "09:01"), (5, true));

    // WHEN AAS scales out to 8 during the burst (seen by the tick) THEN the floor follows it
    let notes = observe_capacity(&target, &mut s, 8, 6, at("09:10"));
    assert_eq!(s.high_water, Some(8));
    assert!(
        notes
            .iter()
            .any(|n| n.contains("high-water mark raised to 8")),
        "{notes:?}"
    );
    // ... but a lower count never lowers it
    observe_capacity(&target, &mut s, 6, 6, at("09:12"));
    assert_eq!(s.claim(&ClaimSource::Guard).expect("guard").floor, 8);

    // WHEN the alarm fires again later (same burst) with 7 desired THEN the floor stays 8 and the
    // hard bound counts from the newer ALARM
    guard_sees(&target, &mut s, tr("burst", Alarm, Alarm, "09:20"), Some(7));
    let g = s.claim(&ClaimSource::Guard).expect("guard").clone();
    assert_eq!((g.floor, g.full_until), (8, at("15:20")));

    // WHEN it clears at 10:00 THEN the floor holds 20 min, then halves every 10 min
    guard_sees(&target, &mut s, tr("burst", Clear, Alarm, "10:00"), Some(8));
    let g = s.claim(&ClaimSource::Guard).expect("guard").clone();
    assert_eq!(
        (g.floor, g.full_until, g.expires_at),
        (8, at("10:20"), at("11:00"))
    );
    // (instant, min, scale-in suspended)
    let table = [
        ("10:05", 8, true),
        ("10:19", 8, true),
        ("10:20", 4, false),
        ("10:30", 2, false),
        ("10:40", 1, false),
        ("10:50", 1, false),
        ("11:00", 1, false),
    ];
    for (hm, min, suspend) in table {
        assert_eq!(bounds_at(&target, &s, hm), (min, suspend), "at {hm}");
    }
}

#[test]
fn a_lost_ok_cannot_pin_capacity_past_the_hard_bound() {
    let target = chat();
    let mut s = TargetState::default();
    guard_sees(&target, &mut s, tr("burst", Alarm, Clear, "09:00"), Some(6));
    // No OK ever arrives. (instant, min)
    for (hm, min) in [
        ("14:59", 6),
        ("15:00", 3),
        ("15:10", 1),
        ("15:20", 1),
        ("16:00", 1),
    ] {
        assert_eq!(bounds_at(&target, &s, hm).0, min, "at {hm}");
    }
    // The tick stops following the high-water mark once the bound has passed.
    assert!(wants_capacity_observation(&target, &s, at("14:00")));
    assert!(!wants_capacity_observation(&target, &s, at("15:00")));
    // An OK that finally arrives proves the alarm fired until then: the usual hold follows it.
    let notes = guard_sees(&target, &mut s, tr("burst", Clear, Alarm, "18:00"), Some(6));
    assert!(
        s.claim(&ClaimSource::Guard)
            .is_some_and(|c| c.full_until == at("18:20")),
        "the OK proves ALARM until 18:00"
    );
    assert!(
        notes.iter().any(|n| n.contains("guard claim changed")),
        "{notes:?}"
    );
}

#[test]
fn a_new_burst_after_the_guard_ran_out_starts_a_new_high_water_mark() {
    let target = chat();
    let mut s = TargetState::default();
    guard_sees(&target, &mut s, tr("burst", Alarm, Clear, "09:00"), Some(9));
    guard_sees(&target, &mut s, tr("burst", Clear, Alarm, "09:30"), Some(9));
    // The claim (hold 20 min + 4 steps of 10 min) expires at 10:30; the next burst is at 12:00.
    guard_sees(&target, &mut s, tr("burst", Alarm, Clear, "12:00"), Some(3));
    assert_eq!(s.high_water, Some(3));
    assert_eq!(s.claim(&ClaimSource::Guard).expect("guard").floor, 3);
    // While the earlier guard still ramps, a rebound holds what the ramp holds now (4 at 09:55),
    // neither the old high-water mark (restoring 9 ratchets on bursty traffic: issue 12) nor a
    // cliff down to the desired count of 3.
    let mut s = TargetState::default();
    guard_sees(&target, &mut s, tr("burst", Alarm, Clear, "09:00"), Some(9));
    guard_sees(&target, &mut s, tr("burst", Clear, Alarm, "09:30"), Some(9));
    guard_sees(&target, &mut s, tr("burst", Alarm, Clear, "09:55"), Some(3));
    assert_eq!(s.high_water, Some(4));
    assert_eq!(s.claim(&ClaimSource::Guard).expect("guard").floor, 4);
}

#[test]
fn current_floor_mode_holds_the_count_when_the_alarm_fired() {
    let target = steady();
    let mut s = TargetState::default();
    guard_sees(
        &target,
        &mut s,
        tr("steady-burst", Alarm, Clear, "09:00"),
        Some(5),
    );
    observe_capacity(&target, &mut s, 9, 9, at("09:05"));
    guard_sees(
        &target,
        &mut s,
        tr("steady-burst", Alarm, Alarm, "09:10"),
        Some(9),
    );
    let g = s.claim(&ClaimSource::Guard).expect("guard");
    assert_eq!(
        (g.floor, g.suspend_scale_in, g.full_until),
        (5, false, at("10:10"))
    );
    assert!(
        !wants_capacity_observation(&target, &s, at("09:20")),
        "current mode needs no observation"
    );
}

#[test]
fn insufficient_data_out_of_alarm_keeps_the_count_and_ok_without_alarm_asks_nothing() {
    let target = chat();
    // (transitions applied in order, expected guard (floor, full_until) or None)
    type Row<'a> = (Vec<AlarmTransition>, Option<(u32, &'a str)>);
    let table: Vec<Row> = vec![
        // A new alarm settling: INSUFFICIENT_DATA -> OK never guards.
        (vec![tr("burst", Clear, InsufficientData, "09:00")], None),
        (vec![tr("burst", InsufficientData, Clear, "09:00")], None),
        // Leaving ALARM through INSUFFICIENT_DATA (the metric stopped): the default fallback
        // keeps the count for keep_for (30m), then the hold (20m) runs (alarm_fallback.rs has
        // the other choices).
        (
            vec![
                tr("burst", Alarm, Clear, "09:00"),
                tr("burst", InsufficientData, Alarm, "09:30"),
            ],
            Some((4, "10:20")),
        ),
        // ... and the OK that follows re-times the release from the newest transition.
        (
            vec![
                tr("burst", Alarm, Clear, "09:00"),
                tr("burst", InsufficientData, Alarm, "09:30"),
                tr("burst", Clear, InsufficientData, "09:35"),
            ],
            Some((4, "09:55")),
        ),
        // An OK whose previous state is ALARM proves the burst even when the ALARM was lost.
        (vec![tr("burst", Clear, Alarm, "09:30")], Some((4, "09:50"))),
    ];
    for (seq, want) in table {
        let mut s = TargetState::default();
        for tr in &seq {
            apply_transition(&target, AlarmRole::Guard, tr, Some(4), &mut s);
        }
        let got = s
            .claim(&ClaimSource::Guard)
            .map(|c| (c.floor, c.full_until));
        assert_eq!(got, want.map(|(f, u)| (f, at(u))), "sequence {seq:?}");
    }
}

#[test]
fn several_guard_alarms_hold_while_any_fires() {
    let target = chat();
    let mut s = TargetState::default();
    let math = |state, prev, hm| {
        let mut t = tr("burst-math", state, prev, hm);
        t.alarm_arn = Some("arn:aws:cloudwatch:us-east-1:123456789012:alarm:burst-math".into());
        t
    };
    guard_sees(&target, &mut s, tr("burst", Alarm, Clear, "09:00"), Some(5));
    apply_transition(
        &target,
        AlarmRole::Guard,
        &math(Alarm, Clear, "09:05"),
        Some(6),
        &mut s,
    );
    guard_sees(&target, &mut s, tr("burst", Clear, Alarm, "09:30"), Some(6));
    let g = s.claim(&ClaimSource::Guard).expect("guard");
    assert_eq!(
        (g.floor, g.full_until),
        (6, at("15:05")),
        "burst-math still fires"
    );
    assert!(g.reason.contains("burst-math"), "{}", g.reason);
    apply_transition(
        &target,
        AlarmRole::Guard,
        &math(Clear, Alarm, "09:40"),
        Some(6),
        &mut s,
    );
    let g = s.claim(&ClaimSource::Guard).expect("guard");
    assert_eq!(g.full_until, at("10:00"), "the later release wins");
}

#[test]
fn stale_and_duplicate_transitions_change_nothing_and_say_so() {
    let target = chat();
    let mut s = TargetState::default();
    guard_sees(&target, &mut s, tr("burst", Alarm, Clear, "09:00"), Some(5));
    guard_sees(&target, &mut s, tr("burst", Clear, Alarm, "10:00"), Some(5));
    let settled = s.clone();

    // A late ALARM from before the OK: stale.
    let notes = guard_sees(&target, &mut s, tr("burst", Alarm, Clear, "09:00"), Some(5));
    assert!(notes.iter().any(|n| n.starts_with("stale transition ignored: burst ALARM at 2026-03-14T09:00:00Z")), "{notes:?}");
    assert!(
        notes.iter().any(|n| n == "guard claim unchanged"),
        "{notes:?}"
    );
    assert_eq!(s, settled);

    // The OK again: a duplicate.
    let notes = guard_sees(&target, &mut s, tr("burst", Clear, Alarm, "10:00"), Some(5));
    assert!(
        notes.iter().any(|n| n.starts_with("duplicate transition")),
        "{notes:?}"
    );
    assert_eq!(s, settled);
}

#[test]
fn wake_claims_capacity_until_the_backlog_clears_plus_the_quiet_period() {
    let target = summarize();
    let mut s = TargetState::default();
    wake_sees(
        &target,
        &mut s,
        tr("backlog", Alarm, Clear, "06:03"),
        Some(0),
    );
    let w = s.claim(&ClaimSource::Wake).expect("wake claim").clone();
    assert_eq!(
        (w.floor, w.full_until, w.expires_at, w.ramp),
        (2, at("08:03"), at("08:03"), None)
    );
    assert_eq!(s.wake_pending_since, Some(at("06:03")));
    assert_eq!(bounds_at(&target, &s, "06:04"), (2, false));

    wake_sees(
        &target,
        &mut s,
        tr("backlog", Clear, Alarm, "06:14"),
        Some(2),
    );
    // (instant, min)
    for (hm, min) in [("06:20", 2), ("06:28", 2), ("06:29", 0), ("07:00", 0)] {
        assert_eq!(bounds_at(&target, &s, hm).0, min, "at {hm}");
    }
}

#[test]
fn a_lost_ok_cannot_pin_a_wake_past_its_hard_bound() {
    let target = summarize();
    let mut s = TargetState::default();
    wake_sees(
        &target,
        &mut s,
        tr("backlog", Alarm, Clear, "06:00"),
        Some(0),
    );
    // No OK: the wake ends at 08:00.
    assert_eq!(bounds_at(&target, &s, "07:59").0, 2);
    assert_eq!(bounds_at(&target, &s, "08:00").0, 0);
    // An OK at 07:55 proves the backlog lasted until then: the quiet period follows it.
    wake_sees(
        &target,
        &mut s,
        tr("backlog", Clear, Alarm, "07:55"),
        Some(2),
    );
    assert_eq!(
        s.claim(&ClaimSource::Wake).expect("wake").full_until,
        at("08:10")
    );
    // A stray INSUFFICIENT_DATA long after the last ALARM asks for nothing.
    wake_sees(
        &target,
        &mut s,
        tr("backlog", InsufficientData, Clear, "11:00"),
        Some(0),
    );
    assert!(s.claim(&ClaimSource::Wake).is_none());
}

#[test]
fn wake_latency_is_recorded_when_capacity_is_in_service() {
    let target = summarize();
    let mut s = TargetState::default();
    wake_sees(
        &target,
        &mut s,
        tr("backlog", Alarm, Clear, "06:03"),
        Some(0),
    );
    // Desired raised, nothing in service yet: still pending.
    assert!(observe_capacity(&target, &mut s, 2, 0, at("06:05")).is_empty());
    assert!(wants_capacity_observation(&target, &s, at("06:05")));
    // One of two: still pending (the wake capacity is 2).
    observe_capacity(&target, &mut s, 2, 1, at("06:08"));
    assert_eq!(s.wake_pending_since, Some(at("06:03")));
    let notes = observe_capacity(&target, &mut s, 2, 2, at("06:10"));
    assert_eq!(s.wake_pending_since, None);
    assert_eq!(s.wake_latencies.len(), 1);
    assert_eq!(
        (s.wake_latencies[0].alarm_at, s.wake_latencies[0].seconds),
        (at("06:03"), 420)
    );
    assert!(notes.iter().any(|n| n.contains("after 420 s")), "{notes:?}");
    assert!(!wants_capacity_observation(&target, &s, at("06:11")));
}

#[test]
fn a_wake_that_never_got_capacity_records_nothing() {
    let target = summarize();
    let mut s = TargetState::default();
    wake_sees(
        &target,
        &mut s,
        tr("backlog", Alarm, Clear, "06:00"),
        Some(0),
    );
    wake_sees(
        &target,
        &mut s,
        tr("backlog", Clear, Alarm, "06:05"),
        Some(0),
    );
    let notes = observe_capacity(&target, &mut s, 0, 0, at("06:30"));
    assert_eq!(s.wake_pending_since, None);
    assert!(s.wake_latencies.is_empty());
    assert!(
        notes.iter().any(|n| n.contains("no latency recorded")),
        "{notes:?}"
    );
}

#[test]
fn a_target_already_serving_has_no_wake_latency_to_measure() {
    let target = summarize();
    let mut s = TargetState::default();
    wake_sees(
        &target,
        &mut s,
        tr("backlog", Alarm, Clear, "06:00"),
        Some(2),
    );
    assert!(
        wake_already_served(&target, &mut s, 1).is_empty(),
        "1 of 2 is not enough"
    );
    assert_eq!(wake_already_served(&target, &mut s, 2).len(), 1);
    assert_eq!(s.wake_pending_since, None);
    assert!(
        s.claim(&ClaimSource::Wake).is_some(),
        "the claim itself stays"
    );
}

#[test]
fn routing_matches_names_and_arns_and_ignores_unknown_alarms() {
    let plan = plan();
    let with_arn = |name: &str, arn: &str| {
        let mut t = AlarmTransition::new(name, Alarm, at("09:00"));
        t.alarm_arn = Some(arn.into());
        t
    };
    // (transition, expected routes)
    let table: Vec<(AlarmTransition, Vec<(&str, AlarmRole)>)> = vec![
        (
            AlarmTransition::new("burst", Alarm, at("09:00")),
            vec![("endpoint/chat/variant/AllTraffic", AlarmRole::Guard)],
        ),
        // A plan entry given as an ARN matches that ARN ...
        (
            with_arn(
                "burst-math",
                "arn:aws:cloudwatch:us-east-1:123456789012:alarm:burst-math",
            ),
            vec![("endpoint/chat/variant/AllTraffic", AlarmRole::Guard)],
        ),
        // ... and only that ARN: not a same-named alarm of another account or region, nor an
        // event that carries no ARN (issue 11, item 6).
        (
            with_arn(
                "burst-math",
                "arn:aws:cloudwatch:eu-west-1:999999999999:alarm:burst-math",
            ),
            vec![],
        ),
        (
            with_arn(
                "burst-math",
                "arn:aws:cloudwatch:eu-west-1:123456789012:alarm:burst-math",
            ),
            vec![],
        ),
        (
            AlarmTransition::new("burst-math", Alarm, at("09:00")),
            vec![],
        ),
        // ... and the alarm's ARN.
        (
            with_arn(
                "ic-no-capacity",
                "arn:aws:cloudwatch:us-east-1:123456789012:alarm:ic-no-capacity",
            ),
            vec![
                ("inference-component/ic", AlarmRole::Guard),
                ("inference-component/ic", AlarmRole::Wake),
            ],
        ),
        (
            AlarmTransition::new("backlog", Clear, at("09:00")),
            vec![("endpoint/summarize/variant/AllTraffic", AlarmRole::Wake)],
        ),
        // Not named by the plan: not ours.
        (
            AlarmTransition::new("billing-estimated-charges-high", Alarm, at("09:00")),
            vec![],
        ),
        // Names match exactly: no prefixes, no case folding.
        (AlarmTransition::new("Burst", Alarm, at("09:00")), vec![]),
        (AlarmTransition::new("burst-", Alarm, at("09:00")), vec![]),
    ];
    for (t, want) in table {
        let got = route(&plan, &t);
        let want: Vec<(ScalableTargetId, AlarmRole)> =
            want.into_iter().map(|(i, r)| (target_id(i), r)).collect();
        assert_eq!(got, want, "alarm {}", t.alarm_name);
    }
}

#[test]
fn idempotency_keys_prefer_the_event_id() {
    let mut t = tr("burst", Alarm, Clear, "09:00");
    assert_eq!(
        idempotency_key(&t),
        format!("alarm:burst:ALARM:{}", at("09:00").timestamp_millis())
    );
    t.alarm_arn = Some("arn:aws:cloudwatch:us-east-1:1:alarm:burst".into());
    assert!(
        idempotency_key(&t).starts_with("alarm:arn:aws:cloudwatch:us-east-1:1:alarm:burst:ALARM:")
    );
    t.event_id = Some("6a7e8feb".into());
    assert_eq!(idempotency_key(&t), "event:6a7e8feb");
    // The same alarm and time in another state is another transition.
    let a = tr("burst", Alarm, Clear, "09:00");
    let b = tr("burst", Clear, Alarm, "09:00");
    assert_ne!(idempotency_key(&a), idempotency_key(&b));
}

#[test]
fn the_reconcile_applies_an_alarm_at_once_and_a_duplicate_has_no_second_effect() {
    let plan = plan();
    let chat_id = target_id("endpoint/chat/variant/AllTraffic");
    let aas = MemoryScalingTargets::default().with_target(chat_id.clone(), 1, 12);
    let store = MemoryStateStore::default();
    let mut alarm = tr("burst", Alarm, Clear, "09:00");
    alarm.event_id = Some("evt-1".into());
    let target = plan.target(&chat_id).expect("chat").clone();
    let apply =
        |s: &mut TargetState| apply_transition(&target, AlarmRole::Guard, &alarm, Some(5), s);
    let change = EventChange {
        key: idempotency_key(&alarm),
        apply: &apply,
    };
    let now = at("09:01");
    let first = block_on(reconcile_named(
        &aas,
        &store,
        &plan,
        &chat_id,
        now,
        &alarm.trigger_name(),
        Some(&change),
    ))
    .expect("reconcile");
    assert!(!first.duplicate);
    assert_eq!(first.decision.winner, Some(ClaimSource::Guard));
    let seen = aas.get(&chat_id).expect("registered");
    assert_eq!(
        (seen.min, seen.max, seen.suspended.dynamic_in),
        (5, 12, true)
    );
    assert_eq!(Calls::get(&aas.calls.register), 1);
    let log = store.log();
    assert_eq!(log.len(), 1);
    assert_eq!(log[0]["trigger"], "alarm:burst:ALARM");

    // The same event delivered again, a minute later.
    let again = block_on(reconcile_named(
        &aas,
        &store,
        &plan,
        &chat_id,
        at("09:02"),
        &alarm.trigger_name(),
        Some(&change),
    ))
    .expect("reconcile");
    assert!(again.duplicate);
    assert_eq!(Calls::get(&aas.calls.register), 1, "no second AWS call");
    assert_eq!(
        store
            .state(&chat_id)
            .claim(&ClaimSource::Guard)
            .map(|c| c.floor),
        Some(5)
    );
}

#[test]
fn an_alarm_measuring_another_resource_than_its_target_is_pointed_out() {
    let with = |dims: &[(&str, &str)]| {
        let mut t = tr("burst", Alarm, Clear, "09:00");
        t.dimensions = dims
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        t
    };
    let chat_id = target_id("endpoint/chat/variant/AllTraffic");
    let ic = target_id("inference-component/ic");
    // (target, dimensions, hint expected)
    type Row<'a> = (&'a ScalableTargetId, Vec<(&'a str, &'a str)>, bool);
    let table: Vec<Row> = vec![
        (
            &chat_id,
            vec![("EndpointName", "chat"), ("VariantName", "AllTraffic")],
            false,
        ),
        (&chat_id, vec![("EndpointName", "chat")], false),
        // Composite and pure-math alarms carry none: nothing to compare.
        (&chat_id, vec![], false),
        (
            &chat_id,
            vec![
                ("EndpointName", "chat-staging"),
                ("VariantName", "AllTraffic"),
            ],
            true,
        ),
        (
            &chat_id,
            vec![("EndpointName", "chat"), ("VariantName", "Canary")],
            true,
        ),
        (&ic, vec![("InferenceComponentName", "ic")], false),
        (&ic, vec![("InferenceComponentName", "other-ic")], true),
    ];
    for (target, dims, want) in table {
        let hint = dimension_mismatch(target, &with(&dims));
        assert_eq!(hint.is_some(), want, "{target} {dims:?}: {hint:?}");
    }
    // The hint reaches the decision log; the claim is applied all the same.
    let mut s = TargetState::default();
    let notes = apply_transition(
        &chat(),
        AlarmRole::Guard,
        &with(&[("EndpointName", "chat-staging")]),
        Some(3),
        &mut s,
    );
    assert!(
        notes[0].contains("measures EndpointName=chat-staging")
            && notes[0].contains("check the plan"),
        "{notes:?}"
    );
    assert!(s.claim(&ClaimSource::Guard).is_some());
}

/// A plan that routes alarms by AWS/SageMaker metric and dimensions instead of by name.
const PLAN_BY_METRIC: &str = r#"
version = 1
[[target]]
resource_id = "endpoint/chat/variant/AllTraffic"
min_capacity = 1
max_capacity = 12
  [target.guard]
  metrics = ["InvocationsPerInstance"]
  hold = "20m"
  max_duration = "6h"

[[target]]
resource_id = "endpoint/summarize/variant/AllTraffic"
min_capacity = 0
max_capacity = 4
  [target.wake]
  alarms = ["backlog"]
  metrics = ["HasBacklogWithoutCapacity"]
  capacity = 2

[[target]]
resource_id = "inference-component/ic"
min_capacity = 0
max_capacity = 4
  [target.wake]
  metrics = ["NoCapacityInvocationFailures"]
"#;

fn plan_by_metric() -> Plan {
    parse_plan("by-metric.toml", PLAN_BY_METRIC).expect("the metric plan is valid")
}

#[test]
fn routing_by_metric_needs_a_listed_metric_and_dimensions_naming_the_target() {
    let plan = plan_by_metric();
    let chat_dims = [("EndpointName", "chat"), ("VariantName", "AllTraffic")];
    let on = |name: &str, metric: &str, dims: &[(&str, &str)]| {
        AlarmTransition::new(name, Alarm, at("09:00")).on_metric(metric, dims)
    };
    let mut math = AlarmTransition::new("unnamed-math", Alarm, at("09:00"));
    math.dimensions = on("x", "x", &chat_dims).dimensions;
    // (case, transition, expected routes)
    type Row<'a> = (&'a str, AlarmTransition, Vec<(&'a str, AlarmRole)>);
    let table: Vec<Row> = vec![
        (
            "an unnamed alarm on a listed metric of the variant",
            on("unnamed-burst", "InvocationsPerInstance", &chat_dims),
            vec![("endpoint/chat/variant/AllTraffic", AlarmRole::Guard)],
        ),
        (
            "the same alarm on another endpoint",
            on(
                "unnamed-burst",
                "InvocationsPerInstance",
                &[
                    ("EndpointName", "chat-staging"),
                    ("VariantName", "AllTraffic"),
                ],
            ),
            vec![],
        ),
        (
            "the same endpoint, another variant",
            on(
                "unnamed-burst",
                "InvocationsPerInstance",
                &[("EndpointName", "chat"), ("VariantName", "Canary")],
            ),
            vec![],
        ),
        (
            "a metric the plan does not list",
            on("unnamed-latency", "ModelLatency", &chat_dims),
            vec![],
        ),
        (
            "metric math has no single metric, whatever its dimensions",
            math,
            vec![],
        ),
        (
            "an endpoint-level metric without VariantName matches by EndpointName",
            on(
                "async-backlog",
                "HasBacklogWithoutCapacity",
                &[("EndpointName", "summarize")],
            ),
            vec![("endpoint/summarize/variant/AllTraffic", AlarmRole::Wake)],
        ),
        (
            "an inference component by InferenceComponentName",
            on(
                "ic-unnamed",
                "NoCapacityInvocationFailures",
                &[("InferenceComponentName", "ic")],
            ),
            vec![("inference-component/ic", AlarmRole::Wake)],
        ),
        (
            "another inference component",
            on(
                "ic-unnamed",
                "NoCapacityInvocationFailures",
                &[("InferenceComponentName", "other-ic")],
            ),
            vec![],
        ),
        (
            "names still route beside metrics",
            AlarmTransition::new("backlog", Alarm, at("09:00")),
            vec![("endpoint/summarize/variant/AllTraffic", AlarmRole::Wake)],
        ),
    ];
    for (case, t, want) in table {
        let got = route(&plan, &t);
        let want: Vec<(ScalableTargetId, AlarmRole)> =
            want.into_iter().map(|(i, r)| (target_id(i), r)).collect();
        assert_eq!(got, want, "{case}");
    }
}

#[test]
fn an_alarm_routed_by_metric_holds_and_releases_the_guard_like_a_named_one() {
    let plan = plan_by_metric();
    let chat_id = target_id("endpoint/chat/variant/AllTraffic");
    let target = plan.target(&chat_id).expect("chat").clone();
    let dims = [("EndpointName", "chat"), ("VariantName", "AllTraffic")];
    let fire =
        tr("unnamed-burst", Alarm, Clear, "09:00").on_metric("InvocationsPerInstance", &dims);
    let clear =
        tr("unnamed-burst", Clear, Alarm, "09:30").on_metric("InvocationsPerInstance", &dims);
    assert_eq!(
        route(&plan, &fire),
        vec![(chat_id.clone(), AlarmRole::Guard)]
    );

    // GIVEN the unnamed burst alarm firing with 5 desired: the guard claim holds 5.
    let mut s = TargetState::default();
    apply_transition(&target, AlarmRole::Guard, &fire, Some(5), &mut s);
    let g = s.claim(&ClaimSource::Guard).expect("guard claim").clone();
    assert_eq!((g.floor, g.full_until), (5, at("15:00")));
    assert_eq!(bounds_at(&target, &s, "09:10"), (5, true));
    // The tick sees the alarm as firing (the high-water mark may still rise).
    assert!(wants_capacity_observation(&target, &s, at("09:10")));

    // WHEN it clears, the claim holds for the hold time after the OK: the mark is still
    // recognised as this guard's alarm.
    apply_transition(&target, AlarmRole::Guard, &clear, Some(5), &mut s);
    let g = s.claim(&ClaimSource::Guard).expect("guard claim").clone();
    assert_eq!(g.full_until, at("09:50"));

    // Out of order: the OK first, then the ALARM, ends in the same claim.
    let mut r = TargetState::default();
    apply_transition(&target, AlarmRole::Guard, &clear, Some(5), &mut r);
    apply_transition(&target, AlarmRole::Guard, &fire, Some(5), &mut r);
    assert_eq!(r.claims, s.claims);

    // A plan that no longer lists the metric no longer counts the alarm.
    let mut without = target.clone();
    if let Some(g) = without.guard.as_mut() {
        g.metrics.clear();
    }
    assert_eq!(
        headroom_core::alarms::derive_claim(&without, AlarmRole::Guard, &s),
        None
    );
}
