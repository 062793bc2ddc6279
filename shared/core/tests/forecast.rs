//! The forecast end to end over in-memory ports: refresh from a demand history, the claim it
//! makes a lead time ahead, forecast-only mode, too little history, and the walk-forward rule.

use chrono::{DateTime, Duration, Utc};
use headroom_core::claim::ClaimSource;
use headroom_core::decide::decide;
use headroom_core::forecast::{build_forecast, DemandSeries};
use headroom_core::memory::{block_on, MemoryDemand, MemoryScalingTargets, MemoryStateStore};
use headroom_core::usecase::forecast_refresh::{refresh_forecasts, RefreshReport};
use headroom_core::usecase::tick::tick_plan_observing;
use headroom_core::{parse_plan, Plan, ScalableTargetId, Span};

fn at(s: &str) -> DateTime<Utc> {
    s.parse().expect("instant")
}

fn id() -> ScalableTargetId {
    "endpoint/shop/variant/AllTraffic".parse().expect("id")
}

fn plan(forecast: &str) -> Plan {
    parse_plan(
        "test.toml",
        &format!(
            "version = 1\n[[target]]\nresource_id = \"endpoint/shop/variant/AllTraffic\"\nmin_capacity = 1\nmax_capacity = 40\nlead_time = \"15m\"\n[target.forecast]\ninvocations_per_instance = 30.0\n{forecast}"
        ),
    )
    .expect("valid plan")
}

/// The shop target registered at 1..40, no state yet, and `days` days of its [`history`].
fn shop_ports(days: usize) -> (MemoryScalingTargets, MemoryStateStore, MemoryDemand) {
    (
        MemoryScalingTargets::default().with_target(id(), 1, 40),
        MemoryStateStore::default(),
        MemoryDemand::default().with(id(), history(days)),
    )
}

/// Refreshes the shop target's forecast at `now` (it is due or not, as the state says).
fn refresh_shop(
    demand: &MemoryDemand,
    aas: &MemoryScalingTargets,
    store: &MemoryStateStore,
    plan: &Plan,
    now: DateTime<Utc>,
) -> RefreshReport {
    block_on(refresh_forecasts(demand, aas, store, plan, &[id()], now))
}

/// `days` days of 5-minute demand from Monday 2026-03-02: 60/min, 600/min from 09:00 to 11:00.
fn history(days: usize) -> DemandSeries {
    let values = (0..days * 288)
        .map(|i| {
            let minute = (i % 288) * 5;
            if (540..660).contains(&minute) {
                600.0
            } else {
                60.0
            }
        })
        .collect();
    DemandSeries::new(at("2026-03-02T00:00:00Z"), 300, values)
}

#[test]
fn the_forecast_claims_the_busy_slot_a_lead_time_ahead() {
    // GIVEN four weekdays of history and a refresh at 08:00 on the fifth (Friday)
    let plan = plan("");
    let policy = plan.targets[0].forecast.clone().expect("forecast");
    let f = build_forecast(
        &policy,
        &history(5),
        Span::minutes(15),
        at("2026-03-06T08:00:00Z"),
        None,
    );
    assert_eq!(f.unavailable, None);
    assert!(f.same_kind);
    // THEN the 09:00 slot asks for 600/min at 30/min per instance = 20 (the margin is 1: every
    // earlier day was exactly as forecast)
    assert_eq!(f.margin, 1.0);
    let nine = f.slot_at(at("2026-03-06T09:00:00Z")).expect("09:00 slot");
    assert_eq!(nine.floor, 20);
    // and the slots reach past the next refresh plus the lead time
    assert!(f.horizon().expect("slots") >= at("2026-03-06T09:25:00Z"));

    let target = &plan.targets[0];
    let mut state = headroom_core::TargetState {
        forecast: Some(std::sync::Arc::new(f)),
        ..Default::default()
    };
    // 08:40: not yet live. 08:45 (09:00 minus the 15-minute lead time): 20.
    let before = decide(
        target,
        None,
        &state,
        Span::minutes(15),
        at("2026-03-06T08:40:00Z"),
    );
    assert_eq!(before.desired.min, 2, "{:?}", before.reasons);
    let live = decide(
        target,
        None,
        &state,
        Span::minutes(15),
        at("2026-03-06T08:45:00Z"),
    );
    assert_eq!(live.desired.min, 20);
    assert_eq!(live.winner, Some(ClaimSource::Forecast));
    assert!(
        !live.desired.suspend_scale_in,
        "the forecast never suspends scale-in"
    );
    // Forecast-only mode records the same forecast and changes nothing.
    let only = parse_plan_target("mode = \"forecast_only\"");
    state.claims.clear();
    let d = decide(
        &only,
        None,
        &state,
        Span::minutes(15),
        at("2026-03-06T08:45:00Z"),
    );
    assert_eq!(d.winner, None);
    assert_eq!(d.desired.min, 1);
}

#[test]
fn a_day_running_above_its_estimate_raises_the_rest_of_today_and_not_tomorrow() {
    // GIVEN four usual weekdays, then a Friday whose morning runs 15 % above them from 08:00
    let plan = plan("");
    let policy = plan.targets[0].forecast.clone().expect("forecast");
    let busy_friday = |from: usize| {
        let mut h = history(5);
        for v in h.values.iter_mut().skip(4 * 288 + from / 5) {
            *v *= 1.15;
        }
        h
    };
    // WHEN the forecast is refreshed at 10:00
    let f = build_forecast(
        &policy,
        &busy_friday(8 * 60),
        Span::minutes(15),
        at("2026-03-06T10:00:00Z"),
        None,
    );
    // THEN the hour before (all of it above) sets today's level, and the 10:30 slot asks for
    // 600 x 1.15 / 30 = 23 instances instead of 20; the margin stays 1
    assert!((f.level - 1.15).abs() < 1e-3, "level {}", f.level);
    assert_eq!(f.margin, 1.0);
    assert_eq!(
        f.slot_at(at("2026-03-06T10:30:00Z")).expect("slot").floor,
        23
    );

    // AND a refresh at 23:30 after a busy evening raises today's last slot (60 x 1.15 / 30 ->
    // 3) but not Saturday's first (2), which belongs to a day not yet begun
    let f = build_forecast(
        &policy,
        &busy_friday(22 * 60),
        Span::minutes(15),
        at("2026-03-06T23:30:00Z"),
        None,
    );
    assert!(f.level > 1.1, "level {}", f.level);
    assert_eq!(
        f.slot_at(at("2026-03-06T23:50:00Z")).expect("slot").floor,
        3
    );
    assert_eq!(
        f.slot_at(at("2026-03-07T00:10:00Z")).expect("slot").floor,
        2
    );

    // AND the stored level is named in the claim's reason
    let state = headroom_core::TargetState {
        forecast: Some(std::sync::Arc::new(f)),
        ..Default::default()
    };
    let d = decide(
        &plan.targets[0],
        None,
        &state,
        Span::minutes(15),
        at("2026-03-06T23:45:00Z"),
    );
    assert_eq!(d.winner, Some(ClaimSource::Forecast));
    assert!(
        d.reasons.iter().any(|r| r.contains("today's level x1.1")),
        "{:?}",
        d.reasons
    );
}

#[test]
fn a_first_weekend_borrowing_the_weekdays_is_levelled_down_to_what_it_shows() {
    // GIVEN five weekdays at 60/min (600 from 09:00 to 11:00) and a Saturday at a fifth of that
    let plan = plan("");
    let policy = plan.targets[0].forecast.clone().expect("forecast");
    let mut h = history(6);
    for v in h.values.iter_mut().skip(5 * 288) {
        *v *= 0.2;
    }
    // WHEN the Saturday is refreshed at 08:00, estimated from the weekdays (no weekend day yet)
    let f = build_forecast(
        &policy,
        &h,
        Span::minutes(15),
        at("2026-03-07T08:00:00Z"),
        None,
    );
    assert!(!f.same_kind);
    // THEN its level goes down to half (a weekday-estimated day stays within 0.8): the 09:00
    // slot asks for 10 instances, not the weekdays' 20 nor 16
    assert!((f.level - 0.5).abs() < 1e-9, "level {}", f.level);
    let nine = f
        .slots
        .iter()
        .find(|s| s.start == at("2026-03-07T09:00:00Z"))
        .expect("the 09:00 slot");
    assert_eq!(nine.floor, 10);
    // AND a weekday running as low keeps the usual bound
    let mut quiet_friday = history(5);
    for v in quiet_friday.values.iter_mut().skip(4 * 288) {
        *v *= 0.2;
    }
    let f = build_forecast(
        &policy,
        &quiet_friday,
        Span::minutes(15),
        at("2026-03-06T08:00:00Z"),
        None,
    );
    assert!(f.same_kind);
    assert!((f.level - 0.8).abs() < 1e-9, "level {}", f.level);
}

#[test]
fn todays_level_reads_only_the_complete_slots_before_the_refresh() {
    // GIVEN usual weekdays, and a Friday that turns 15 % busier at some minute
    let plan = plan("");
    let policy = plan.targets[0].forecast.clone().expect("forecast");
    let busy_from = |minute: usize| {
        let mut h = history(5);
        for v in h.values.iter_mut().skip(4 * 288 + minute / 5) {
            *v *= 1.15;
        }
        h
    };
    let level_at = |h: &DemandSeries, now: &str| {
        build_forecast(&policy, h, Span::minutes(15), at(now), None).level
    };
    // THEN what comes after the refresh does not move the level
    assert_eq!(level_at(&busy_from(10 * 60), "2026-03-06T10:02:00Z"), 1.0);
    // AND neither does the slot the refresh falls in: busy from 09:20, the complete slots of
    // the hour before 10:07 are 4 of 6 busy (not three quarters); with the running 10:00 slot
    // they would be 5 of 6
    assert_eq!(
        level_at(&busy_from(9 * 60 + 20), "2026-03-06T10:07:00Z"),
        1.0
    );
    // (a whole hour of it before the refresh does)
    assert!(level_at(&busy_from(9 * 60), "2026-03-06T10:02:00Z") > 1.1);
}

#[test]
fn the_margin_is_learned_from_the_levelled_estimates() {
    // GIVEN weekdays alternating between a level of 100 and 120 all day (Mon 100, Tue 120, ...),
    // which the seasonal estimate cannot know: Thursday came in 20 % above its estimate and
    // Friday morning 17 % below
    let plan = plan("");
    let policy = plan.targets[0].forecast.clone().expect("forecast");
    let values = (0..5 * 288)
        .map(|i| if (i / 288) % 2 == 0 { 100.0 } else { 120.0 })
        .collect();
    let h = DemandSeries::new(at("2026-03-02T00:00:00Z"), 300, values);
    // WHEN the forecast is refreshed at Friday noon
    let f = build_forecast(
        &policy,
        &h,
        Span::minutes(15),
        at("2026-03-06T12:00:00Z"),
        None,
    );
    // THEN today's level has caught Friday's (100 against an estimate of about 111, between
    // the two levels, the newer 120s weighing more), and the margin stays 1: each past slot's
    // error is measured against its levelled estimate, as a refresh then would have made it.
    // (Against the bare estimates Thursday's 1.2 would carry most of the weight, and the margin
    // would be above 1.) So the 12:30 slot expects 100, not 111.
    assert!(f.level < 0.95, "level {}", f.level);
    assert_eq!(f.margin, 1.0);
    let half_past = f.slot_at(at("2026-03-06T12:30:00Z")).expect("slot");
    assert!(
        (half_past.demand - 100.0).abs() < 0.1,
        "{}",
        half_past.demand
    );
}

#[test]
fn the_first_weeks_margin_is_about_the_margin_a_month_learns() {
    // GIVEN the same busy but steady traffic for four weeks: every 5 minutes a draw of
    // 100 +- 30 % (a fixed pseudo-random sequence), weekends alike
    let plan = plan("");
    let policy = plan.targets[0].forecast.clone().expect("forecast");
    let mut x: u64 = 12345;
    let values = (0..28 * 288)
        .map(|_| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            100.0 * (0.7 + 0.6 * ((x >> 33) as f32 / (1u64 << 31) as f32))
        })
        .collect();
    let h = DemandSeries::new(at("2026-03-02T00:00:00Z"), 300, values);
    let margin_at =
        |now: &str| build_forecast(&policy, &h, Span::minutes(15), at(now), None).margin;
    let week = margin_at("2026-03-09T12:00:00Z");
    let month = margin_at("2026-03-30T12:00:00Z");
    // THEN the margin learned after one week is the one four weeks learn (1.0329 and 1.0327):
    // each judged day is estimated from the other days around it, as today's is from the
    // whole history. (Judged from the days before it only, the first week's days come from
    // three to six days and err more: 1.0378 against 1.0346.)
    assert!((week - month).abs() < 0.002, "week {week}, month {month}");
}

fn parse_plan_target(extra: &str) -> headroom_core::TargetPlan {
    plan(extra).targets.remove(0)
}

#[test]
fn too_little_history_gives_no_forecast_and_says_why() {
    let plan = plan("");
    let policy = plan.targets[0].forecast.clone().expect("forecast");
    let f = build_forecast(
        &policy,
        &history(2),
        Span::minutes(15),
        at("2026-03-04T08:00:00Z"),
        None,
    );
    assert!(f.slots.is_empty());
    let why = f.unavailable.expect("a reason");
    assert!(why.contains("only 2 whole day(s)"), "{why}");
}

#[test]
fn the_forecast_never_reads_history_after_now() {
    // GIVEN the same history, but with a 10x surge on Friday from 09:00 (after "now", 08:00)
    let mut h = history(5);
    let friday_nine = 4 * 288 + 108;
    for v in &mut h.values[friday_nine..friday_nine + 24] {
        *v = 6000.0;
    }
    let plan = plan("");
    let policy = plan.targets[0].forecast.clone().expect("forecast");
    let now = at("2026-03-06T08:00:00Z");
    let a = build_forecast(&policy, &history(5), Span::minutes(15), now, None);
    let b = build_forecast(&policy, &h, Span::minutes(15), now, None);
    // THEN the forecast made at 08:00 is the same: the surge lies in its future
    assert_eq!(a, b);
}

#[test]
fn the_tick_finds_due_forecasts_and_the_refresh_applies_them_once_an_hour() {
    let plan = plan("");
    let (aas, store, demand) = shop_ports(5);
    let now = at("2026-03-06T08:50:00Z");

    // The first tick finds the forecast due; the refresh reads once and applies the claim.
    let report = block_on(tick_plan_observing(
        &aas,
        &store,
        None::<&()>,
        &plan,
        1,
        now,
    ));
    assert_eq!(report.forecast_due, vec![id()]);
    let refresh = block_on(refresh_forecasts(
        &demand,
        &aas,
        &store,
        &plan,
        &report.forecast_due,
        now,
    ));
    assert_eq!(refresh.metric_calls, 1);
    assert_eq!(refresh.refreshed, vec![id().to_string()]);
    assert_eq!(aas.get(&id()).map(|o| o.min), Some(20));

    // Within the hour nothing is due, and a repeated refresh changes nothing.
    let later = block_on(tick_plan_observing(
        &aas,
        &store,
        None::<&()>,
        &plan,
        1,
        now + Duration::minutes(30),
    ));
    assert!(later.forecast_due.is_empty());
    let state = store.state(&id());
    let again = refresh_shop(&demand, &aas, &store, &plan, now);
    assert!(again.errors.is_empty());
    assert_eq!(store.state(&id()).forecast, state.forecast);
    // An hour later it is due again.
    let hour = block_on(tick_plan_observing(
        &aas,
        &store,
        None::<&()>,
        &plan,
        1,
        now + Duration::minutes(60),
    ));
    assert_eq!(hour.forecast_due, vec![id()]);
}

#[test]
fn a_refresh_at_a_clock_with_seconds_reads_a_window_on_period_boundaries() {
    // GIVEN a tick whose clock reads 08:50:03 (Lambda's clock is never on the minute)
    let plan = plan("");
    let (aas, store, demand) = shop_ports(5);
    let now = at("2026-03-06T08:50:03Z");
    // WHEN the forecast is refreshed
    let refresh = refresh_shop(&demand, &aas, &store, &plan, now);
    assert!(refresh.errors.is_empty(), "{:?}", refresh.errors);
    // THEN both ends of the window read are on 5-minute boundaries (CloudWatch labels each
    // datapoint with its period's start, and the series counts slots from the window's start),
    // and the window ends before the period 08:45..08:50, whose last minutes may not be
    // published yet (it would read low)
    let windows = demand.windows.lock().unwrap().clone();
    assert_eq!(
        windows,
        vec![(
            at("2026-03-06T08:45:00Z") - Duration::days(14),
            at("2026-03-06T08:45:00Z")
        )]
    );
}

#[test]
fn every_slot_is_scored_once_though_each_refresh_reads_only_what_is_published() {
    // GIVEN a week of history and a forecast refreshed every hour on the hour, each refresh
    // reading up to five minutes before it (the newest period may not be published yet)
    let plan = plan("");
    let (aas, store, demand) = shop_ports(7);
    let start = at("2026-03-06T00:00:00Z");
    for hour in 0..=6 {
        let refresh = refresh_shop(&demand, &aas, &store, &plan, start + Duration::hours(hour));
        assert_eq!(refresh.refreshed, vec![id().to_string()], "{hour}");
    }
    // THEN every 10-minute slot from the first forecast's first (00:00) to the last the history
    // covers (05:40..05:50) was scored, the one before each refresh (00:50..01:00, whose last
    // minutes the 01:00 refresh could not read) included
    let score = store.state(&id()).forecast.expect("forecast").score.clone();
    assert_eq!(score.since, Some(at("2026-03-06T00:00:00Z")));
    assert_eq!(score.scored_until, Some(at("2026-03-06T05:50:00Z")));
    assert_eq!(score.slots, 35);
    // AND the slot the last read did not cover waits beside the forecast, claiming nothing: the
    // forecast's own slots begin at the refresh
    let f = store.state(&id()).forecast.expect("forecast");
    assert_eq!(
        f.slots.first().map(|s| s.start),
        Some(at("2026-03-06T06:00:00Z"))
    );
    let unscored: Vec<_> = f.unscored.iter().map(|s| s.start).collect();
    assert_eq!(unscored, vec![at("2026-03-06T05:50:00Z")]);
}

#[test]
fn a_refresh_that_fails_for_good_is_stored_shown_and_tried_again_an_hour_later_not_each_minute() {
    use headroom_core::ports::ErrorClass;
    let plan = plan("");
    let (aas, store, demand) = shop_ports(5);
    let now = at("2026-03-06T08:50:00Z");
    let due_at = |t: DateTime<Utc>| {
        block_on(tick_plan_observing(&aas, &store, None::<&()>, &plan, 1, t)).forecast_due
    };
    let refresh = |t: DateTime<Utc>| refresh_shop(&demand, &aas, &store, &plan, t);

    // GIVEN CloudWatch throttling: nothing is stored, and the next minute tries again
    demand.fail_with(Some((ErrorClass::Retryable, "ThrottlingException")));
    let throttled = refresh(now);
    assert!(throttled.errors[0].retryable);
    assert!(store.state(&id()).forecast.is_none());
    assert_eq!(due_at(now + Duration::minutes(1)), vec![id()]);

    // WHEN the role lacks cloudwatch:GetMetricData (AccessDenied, permanent)
    demand.fail_with(Some((ErrorClass::Permanent, "AccessDeniedException")));
    let denied = refresh(now + Duration::minutes(1));
    // THEN the failure is stored with its code, status shows it, and no tick within the hour
    // asks again (each one would have read the history once more)
    assert_eq!(
        denied.errors[0].code.as_deref(),
        Some("AccessDeniedException")
    );
    let stored = store
        .state(&id())
        .forecast
        .expect("a forecast marked with the failure");
    let failed = stored.refresh_failed.clone().expect("refresh_failed");
    assert_eq!(failed.code.as_deref(), Some("AccessDeniedException"));
    assert!(stored.slots.is_empty() && stored.unavailable.is_some());
    let policy = plan.targets[0].forecast.clone().expect("forecast");
    let summary = headroom_core::forecast::summary::summarize(
        &policy,
        Some(&stored),
        Span::minutes(15),
        now + Duration::minutes(2),
    );
    assert_eq!(summary.refresh_failed, Some(failed));
    for minutes in [2, 30, 60] {
        assert!(
            due_at(now + Duration::minutes(minutes)).is_empty(),
            "{minutes}"
        );
    }
    assert_eq!(due_at(now + Duration::minutes(61)), vec![id()]);

    // AND once the permission is there, the next refresh builds the forecast without the mark
    demand.fail_with(None);
    let fixed = refresh(now + Duration::minutes(61));
    assert!(fixed.errors.is_empty(), "{:?}", fixed.errors);
    let forecast = store.state(&id()).forecast.expect("forecast");
    assert!(forecast.refresh_failed.is_none() && !forecast.slots.is_empty());

    // AND a later failure for good keeps the forecast's slots (its claim stands) and waits an
    // hour from the failure, not from the forecast
    demand.fail_with(Some((ErrorClass::Permanent, "AccessDeniedException")));
    refresh(now + Duration::minutes(121));
    let kept = store.state(&id()).forecast.expect("forecast");
    assert_eq!(kept.slots, forecast.slots);
    assert_eq!(kept.computed_at, forecast.computed_at);
    assert!(kept.refresh_failed.is_some());
    assert!(due_at(now + Duration::minutes(122)).is_empty());
    assert_eq!(due_at(now + Duration::minutes(181)), vec![id()]);
}

#[test]
fn a_state_stored_before_the_forecast_existed_still_loads() {
    let old = r#"{"version":3,"claims":[],"pause":null,"last_applied":{"min":2,"max":8,"suspend_scale_in":false},"drift":null,"seen_events":[],"alarm_marks":{},"high_water":null,"wake_pending_since":null,"wake_latencies":[],"lead_samples":[],"model":null}"#;
    let s: headroom_core::TargetState = serde_json::from_str(old).expect("old state loads");
    assert_eq!((s.version, s.forecast), (3, None));
}

/// Refreshes `n` targets with forecast section extra `extra`, none with history; returns the
/// GetMetricData calls made.
/// `n` forecasting targets (`extra(i)` appended to the i-th's forecast section), registered
/// at 1..40.
fn many_targets(
    n: usize,
    extra: impl Fn(usize) -> &'static str,
) -> (Plan, Vec<ScalableTargetId>, MemoryScalingTargets) {
    let mut text = String::from("version = 1\n");
    let ids: Vec<ScalableTargetId> = (0..n)
        .map(|i| {
            let id: ScalableTargetId = format!("endpoint/shop-{i}/variant/AllTraffic")
                .parse()
                .expect("id");
            text.push_str(&format!(
                "[[target]]\nresource_id = \"{id}\"\nmin_capacity = 1\nmax_capacity = 40\n[target.forecast]\ninvocations_per_instance = 30.0\n{}",
                extra(i)
            ));
            id
        })
        .collect();
    let plan = parse_plan("many.toml", &text).expect("plan");
    let aas = ids.iter().fold(MemoryScalingTargets::default(), |a, id| {
        a.with_target(id.clone(), 1, 40)
    });
    (plan, ids, aas)
}

fn refresh_calls(n: usize, extra: impl Fn(usize) -> &'static str) -> usize {
    let (plan, ids, aas) = many_targets(n, extra);
    let demand = MemoryDemand::default();
    let store = MemoryStateStore::default();
    let now = at("2026-03-06T08:50:00Z");
    let report = block_on(refresh_forecasts(&demand, &aas, &store, &plan, &ids, now));
    assert_eq!(report.unavailable.len(), n);
    assert_eq!(
        demand.calls.load(std::sync::atomic::Ordering::Relaxed),
        report.metric_calls
    );
    report.metric_calls
}

#[test]
fn a_concurrency_refresh_over_500_targets_makes_84_metric_calls() {
    // A concurrency demand is four queries a target (three metrics and the expression), each
    // counted at 4,032 datapoints: 6 targets a call (100,800 / 16,128), so 500 take 84 calls.
    assert_eq!(refresh_calls(500, |_| "demand = \"concurrency\"\n"), 84);
    // Mixed with invocation targets, each kind chunks on its own: 250 / 6 -> 42, 250 / 25 -> 10.
    let mixed = refresh_calls(500, |i| {
        if i % 2 == 0 {
            "demand = \"concurrency\"\n"
        } else {
            ""
        }
    });
    assert_eq!(mixed, 52);
}

#[test]
fn a_concurrency_forecast_is_refused_on_a_serverless_target() {
    let err = parse_plan(
        "test.toml",
        "version = 1\n[[target]]\nresource_id = \"endpoint/sls/variant/AllTraffic\"\ndimension = \"provisioned_concurrency\"\nmin_capacity = 1\nmax_capacity = 4\n[target.forecast]\ninvocations_per_instance = 30.0\ndemand = \"concurrency\"\n",
    )
    .expect_err("invalid");
    assert!(err.to_string().contains("does not publish"), "{err}");
}

#[test]
fn a_one_minute_forecast_reads_at_most_the_15_days_cloudwatch_keeps() {
    let target = |keys: &str| {
        format!("version = 1\n[[target]]\nresource_id = \"endpoint/e/variant/v\"\nmin_capacity = 1\nmax_capacity = 4\n[target.forecast]\ninvocations_per_instance = 30.0\n{keys}")
    };
    // The default 14 days fit; 15 days are the edge; 16 are refused, naming both fixes.
    for ok in [
        "resolution = \"1m\"\n",
        "resolution = \"1m\"\nhistory = \"15d\"\n",
        "history = \"30d\"\n",
    ] {
        parse_plan("test.toml", &target(ok)).unwrap_or_else(|e| panic!("{ok}: {e}"));
    }
    let err = parse_plan(
        "test.toml",
        &target("resolution = \"1m\"\nhistory = \"16d\"\n"),
    )
    .expect_err("16 days of minutes are not kept");
    let text = err.to_string();
    assert!(text.contains("resolution"), "{text}");
    assert!(
        text.contains("15 days") && text.contains("shorten history or read 5m"),
        "{text}"
    );
}

#[test]
fn a_tick_refreshes_at_most_a_hundred_forecasts_and_the_next_tick_the_rest() {
    use headroom_core::usecase::forecast_refresh::MAX_REFRESHES_PER_TICK;
    use headroom_core::usecase::tick::tick_with_plan;
    use headroom_core::usecase::Ports;
    // GIVEN 150 forecasting targets, all due (never refreshed)
    let n = 150;
    let (plan, ids, aas) = many_targets(n, |_| "");
    let demand = MemoryDemand::default();
    let store = MemoryStateStore::default();
    let with_forecast = || {
        ids.iter()
            .filter(|id| store.state(id).forecast.is_some())
            .count()
    };
    let now = at("2026-03-06T08:50:00Z");
    // WHEN the tick runs
    let ports = Ports::new(&aas, &store).with_demand(&demand);
    block_on(tick_with_plan(ports, &plan, 1, now));
    // THEN a hundred are refreshed (in 4 GetMetricData calls of 25), the rest by the next tick
    assert_eq!(with_forecast(), MAX_REFRESHES_PER_TICK);
    assert_eq!(demand.calls.load(std::sync::atomic::Ordering::Relaxed), 4);
    block_on(tick_with_plan(ports, &plan, 1, now + Duration::minutes(1)));
    assert_eq!(with_forecast(), n);
    assert_eq!(demand.calls.load(std::sync::atomic::Ordering::Relaxed), 6);
}

#[test]
fn a_refresh_over_500_targets_makes_20_metric_calls() {
    // 14 days at 5 minutes is 4,032 datapoints a target; GetMetricData returns at most 100,800
    // a call, so 25 targets share one call: 500 targets take 20 calls, once an hour.
    assert_eq!(refresh_calls(500, |_| ""), 20);
}

#[test]
fn a_one_minute_refresh_over_500_targets_makes_100_metric_calls() {
    // 14 days at 1 minute is 20,160 datapoints a target: 5 targets a call, 100 calls an hour.
    assert_eq!(refresh_calls(500, |_| "resolution = \"1m\"\n"), 100);
}

#[test]
fn a_backlog_forecast_reads_the_backlog_and_holds_a_backlog_per_instance() {
    // GIVEN an async endpoint whose backlog stood at 600 requests from 09:00 to 11:00 and 60
    // otherwise, and a forecast of it at 30 waiting requests per instance
    let plan = plan("demand = \"backlog\"\n");
    assert_eq!(
        plan.targets[0].forecast.as_ref().map(|f| f.demand),
        Some(headroom_core::plan::DemandKind::Backlog)
    );
    let (aas, store, demand) = shop_ports(5);
    let now = at("2026-03-06T08:50:00Z");
    // WHEN the refresh runs
    let refresh = refresh_shop(&demand, &aas, &store, &plan, now);
    // THEN it asked for the backlog, and the claim is 600 / 30 instances
    assert!(refresh.errors.is_empty(), "{:?}", refresh.errors);
    let asked = demand.queries.lock().expect("lock").clone();
    assert_eq!(asked.len(), 1);
    assert_eq!(asked[0].kind, headroom_core::plan::DemandKind::Backlog);
    assert_eq!(aas.get(&id()).map(|o| o.min), Some(20));
}

#[test]
fn a_backlog_forecast_on_an_inference_component_is_refused() {
    let err = parse_plan(
        "test.toml",
        "version = 1\n[[target]]\nresource_id = \"inference-component/chat-ic\"\nmin_capacity = 0\nmax_capacity = 4\n[target.forecast]\ninvocations_per_instance = 30.0\ndemand = \"backlog\"\n",
    )
    .expect_err("invalid");
    assert!(err.to_string().contains("forecast.demand"), "{err}");
    let err = parse_plan(
        "test.toml",
        "version = 1\n[[target]]\nresource_id = \"endpoint/e/variant/v\"\nmin_capacity = 0\nmax_capacity = 4\n[target.forecast]\ninvocations_per_instance = 30.0\ndemand = \"queue\"\n",
    )
    .expect_err("invalid");
    assert!(
        err.to_string()
            .contains("use invocations, concurrency or backlog"),
        "{err}"
    );
}

#[test]
fn a_history_shorter_than_the_default_min_history_says_the_default_is_the_problem() {
    let plan = |extra: &str| {
        parse_plan(
            "test.toml",
            &format!("version = 1\n[[target]]\nresource_id = \"endpoint/e/variant/v\"\nmin_capacity = 1\nmax_capacity = 4\n[target.forecast]\ninvocations_per_instance = 30.0\nhistory = \"1d\"\n{extra}"),
        )
    };
    let err = plan("")
        .expect_err("the default 3d is over the history")
        .to_string();
    assert!(err.contains("3d (the default: set min_history"), "{err}");
    let err = plan("min_history = \"2d\"\n")
        .expect_err("invalid")
        .to_string();
    assert!(
        err.contains("2d must be at least 1d") && !err.contains("the default"),
        "{err}"
    );
    plan("min_history = \"1d\"\n").expect("valid");
}

/// The refresh's schedule review of a peak at floor 10 under the 20 instances the window needs,
/// with the forecast section `forecast` (a mode line or nothing).
fn reviewed_beside(forecast: &str) -> headroom_core::forecast::schedule_review::Verdict {
    let plan = parse_plan(
        "test.toml",
        &format!(
            "version = 1\n[[target]]\nresource_id = \"endpoint/shop/variant/AllTraffic\"\nmin_capacity = 1\nmax_capacity = 40\nlead_time = \"15m\"\n[[target.peak]]\nname = \"morning\"\ncron = \"0 9 * * MON-FRI\"\nduration = \"2h\"\nfloor = 10\n[target.forecast]\ninvocations_per_instance = 30.0\n{forecast}"
        ),
    )
    .expect("valid plan");
    let (aas, store, demand) = shop_ports(7);
    let refresh = refresh_shop(&demand, &aas, &store, &plan, at("2026-03-09T00:00:00Z"));
    assert_eq!(refresh.verdicts.len(), 1, "{refresh:?}");
    refresh.verdicts[0].1[0].verdict
}

#[test]
fn a_peak_is_reviewed_beside_an_active_forecast_and_alone_in_forecast_only_mode() {
    use headroom_core::forecast::schedule_review::Verdict;
    // The active forecast claims the 20 instances: the peak under it is not short.
    assert_eq!(reviewed_beside(""), Verdict::Ok);
    // In forecast_only mode the forecast claims nothing: the peak alone is.
    assert_eq!(
        reviewed_beside("mode = \"forecast_only\""),
        Verdict::Insufficient
    );
}
