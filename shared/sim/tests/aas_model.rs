//! Application Auto Scaling's model against hand-computed cases. Metric delay 2 minutes: the
//! datapoint of minute m (covering [60m, 60m+60)) is visible from 60m + 180 s.

use headroom_core::Suspended;
use headroom_sim::aas::Aas;
use headroom_sim::cloudwatch::AlarmState;
use headroom_sim::endpoint::Endpoint;
use headroom_sim::metrics::Meter;
use headroom_sim::world::{Metric, StepPolicy, TrackingPolicy, World};
use rand::rngs::SmallRng;
use rand::SeedableRng;

const DELAY: i64 = 120;

fn tracking(target: f64) -> TrackingPolicy {
    TrackingPolicy {
        metric: Metric::InvocationsPerInstance,
        target_value: target,
        scale_out_cooldown: 300,
        scale_in_cooldown: 300,
        disable_scale_in: false,
    }
}

fn aas(min: u32, max: u32, desired: u32) -> Aas {
    Aas::new(min, max, desired, Some(tracking(450.0)), None, (DELAY, 20))
}

/// A meter whose InvocationsPerInstance datapoints for minutes 0.. are `values`.
fn meter(values: &[f64]) -> Meter {
    let mut m = Meter::new(1.0);
    for (minute, v) in values.iter().enumerate() {
        m.minute_series[Metric::InvocationsPerInstance.index()].push(minute as i64, *v);
    }
    m
}

/// The instant at which minute `m`'s datapoint has just become visible.
fn visible(m: i64) -> i64 {
    60 * (m + 1) + DELAY
}

#[test]
fn scale_out_needs_three_of_three_datapoints_above_target() {
    // GIVEN 4 instances at twice the target for minutes 0..=2
    let m = meter(&[900.0, 900.0, 900.0]);
    let mut a = aas(1, 20, 4);
    // WHEN only minutes 0 and 1 are visible THEN nothing happens
    a.evaluate(visible(1), 4, &m);
    assert_eq!((a.desired, a.high), (4, AlarmState::Ok));
    // WHEN the third is visible THEN desired = ceil(4 x 900 / 450) = 8
    a.evaluate(visible(2), 4, &m);
    assert_eq!((a.desired, a.high), (8, AlarmState::Alarm));
}

#[test]
fn two_of_three_above_target_is_not_enough() {
    let m = meter(&[900.0, 400.0, 900.0]);
    let mut a = aas(1, 20, 4);
    a.evaluate(visible(2), 4, &m);
    assert_eq!(a.desired, 4);
}

#[test]
fn scale_out_stops_at_max_capacity() {
    let m = meter(&[4500.0, 4500.0, 4500.0]);
    let mut a = aas(1, 12, 4);
    a.evaluate(visible(2), 4, &m);
    assert_eq!(a.desired, 12, "ceil(4 x 10) = 40, capped at 12");
}

#[test]
fn scale_in_needs_fifteen_of_fifteen_below_ninety_percent() {
    // GIVEN 8 instances at 200 (below 405 = 90 % of 450)
    let mut a = aas(1, 20, 8);
    let mut low = vec![200.0; 15];
    // WHEN one of the fifteen is at 410 (above 90 %) THEN no scale-in
    low[7] = 410.0;
    a.evaluate(visible(14), 8, &meter(&low));
    assert_eq!(a.desired, 8);
    // WHEN 14 are visible THEN no scale-in yet
    let m = meter(&[200.0; 15]);
    a.evaluate(visible(13), 8, &m);
    assert_eq!(a.desired, 8);
    // WHEN all fifteen are below THEN desired = ceil(8 x 200 / 450) = 4
    a.evaluate(visible(14), 8, &m);
    assert_eq!((a.desired, a.low), (4, AlarmState::Alarm));
}

#[test]
fn scale_in_cooldown_blocks_a_second_scale_in_but_not_a_scale_out() {
    let m = meter(&[200.0; 30]);
    let mut a = aas(1, 20, 8);
    let t0 = visible(14);
    a.evaluate(t0, 8, &m);
    assert_eq!(a.desired, 4);
    // The low alarm stays in ALARM on late datapoints; 4 in service now.
    // ceil(4 x 200 / 450) = 2, but the cooldown holds until t0 + 300.
    a.evaluate(t0 + 60, 4, &m);
    a.evaluate(t0 + 240, 4, &m);
    assert_eq!(a.desired, 4);
    a.evaluate(t0 + 300, 4, &m);
    assert_eq!(a.desired, 2, "the cooldown ended");

    // A scale-out during the scale-in cooldown acts at once.
    let mut b = aas(1, 20, 8);
    let mut values = vec![200.0; 15];
    values.extend([1000.0, 1000.0, 1000.0]);
    let m = meter(&values);
    b.evaluate(visible(14), 8, &m);
    assert_eq!(b.desired, 4);
    b.evaluate(visible(17), 4, &m);
    assert_eq!(
        b.desired, 9,
        "ceil(4 x 1000 / 450) = 9, 3 minutes into the scale-in cooldown"
    );
}

#[test]
fn capacity_added_by_a_scale_out_is_not_added_again_during_its_cooldown() {
    let mut values = vec![900.0; 3];
    let m = meter(&values);
    let mut a = aas(1, 40, 4);
    a.evaluate(visible(2), 4, &m);
    assert_eq!(a.desired, 8);
    // Still starting (4 in service): the same load asks for 8 again: no change.
    values.push(900.0);
    a.evaluate(visible(3), 4, &meter(&values));
    assert_eq!(a.desired, 8);
    // A larger scale-out is allowed: ceil(4 x 1000 / 450) = 9.
    values.push(1000.0);
    a.evaluate(visible(4), 4, &meter(&values));
    assert_eq!(a.desired, 9);
    // All 9 in service at t1: the activity completes and the 300 s cooldown starts. Late
    // datapoints still show 1000 per instance (measured on 4): computed on 9 they would ask for
    // 20; within the cooldown they are computed on the 4 they were measured on.
    let t1 = visible(5);
    values.extend([1000.0; 6]);
    let m = meter(&values);
    a.evaluate(t1, 9, &m);
    a.evaluate(t1 + 240, 9, &m);
    assert_eq!(a.desired, 9);
    // After the cooldown, a datapoint still above target is computed on the 9 in service.
    a.evaluate(t1 + 300, 9, &m);
    assert_eq!(a.desired, 20, "ceil(9 x 1000 / 450)");
}

#[test]
fn raising_min_above_the_desired_count_scales_out_and_lowering_max_scales_in() {
    let mut a = aas(1, 20, 4);
    a.register(10, 20, Suspended::default());
    assert_eq!(a.desired, 10);
    a.register(2, 6, Suspended::default());
    assert_eq!(a.desired, 6);
    // Lowering min changes nothing by itself: scale-in is the policy's job.
    a.register(1, 20, Suspended::default());
    assert_eq!(a.desired, 6);
}

#[test]
fn suspended_dynamic_scaling_blocks_the_policies() {
    let m = meter(&[200.0; 15]);
    let mut a = aas(1, 20, 8);
    a.register(
        1,
        20,
        Suspended {
            dynamic_in: true,
            ..Suspended::default()
        },
    );
    a.evaluate(visible(14), 8, &m);
    assert_eq!(a.desired, 8, "scale-in suspended");

    let m = meter(&[900.0; 3]);
    let mut b = aas(1, 20, 4);
    b.register(
        1,
        20,
        Suspended {
            dynamic_out: true,
            ..Suspended::default()
        },
    );
    b.evaluate(visible(2), 4, &m);
    assert_eq!(b.desired, 4, "scale-out suspended");
}

#[test]
fn scheduled_actions_set_bounds_at_their_time_unless_suspended() {
    use headroom_sim::aas::Firing;
    let firing = Firing {
        at: 3600,
        min: Some(6),
        max: None,
    };
    let mut a = aas(1, 20, 2).with_schedule(vec![firing]);
    a.run_schedule(3599);
    assert_eq!((a.min, a.desired), (1, 2));
    a.run_schedule(3600);
    assert_eq!((a.min, a.desired), (6, 6));

    let mut b = aas(1, 20, 2).with_schedule(vec![firing]);
    b.register(
        1,
        20,
        Suspended {
            scheduled: true,
            ..Suspended::default()
        },
    );
    b.run_schedule(3600);
    assert_eq!(b.min, 1);
}

#[test]
fn backlog_step_policy_adds_one_from_zero_once_per_cooldown() {
    let mut m = Meter::new(1.0);
    for minute in 0..10 {
        m.minute_series[Metric::HasBacklogWithoutCapacity.index()].push(minute, 1.0);
    }
    let step = StepPolicy {
        adjustment: 1,
        cooldown: 300,
    };
    let mut a = Aas::new(0, 5, 0, None, Some(step), (DELAY, 20));
    // One datapoint visible: 2 of 2 needed.
    a.evaluate(visible(0), 0, &m);
    assert_eq!(a.desired, 0);
    a.evaluate(visible(1), 0, &m);
    assert_eq!((a.desired, a.backlog), (1, AlarmState::Alarm));
    // Still nothing in service after the cooldown: 0 + 1 = 1, no second instance.
    a.evaluate(visible(1) + 300, 0, &m);
    assert_eq!(a.desired, 1);
}

#[test]
fn instances_serve_only_after_their_provisioning_time() {
    let world = World::parse(
        "w",
        "[[target]]\nresource_id = \"endpoint/e/variant/v\"\ncapacity_per_instance = 10.0\nprovisioning = \"6m\"\n",
    )
    .expect("valid world");
    let mut rng = SmallRng::seed_from_u64(1);
    let mut e = Endpoint::new(&world.targets[0], 2);
    let mut a = aas(1, 20, 2);
    a.register(5, 20, Suspended::default());
    e.converge(a.desired, 1000, &mut rng);
    assert_eq!((e.in_service(), e.billed()), (2, 5));
    e.advance(1000 + 350);
    assert_eq!(e.in_service(), 2);
    e.advance(1000 + 360);
    assert_eq!(e.in_service(), 5);
}

#[test]
fn high_resolution_concurrency_scales_out_on_three_ten_second_datapoints() {
    // Target 3 concurrent requests per instance; 10-second datapoints visible 20 s late.
    let policy = TrackingPolicy {
        metric: Metric::ConcurrentRequestsPerModel,
        target_value: 3.0,
        ..tracking(3.0)
    };
    let mut a = Aas::new(1, 20, 4, Some(policy), None, (DELAY, 20));
    let mut m = Meter::new(1.0);
    for period in 0..3 {
        m.ten_second.push(period, 6.0);
    }
    // Period p is visible from 10 (p + 1) + 20: periods 0 and 1 by 40 s, 2 by 50 s.
    a.evaluate(40, 4, &m);
    assert_eq!(a.desired, 4);
    a.evaluate(50, 4, &m);
    assert_eq!(
        a.desired, 8,
        "ceil(4 x 6 / 3), 50 s after the load rose, not minutes"
    );
}
