//! An explicit peak (`headroom.peak/v1`, from a user's EventBridge Scheduler schedule): a
//! claim for its window, applied at once to the one target it names.

use chrono::{DateTime, Utc};
use serde::Serialize;

use crate::peaks::{peak_change, PeakRequest};
use crate::plan::Plan;
use crate::ports::{ScalingTargets, StateStore};
use crate::reconcile::{load_plan, reconcile_named, EventChange, ReconcileError};
use crate::Action;

use super::Ports;

/// What the peak did to its target.
#[derive(Debug, Clone, Serialize)]
pub struct PeakOutcome {
    pub target: String,
    /// The same request was applied before: nothing changed.
    pub duplicate: bool,
    /// The target's effective MinCapacity now.
    pub min: u32,
    /// Whether this run registered new bounds with Application Auto Scaling.
    pub registered: bool,
    pub notes: Vec<String>,
}

/// Applies `request` at `now`: loads the plan, then [`peak_with_plan`].
pub async fn on_peak<T, H, C, E, S, R, D>(
    ports: Ports<'_, T, H, C, E, S, R, D>,
    request: &PeakRequest,
    now: DateTime<Utc>,
) -> Result<PeakOutcome, ReconcileError>
where
    T: ScalingTargets,
    S: StateStore,
{
    let (_, plan) = load_plan(ports.state).await?;
    peak_with_plan(ports, &plan, request, now).await
}

/// The peak with the plan in hand (the simulator holds its own). A target the plan does not
/// manage is refused (`Unmanaged`), whatever the event says.
pub async fn peak_with_plan<T, H, C, E, S, R, D>(
    ports: Ports<'_, T, H, C, E, S, R, D>,
    plan: &Plan,
    request: &PeakRequest,
    now: DateTime<Utc>,
) -> Result<PeakOutcome, ReconcileError>
where
    T: ScalingTargets,
    S: StateStore,
{
    let target = plan
        .target(&request.target)
        .ok_or_else(|| ReconcileError::Unmanaged {
            target: request.target.to_string(),
        })?;
    let apply = peak_change(target, request, now);
    let change = EventChange {
        key: request.idempotency_key(),
        apply: &apply,
    };
    let trigger = format!(
        "peak-event:{}",
        request.id.as_deref().unwrap_or(&request.name)
    );
    let outcome = reconcile_named(
        ports.targets,
        ports.state,
        plan,
        &request.target,
        now,
        &trigger,
        Some(&change),
    )
    .await?;
    Ok(PeakOutcome {
        target: request.target.to_string(),
        duplicate: outcome.duplicate,
        min: outcome.decision.desired.min,
        registered: matches!(outcome.decision.action, Action::Register { .. }),
        notes: outcome.notes,
    })
}
