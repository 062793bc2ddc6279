//! The alarm function: CloudWatch alarm transitions (EventBridge rule or direct alarm action)
//! become `guard` and `wake` claims on the targets the plan names, applied at once. The use
//! case is `headroom_core::usecase::alarm`; this crate parses the event and wires the ports.

pub mod operations;

use chrono::{DateTime, Utc};
use headroom_core::capacity_port::CurrentCapacity;
use headroom_core::ports::{ScalingTargets, StateStore};
use headroom_core::trigger::{Function, Trigger};
use headroom_core::usecase::alarm::on_alarm;
use headroom_core::usecase::Ports;
use headroom_lambda::{misrouted, parse, EdgeError};

pub use headroom_core::usecase::alarm::{AlarmError, AlarmReport, Origin, TargetReport};

pub type Error = EdgeError<AlarmError>;

/// Handles one raw event at `now`, from `origin`.
pub async fn handle<T, H, C, E, S, R, D>(
    ports: Ports<'_, T, H, C, E, S, R, D>,
    event: &serde_json::Value,
    origin: Origin<'_>,
    now: DateTime<Utc>,
) -> Result<AlarmReport, Error>
where
    T: ScalingTargets,
    C: CurrentCapacity,
    S: StateStore,
{
    match parse(event)? {
        Trigger::Alarm(t) => on_alarm(ports, &t, origin, now)
            .await
            .map_err(EdgeError::Failed),
        other => Err(misrouted(&other, Function::Alarm)),
    }
}
