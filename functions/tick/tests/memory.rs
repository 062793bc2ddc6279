//! The tick function's handler against in-memory ports: call counts at scale, idempotency,
//! explicit peak events (late, duplicate, unmanaged) and bad input causing no mutation.

use chrono::{DateTime, Duration, Utc};
use headroom_core::memory::{Calls, MemoryScalingTargets, MemoryStateStore};
use headroom_core::trigger::Trigger;
use headroom_core::usecase::alarm::{on_alarm, Origin};
use headroom_core::usecase::peak::PeakOutcome;
use headroom_core::usecase::Ports;
use headroom_core::{ScalableTargetId, TargetPlan};
use headroom_lambda::Classified as _;
use headroom_tick::{handle, Error, Outcome};

fn t(s: &str) -> DateTime<Utc> {
    s.parse().expect("an RFC 3339 time")
}

fn tick_event() -> serde_json::Value {
    serde_json::from_str(include_str!("../../../events/schedule/tick-rule.json"))
        .expect("fixture parses")
}

/// A plan of `n` variant targets (min 1, max 8); every 100th has a peak starting 20 minutes after
/// `now` with floor 5 and a lead time of 25 minutes.
fn big_plan(n: usize, now: DateTime<Utc>) -> String {
    let start = (now + Duration::minutes(20)).to_rfc3339();
    let mut text = String::from("version = 1\n");
    for i in 0..n {
        text.push_str(&format!(
            "[[target]]\nresource_id = \"endpoint/ep-{i:04}/variant/AllTraffic\"\nmin_capacity = 1\nmax_capacity = 8\nlead_time = \"25m\"\n"
        ));
        if i % 100 == 0 {
            text.push_str(&format!("[[target.peak]]\nname = \"launch\"\nat = \"{start}\"\nduration = \"1h\"\nfloor = 5\n"));
        }
    }
    text
}

fn registered(n: usize) -> MemoryScalingTargets {
    (0..n).fold(MemoryScalingTargets::default(), |aas, i| {
        aas.with_target(
            format!("endpoint/ep-{i:04}/variant/AllTraffic")
                .parse()
                .expect("valid id"),
            1,
            8,
        )
    })
}

#[tokio::test]
async fn a_tick_over_500_targets_makes_10_describe_calls_10_state_reads_and_writes_only_changes() {
    let now = t("2026-12-03T16:00:00Z");
    let aas = registered(500);
    let store = MemoryStateStore::default().with_plan(&big_plan(500, now));

    let Outcome::Tick(report) = handle(Ports::new(&aas, &store), &tick_event(), now)
        .await
        .expect("tick succeeds")
    else {
        panic!("a tick event yields a tick report")
    };

    assert_eq!(report.targets, 500);
    assert_eq!(
        Calls::get(&aas.calls.describe),
        10,
        "ceil(500 / 50) DescribeScalableTargets calls"
    );
    assert_eq!(
        Calls::get(&store.calls.load_states),
        10,
        "one state read per page"
    );
    assert_eq!(Calls::get(&store.calls.load_plan), 1);
    assert_eq!(
        Calls::get(&aas.calls.register),
        5,
        "only the 5 targets whose peak is within the lead time"
    );
    assert_eq!(
        Calls::get(&store.calls.save_state),
        10,
        "state is written only where it changed: each change with its log record pending, then cleared"
    );
    assert_eq!(Calls::get(&store.calls.append_log), 5);
    let raised: ScalableTargetId = "endpoint/ep-0100/variant/AllTraffic"
        .parse()
        .expect("valid id");
    assert_eq!(aas.get(&raised).expect("registered").min, 5);

    // The second tick right after changes nothing.
    let mutations = aas.calls.mutations() + store.calls.mutations();
    handle(
        Ports::new(&aas, &store),
        &tick_event(),
        now + Duration::seconds(5),
    )
    .await
    .expect("second tick succeeds");
    assert_eq!(
        aas.calls.mutations() + store.calls.mutations(),
        mutations,
        "no mutating call on the second run"
    );
    assert_eq!(Calls::get(&aas.calls.describe), 20);
}

fn one_target() -> String {
    TargetPlan::test("endpoint/chat-prod/variant/AllTraffic")
        .plan()
        .text()
}

fn chat() -> ScalableTargetId {
    "endpoint/chat-prod/variant/AllTraffic"
        .parse()
        .expect("valid id")
}

fn peak_event() -> serde_json::Value {
    serde_json::from_str(include_str!("../../../events/schedule/peak.json"))
        .expect("fixture parses")
}

#[tokio::test]
async fn an_explicit_peak_arriving_late_applies_at_once_and_says_how_late() {
    // The fixture's peak starts 14:00Z; with a 25 minute lead it was due at 13:35Z.
    let now = t("2026-11-27T13:50:00Z");
    let aas = MemoryScalingTargets::default().with_target(chat(), 1, 8);
    let store = MemoryStateStore::default().with_plan(&one_target());

    let Outcome::Peak(PeakOutcome {
        min,
        duplicate,
        notes,
        ..
    }) = handle(Ports::new(&aas, &store), &peak_event(), now)
        .await
        .expect("peak applies")
    else {
        panic!("a peak event yields a peak outcome")
    };
    assert_eq!((min, duplicate), (8, false));
    assert!(
        notes.iter().any(|n| n.contains("arrived 15m late")),
        "{notes:?}"
    );
    assert_eq!(aas.get(&chat()).expect("registered").min, 8);
    let log = store.log();
    assert_eq!(log.len(), 1);
    assert!(
        log[0]["notes"][0].as_str().unwrap_or("").contains("late"),
        "{}",
        log[0]
    );

    // The same event again (EventBridge Scheduler retried it): no second effect.
    let before = aas.calls.mutations() + store.calls.mutations();
    let Outcome::Peak(PeakOutcome { duplicate, .. }) = handle(
        Ports::new(&aas, &store),
        &peak_event(),
        now + Duration::seconds(30),
    )
    .await
    .expect("duplicate is fine") else {
        panic!("peak outcome")
    };
    assert!(duplicate);
    assert_eq!(aas.calls.mutations() + store.calls.mutations(), before);
}

#[tokio::test]
async fn an_early_peak_is_stored_and_the_tick_applies_it_on_time() {
    let aas = MemoryScalingTargets::default().with_target(chat(), 1, 8);
    let store = MemoryStateStore::default().with_plan(&one_target());
    handle(
        Ports::new(&aas, &store),
        &peak_event(),
        t("2026-11-26T09:00:00Z"),
    )
    .await
    .expect("stored");
    assert_eq!(
        aas.get(&chat()).expect("registered").min,
        1,
        "nothing changes a day early"
    );
    assert_eq!(store.state(&chat()).claims.len(), 1);

    handle(
        Ports::new(&aas, &store),
        &tick_event(),
        t("2026-11-27T13:34:00Z"),
    )
    .await
    .expect("tick");
    assert_eq!(aas.get(&chat()).expect("registered").min, 1, "not yet due");
    handle(
        Ports::new(&aas, &store),
        &tick_event(),
        t("2026-11-27T13:35:00Z"),
    )
    .await
    .expect("tick");
    assert_eq!(
        aas.get(&chat()).expect("registered").min,
        8,
        "due at start minus lead time"
    );
    // After the end, the ramp steps down: 8 -> 4 at 22:00.
    handle(
        Ports::new(&aas, &store),
        &tick_event(),
        t("2026-11-27T22:00:00Z"),
    )
    .await
    .expect("tick");
    assert_eq!(aas.get(&chat()).expect("registered").min, 4);
}

#[tokio::test]
async fn a_peak_for_an_unmanaged_target_is_refused_without_any_mutation() {
    let aas = MemoryScalingTargets::default().with_target(chat(), 1, 8);
    let other = TargetPlan::test("endpoint/other/variant/AllTraffic").bounds(1, 2);
    let store = MemoryStateStore::default().with_plan(&other.plan().text());
    let err = handle(
        Ports::new(&aas, &store),
        &peak_event(),
        t("2026-11-27T13:50:00Z"),
    )
    .await
    .expect_err("unmanaged");
    assert!(err.to_string().contains("not managed by the plan"), "{err}");
    assert!(!err.is_retryable());
    assert_eq!(aas.calls.mutations() + store.calls.mutations(), 0);
}

#[tokio::test]
async fn malformed_events_are_refused_with_the_field_named_and_no_mutation() {
    let aas = MemoryScalingTargets::default().with_target(chat(), 1, 8);
    let store = MemoryStateStore::default().with_plan(&one_target());
    for (file, needle) in [
        (
            include_str!("../../../events/invalid/peak-floor-zero.json"),
            "field `floor`",
        ),
        (
            include_str!("../../../events/invalid/peak-bad-target.json"),
            "field `target`",
        ),
        (
            include_str!("../../../events/invalid/unknown-shape.json"),
            "unrecognised event",
        ),
    ] {
        let event: serde_json::Value = serde_json::from_str(file).expect("valid JSON");
        let err = handle(Ports::new(&aas, &store), &event, t("2026-11-27T13:50:00Z"))
            .await
            .expect_err("refused");
        assert!(matches!(err, Error::BadEvent(_)));
        assert!(err.to_string().contains(needle), "{err}");
    }
    assert_eq!(aas.calls.mutations() + store.calls.mutations(), 0);
}

#[tokio::test]
async fn a_tick_without_a_stored_plan_says_how_to_store_one() {
    let err = handle(
        Ports::new(
            &MemoryScalingTargets::default(),
            &MemoryStateStore::default(),
        ),
        &tick_event(),
        t("2026-11-27T13:50:00Z"),
    )
    .await
    .expect_err("no plan");
    assert!(err.to_string().contains("headroom plan apply"), "{err}");
}

#[tokio::test]
async fn the_tick_measures_a_wake_in_the_same_pass_with_one_state_read_per_page() {
    use headroom_core::memory::MemoryCapacity;
    // GIVEN the example plan (3 targets) and a backlog alarm that woke the async endpoint at 06:03.
    let plan = include_str!("../../../events/plans/example.toml");
    let async_ep: ScalableTargetId = "endpoint/summarize-async/variant/AllTraffic"
        .parse()
        .expect("valid id");
    let aas = MemoryScalingTargets::default()
        .with_target(async_ep.clone(), 0, 4)
        .with_target(chat(), 2, 12)
        .with_target(
            "inference-component/llama-8b-ic".parse().expect("valid id"),
            0,
            6,
        );
    let store = MemoryStateStore::default().with_plan(plan);
    let capacity = MemoryCapacity::default().with(async_ep.clone(), 1, 0);
    let alarm: serde_json::Value = serde_json::from_str(include_str!(
        "../../../events/alarms/eventbridge-backlog-alarm.json"
    ))
    .expect("fixture parses");
    let Ok(Trigger::Alarm(transition)) = headroom_events::parse_trigger(&alarm) else {
        panic!("an alarm fixture")
    };
    on_alarm(
        Ports::new(&aas, &store).with_capacity(&capacity),
        &transition,
        Origin::Anywhere,
        t("2026-03-14T06:03:02Z"),
    )
    .await
    .expect("alarm handled");
    assert_eq!(
        aas.get(&async_ep).expect("registered").min,
        1,
        "woken from zero at once"
    );
    let calls_before = capacity.call_count();
    let reads_before = Calls::get(&store.calls.load_states);

    // WHEN the instance is in service at 06:10 and the tick runs
    capacity.set(async_ep.clone(), 1, 1);
    let Outcome::Tick(report) = handle(
        Ports::new(&aas, &store).with_capacity(&capacity),
        &tick_event(),
        t("2026-03-14T06:10:00Z"),
    )
    .await
    .expect("tick") else {
        panic!("tick report")
    };

    // THEN the latency (alarm at 06:03:00.820 to 06:10) is recorded in that same pass: one state
    // read for the page, and SageMaker asked only about the waking target.
    assert_eq!(Calls::get(&store.calls.load_states) - reads_before, 1);
    assert_eq!(capacity.call_count() - calls_before, 1);
    let state = store.state(&async_ep);
    assert_eq!(state.wake_latencies.len(), 1, "{report:?}");
    assert_eq!(state.wake_latencies[0].seconds, 419);
    assert!(state.wake_pending_since.is_none());
    assert!(report.observed[0].contains("woke"), "{:?}", report.observed);
}
