//! The tick function end to end against moto: a plan with a one-time peak starting in 20 minutes
//! and a lead time of 25 minutes, a real SageMaker endpoint and AAS target in moto, the tick
//! handler driven twice with the sample scheduled event from `events/`.

use std::collections::BTreeMap;

use chrono::{Duration, SecondsFormat, SubsecRound, Utc};
use headroom_adapters::AasScalingTargets;
use headroom_core::ids::ScalableTargetId;
use headroom_core::ports::{ScalingTargets, StateStore};
use headroom_core::usecase::Ports;
use headroom_core::Suspended;
use headroom_tests::{
    create_endpoint, raw_scalable_target, sdk_config, table_with_plan, unique, CallCounter,
};
use headroom_tick::{handle, Outcome};

const TICK_EVENT: &str = include_str!("../../events/schedule/tick-rule.json");

#[tokio::test]
async fn two_ticks_raise_min_capacity_once_before_the_peak_and_log_why() {
    // GIVEN an endpoint in moto whose variant AAS holds at min 1, max 8
    let config = sdk_config().await;
    let counter = CallCounter::default();
    let aas_client = counter.aas_client(&config);
    let dynamo = counter.dynamo_client(&config);
    let sagemaker = aws_sdk_sagemaker::Client::new(&config);
    let endpoint = unique("tick");
    create_endpoint(&sagemaker, &endpoint, 1)
        .await
        .expect("create the endpoint in moto");
    let id = ScalableTargetId::variant(&endpoint, "AllTraffic").expect("valid id");
    let aas = AasScalingTargets::new(aas_client);
    aas.register(&id, 1, 8, Suspended::default())
        .await
        .expect("register the target");

    // AND a stored plan: base 1..8, lead time 25m, a one-time peak 20 minutes from now, 1h, floor 5
    let now = Utc::now().trunc_subsecs(0);
    let peak_at = (now + Duration::minutes(20)).to_rfc3339_opts(SecondsFormat::Secs, true);
    let plan = format!(
        r#"
version = 1
[defaults]
lead_time = "25m"

[[target]]
resource_id = "{id}"
min_capacity = 1
max_capacity = 8

  [[target.peak]]
  name = "launch"
  at = "{peak_at}"
  duration = "1h"
  floor = 5
"#
    );
    let (store, _) = table_with_plan(&dynamo, "moto-tick.toml", &plan, now).await;
    let event: serde_json::Value =
        serde_json::from_str(TICK_EVENT).expect("the sample event is JSON");
    counter.reset();

    // WHEN the tick runs (the peak's claim has been live since 5 minutes ago)
    let first = handle(Ports::new(&aas, &store), &event, now)
        .await
        .expect("first tick");

    // THEN it raised MinCapacity to 5 with one register call and wrote the state once
    let Outcome::Tick(report) = first else {
        panic!("a tick event gives a tick report")
    };
    assert_eq!(report.registered, [id.to_string()], "{report:?}");
    assert_eq!(report.state_writes, 1);
    assert!(report.errors.is_empty(), "{:?}", report.errors);
    // One call per step: the plan, one describe and one state read for the page, one state
    // write (with the log record pending), one register, one log record, and the state write
    // that clears the pending record.
    let expected = |pairs: &[(&str, usize)]| -> BTreeMap<String, usize> {
        pairs.iter().map(|(k, v)| ((*k).to_owned(), *v)).collect()
    };
    assert_eq!(
        counter.snapshot(),
        expected(&[
            ("BatchGetItem", 1),
            ("DescribeScalableTargets", 1),
            ("GetItem", 1),
            ("PutItem", 3),
            ("RegisterScalableTarget", 1),
        ])
    );
    let target = raw_scalable_target(aas.client(), &id.resource_id()).await;
    assert_eq!((target.min_capacity(), target.max_capacity()), (5, 8));

    // WHEN the same tick arrives again a minute later (a duplicate or the next tick)
    counter.reset();
    let second = handle(Ports::new(&aas, &store), &event, now + Duration::minutes(1))
        .await
        .expect("second tick");

    // THEN nothing mutates: no register, no state write, no log record
    let Outcome::Tick(report) = second else {
        panic!("a tick event gives a tick report")
    };
    assert!(report.registered.is_empty(), "{report:?}");
    assert_eq!(report.state_writes, 0);
    // Reads only: the plan, one describe, one state read.
    assert_eq!(
        counter.snapshot(),
        expected(&[
            ("BatchGetItem", 1),
            ("DescribeScalableTargets", 1),
            ("GetItem", 1),
        ])
    );

    // AND the decision log holds exactly one record, explaining the peak and the lead time
    let log = store
        .recent_log(&id, 10)
        .await
        .expect("read the log")
        .into_iter()
        .map(|e| e.body)
        .collect::<Vec<_>>();
    assert_eq!(log.len(), 1, "{log:#?}");
    let reasons: Vec<&str> = log[0]["reasons"]
        .as_array()
        .expect("reasons listed")
        .iter()
        .filter_map(|r| r.as_str())
        .collect();
    let text = reasons.join("; ");
    // The floor's reason names the peak, when it starts and the lead time it was raised ahead by.
    assert!(text.contains("peak:launch"), "{text}");
    assert!(
        text.contains(&peak_at[..16]),
        "the peak's start {peak_at} in: {text}"
    );
    assert!(text.contains("lead time 25m"), "{text}");
    assert_eq!(log[0]["desired"]["min"], 5);
}
