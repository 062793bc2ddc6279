//! The Application Auto Scaling adapter against moto over HTTP, with the real SDK client.

use aws_sdk_applicationautoscaling::types::{ScalableDimension, ServiceNamespace};
use headroom_adapters::AasScalingTargets;
use headroom_core::ids::ScalableTargetId;
use headroom_core::ports::{ScalingTargets, DESCRIBE_PAGE};
use headroom_core::Suspended;
use headroom_tests::{raw_scalable_target, sdk_config, unique, CallCounter};

async fn aas_with_counter() -> (AasScalingTargets, CallCounter) {
    let counter = CallCounter::default();
    let client = counter.aas_client(&sdk_config().await);
    (AasScalingTargets::new(client), counter)
}

fn variant(endpoint: &str) -> ScalableTargetId {
    ScalableTargetId::variant(endpoint, "AllTraffic").expect("valid test id")
}

#[tokio::test]
async fn register_then_describe_round_trips_bounds_and_every_suspended_flag() {
    // GIVEN a variant target registered with scale-in and scheduled scaling suspended
    let (aas, _) = aas_with_counter().await;
    let id = variant(&unique("rt"));
    let suspended = Suspended {
        dynamic_in: true,
        dynamic_out: false,
        scheduled: true,
    };
    aas.register(&id, 2, 6, suspended).await.expect("register");

    // WHEN it is described THEN bounds and all three flags come back as sent
    let seen = aas
        .describe(std::slice::from_ref(&id))
        .await
        .expect("describe");
    assert_eq!(seen.len(), 1);
    assert_eq!(
        (seen[0].id.clone(), seen[0].min, seen[0].max),
        (id.clone(), 2, 6)
    );
    assert_eq!(seen[0].suspended, suspended);

    // WHEN it is registered again with nothing suspended THEN AAS holds explicit `false` flags
    // (not absent ones: headroom sends all three)
    aas.register(&id, 1, 6, Suspended::default())
        .await
        .expect("re-register");
    let raw = raw_scalable_target(aas.client(), &id.resource_id()).await;
    let state = raw.suspended_state().expect("SuspendedState present");
    assert_eq!(state.dynamic_scaling_in_suspended(), Some(false));
    assert_eq!(state.dynamic_scaling_out_suspended(), Some(false));
    assert_eq!(state.scheduled_scaling_suspended(), Some(false));
    let seen = aas
        .describe(std::slice::from_ref(&id))
        .await
        .expect("describe");
    assert_eq!((seen[0].min, seen[0].suspended), (1, Suspended::default()));
}

#[tokio::test]
async fn absent_suspended_flags_read_as_not_suspended() {
    // GIVEN a target registered by someone else, without SuspendedState
    let (aas, _) = aas_with_counter().await;
    let id = variant(&unique("absent"));
    aas.client()
        .register_scalable_target()
        .service_namespace(ServiceNamespace::Sagemaker)
        .resource_id(id.resource_id())
        .scalable_dimension(ScalableDimension::SageMakerVariantDesiredInstanceCount)
        .min_capacity(1)
        .max_capacity(3)
        .send()
        .await
        .expect("raw register");
    let seen = aas
        .describe(std::slice::from_ref(&id))
        .await
        .expect("describe");
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0].suspended, Suspended::default());
}

#[tokio::test]
async fn describing_120_targets_takes_3_calls_and_skips_unregistered_ones() {
    // GIVEN 120 registered variant targets, and in the last page an unregistered variant and an
    // inference component (a mixed page: one call without a dimension filter)
    let (aas, counter) = aas_with_counter().await;
    let prefix = unique("many");
    let mut ids: Vec<ScalableTargetId> = (0..120)
        .map(|i| variant(&format!("{prefix}-{i}")))
        .collect();
    for (i, id) in ids.iter().enumerate() {
        let min = u32::try_from(i % 4).expect("small") + 1;
        aas.register(id, min, 10, Suspended::default())
            .await
            .expect("register");
    }
    ids.push(variant(&format!("{prefix}-never-registered")));
    ids.push(ScalableTargetId::component(&format!("{prefix}-ic")).expect("valid id"));
    counter.reset();

    // WHEN the tick describes them page by page
    let mut seen = Vec::new();
    for page in ids.chunks(DESCRIBE_PAGE) {
        seen.extend(aas.describe(page).await.expect("describe"));
    }

    // THEN ceil(122 / 50) = 3 DescribeScalableTargets calls found exactly the 120 registered
    assert_eq!(
        counter.get("DescribeScalableTargets"),
        3,
        "{:?}",
        counter.snapshot()
    );
    assert_eq!(
        counter.snapshot().values().sum::<usize>(),
        3,
        "no other call: {:?}",
        counter.snapshot()
    );
    assert_eq!(seen.len(), 120);
    for (i, id) in ids.iter().take(120).enumerate() {
        let o = seen
            .iter()
            .find(|o| &o.id == id)
            .expect("every registered target is found");
        assert_eq!(
            (o.min, o.max),
            (u32::try_from(i % 4).expect("small") + 1, 10)
        );
    }
}
