//! The guard's scale-out on a burst (`surge.rs`), through the alarm use case and the memory
//! ports: GIVEN a target with a guard and the counts SageMaker reports, WHEN a burst alarm's
//! transition arrives with its newest datapoint, THEN the MinCapacity registered is as listed.

mod common;

use common::{at, target_id};
use headroom_core::alarms::AlarmTransition;
use headroom_core::memory::{block_on, MemoryCapacity, MemoryScalingTargets, MemoryStateStore};
use headroom_core::model::AlarmState::{self, Alarm, Ok as Clear};
use headroom_core::plan::{Plan, TargetPlan};
use headroom_core::usecase::alarm::{alarm_with_plan, AlarmReport, Origin};
use headroom_core::usecase::Ports;
use headroom_core::ClaimSource;

const CHAT: &str = "endpoint/chat/variant/AllTraffic";

fn plan(scale_out: bool, forecast: &str) -> Plan {
    TargetPlan::test(CHAT)
        .bounds(1, 40)
        .section(&format!(
            "[target.guard]\nalarms = [\"burst\"]\nhold = \"20m\"\nscale_out = {scale_out}\n"
        ))
        .section(forecast)
        .plan()
        .build()
}

/// A burst alarm transition as CloudWatch sends it: on InvocationsPerInstance, with the newest
/// datapoint and the threshold of its `reasonData`.
fn burst(state: AlarmState, previous: AlarmState, hm: &str, newest: f64) -> AlarmTransition {
    let mut t = AlarmTransition::new("burst", state, at(hm))
        .with_previous(previous)
        .with_reading(newest, 30.0);
    t.metric_name = Some("InvocationsPerInstance".into());
    t
}

struct World {
    plan: Plan,
    aas: MemoryScalingTargets,
    store: MemoryStateStore,
    capacity: MemoryCapacity,
}

impl World {
    /// `desired` and `in_service` as SageMaker reports them.
    fn new(plan: Plan, desired: u32, in_service: u32) -> Self {
        let id = target_id(CHAT);
        Self {
            plan,
            aas: MemoryScalingTargets::default().with_target(id.clone(), 1, 40),
            store: MemoryStateStore::default(),
            capacity: MemoryCapacity::default().with(id, desired, in_service),
        }
    }

    fn send(&self, t: &AlarmTransition) -> AlarmReport {
        let ports = Ports::new(&self.aas, &self.store).with_capacity(&self.capacity);
        block_on(alarm_with_plan(
            ports,
            &self.plan,
            t,
            Origin::Anywhere,
            t.at,
        ))
        .expect("alarm")
    }

    fn min(&self) -> Option<u32> {
        self.aas.get(&target_id(CHAT)).map(|o| o.min)
    }
}

#[test]
fn a_burst_alarm_raises_the_floor_to_the_instances_that_bring_the_metric_back_to_its_threshold() {
    // GIVEN 10 instances in service
    let w = World::new(plan(true, ""), 10, 10);
    // WHEN the burst alarm fires at 40 invocations an instance against 30
    let report = w.send(&burst(Alarm, Clear, "09:00", 40.0));
    // THEN the guard asks for 400 / 30 -> 14 at once, and says why
    assert_eq!(w.min(), Some(14));
    let notes = &report.targets[0].notes;
    assert!(
        notes.iter().any(|n| n.contains("guard scales out to 14")),
        "{notes:?}"
    );
    // ... and a duplicate delivery changes nothing
    w.send(&burst(Alarm, Clear, "09:00", 40.0));
    assert_eq!(w.min(), Some(14));
}

#[test]
fn with_a_forecast_the_floor_restores_target_trackings_level() {
    // GIVEN the forecast's invocations_per_instance (target tracking's target value) 24
    let forecast = "[target.forecast]\ninvocations_per_instance = 24\n";
    let w = World::new(plan(true, forecast), 10, 10);
    // WHEN the alarm fires at 40 against 30 THEN 400 / 24 -> 17
    w.send(&burst(Alarm, Clear, "09:00", 40.0));
    assert_eq!(w.min(), Some(17));
}

#[test]
fn the_floor_is_read_from_the_instances_in_service_never_from_the_desired_count() {
    // GIVEN 29 desired while 3 serve (the ratchet of issue 12: a desired count raised before any
    // instance serves says nothing about the demand the metric was measured on)
    let w = World::new(plan(true, ""), 29, 3);
    // WHEN the alarm fires at 45 an instance, measured on the 3 serving
    w.send(&burst(Alarm, Clear, "09:00", 45.0));
    // THEN the scale-out asks for 3 x 45 / 30 = 4.5 -> 5, not 29 x 1.5 -> MaxCapacity 40; the
    // guard holds the desired 29 as its high-water mark, as it did before the scale-out
    assert_eq!(w.min(), Some(29));
    // ... and where the desired count is what serves, the scale-out alone decides
    let w = World::new(plan(true, ""), 3, 3);
    w.send(&burst(Alarm, Clear, "09:00", 45.0));
    assert_eq!(w.min(), Some(5));
}

#[test]
fn nothing_is_raised_without_a_reading_a_per_instance_metric_or_an_alarm() {
    let cases: [(&str, AlarmTransition); 4] = [
        (
            "no reasonData",
            AlarmTransition::new("burst", Alarm, at("09:00"))
                .on_metric("InvocationsPerInstance", &[]),
        ),
        ("a total, not a per-instance metric", {
            let mut t = burst(Alarm, Clear, "09:00", 400.0);
            t.metric_name = Some("Invocations".into());
            t
        }),
        ("a metric-math alarm (no single metric)", {
            let mut t = burst(Alarm, Clear, "09:00", 40.0);
            t.metric_name = None;
            t
        }),
        ("an OK", burst(Clear, Alarm, "09:00", 40.0)),
    ];
    for (why, t) in cases {
        let w = World::new(plan(true, ""), 10, 10);
        w.send(&t);
        let min = w.min().unwrap_or(1);
        assert!(min <= 10, "{why}: MinCapacity {min}");
    }
}

#[test]
fn a_stale_alarm_raises_nothing_and_without_scale_out_the_guard_holds_what_runs() {
    // GIVEN a newer OK already applied
    let w = World::new(plan(true, ""), 10, 10);
    w.send(&burst(Clear, Alarm, "09:30", 12.0));
    // WHEN an older ALARM arrives late, with its old datapoint
    w.send(&burst(Alarm, Clear, "09:00", 60.0));
    // THEN its datapoint describes a minute long gone: nothing above the 10 held
    assert!(w.min().unwrap_or(1) <= 10, "{:?}", w.min());

    let w = World::new(plan(false, ""), 10, 10);
    w.send(&burst(Alarm, Clear, "09:00", 40.0));
    assert_eq!(w.min(), Some(10), "the guard holds what runs, as before");
}

#[test]
fn the_scale_out_lasts_while_its_alarm_fires_and_the_hold_keeps_what_target_tracking_asked_for() {
    let w = World::new(plan(true, ""), 10, 10);
    w.send(&burst(Alarm, Clear, "09:00", 40.0));
    assert_eq!(w.min(), Some(14));
    assert!(w.store.state(&target_id(CHAT)).scale_out.is_some());
    // WHEN the alarm clears before target tracking asked for more than the 10 it had
    w.send(&burst(Clear, Alarm, "09:04", 20.0));
    // THEN the guard holds the desired count it saw (10) for its hold, not the scale-out: a
    // burst over before the capacity came never needed it held
    let state = w.store.state(&target_id(CHAT));
    let g = state.claim(&ClaimSource::Guard).expect("guard claim");
    assert_eq!(
        (g.floor, g.full_until),
        (10, at("09:24")),
        "20m hold after the OK"
    );
    assert_eq!(w.min(), Some(10));
    // AND the scale-out ended with its transition: it is not kept in the state
    assert_eq!(state.scale_out, None);

    // WHEN the OK arrives first and the ALARM late (out of order) THEN the same end state
    let w2 = World::new(plan(true, ""), 10, 10);
    w2.send(&burst(Clear, Alarm, "09:04", 20.0));
    w2.send(&burst(Alarm, Clear, "09:00", 40.0));
    let late = w2.store.state(&target_id(CHAT));
    assert_eq!(late.claim(&ClaimSource::Guard), Some(g));
    assert_eq!(late.scale_out, None);

    // WHEN a new burst fires while 12 are desired by target tracking THEN its own reading counts
    w.capacity.set(target_id(CHAT), 12, 10);
    w.send(&burst(Alarm, Clear, "09:10", 48.0));
    assert_eq!(w.min(), Some(16), "10 x 48 / 30");
}

#[test]
fn scale_out_is_off_unless_the_plan_turns_it_on() {
    let plan = TargetPlan::test(CHAT)
        .bounds(1, 40)
        .section("[target.guard]\nalarms = [\"burst\"]\n")
        .plan()
        .build();
    let guard = plan.targets[0].guard.as_ref().expect("guard");
    assert!(!guard.scale_out);
    let w = World::new(plan, 10, 10);
    w.send(&burst(Alarm, Clear, "09:00", 40.0));
    assert_eq!(w.min(), Some(10));
}
