//! The oracle on known step traces, hand-computed.

mod common;
use common::*;
use headroom_sim::Strategy;

const PLAN: &str = r#"
version = 1
[[target]]
resource_id = "endpoint/e/variant/v"
min_capacity = 1
max_capacity = 10
"#;

const WORLD: &str = r#"
[[target]]
resource_id = "endpoint/e/variant/v"
capacity_per_instance = 10.0
provisioning = "6m"
"#;

#[test]
fn oracle_holds_the_least_capacity_and_orders_it_in_time() {
    // GIVEN 10 minutes at 10 req/s, then 10 minutes at 40 req/s (10 req/s per instance)
    let trace = trace(
        "2026-01-05T00:00:00Z",
        20,
        |m| if m < 10 { 10.0 } else { 40.0 },
    );
    let results = run(&scenario(PLAN, WORLD, &trace));
    let oracle = of(&results, Strategy::Oracle);
    // THEN 1 instance, then 4 exactly from minute 10, with no breach
    let before = window(oracle, "2026-01-05T00:00:00Z", "2026-01-05T00:10:00Z");
    let after = window(oracle, "2026-01-05T00:10:00Z", "2026-01-05T00:20:00Z");
    assert!(before.iter().all(|p| p.in_service == 1));
    assert!(after.iter().all(|p| p.in_service == 4));
    assert_eq!(
        (oracle.total.breach_minutes, oracle.total.failed_requests),
        (0, 0)
    );
    // AND it pays for 3 launches of 6 minutes each on top of 10 + 40 instance-minutes:
    // (10 + 40 + 3 x 6) / 60 = 1.13 h.
    assert_eq!(oracle.total.launches, 3);
    assert!(
        (oracle.total.instance_hours - 68.0 / 60.0).abs() < 0.006,
        "{}",
        oracle.total.instance_hours
    );
}

#[test]
fn oracle_keeps_an_instance_through_a_dip_shorter_than_a_launch() {
    // 40 req/s, a 3-minute dip to 10 req/s, then 40 again: keeping 3 idle instances for
    // 3 minutes (9 instance-minutes) is cheaper than relaunching them (18).
    let trace = trace("2026-01-05T00:00:00Z", 20, |m| {
        if (8..11).contains(&m) {
            10.0
        } else {
            40.0
        }
    });
    let results = run(&scenario(PLAN, WORLD, &trace));
    let oracle = of(&results, Strategy::Oracle);
    assert_eq!(oracle.total.launches, 0);
    // 17 minutes at 4, 3 at 1, plus 3 kept idle for 3 minutes: (68 + 3 + 9) / 60.
    assert!(
        (oracle.total.instance_hours - 80.0 / 60.0).abs() < 0.006,
        "{}",
        oracle.total.instance_hours
    );
}

#[test]
fn oracle_is_never_more_expensive_than_target_tracking_on_the_default_scenario() {
    let s = headroom_sim::synthetic::fleet(1, 2).expect("fleet scenario");
    let results = run(&s);
    let tt = of(&results, Strategy::TargetTracking);
    let oracle = of(&results, Strategy::Oracle);
    assert_eq!(oracle.total.breach_minutes, 0);
    assert!(oracle.total.instance_hours < tt.total.instance_hours);
}
