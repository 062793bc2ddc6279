//! The tick function: the periodic safety-net tick (reconcile every managed target, refresh due
//! forecasts) and explicit peak events. The use cases are `headroom_core::usecase::{tick, peak}`;
//! this crate parses the event and wires the ports.

pub mod operations;

use chrono::{DateTime, Utc};
use headroom_core::capacity_port::CurrentCapacity;
use headroom_core::deploy_ports::ScheduleReviewStore;
use headroom_core::metrics_port::DemandHistory;
use headroom_core::ports::{ScalingTargets, StateStore};
use headroom_core::trigger::{Function, Trigger};
use headroom_core::usecase::peak::{on_peak, PeakOutcome};
use headroom_core::usecase::tick::on_tick;
use headroom_core::usecase::tick::TickReport;
use headroom_core::usecase::Ports;
use headroom_lambda::{misrouted, parse, EdgeError};
use serde::Serialize;

pub use headroom_core::usecase::tick::TickError;

pub type Error = EdgeError<TickError>;

/// What the function answers.
#[derive(Debug, Serialize)]
#[serde(tag = "handled", rename_all = "snake_case")]
pub enum Outcome {
    Tick(TickReport),
    Peak(PeakOutcome),
}

/// Handles one raw event at `now`. With a `demand` port, due forecasts are refreshed after the
/// tick; with `()` they are left due. With a `reviews` port, the refresh's schedule verdicts open
/// schedule reviews; with `()` they are only logged.
pub async fn handle<T, H, C, E, S, R, D>(
    ports: Ports<'_, T, H, C, E, S, R, D>,
    event: &serde_json::Value,
    now: DateTime<Utc>,
) -> Result<Outcome, Error>
where
    T: ScalingTargets,
    C: CurrentCapacity,
    S: StateStore,
    R: ScheduleReviewStore,
    D: DemandHistory,
{
    let failed = |e: TickError| EdgeError::Failed(e);
    match parse(event)? {
        Trigger::Tick(tick) => on_tick(ports, &tick, now)
            .await
            .map(Outcome::Tick)
            .map_err(failed),
        Trigger::Peak(request) => on_peak(ports, &request, now)
            .await
            .map(Outcome::Peak)
            .map_err(|e| failed(e.into())),
        other => Err(misrouted(&other, Function::Tick)),
    }
}
