//! The alarm function end to end against moto (AAS, DynamoDB and SageMaker over HTTP), driven by
//! the alarm fixtures in events/alarms: a burst guard applied at once and released by the tick,
//! a duplicate delivery through the other envelope, an alarm the plan does not name, and a wake
//! from zero with its latency measured by the tick's capacity check.
//!
//! moto runs nothing by itself (no alarms, no scaling): the tests inject the cause (the alarm
//! event, UpdateEndpointWeightsAndCapacities for capacity arriving) and check the effect.

use aws_sdk_sagemaker::types::DesiredWeightAndCapacity;
use chrono::Duration;
use headroom_adapters::{AasScalingTargets, DynamoStateStore, SageMakerCapacity};
use headroom_alarm::{handle, Origin};
use headroom_core::ids::ScalableTargetId;
use headroom_core::plan::Plan;
use headroom_core::ports::{ScalingTargets, StateStore};
use headroom_core::usecase::tick::tick_plan_observing;
use headroom_core::usecase::Ports;
use headroom_core::{ClaimSource, Suspended};
use headroom_tests::{
    create_endpoint, raw_scalable_target, sdk_config, t, table_with_plan, unique, CallCounter,
};

const BURST_ALARM: &str = include_str!("../../events/alarms/eventbridge-burst-alarm.json");
const BURST_ALARM_DIRECT: &str = include_str!("../../events/alarms/direct-action-burst-alarm.json");
const BURST_OK: &str = include_str!("../../events/alarms/eventbridge-burst-ok.json");
const UNKNOWN: &str = include_str!("../../events/alarms/eventbridge-unknown-alarm.json");
const BACKLOG_ALARM: &str = include_str!("../../events/alarms/eventbridge-backlog-alarm.json");
const BACKLOG_OK: &str = include_str!("../../events/alarms/direct-action-backlog-ok.json");
const TICK: &str = include_str!("../../events/schedule/tick-rule.json");

fn json(text: &str) -> serde_json::Value {
    serde_json::from_str(text).expect("fixtures are JSON")
}

/// One test's world in moto: its own endpoint, AAS target, table and stored plan, with every
/// client counting its calls.
struct World {
    id: ScalableTargetId,
    endpoint: String,
    aas: AasScalingTargets,
    store: DynamoStateStore,
    capacity: SageMakerCapacity,
    sagemaker: aws_sdk_sagemaker::Client,
    counter: CallCounter,
    plan: Plan,
}

impl World {
    /// An endpoint with `instances` instances, its variant registered at `min..max`, and a plan
    /// built by `plan(resource_id)`.
    async fn new(
        prefix: &str,
        instances: i32,
        min: u32,
        max: u32,
        plan: impl Fn(&str) -> String,
    ) -> Self {
        let config = sdk_config().await;
        let counter = CallCounter::default();
        let aas_client = counter.aas_client(&config);
        let dynamo = counter.dynamo_client(&config);
        let sagemaker = counter.sagemaker_client(&config);
        let endpoint = unique(prefix);
        create_endpoint(&sagemaker, &endpoint, instances.max(1))
            .await
            .expect("create the endpoint in moto");
        let id = ScalableTargetId::variant(&endpoint, "AllTraffic").expect("valid id");
        let aas = AasScalingTargets::new(aas_client);
        aas.register(&id, min, max, Suspended::default())
            .await
            .expect("register the target");
        let plan_text = plan(&id.to_string());
        let (store, plan) = table_with_plan(
            &dynamo,
            "moto-alarm.toml",
            &plan_text,
            t("2026-03-14T00:00:00Z"),
        )
        .await;
        let world = Self {
            id,
            endpoint,
            aas,
            store,
            capacity: SageMakerCapacity::new(sagemaker.clone()),
            sagemaker,
            counter,
            plan,
        };
        if instances == 0 {
            world.set_instances(0).await;
        }
        world.counter.reset();
        world
    }

    /// What moto's AAS holds for the target: (min, max, dynamic scale-in suspended).
    async fn aas_bounds(&self) -> (i32, i32, bool) {
        let target = raw_scalable_target(self.aas.client(), &self.id.resource_id()).await;
        let suspended = target
            .suspended_state()
            .and_then(|s| s.dynamic_scaling_in_suspended())
            .unwrap_or(false);
        (target.min_capacity(), target.max_capacity(), suspended)
    }

    /// Capacity changing outside headroom (AAS scaling out, instances arriving): moto sets the
    /// current count to the desired one at once.
    async fn set_instances(&self, n: i32) {
        self.sagemaker
            .update_endpoint_weights_and_capacities()
            .endpoint_name(&self.endpoint)
            .desired_weights_and_capacities(
                DesiredWeightAndCapacity::builder()
                    .variant_name("AllTraffic")
                    .desired_instance_count(n)
                    .build(),
            )
            .send()
            .await
            .expect("update the instance count in moto");
    }
}

fn guard_plan(resource_id: &str) -> String {
    format!(
        r#"
version = 1
[[target]]
resource_id = "{resource_id}"
min_capacity = 1
max_capacity = 8
  [target.guard]
  alarms = ["headroom-chat-prod-burst"]
  hold = "20m"
  max_duration = "6h"
  suspend_scale_in = true
  step_down = {{ step = "10m", keep_percent = 50 }}
"#
    )
}

#[tokio::test(flavor = "multi_thread")]
async fn a_burst_alarm_guards_at_once_and_the_tick_releases_it_step_by_step() {
    // GIVEN a variant AAS has scaled out to 5 during a burst, bounds 1..8
    let w = World::new("guard", 5, 1, 8, guard_plan).await;
    let alarm_at = t("2026-03-14T09:42:31.412Z");

    // WHEN the burst alarm's ALARM arrives through EventBridge
    let report = handle(
        Ports::new(&w.aas, &w.store).with_capacity(&w.capacity),
        &json(BURST_ALARM),
        Origin::Anywhere,
        alarm_at + Duration::seconds(20),
    )
    .await
    .expect("handled");

    // THEN AAS holds 5 as its minimum with dynamic scale-in suspended, set by one call
    assert_eq!(report.targets.len(), 1, "{report:?}");
    assert_eq!(w.aas_bounds().await, (5, 8, true));
    assert_eq!(
        w.counter.get("RegisterScalableTarget"),
        1,
        "{:?}",
        w.counter.snapshot()
    );
    assert_eq!(
        w.counter.get("DescribeEndpoint"),
        1,
        "the desired count is read once"
    );

    // WHEN the same transition arrives again through the direct alarm action
    w.counter.reset();
    let again = handle(
        Ports::new(&w.aas, &w.store).with_capacity(&w.capacity),
        &json(BURST_ALARM_DIRECT),
        Origin::Anywhere,
        alarm_at + Duration::seconds(40),
    )
    .await
    .expect("handled");
    // THEN nothing changes in AWS
    assert!(
        again.targets[0]
            .notes
            .iter()
            .any(|n| n.starts_with("duplicate transition")),
        "{again:?}"
    );
    assert_eq!(
        w.counter.get("RegisterScalableTarget"),
        0,
        "{:?}",
        w.counter.snapshot()
    );

    // WHEN the burst clears (OK at 10:17:31) THEN the floor holds for the 20 min hold
    let ok_at = t("2026-03-14T10:17:31.887Z");
    handle(
        Ports::new(&w.aas, &w.store).with_capacity(&w.capacity),
        &json(BURST_OK),
        Origin::Anywhere,
        ok_at + Duration::seconds(5),
    )
    .await
    .expect("handled");
    assert_eq!(w.aas_bounds().await, (5, 8, true));
    let state = w
        .store
        .load_states(std::slice::from_ref(&w.id))
        .await
        .expect("state");
    let guard = state[0]
        .1
        .claim(&ClaimSource::Guard)
        .expect("guard claim")
        .clone();
    assert_eq!(guard.full_until, ok_at + Duration::minutes(20));

    // AND the tick releases it on time: halved every 10 minutes after the hold, then the base.
    // (minutes after the OK, expected min, scale-in suspended)
    let steps = [
        (10, 5, true),
        (21, 2, false),
        (31, 1, false),
        (45, 1, false),
    ];
    for (minutes, min, suspended) in steps {
        headroom_tick::handle(
            Ports::new(&w.aas, &w.store).with_capacity(&w.capacity),
            &json(TICK),
            ok_at + Duration::minutes(minutes),
        )
        .await
        .expect("tick");
        assert_eq!(
            w.aas_bounds().await,
            (min, 8, suspended),
            "{minutes} min after the OK"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn an_alarm_the_plan_does_not_name_makes_no_aws_change() {
    let w = World::new("unknown", 2, 1, 8, guard_plan).await;
    let report = handle(
        Ports::new(&w.aas, &w.store).with_capacity(&w.capacity),
        &json(UNKNOWN),
        Origin::Anywhere,
        t("2026-03-14T09:50:30Z"),
    )
    .await
    .expect("handled");
    assert!(report.not_ours);
    let calls = w.counter.snapshot();
    for mutation in [
        "RegisterScalableTarget",
        "PutItem",
        "TransactWriteItems",
        "UpdateItem",
    ] {
        assert_eq!(calls.get(mutation), None, "{mutation} in {calls:?}");
    }
    assert_eq!(calls.get("DescribeEndpoint"), None, "{calls:?}");
    assert_eq!(w.aas_bounds().await, (1, 8, false));
}

fn wake_plan(resource_id: &str) -> String {
    format!(
        r#"
version = 1
[[target]]
resource_id = "{resource_id}"
min_capacity = 0
max_capacity = 4
  [target.wake]
  alarms = ["arn:aws:cloudwatch:us-east-1:123456789012:alarm:headroom-summarize-async-backlog"]
  capacity = 1
  quiet_period = "15m"
  max_duration = "2h"
"#
    )
}

#[tokio::test(flavor = "multi_thread")]
async fn a_backlog_wakes_an_endpoint_at_zero_and_the_tick_measures_the_wake_latency() {
    // GIVEN an async endpoint at zero instances, bounds 0..4
    let w = World::new("wake", 0, 0, 4, wake_plan).await;
    let alarm_at = t("2026-03-14T06:03:00.820Z");

    // WHEN the backlog alarm fires
    handle(
        Ports::new(&w.aas, &w.store).with_capacity(&w.capacity),
        &json(BACKLOG_ALARM),
        Origin::Anywhere,
        alarm_at + Duration::seconds(15),
    )
    .await
    .expect("handled");
    // THEN MinCapacity is 1 at once, and the wake waits for capacity
    assert_eq!(w.aas_bounds().await, (1, 4, false));
    let pending = |s: &headroom_core::TargetState| s.wake_pending_since;
    let state = w
        .store
        .load_states(std::slice::from_ref(&w.id))
        .await
        .expect("state");
    assert_eq!(pending(&state[0].1), Some(alarm_at));

    // WHEN the tick runs before any instance is in service THEN SageMaker is read, nothing is
    // recorded and AAS is left as the alarm set it
    w.counter.reset();
    let early = tick_plan_observing(
        &w.aas,
        &w.store,
        Some(&w.capacity),
        &w.plan,
        1,
        alarm_at + Duration::minutes(2),
    )
    .await;
    assert!(early.errors.is_empty(), "{:?}", early.errors);
    assert_eq!(
        w.counter.get("DescribeEndpoint"),
        1,
        "{:?}",
        w.counter.snapshot()
    );
    assert!(early.observed.is_empty(), "{:?}", early.observed);
    assert_eq!(early.state_writes, 0);
    assert_eq!(w.counter.get("RegisterScalableTarget"), 0);

    // WHEN AAS has scaled out and the instance is in service 6 min 40 s after the alarm
    w.set_instances(1).await;
    let in_service = alarm_at + Duration::seconds(400);
    let report =
        tick_plan_observing(&w.aas, &w.store, Some(&w.capacity), &w.plan, 1, in_service).await;
    // THEN the latency is stored for `headroom status`, in one state write
    assert!(report.errors.is_empty(), "{:?}", report.errors);
    assert_eq!(report.observed.len(), 1, "{:?}", report.observed);
    assert!(
        report.observed[0].starts_with(&format!("{}: woke", w.id)),
        "{:?}",
        report.observed
    );
    assert_eq!(report.state_writes, 1);
    let state = w
        .store
        .load_states(std::slice::from_ref(&w.id))
        .await
        .expect("state");
    assert_eq!(pending(&state[0].1), None);
    assert_eq!(
        state[0].1.wake_latencies.last().map(|l| l.seconds),
        Some(400)
    );

    // A later tick reads nothing from SageMaker: no wake is pending.
    w.counter.reset();
    tick_plan_observing(
        &w.aas,
        &w.store,
        Some(&w.capacity),
        &w.plan,
        1,
        in_service + Duration::minutes(1),
    )
    .await;
    assert_eq!(
        w.counter.get("DescribeEndpoint"),
        0,
        "{:?}",
        w.counter.snapshot()
    );

    // WHEN the backlog clears (OK through the direct action at 06:14) THEN the wake holds 15 min
    let ok_at = t("2026-03-14T06:14:00.640Z");
    handle(
        Ports::new(&w.aas, &w.store).with_capacity(&w.capacity),
        &json(BACKLOG_OK),
        Origin::Anywhere,
        ok_at + Duration::seconds(3),
    )
    .await
    .expect("handled");
    headroom_tick::handle(
        Ports::new(&w.aas, &w.store).with_capacity(&w.capacity),
        &json(TICK),
        ok_at + Duration::minutes(14),
    )
    .await
    .expect("tick");
    assert_eq!(w.aas_bounds().await, (1, 4, false));
    // AND then lets target tracking take it back to zero
    headroom_tick::handle(
        Ports::new(&w.aas, &w.store).with_capacity(&w.capacity),
        &json(TICK),
        ok_at + Duration::minutes(16),
    )
    .await
    .expect("tick");
    assert_eq!(w.aas_bounds().await, (0, 4, false));
}
