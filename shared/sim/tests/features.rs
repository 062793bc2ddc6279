//! One scenario per headroom feature, each showing the effect the feature exists for, with
//! target tracking alone as the control. headroom runs through its own core and ports.

mod common;
use common::*;
use headroom_sim::Strategy;

const WORLD_CHAT: &str = r#"
seed = 7
[[target]]
resource_id = "endpoint/chat/variant/AllTraffic"
capacity_per_instance = 10.0
provisioning = { min = "4m30s", max = "9m" }
  [target.target_tracking]
  metric = "InvocationsPerInstance"
  target_value = 450.0

[[alarm]]
name = "chat-burst"
target = "endpoint/chat/variant/AllTraffic"
metric = "InvocationsPerInstance"
comparison = "GreaterThanThreshold"
threshold = 510.0
evaluation_periods = 2
"#;

#[test]
fn a_planned_peak_is_met_on_time() {
    // GIVEN 20 req/s that jumps to 200 req/s at 09:00 for an hour, and a plan that knows it
    let plan = r#"
version = 1
[[target]]
resource_id = "endpoint/chat/variant/AllTraffic"
min_capacity = 2
max_capacity = 30
lead_time = "12m"
  [[target.peak]]
  name = "nine"
  cron = "0 9 * * *"
  duration = "1h"
  floor = 22
"#;
    let trace = trace("2026-01-05T08:00:00Z", 150, |m| {
        if (60..120).contains(&m) {
            200.0
        } else {
            20.0
        }
    });
    let results = run(&scenario(plan, WORLD_CHAT, &trace));
    let tt = of(&results, Strategy::TargetTracking);
    let hr = of(&results, Strategy::Headroom);

    // THEN headroom raised MinCapacity at 09:00 minus the lead time, not before
    let at = |r, from, to| window(r, from, to).first().map(|p| p.min_capacity);
    assert_eq!(
        at(hr, "2026-01-05T08:47:00Z", "2026-01-05T08:48:00Z"),
        Some(2)
    );
    assert_eq!(
        at(hr, "2026-01-05T08:48:00Z", "2026-01-05T08:49:00Z"),
        Some(22)
    );
    // AND the capacity was in service when the peak began, so no minute of it breached
    let first = window(hr, "2026-01-05T09:00:00Z", "2026-01-05T09:01:00Z");
    assert!(first[0].in_service >= 20, "{:?}", first[0]);
    assert_eq!(hr.total.breach_minutes_in_peaks, 0);
    assert_eq!(hr.total.breach_minutes, 0);
    // WHILE target tracking alone breached for minutes after the jump
    assert!(tt.total.breach_minutes_in_peaks >= 8, "{:?}", tt.total);
}

#[test]
fn an_announced_peak_is_met_on_time_and_a_late_one_at_once() {
    // GIVEN 20 req/s that jumps to 200 req/s at 09:00 and at 11:00 for half an hour each, a plan
    // that knows neither, and a system that announces both (headroom.peak/v1): the first 15
    // minutes ahead, the second only 5 (7 minutes after it should have been pre-scaled)
    let plan = r#"
version = 1
[[target]]
resource_id = "endpoint/chat/variant/AllTraffic"
min_capacity = 2
max_capacity = 30
lead_time = "12m"
"#;
    let announce = |name: &str, sent: &str, starts: &str| {
        format!(
            "\n[[announcement]]\ntarget = \"endpoint/chat/variant/AllTraffic\"\nname = \"{name}\"\nsent = \"{sent}\"\nstarts = \"{starts}\"\nduration = \"30m\"\nfloor = 22\n"
        )
    };
    let world = format!(
        "{WORLD_CHAT}{}{}",
        announce("launch", "2026-01-05T08:45:00Z", "2026-01-05T09:00:00Z"),
        announce("late", "2026-01-05T10:55:00Z", "2026-01-05T11:00:00Z"),
    );
    let trace = trace("2026-01-05T08:00:00Z", 240, |m| {
        if (60..90).contains(&m) || (180..210).contains(&m) {
            200.0
        } else {
            20.0
        }
    });
    let results = run(&scenario(plan, &world, &trace));
    let tt = of(&results, Strategy::TargetTracking);
    let hr = of(&results, Strategy::Headroom);
    let breach = |r, from, to| breach_minutes(&window(r, from, to));

    // THEN both reached headroom, and the first raised MinCapacity when it arrived (its start
    // minus the lead time had not come yet, so it waited until 08:48)
    assert_eq!(hr.headroom.as_ref().map(|h| h.peak_events), Some(2));
    let min_at = |from, to| window(hr, from, to).first().map(|p| p.min_capacity);
    assert_eq!(
        min_at("2026-01-05T08:47:00Z", "2026-01-05T08:48:00Z"),
        Some(2)
    );
    assert_eq!(
        min_at("2026-01-05T08:48:00Z", "2026-01-05T08:49:00Z"),
        Some(22)
    );
    // AND the announced jump was served from its first minute
    assert_eq!(
        breach(hr, "2026-01-05T09:00:00Z", "2026-01-05T09:30:00Z"),
        0
    );
    // AND the late one applied at once on arrival: fewer breach minutes than target tracking's
    assert_eq!(
        min_at("2026-01-05T10:54:00Z", "2026-01-05T10:55:00Z"),
        Some(2)
    );
    assert_eq!(
        min_at("2026-01-05T10:55:00Z", "2026-01-05T10:56:00Z"),
        Some(22)
    );
    let late_hr = breach(hr, "2026-01-05T11:00:00Z", "2026-01-05T11:30:00Z");
    let late_tt = breach(tt, "2026-01-05T11:00:00Z", "2026-01-05T11:30:00Z");
    assert!(
        late_hr < late_tt,
        "headroom {late_hr}, target tracking {late_tt}"
    );
    // WHILE target tracking alone breached at the first jump too
    assert!(breach(tt, "2026-01-05T09:00:00Z", "2026-01-05T09:30:00Z") >= 8);
}

#[test]
fn a_burst_rebound_is_met_warm() {
    // GIVEN 60 req/s with a burst to 160 req/s at 12:00 and its rebound at 12:40, 8 minutes each
    let plan = r#"
version = 1
[[target]]
resource_id = "endpoint/chat/variant/AllTraffic"
min_capacity = 2
max_capacity = 40
  [target.guard]
  alarms = ["chat-burst"]
  hold = "45m"
  max_duration = "3h"
"#;
    let wave = |m: i64| (60..68).contains(&m) || (100..108).contains(&m);
    let trace = trace("2026-01-05T11:00:00Z", 180, |m| {
        if wave(m) {
            160.0
        } else {
            60.0
        }
    });
    let results = run(&scenario(plan, WORLD_CHAT, &trace));
    let tt = of(&results, Strategy::TargetTracking);
    let hr = of(&results, Strategy::Headroom);

    // THEN the first burst, unannounced, breaches either way
    let first = |r| breach_minutes(&window(r, "2026-01-05T12:00:00Z", "2026-01-05T12:12:00Z"));
    assert!(first(tt) > 0 && first(hr) > 0);
    // AND headroom held the capacity reached (the guard's floor) through the rebound
    let rebound = |r| window(r, "2026-01-05T12:40:00Z", "2026-01-05T12:50:00Z");
    assert!(
        rebound(hr).iter().all(|p| p.min_capacity >= 16),
        "{:?}",
        rebound(hr)
    );
    assert_eq!(
        breach_minutes(&rebound(hr)),
        0,
        "headroom met the rebound warm"
    );
    // WHILE target tracking had scaled in and met it cold
    assert!(breach_minutes(&rebound(tt)) >= 5, "{:?}", rebound(tt));
    let h = hr.headroom.as_ref().expect("headroom activity");
    assert!(h.alarm_events >= 2 && h.errors == 0, "{h:?}");
    // AND the guard let go afterwards: MinCapacity is back at the plan's base by the end
    let end = window(hr, "2026-01-05T13:55:00Z", "2026-01-05T14:00:00Z");
    assert!(end.iter().all(|p| p.min_capacity == 2), "{end:?}");
}

#[test]
fn a_backlog_is_picked_up_from_zero() {
    // GIVEN an idle async endpoint at MinCapacity 0 whose only policy tracks a backlog of 500 per
    // instance (no step policy): a batch of 100 requests never wakes it on its own
    let plan = r#"
version = 1
[[target]]
resource_id = "endpoint/batch/variant/AllTraffic"
min_capacity = 0
max_capacity = 5
  [target.wake]
  alarms = ["batch-backlog"]
  capacity = 1
  quiet_period = "15m"
"#;
    let world = r#"
[[target]]
resource_id = "endpoint/batch/variant/AllTraffic"
mode = "async"
capacity_per_instance = 1.0
latency_objective = "10m"
provisioning = "6m"
  [target.target_tracking]
  metric = "ApproximateBacklogSizePerInstance"
  target_value = 500.0

[[alarm]]
name = "batch-backlog"
target = "endpoint/batch/variant/AllTraffic"
metric = "ApproximateBacklogSize"
comparison = "GreaterThanOrEqualToThreshold"
threshold = 1.0
evaluation_periods = 1
"#;
    let trace = trace("2026-01-05T00:00:00Z", 180, |m| {
        if m == 60 {
            100.0 / 60.0
        } else {
            0.0
        }
    });
    let results = run(&scenario(plan, world, &trace));
    let tt = of(&results, Strategy::TargetTracking);
    let hr = of(&results, Strategy::Headroom);

    // THEN target tracking alone never leaves zero: the batch waits to the end of the trace
    assert!(tt.chart[0].iter().all(|p| p.in_service == 0));
    assert!(tt.total.breach_minutes > 90, "{:?}", tt.total);
    // WHILE headroom woke one instance on the alarm (visible 3 minutes after the batch, plus 6
    // minutes of provisioning) and served the batch within its objective
    let woke = window(hr, "2026-01-05T01:00:00Z", "2026-01-05T01:15:00Z");
    let first_in_service = woke.iter().find(|p| p.in_service > 0).map(|p| p.at);
    assert_eq!(
        first_in_service,
        Some(t("2026-01-05T01:09:00Z").timestamp())
    );
    assert_eq!(hr.total.breach_minutes, 0, "{:?}", hr.total);
    assert_eq!(hr.total.late_requests, 0);
    // AND it went back to zero after the quiet period
    let end = window(hr, "2026-01-05T02:30:00Z", "2026-01-05T03:00:00Z");
    assert!(
        end.iter().all(|p| p.in_service == 0 && p.min_capacity == 0),
        "{end:?}"
    );
}

/// An LLM variant scaled on the high-resolution ConcurrentRequestsPerModel: 8 s per request,
/// 4 in flight per instance at full load, tracking 3.
const LLM_WORLD: &str = r#"
seed = 3
[metrics]
high_resolution_delay = "20s"
[[target]]
resource_id = "endpoint/llm/variant/AllTraffic"
capacity_per_instance = 0.5
service_time = "8s"
latency_objective = "30s"
queue_bound = 200
provisioning = { min = "4m30s", max = "9m" }
  [target.target_tracking]
  metric = "ConcurrentRequestsPerModel"
  target_value = 3.0
"#;

/// The LLM variant's plan, without a forecast.
const LLM_BASE: &str = r#"
version = 1
[[target]]
resource_id = "endpoint/llm/variant/AllTraffic"
min_capacity = 2
max_capacity = 120
lead_time = "12m"
"#;

/// Five days of 5 req/s that jump to 40 req/s at 09:00 for an hour.
fn llm_trace() -> String {
    trace("2026-01-05T00:00:00Z", 5 * 1440, |m| {
        if (540..600).contains(&(m % 1440)) {
            40.0
        } else {
            5.0
        }
    })
}

#[test]
fn a_concurrency_forecast_prescales_a_daily_peak_from_requests_in_flight() {
    // GIVEN the LLM variant (tracked on ConcurrentRequestsPerModel), its five days with a daily
    // 09:00 peak, and a forecast that reads the requests in flight
    let world = LLM_WORLD;
    let plan = format!(
        "{LLM_BASE}  [target.forecast]\n  demand = \"concurrency\"\n  invocations_per_instance = 3.0\n  min_history = \"3d\"\n"
    );
    let trace = llm_trace();
    let results = run(&scenario(&plan, world, &trace));
    let tt = of(&results, Strategy::TargetTracking);
    let hr = of(&results, Strategy::Headroom);
    let activity = hr.headroom.as_ref().expect("headroom ran");
    assert_eq!(activity.errors, 0, "{:?}", activity.first_error);
    assert!(activity.forecast_refreshes > 0);
    // THEN on the fourth and fifth mornings (three days of history behind them) MinCapacity
    // stands at 40 req/s x 8 s / 3 in flight per instance = 107 before 09:00 (at 08:30 it
    // holds the quiet hours' 5 x 8 / 3 = 14: the lead time has not begun), and the peak that
    // target tracking breaches is met
    for day in ["2026-01-08", "2026-01-09"] {
        let at = |hm: &str| {
            window(hr, &format!("{day}T{hm}:00Z"), &format!("{day}T{hm}:59Z"))
                .first()
                .map(|p| p.min_capacity)
        };
        assert_eq!(at("08:30"), Some(14), "{day}");
        assert!(
            at("08:55").is_some_and(|m| m >= 107),
            "{day}: {:?}",
            at("08:55")
        );
        let peak = |r| {
            breach_minutes(&window(
                r,
                &format!("{day}T09:00:00Z"),
                &format!("{day}T10:00:00Z"),
            ))
        };
        assert!(
            peak(tt) >= 5,
            "{day}: target tracking breaches {}",
            peak(tt)
        );
        assert_eq!(peak(hr), 0, "{day}");
    }
}

#[test]
fn plan_suggest_forecasts_the_requests_in_flight_of_a_target_tracked_on_them() {
    // GIVEN the LLM variant tracked on ConcurrentRequestsPerModel, and a base plan without a
    // forecast
    let base = LLM_BASE;
    let trace_text = llm_trace();
    let trace = headroom_sim::Trace::parse("llm.csv", &trace_text).expect("trace");
    let world = headroom_sim::World::parse("world.toml", LLM_WORLD).expect("world");
    // WHEN suggested from its first four days
    let plan = headroom_sim::suggest::suggest_plan(
        ("base.toml", base),
        &trace,
        &world,
        Some(t("2026-01-09T00:00:00Z")),
    )
    .expect("suggestion");
    // THEN it forecasts the requests in flight at the policy's 3 per instance, not requests per
    // minute
    assert!(plan.contains("demand = \"concurrency\""), "{plan}");
    assert!(plan.contains("invocations_per_instance = 3.0"), "{plan}");
    // AND on the fifth morning MinCapacity stands at 40 x 8 / 3 = 107 before the peak, which
    // target tracking breaches and headroom meets
    let results = run(&scenario(&plan, LLM_WORLD, &trace_text));
    let hr = of(&results, Strategy::Headroom);
    let before = window(hr, "2026-01-09T08:55:00Z", "2026-01-09T08:55:59Z");
    assert!(
        before.first().is_some_and(|p| p.min_capacity >= 107),
        "{before:?}"
    );
    let peak = |r| breach_minutes(&window(r, "2026-01-09T09:00:00Z", "2026-01-09T10:00:00Z"));
    assert!(peak(of(&results, Strategy::TargetTracking)) >= 5);
    assert_eq!(peak(hr), 0);
}
