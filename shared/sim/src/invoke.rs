//! The simulated Lambda invocations. Each calls the use case its function calls
//! (`headroom_core::usecase`), over [`SimAas`] for Application Auto Scaling and SageMaker and
//! `MemoryStateStore` for DynamoDB, with the scenario's plan in hand: what the simulator measures
//! is what runs in production. Delivery is immediate: we assume EventBridge's seconds of latency
//! are below the simulator's 10-second step.

use headroom_core::alarms::AlarmTransition;
use headroom_core::memory::{block_on, MemoryStateStore};
use headroom_core::peaks::PeakRequest;
use headroom_core::usecase::alarm::{alarm_with_plan, Origin};
use headroom_core::usecase::peak::peak_with_plan;
use headroom_core::usecase::tick::tick_with_plan;
use headroom_core::usecase::Ports;
use headroom_core::Plan;

use crate::cloudwatch::Transition;
use crate::engine::{instant, HeadroomActivity, SimAas};

/// The simulated world's ports: the tick function's (which are a superset of the alarm's).
fn ports<'a>(
    aas: &'a SimAas,
    store: &'a MemoryStateStore,
) -> Ports<'a, SimAas, (), SimAas, (), MemoryStateStore, (), SimAas> {
    Ports::new(aas, store).with_capacity(aas).with_demand(aas)
}

/// The alarm function receiving one transition of a simulated CloudWatch alarm (its own state
/// time and previous state, as a real account's).
pub fn alarm(
    aas: &SimAas,
    store: &MemoryStateStore,
    plan: &Plan,
    t: &Transition,
    activity: &mut HeadroomActivity,
) {
    let at = instant(t.at);
    // As CloudWatch sends it: the metric of a metric alarm, and the newest datapoint and the
    // threshold in `reasonData`.
    let mut transition = AlarmTransition::new(t.alarm.clone(), t.to, at)
        .with_previous(t.from)
        .with_reading(t.value, t.threshold);
    transition.metric_name = Some(t.metric.to_owned());
    match block_on(alarm_with_plan(
        ports(aas, store),
        plan,
        &transition,
        Origin::Anywhere,
        at,
    )) {
        Ok(report) if report.not_ours => {}
        Ok(report) => {
            activity.alarm_events += 1;
            activity.registers += report.targets.iter().filter(|t| t.registered).count() as u64;
            if let Some(r) = report.rejected.first() {
                activity.errors += report.rejected.len() as u64;
                activity
                    .first_error
                    .get_or_insert_with(|| format!("{}: {}", r.target, r.error));
            }
        }
        Err(e) => {
            activity.alarm_events += 1;
            activity.errors += 1;
            activity
                .first_error
                .get_or_insert_with(|| format!("{}: {e}", t.alarm));
        }
    }
}

/// The tick function receiving one announced peak (`headroom.peak/v1`) at `now`.
pub fn peak(
    aas: &SimAas,
    store: &MemoryStateStore,
    plan: &Plan,
    request: &PeakRequest,
    now: i64,
    activity: &mut HeadroomActivity,
) {
    activity.peak_events += 1;
    match block_on(peak_with_plan(
        ports(aas, store),
        plan,
        request,
        instant(now),
    )) {
        Ok(outcome) => activity.registers += u64::from(outcome.registered),
        Err(e) => {
            activity.errors += 1;
            activity
                .first_error
                .get_or_insert_with(|| format!("{}: {e}", request.target));
        }
    }
}

/// The tick function's periodic tick at `now`: one pass reconciling every target (reading
/// SageMaker's counts for those with a pending wake or a firing guard), then the hourly
/// forecast refresh of the targets that are due, on the same invocation.
pub fn tick(
    aas: &SimAas,
    store: &MemoryStateStore,
    plan: &Plan,
    now: i64,
    activity: &mut HeadroomActivity,
) {
    let report = block_on(tick_with_plan(ports(aas, store), plan, 1, instant(now)));
    activity.ticks += 1;
    activity.registers += report.registered.len() as u64;
    activity.forecast_refreshes += report.forecasts_refreshed as u64;
    for failures in [&report.errors, &report.forecast_errors] {
        if let Some(e) = failures.first() {
            activity.errors += failures.len() as u64;
            activity
                .first_error
                .get_or_insert_with(|| format!("{}: {}", e.target, e.error));
        }
    }
}
