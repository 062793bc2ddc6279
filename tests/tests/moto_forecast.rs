//! The forecast end to end against moto: the tick function's hourly refresh turns four days of
//! demand into a forecast claim on a real AAS target, stored in a real DynamoDB table.
//!
//! moto serves CloudWatch only over the Query and JSON protocols, and aws-sdk-cloudwatch speaks
//! RPC v2 CBOR, so PutMetricData/GetMetricData cannot round-trip through moto: the demand comes
//! from the in-memory metrics port here, and the CloudWatch adapter is tested against
//! aws-smithy-mocks (shared/adapters/src/cloudwatch.rs).

use chrono::{Duration, DurationRound, Utc};
use headroom_adapters::AasScalingTargets;
use headroom_core::forecast::DemandSeries;
use headroom_core::ids::ScalableTargetId;
use headroom_core::memory::MemoryDemand;
use headroom_core::ports::{ScalingTargets, StateStore};
use headroom_core::usecase::Ports;
use headroom_core::Suspended;
use headroom_tests::{create_endpoint, sdk_config, table_with_plan, unique};
use headroom_tick::{handle, Outcome};

const TICK_EVENT: &str = include_str!("../../events/schedule/tick-rule.json");

#[tokio::test]
async fn the_tick_refreshes_the_forecast_and_raises_min_capacity_on_aas() {
    // GIVEN an endpoint whose variant AAS holds at 1..40, four days of 600 requests/min in
    // CloudWatch, and a plan with a forecast at 30 requests/min per instance
    let config = sdk_config().await;
    let sagemaker = aws_sdk_sagemaker::Client::new(&config);
    let endpoint = unique("forecast");
    create_endpoint(&sagemaker, &endpoint, 1)
        .await
        .expect("endpoint");
    let id = ScalableTargetId::variant(&endpoint, "AllTraffic").expect("id");
    let aas = AasScalingTargets::new(aws_sdk_applicationautoscaling::Client::new(&config));
    aas.register(&id, 1, 40, Suspended::default())
        .await
        .expect("register");
    let now = Utc::now()
        .duration_trunc(Duration::minutes(1))
        .expect("trunc");
    let from = now.duration_trunc(Duration::days(1)).expect("trunc") - Duration::days(4);
    let periods = ((now - from).num_minutes() / 5) as usize;
    let metrics = MemoryDemand::default().with(
        id.clone(),
        DemandSeries::new(from, 300, vec![600.0; periods]),
    );
    let plan = format!(
        "version = 1\n[[target]]\nresource_id = \"{id}\"\nmin_capacity = 1\nmax_capacity = 40\n\
         lead_time = \"10m\"\n[target.forecast]\ninvocations_per_instance = 30.0\n"
    );
    let dynamo = aws_sdk_dynamodb::Client::new(&config);
    let (store, _) = table_with_plan(&dynamo, "moto-forecast.toml", &plan, now).await;
    let event: serde_json::Value = serde_json::from_str(TICK_EVENT).expect("json");

    // WHEN the tick runs
    let out = handle(Ports::new(&aas, &store).with_demand(&metrics), &event, now)
        .await
        .expect("tick");
    let Outcome::Tick(report) = out else {
        panic!("a tick report")
    };
    assert!(report.errors.is_empty(), "{:?}", report.errors);

    // THEN the forecast is stored and its claim (600/min / 30 = 20) is applied
    let states = store
        .load_states(std::slice::from_ref(&id))
        .await
        .expect("state");
    let forecast = states[0].1.forecast.clone().expect("a stored forecast");
    assert_eq!(forecast.unavailable, None, "{forecast:?}");
    assert!(
        forecast.slots.iter().all(|s| s.floor == 20),
        "{:?}",
        forecast.slots
    );
    let observed = aas
        .describe(std::slice::from_ref(&id))
        .await
        .expect("describe");
    assert_eq!(observed[0].min, 20);
    let log = store.recent_log(&id, 5).await.expect("log");
    assert!(
        log.iter().any(|r| r.to_string().contains("forecast")),
        "the decision log names the forecast: {log:?}"
    );
}
