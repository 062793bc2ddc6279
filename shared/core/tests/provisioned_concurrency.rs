//! A serverless variant's provisioned concurrency as a managed target (issue 14, item 4), through
//! the tick, peak-event and alarm use cases over the memory ports: a recurring peak raises the
//! floor before 09:00, an explicit peak named by its resource id alone finds the target, and a
//! burst guard holds the concurrency AAS had reached. Every bound lands on the
//! `sagemaker:variant:DesiredProvisionedConcurrency` target, never on the variant's instance
//! count (the memory AAS keys targets by resource id and dimension, as AAS does).

mod common;

use common::{at, t};
use headroom_core::alarms::AlarmTransition;
use headroom_core::ids::Dimension;
use headroom_core::memory::{block_on, MemoryCapacity, MemoryScalingTargets, MemoryStateStore};
use headroom_core::model::AlarmState;
use headroom_core::peaks::PeakRequest;
use headroom_core::usecase::alarm::{alarm_with_plan, Origin};
use headroom_core::usecase::peak::peak_with_plan;
use headroom_core::usecase::tick::tick_with_plan;
use headroom_core::usecase::Ports;
use headroom_core::{ClaimSource, ScalableTargetId, TargetPlan};

const FAQ: &str = "endpoint/faq-bot/variant/AllTraffic";

fn pc() -> ScalableTargetId {
    ScalableTargetId::provisioned_concurrency("faq-bot", "AllTraffic").expect("valid id")
}

/// Provisioned concurrency 2..50: a 09:00 peak of 20 for 2h, and a guard on `burst` that holds
/// the concurrency reached when it fired.
fn plan() -> headroom_core::plan::Plan {
    TargetPlan::test(FAQ)
        .dimension("provisioned_concurrency")
        .bounds(2, 50)
        .lead_time("25m")
        .with_peak("morning", "0 9 * * *", "2h", 20)
        .section("[target.guard]\nalarms = [\"burst\"]\nfloor = \"current\"\nhold = \"20m\"\n")
        .plan()
        .build()
}

#[test]
fn a_peak_and_a_guard_steer_provisioned_concurrency() {
    // GIVEN the target registered on its provisioned-concurrency dimension at 2..50
    let plan = plan();
    assert_eq!(
        plan.targets[0].id.dimension(),
        Dimension::VariantProvisionedConcurrency
    );
    let id = pc();
    let instances: ScalableTargetId = FAQ.parse().expect("valid id");
    let aas = MemoryScalingTargets::default().with_target(id.clone(), 2, 50);
    let store = MemoryStateStore::default();
    let capacity = MemoryCapacity::default().with(id.clone(), 2, 2);
    let ports = || Ports::new(&aas, &store).with_capacity(&capacity);

    // WHEN the tick runs inside the peak's lead time (25m before 09:00)
    let report = block_on(tick_with_plan(ports(), &plan, 1, at("08:40")));
    // THEN the provisioned concurrency's floor is the peak's 20
    assert!(report.errors.is_empty(), "{:?}", report.errors);
    assert_eq!(aas.get(&id).map(|o| (o.min, o.max)), Some((20, 50)));

    // WHEN the burst alarm fires at 09:30 with 34 concurrent invocations provisioned
    capacity.set(id.clone(), 34, 34);
    let alarm =
        AlarmTransition::new("burst", AlarmState::Alarm, at("09:30")).with_previous(AlarmState::Ok);
    let outcome = block_on(alarm_with_plan(
        ports(),
        &plan,
        &alarm,
        Origin::Anywhere,
        at("09:30"),
    ))
    .expect("alarm");
    // THEN the guard holds 34, above the peak's 20
    assert_eq!(outcome.targets[0].min, 34);
    assert_eq!(aas.get(&id).map(|o| o.min), Some(34));
    let guard = store
        .state(&id)
        .claim(&ClaimSource::Guard)
        .cloned()
        .expect("guard claim");
    assert_eq!(guard.floor, 34);

    // AND nothing was registered on the variant's instance count
    assert_eq!(aas.get(&instances), None);
}

#[test]
fn an_explicit_peak_named_by_resource_id_lands_on_provisioned_concurrency() {
    // GIVEN the target at 2..50, and a peak event whose target string names no dimension
    let plan = plan();
    let id = pc();
    let aas = MemoryScalingTargets::default().with_target(id.clone(), 2, 50);
    let store = MemoryStateStore::default();
    let request = PeakRequest {
        target: FAQ.parse().expect("valid id"),
        name: "launch".into(),
        floor: 40,
        starts_at: t("2026-03-14T12:00:00Z"),
        ends_at: t("2026-03-14T13:00:00Z"),
        suspend_scale_in: false,
        id: None,
    };
    // WHEN it arrives inside its lead time
    let outcome = block_on(peak_with_plan(
        Ports::new(&aas, &store),
        &plan,
        &request,
        at("11:50"),
    ))
    .expect("peak");
    // THEN the plan's provisioned-concurrency target takes it
    assert!(outcome.registered);
    assert_eq!(aas.get(&id).map(|o| o.min), Some(40));
    let instances: ScalableTargetId = FAQ.parse().expect("valid id");
    assert_eq!(aas.get(&instances), None);
}
