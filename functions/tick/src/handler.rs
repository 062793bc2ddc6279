//! Maps the tick's events to domain input and the outcome to a response. All rules live in
//! headroom-core; this file only routes.

use chrono::{DateTime, Utc};
use headroom_core::capacity_port::CurrentCapacity;
use headroom_core::forecast::refresh_forecasts;
use headroom_core::metrics_port::{DemandHistory, NoDemand};
use headroom_core::peaks::peak_change;
use headroom_core::ports::{ScalingTargets, StateStore};
use headroom_core::reconcile::{
    self, load_plan, reconcile_named, EventChange, ReconcileError, TickReport,
};
use headroom_events::{parse_trigger, EventError, Trigger};
use serde::Serialize;

#[derive(Debug, thiserror::Error)]
pub enum HandlerError {
    #[error(transparent)]
    BadEvent(#[from] EventError),
    #[error("the tick function handles ticks and explicit peak events, not a {kind}: route it to {route}")]
    WrongFunction {
        kind: &'static str,
        route: &'static str,
    },
    #[error(transparent)]
    Reconcile(#[from] ReconcileError),
    #[error(
        "{failed} of {total} targets failed with retryable errors; the next tick retries them"
    )]
    TickIncomplete { failed: usize, total: usize },
}

impl HandlerError {
    /// Retryable errors go back to Lambda (retries, then the failure destination); permanent ones
    /// are answered as rejected, since a retry would fail the same way.
    pub fn is_retryable(&self) -> bool {
        match self {
            Self::BadEvent(_) | Self::WrongFunction { .. } => false,
            Self::Reconcile(e) => e.is_retryable(),
            Self::TickIncomplete { .. } => true,
        }
    }
}

/// What the function answers.
#[derive(Debug, Serialize)]
#[serde(tag = "handled", rename_all = "snake_case")]
pub enum Outcome {
    Tick(TickReport),
    Peak {
        target: String,
        duplicate: bool,
        min: u32,
        notes: Vec<String>,
    },
}

/// Handles one event at `now` against the given ports. `capacity` reads SageMaker's counts for the
/// few targets whose state asks for it (pending wakes, firing burst guards).
pub async fn handle<A: ScalingTargets, S: StateStore, C: CurrentCapacity>(
    aas: &A,
    store: &S,
    capacity: &C,
    event: &serde_json::Value,
    now: DateTime<Utc>,
) -> Result<Outcome, HandlerError> {
    handle_with_metrics(aas, store, capacity, None::<&NoDemand>, event, now).await
}

/// [`handle`], refreshing due demand forecasts from `metrics` after the tick (hourly per target:
/// the tick already read every state, so it knows which forecasts are due at no extra cost).
pub async fn handle_with_metrics<
    A: ScalingTargets,
    S: StateStore,
    C: CurrentCapacity,
    M: DemandHistory,
>(
    aas: &A,
    store: &S,
    capacity: &C,
    metrics: Option<&M>,
    event: &serde_json::Value,
    now: DateTime<Utc>,
) -> Result<Outcome, HandlerError> {
    match parse_trigger(event)? {
        Trigger::Tick(tick) => {
            tracing::debug!(event_id = ?tick.id, scheduled = ?tick.at, "tick");
            let (version, plan) = load_plan(store).await?;
            let mut report =
                reconcile::tick_plan_observing(aas, store, Some(capacity), &plan, version, now)
                    .await;
            if let Some(metrics) = metrics.filter(|_| !report.forecast_due.is_empty()) {
                let refresh =
                    refresh_forecasts(metrics, aas, store, &plan, &report.forecast_due, now).await;
                tracing::info!(
                    refreshed = refresh.refreshed.len(),
                    unavailable = refresh.unavailable.len(),
                    metric_calls = refresh.metric_calls,
                    "forecasts refreshed"
                );
                for (target, why) in &refresh.unavailable {
                    tracing::info!(target_id = %target, reason = %why, "no forecast");
                }
                // A failed refresh is retried by the next tick (the forecast stays due); the
                // tick's own result stands.
                for failure in refresh.errors {
                    tracing::warn!(target_id = %failure.target, retryable = failure.retryable, error = %failure.error, "forecast refresh failed");
                }
                report.forecast_due.clear();
            }
            let failed = report.errors.iter().filter(|e| e.retryable).count();
            for failure in &report.errors {
                tracing::error!(target_id = %failure.target, retryable = failure.retryable, error = %failure.error, "reconcile failed");
            }
            tracing::info!(
                targets = report.targets,
                registered = report.registered.len(),
                state_writes = report.state_writes,
                errors = report.errors.len(),
                "tick done"
            );
            if failed > 0 {
                return Err(HandlerError::TickIncomplete {
                    failed,
                    total: report.targets,
                });
            }
            Ok(Outcome::Tick(report))
        }
        Trigger::Peak(request) => {
            let (_, plan) = load_plan(store).await?;
            let target = plan
                .target(&request.target)
                .ok_or_else(|| ReconcileError::Unmanaged {
                    target: request.target.to_string(),
                })?;
            let apply = peak_change(target, &request, now);
            let change = EventChange {
                key: request.idempotency_key(),
                apply: &apply,
            };
            let trigger = format!(
                "peak-event:{}",
                request.id.as_deref().unwrap_or(&request.name)
            );
            let outcome = reconcile_named(
                aas,
                store,
                &plan,
                &request.target,
                now,
                &trigger,
                Some(&change),
            )
            .await?;
            Ok(Outcome::Peak {
                target: request.target.to_string(),
                duplicate: outcome.duplicate,
                min: outcome.decision.desired.min,
                notes: outcome.notes,
            })
        }
        other => Err(HandlerError::WrongFunction {
            kind: other.kind(),
            route: match other {
                Trigger::Alarm(_) => "headroom-alarm",
                _ => "headroom-deploy",
            },
        }),
    }
}

impl headroom_lambda::Classified for HandlerError {
    fn is_retryable(&self) -> bool {
        HandlerError::is_retryable(self)
    }
}
