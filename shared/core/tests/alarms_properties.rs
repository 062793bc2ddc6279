//! Properties of the alarm automation: alarm events arrive duplicated and out of order, and any
//! such interleaving must end in the same claims as the ordered sequence. The guard takes
//! `burst` by its AWS/SageMaker metric and dimensions (the plan does not name it) and the others by
//! name, so both ways of routing are covered.

use chrono::{DateTime, Duration, Utc};
use headroom_core::alarms::{apply_transition, AlarmRole, AlarmTransition};
use headroom_core::model::AlarmState;
use headroom_core::plan::{parse_plan, TargetPlan};
use headroom_core::state::TargetState;
use proptest::prelude::*;

const PLAN: &str = r#"
version = 1
[[target]]
resource_id = "endpoint/chat/variant/AllTraffic"
min_capacity = 1
max_capacity = 20
  [target.guard]
  alarms = ["burst-math"]
  metrics = ["InvocationsPerInstance"]
  hold = "20m"
  max_duration = "2h"
  step_down = { step = "10m", keep_percent = 50 }
  [target.wake]
  alarms = ["backlog", "burst-math"]
  capacity = 2
  quiet_period = "15m"
  max_duration = "1h"
"#;

const ALARMS: [&str; 3] = ["burst", "burst-math", "backlog"];
const STATES: [AlarmState; 3] = [
    AlarmState::Ok,
    AlarmState::Alarm,
    AlarmState::InsufficientData,
];

fn target() -> TargetPlan {
    parse_plan("p.toml", PLAN)
        .expect("valid plan")
        .targets
        .remove(0)
}

fn start() -> DateTime<Utc> {
    "2026-03-14T09:00:00Z".parse().expect("valid time")
}

/// One delivery: the transition and the desired count the handler saw with it.
type Delivery = (AlarmTransition, Option<u32>);

/// An ordered, CloudWatch-like history: each alarm's `previous` is its own prior state.
fn arb_history(max_gap_min: i64, vary_desired: bool) -> impl Strategy<Value = Vec<Delivery>> {
    let step = (
        0..ALARMS.len(),
        0..STATES.len(),
        0..=max_gap_min,
        0u32..16,
        0..STATES.len(),
    );
    prop::collection::vec(step, 1..10).prop_map(move |steps| {
        let mut now = start();
        let mut last: [Option<AlarmState>; 3] = [None; 3];
        let mut out = Vec::new();
        for (alarm, state, gap, desired, initial) in steps {
            now += Duration::minutes(gap);
            let previous = last[alarm].unwrap_or(STATES[initial]);
            last[alarm] = Some(STATES[state]);
            let mut t =
                AlarmTransition::new(ALARMS[alarm], STATES[state], now).with_previous(previous);
            if ALARMS[alarm] == "burst" {
                t = t.on_metric(
                    "InvocationsPerInstance",
                    &[("EndpointName", "chat"), ("VariantName", "AllTraffic")],
                );
            }
            out.push((t, Some(if vary_desired { desired } else { 6 })));
        }
        out
    })
}

/// The history, and an arrival order: every delivery at least once, some twice or more, shuffled.
fn arb_arrivals(
    max_gap_min: i64,
    vary_desired: bool,
) -> impl Strategy<Value = (Vec<Delivery>, Vec<usize>)> {
    arb_history(max_gap_min, vary_desired).prop_flat_map(|history| {
        let n = history.len();
        let extra = prop::collection::vec(0..n, 0..n * 2);
        (Just(history), extra).prop_flat_map(move |(history, extra)| {
            let mut order: Vec<usize> = (0..n).chain(extra).collect();
            order.sort_unstable();
            (Just(history), Just(order).prop_shuffle())
        })
    })
}

fn run(
    target: &TargetPlan,
    history: &[Delivery],
    order: impl IntoIterator<Item = usize>,
) -> TargetState {
    let mut s = TargetState::default();
    for i in order {
        let (t, desired) = &history[i];
        for role in [AlarmRole::Guard, AlarmRole::Wake] {
            let in_role = match role {
                AlarmRole::Guard => t.alarm_name != "backlog",
                AlarmRole::Wake => t.alarm_name != "burst",
            };
            if in_role {
                apply_transition(target, role, t, *desired, &mut s);
            }
        }
    }
    s
}

fn sorted(history: &[Delivery]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..history.len()).collect();
    order.sort_by_key(|&i| history[i].0.at);
    order
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// Within one burst (every delivery inside the guard's hold), even the desired counts seen
    /// with each delivery may differ: claims and the high-water mark still agree.
    #[test]
    fn reordered_and_duplicated_deliveries_within_a_burst_end_in_the_ordered_claims(
        (history, arrivals) in arb_arrivals(2, true)
    ) {
        let target = target();
        let ordered = run(&target, &history, sorted(&history));
        let shuffled = run(&target, &history, arrivals.clone());
        prop_assert_eq!(&shuffled.claims, &ordered.claims, "arrivals {:?}", arrivals);
        prop_assert_eq!(shuffled.high_water, ordered.high_water);
        prop_assert_eq!(&shuffled.alarm_marks, &ordered.alarm_marks);
        prop_assert_eq!(&shuffled.alarm_facts.metric, &ordered.alarm_facts.metric);
        // What the keep_current fallback keeps, too.
        prop_assert_eq!(
            &shuffled.alarm_facts.no_data_count,
            &ordered.alarm_facts.no_data_count
        );
    }

    /// Over hours (claims expiring and starting again in between), with the target's desired
    /// count steady, any arrival order still ends in the ordered claims.
    #[test]
    fn reordered_and_duplicated_deliveries_over_hours_end_in_the_ordered_claims(
        (history, arrivals) in arb_arrivals(90, false)
    ) {
        let target = target();
        let ordered = run(&target, &history, sorted(&history));
        let shuffled = run(&target, &history, arrivals.clone());
        prop_assert_eq!(&shuffled.claims, &ordered.claims, "arrivals {:?}", arrivals);
        prop_assert_eq!(&shuffled.alarm_marks, &ordered.alarm_marks);
    }

    /// Applying any delivery a second time right away changes nothing.
    #[test]
    fn a_duplicate_has_no_second_effect((history, _) in arb_arrivals(30, true)) {
        let target = target();
        let mut s = TargetState::default();
        for (t, desired) in &history {
            for role in [AlarmRole::Guard, AlarmRole::Wake] {
                apply_transition(&target, role, t, *desired, &mut s);
                let once = s.clone();
                apply_transition(&target, role, t, *desired, &mut s);
                prop_assert_eq!(&s, &once);
            }
        }
    }
}
