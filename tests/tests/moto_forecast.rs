//! The forecast end to end against moto: four days of a variant's `Invocations` at a daily rhythm,
//! put with PutMetricData; the tick function's hourly refresh reads them with GetMetricData
//! through the real CloudWatch adapter, learns the rhythm, and raises MinCapacity on a real AAS
//! target, with the forecast stored in a real DynamoDB table.
//!
//! aws-sdk-cloudwatch speaks Smithy RPC v2 CBOR, which moto does not serve (5.2.1 and 5.2.5 answer
//! its route with an HTML 404): the CloudWatch client goes through `headroom_tests::cbor_bridge`,
//! which hands the same requests to moto's AWS JSON protocol. The aggregation (Sum per 5-minute
//! period) is moto's.
//!
//! The same refresh's schedule verdicts open schedule reviews in the real table.

use chrono::{DateTime, Duration, DurationRound, Utc};
use headroom_adapters::{AasScalingTargets, CloudWatchDemand, DynamoReviews};
use headroom_core::deploy_ports::ScheduleReviewStore;
use headroom_core::forecast::schedule_review::Verdict;
use headroom_core::ids::ScalableTargetId;
use headroom_core::ports::{ScalingTargets, StateStore};
use headroom_core::review::ReviewStatus;
use headroom_core::usecase::reviews::{ack_schedule, list_schedule_reviews};
use headroom_core::usecase::Ports;
use headroom_core::Suspended;
use headroom_tests::cbor_bridge::CborBridge;
use headroom_tests::cloudwatch::{cloudwatch_client, put_invocations};
use headroom_tests::{create_endpoint, moto, sdk_config, table_with_plan, unique};
use headroom_tick::{handle, Outcome};

const TICK_EVENT: &str = include_str!("../../events/schedule/tick-rule.json");

/// Requests per 5-minute period: 600/min within an hour of `busy_at`'s time of day, else 60/min.
fn daily_rhythm(
    from: DateTime<Utc>,
    to: DateTime<Utc>,
    busy_at: DateTime<Utc>,
) -> Vec<(DateTime<Utc>, f64)> {
    let mut points = Vec::new();
    let mut at = from;
    while at < to {
        let offset = (at - busy_at).num_seconds().rem_euclid(86_400);
        let busy = !(3_600..86_400 - 3_600).contains(&offset);
        points.push((at, if busy { 600.0 * 5.0 } else { 60.0 * 5.0 }));
        at += Duration::minutes(5);
    }
    points
}

/// An endpoint in moto whose variant AAS holds at 1..`max`, CloudWatch through the CBOR bridge,
/// and the instants the tests use: a tick 2 minutes into the current 10-minute slot, and the
/// start of the four days of history before that slot.
struct World {
    config: aws_config::SdkConfig,
    bridge: CborBridge,
    cloudwatch: aws_sdk_cloudwatch::Client,
    aas: AasScalingTargets,
    id: ScalableTargetId,
    now: DateTime<Utc>,
    slot_now: DateTime<Utc>,
    from: DateTime<Utc>,
}

impl World {
    async fn new(prefix: &str, max: u32) -> Self {
        let config = sdk_config().await;
        let bridge = CborBridge::start(moto());
        let cloudwatch = cloudwatch_client(&config, &bridge);
        let sagemaker = aws_sdk_sagemaker::Client::new(&config);
        let endpoint = unique(prefix);
        create_endpoint(&sagemaker, &endpoint, 1)
            .await
            .expect("endpoint");
        let id = ScalableTargetId::variant(&endpoint, "AllTraffic").expect("id");
        let aas = AasScalingTargets::new(aws_sdk_applicationautoscaling::Client::new(&config));
        aas.register(&id, 1, max, Suspended::default())
            .await
            .expect("register");
        let now = Utc::now()
            .duration_trunc(Duration::minutes(10))
            .expect("trunc")
            + Duration::minutes(2);
        let slot_now = now.duration_trunc(Duration::minutes(10)).expect("trunc");
        Self {
            config,
            bridge,
            cloudwatch,
            aas,
            id,
            now,
            slot_now,
            from: slot_now - Duration::days(4),
        }
    }
}

#[tokio::test]
async fn the_tick_learns_the_daily_rhythm_from_cloudwatch_and_raises_min_capacity_on_aas() {
    // GIVEN an endpoint whose variant AAS holds at 1..40, and four days of its Invocations in
    // CloudWatch: 600 requests/min from an hour before this time of day to an hour after it,
    // 60 requests/min otherwise
    let World {
        config,
        bridge,
        cloudwatch,
        aas,
        id,
        now,
        slot_now,
        from,
    } = World::new("forecast", 40).await;
    put_invocations(&cloudwatch, &id, &daily_rhythm(from, slot_now, slot_now)).await;
    // AND a plan with a forecast at 30 requests/min per instance over 5 days of history
    let plan = format!(
        "version = 1\n[[target]]\nresource_id = \"{id}\"\nmin_capacity = 1\nmax_capacity = 40\n\
         lead_time = \"10m\"\n[target.forecast]\ninvocations_per_instance = 30.0\nhistory = \"5d\"\n"
    );
    let dynamo = aws_sdk_dynamodb::Client::new(&config);
    let (store, _) = table_with_plan(&dynamo, "moto-forecast.toml", &plan, now).await;
    let event: serde_json::Value = serde_json::from_str(TICK_EVENT).expect("json");
    let metrics = CloudWatchDemand::new(cloudwatch.clone());

    // WHEN the tick runs
    let out = handle(Ports::new(&aas, &store).with_demand(&metrics), &event, now)
        .await
        .expect("tick");
    let Outcome::Tick(report) = out else {
        panic!("a tick report")
    };
    assert!(report.errors.is_empty(), "{:?}", report.errors);

    // THEN one GetMetricData call read the history
    assert_eq!(bridge.calls("GetMetricData"), 1);
    // AND the stored forecast follows the rhythm: 600/min / 30 = 20 until an hour past this slot,
    // 60/min / 30 = 2 after it
    let states = store
        .load_states(std::slice::from_ref(&id))
        .await
        .expect("state");
    let forecast = states[0].1.forecast.clone().expect("a stored forecast");
    assert_eq!(forecast.unavailable, None, "{forecast:?}");
    assert!(forecast.history_days >= 4, "{forecast:?}");
    let quiet_from = slot_now + Duration::hours(1);
    let floors: Vec<(DateTime<Utc>, u32)> =
        forecast.slots.iter().map(|s| (s.start, s.floor)).collect();
    assert!(
        floors.iter().any(|(at, _)| *at < quiet_from)
            && floors.iter().any(|(at, _)| *at >= quiet_from),
        "the forecast covers both sides of the change: {floors:?}"
    );
    for (at, floor) in &floors {
        let expected = if *at < quiet_from { 20 } else { 2 };
        assert_eq!(*floor, expected, "slot {at}: {floors:?}");
    }
    // AND its claim is applied on AAS
    let observed = aas
        .describe(std::slice::from_ref(&id))
        .await
        .expect("describe");
    assert_eq!(observed[0].min, 20);
    let log = store
        .recent_log(&id, 5)
        .await
        .expect("log")
        .into_iter()
        .map(|e| e.body)
        .collect::<Vec<_>>();
    assert!(
        log.iter().any(|r| r.to_string().contains("forecast")),
        "the decision log names the forecast: {log:?}"
    );
}

#[tokio::test]
async fn a_wasteful_peak_opens_one_schedule_review_in_dynamodb_that_the_operator_acknowledges() {
    // GIVEN a variant whose demand is a flat 300 requests/min (10 instances at 30/min) for four
    // days, and a plan whose daily peak holds a floor of 40 for it
    // The bridge must outlive the CloudWatch client's calls: bound, not dropped.
    let World {
        config,
        bridge: _bridge,
        cloudwatch,
        aas,
        id,
        now,
        from,
        ..
    } = World::new("sched-review", 80).await;
    let flat: Vec<(DateTime<Utc>, f64)> = (0..4 * 288)
        .map(|i| (from + Duration::minutes(5 * i), 300.0 * 5.0))
        .collect();
    put_invocations(&cloudwatch, &id, &flat).await;
    let plan = format!(
        "version = 1\n[[target]]\nresource_id = \"{id}\"\nmin_capacity = 1\nmax_capacity = 80\n\
         lead_time = \"10m\"\n[target.forecast]\ninvocations_per_instance = 30.0\nhistory = \"5d\"\n\
         mode = \"forecast_only\"\n[[target.peak]]\nname = \"nightly\"\ncron = \"0 3 * * *\"\n\
         duration = \"1h\"\nfloor = 40\n"
    );
    let dynamo = aws_sdk_dynamodb::Client::new(&config);
    let (store, parsed) = table_with_plan(&dynamo, "moto-schedule.toml", &plan, now).await;
    let reviews = DynamoReviews::new(dynamo.clone(), store.table());
    let event: serde_json::Value = serde_json::from_str(TICK_EVENT).expect("json");
    let metrics = CloudWatchDemand::new(cloudwatch.clone());
    let ports = Ports::new(&aas, &store)
        .with_demand(&metrics)
        .with_reviews(&reviews);

    // WHEN the tick refreshes the forecast, and again an hour later (the next refresh)
    let Outcome::Tick(first) = handle(ports, &event, now).await.expect("tick") else {
        panic!("a tick report")
    };
    let Outcome::Tick(second) = handle(ports, &event, now + Duration::minutes(61))
        .await
        .expect("tick")
    else {
        panic!("a tick report")
    };

    // THEN the first opened one schedule review and the second wrote none
    assert_eq!(first.schedule_reviews.len(), 1, "{first:?}");
    assert_eq!(first.schedule_reviews[0].1, "opened");
    assert_eq!(
        second.forecasts_refreshed, 1,
        "the second tick refreshed: {second:?}"
    );
    assert!(second.schedule_reviews.is_empty(), "{second:?}");
    let stored = reviews.schedule_reviews(&id).await.expect("query");
    assert_eq!(stored.len(), 1, "{stored:?}");
    let review = &stored[0];
    assert_eq!(review.revision, 1, "written once");
    assert_eq!(review.verdict, Verdict::Wasteful, "{review:?}");
    assert_eq!(review.peak, "nightly");
    assert!(review.evidence.contains("floor 40"), "{}", review.evidence);
    // AND the refresh scored the nightly windows in the history: the floor of 40 was used a
    // quarter (10 needed), in the decision log and in the stored forecast
    let log = store
        .recent_log(&id, 10)
        .await
        .expect("log")
        .into_iter()
        .map(|e| e.body.to_string())
        .collect::<Vec<_>>();
    assert!(
        log.iter()
            .any(|r| r.contains("window peak:nightly") && r.contains("floor 40 used 25 %")),
        "the decision log scores the window: {log:?}"
    );
    let states = store
        .load_states(std::slice::from_ref(&id))
        .await
        .expect("state");
    let windows = &states[0].1.forecast.as_ref().expect("forecast").windows;
    assert!(windows.len() >= 3, "{windows:?}");
    assert!(
        windows
            .iter()
            .all(|w| w.floor_used_pct == 25 && w.minutes_above_floor == 0),
        "{windows:?}"
    );
    // AND the operator lists and acknowledges it
    let open = list_schedule_reviews(&reviews, &parsed, false)
        .await
        .expect("list");
    assert_eq!(open.len(), 1);
    let acked = ack_schedule(
        &reviews,
        &parsed,
        review.id.as_str(),
        "ana",
        "kept for the sale week",
        now + Duration::hours(2),
    )
    .await
    .expect("ack");
    assert_eq!(acked.status, ReviewStatus::Acked);
    assert!(list_schedule_reviews(&reviews, &parsed, false)
        .await
        .expect("list")
        .is_empty());
    let again = reviews
        .load_schedule_review(&id, &review.id)
        .await
        .expect("load")
        .expect("stored");
    assert_eq!((again.revision, again.status), (2, ReviewStatus::Acked));
}
