//! The alarm function's handler against the memory ports, driven by the fixtures in
//! events/alarms.

#![allow(clippy::unwrap_used)] // a failed unwrap is a failed test

use chrono::{DateTime, Utc};
use headroom_alarm::{handle, AlarmReport, Error, Origin};
use headroom_core::alarms::Home;
use headroom_core::memory::MemoryCapacity;
use headroom_core::memory::{block_on, Calls, MemoryScalingTargets, MemoryStateStore};
use headroom_core::usecase::Ports;
use headroom_core::ClaimSource;
use headroom_core::ScalableTargetId;
use headroom_lambda::Classified as _;

/// This package's directory as cargo gives it when the test runs. The compile-time value would
/// be another clone's when cargo reuses a test binary from a target dir shared between clones.
fn manifest_dir() -> String {
    std::env::var("CARGO_MANIFEST_DIR").unwrap_or_else(|_| env!("CARGO_MANIFEST_DIR").to_owned())
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

fn ports(w: &World) -> Ports<'_, MemoryScalingTargets, (), MemoryCapacity, (), MemoryStateStore> {
    Ports::new(&w.aas, &w.store).with_capacity(&w.capacity)
}

fn run(w: &World, event: &serde_json::Value, at: DateTime<Utc>) -> Result<AlarmReport, Error> {
    block_on(handle(ports(w), event, Origin::Anywhere, at))
}

#[test]
fn a_burst_alarm_guards_its_target_at_the_desired_count_at_once() {
    let w = world();
    let report = run(&w, &fixture("alarms/eventbridge-burst-alarm.json"), now()).expect("handled");
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
    let again = run(&w, &fixture("alarms/direct-action-burst-alarm.json"), now()).expect("handled");
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
    let report = run(&w, &fixture("alarms/eventbridge-backlog-alarm.json"), at).expect("handled");
    assert_eq!(report.targets[0].min, 1);
    assert_eq!(w.aas.get(&summarize).map(|o| o.min), Some(1));
    assert!(w.store.state(&summarize).wake_pending_since.is_some());

    let at = "2026-03-14T06:14:10Z".parse().expect("time");
    let report = run(&w, &fixture("alarms/direct-action-backlog-ok.json"), at).expect("handled");
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
fn a_burst_metric_that_stops_keeps_the_running_count_for_keep_for_then_the_hold() {
    // GIVEN the burst guard holding 7 since the ALARM at 09:42 (the example plan: hold 20m,
    // on_insufficient_data left at its default, keep_current for 30m)
    let w = world();
    let chat = id("endpoint/chat-prod/variant/AllTraffic");
    run(&w, &fixture("alarms/eventbridge-burst-alarm.json"), now()).expect("handled");
    // WHEN AAS has scaled to 9 and the alarm goes to INSUFFICIENT_DATA at 10:05
    w.capacity.set(chat.clone(), 9, 9);
    let event = fixture("alarms/eventbridge-burst-insufficient-data.json");
    let at = "2026-03-14T10:05:40Z".parse().expect("time");
    let report = run(&w, &event, at).expect("handled");
    // THEN the 9 running are kept, until keep_for and then the hold have passed
    let t = &report.targets[0];
    assert_eq!((t.min, t.suspend_scale_in, t.registered), (9, true, true));
    assert_eq!(w.aas.get(&chat).map(|o| o.min), Some(9));
    let claim = w
        .store
        .state(&chat)
        .claim(&ClaimSource::Guard)
        .cloned()
        .expect("guard");
    assert_eq!(
        claim.full_until,
        "2026-03-14T10:55:31.571Z"
            .parse::<DateTime<Utc>>()
            .expect("time"),
        "30m keep_for + 20m hold after the data stopped"
    );
    assert!(
        claim.reason.contains("INSUFFICIENT_DATA"),
        "{}",
        claim.reason
    );
    // ... and the same event again has no second effect
    let again = run(&w, &event, at).expect("handled");
    assert!(again.targets[0].duplicate);
    assert_eq!(Calls::get(&w.aas.calls.register), 2);
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
    let err = run(&w, &fixture("alarms/eventbridge-burst-alarm.json"), now()).expect_err("no plan");
    assert!(!err.is_retryable());
    assert!(err.to_string().contains("headroom plan apply"), "{err}");
}

fn home() -> Home {
    Home::from_function_arn("arn:aws:lambda:us-east-1:123456789012:function:headroom-alarm")
        .expect("a function ARN")
}

fn run_in(w: &World, event: &serde_json::Value, at: DateTime<Utc>) -> Result<AlarmReport, Error> {
    block_on(handle(ports(w), event, Origin::Home(&home()), at))
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
    let report =
        run_in(&w, &composite_from("999999999999", "eu-west-1"), now()).expect("the plan names it");
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
    let report = run(&w, &fixture("alarms/eventbridge-burst-alarm.json"), now()).expect("handled");
    // THEN it applies
    assert_eq!(report.targets[0].min, 7);
    assert!(w.store.state(&chat).claim(&ClaimSource::Guard).is_some());
}
