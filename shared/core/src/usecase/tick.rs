//! The tick: the level-triggered safety net. Reconcile every managed target (one pass, a page
//! of 50 at a time), refresh the demand forecasts that pass found due, and record each failed
//! target's error in its state so that `headroom status` shows it.

use chrono::{DateTime, Utc};

use crate::capacity_port::CurrentCapacity;
use crate::deploy_ports::ScheduleReviewStore;
use crate::ids::ScalableTargetId;
use crate::metrics_port::DemandHistory;
use crate::plan::Plan;
use crate::ports::{ScalingTargets, StateStore, DESCRIBE_PAGE};
use crate::reconcile::{load_plan, ReconcileError};
use crate::state::take_state;
use crate::trigger::Tick;
use crate::usecase::forecast_refresh::{refresh_forecasts, MAX_REFRESHES_PER_TICK};
use crate::usecase::schedule_reviews::open_schedule_reviews;

pub use super::tick_pass::{tick_plan_observing, TickFailure, TickReport};
use super::Ports;

#[derive(Debug, thiserror::Error)]
pub enum TickError {
    #[error(transparent)]
    Reconcile(#[from] ReconcileError),
    /// Some targets failed in a way a retry can help: the invocation fails so that Lambda
    /// retries it (the next tick would too).
    #[error(
        "{failed} of {total} targets failed with retryable errors; the next tick retries them"
    )]
    Incomplete { failed: usize, total: usize },
}

impl TickError {
    pub fn is_retryable(&self) -> bool {
        match self {
            Self::Reconcile(e) => e.is_retryable(),
            Self::Incomplete { .. } => true,
        }
    }
}

/// Runs one tick at `now`: loads the plan, then [`tick_with_plan`]. Fails (retryably) when
/// some target failed in a way a retry can help, after the others are done.
pub async fn on_tick<T, H, C, E, S, R, D>(
    ports: Ports<'_, T, H, C, E, S, R, D>,
    tick: &Tick,
    now: DateTime<Utc>,
) -> Result<TickReport, TickError>
where
    T: ScalingTargets,
    C: CurrentCapacity,
    S: StateStore,
    R: ScheduleReviewStore,
    D: DemandHistory,
{
    tracing::debug!(event_id = ?tick.id, scheduled = ?tick.at, "tick");
    let (version, plan) = load_plan(ports.state).await?;
    let report = tick_with_plan(ports, &plan, version, now).await;
    let failed = report.errors.iter().filter(|e| e.retryable).count();
    if failed > 0 {
        return Err(TickError::Incomplete {
            failed,
            total: report.targets,
        });
    }
    Ok(report)
}

/// The tick with the plan in hand (the simulator holds its own, parsed once): one pass over every
/// target, SageMaker's counts read only for the few whose state asks for it (pending wakes,
/// firing burst guards); then the forecasts that pass found due are refreshed, hourly per
/// target, when the function has a metrics port (the pass already read every state, so it knows
/// which are due at no extra cost); then each failure is recorded in its target's state.
pub async fn tick_with_plan<T, H, C, E, S, R, D>(
    ports: Ports<'_, T, H, C, E, S, R, D>,
    plan: &Plan,
    plan_version: u64,
    now: DateTime<Utc>,
) -> TickReport
where
    T: ScalingTargets,
    C: CurrentCapacity,
    S: StateStore,
    R: ScheduleReviewStore,
    D: DemandHistory,
{
    let mut report = tick_plan_observing(
        ports.targets,
        ports.state,
        Some(ports.capacity),
        plan,
        plan_version,
        now,
    )
    .await;
    if ports.demand.is_wired() && !report.forecast_due.is_empty() {
        let refresh = refresh_forecasts(
            ports.demand,
            ports.targets,
            ports.state,
            plan,
            &report.forecast_due[..report.forecast_due.len().min(MAX_REFRESHES_PER_TICK)],
            now,
        )
        .await;
        tracing::info!(
            refreshed = refresh.refreshed.len(),
            unavailable = refresh.unavailable.len(),
            metric_calls = refresh.metric_calls,
            "forecasts refreshed"
        );
        for (target, why) in &refresh.unavailable {
            tracing::info!(target_id = %target, reason = %why, "no forecast");
        }
        for failure in &refresh.errors {
            let error_code = failure.code.as_deref().unwrap_or("");
            if failure.retryable {
                tracing::warn!(target_id = %failure.target, retryable = true, error_code, error = %failure.error, "forecast refresh failed");
            } else {
                // Counted by the stack's permanent-failure alarm (ERROR, retryable false): a
                // missing cloudwatch:GetMetricData permission would otherwise go unseen.
                tracing::error!(target_id = %failure.target, retryable = false, error_code, error = %failure.error, "forecast refresh failed");
            }
        }
        report.forecasts_refreshed = refresh.refreshed.len();
        let reviews = open_schedule_reviews(ports.reviews, plan, &refresh.verdicts, now).await;
        for error in &reviews.errors {
            tracing::warn!(error = %error, "schedule review not stored; the next refresh tries again");
        }
        report.schedule_reviews = reviews.written;
        // A retryable failure stays due for the next tick, one for good waits an hour (the
        // forecast's refresh_failed); the tick's own outcome stands either way.
        report.forecast_errors = refresh
            .errors
            .into_iter()
            .map(|f| TickFailure {
                target: f.target,
                error: f.error,
                code: f.code,
                retryable: f.retryable,
            })
            .collect();
        report.forecast_due.clear();
    }
    for failure in &report.errors {
        tracing::error!(
            target_id = %failure.target,
            retryable = failure.retryable,
            error_code = failure.code.as_deref().unwrap_or(""),
            error = %failure.error,
            "reconcile failed"
        );
    }
    record_failures(ports.state, &report.errors, now).await;
    tracing::info!(
        targets = report.targets,
        registered = report.registered.len(),
        state_writes = report.state_writes,
        errors = report.errors.len(),
        "tick done"
    );
    report
}

/// Stores each failed target's error in its state, so `headroom status` shows what fails and
/// since when. Best effort: the failure itself is already logged and answered, a lost race or a
/// store that fails too (the failure may be the store's) only costs the record, and the same
/// failure again writes nothing. The next successful decision clears it (`decide`).
async fn record_failures<S: StateStore>(store: &S, failures: &[TickFailure], now: DateTime<Utc>) {
    let ids: Vec<ScalableTargetId> = failures
        .iter()
        .filter_map(|f| f.target.parse().ok())
        .collect();
    for page in ids.chunks(DESCRIBE_PAGE) {
        let mut states = match store.load_states(page).await {
            Ok(states) => states,
            Err(e) => {
                tracing::warn!(error = %e, "could not record the tick's failures in the target states");
                return;
            }
        };
        for id in page {
            let Some(failure) = failures.iter().find(|f| f.target == id.to_string()) else {
                continue;
            };
            let mut state = take_state(&mut states, id);
            if !state.record_error(
                &failure.error,
                failure.code.as_deref(),
                failure.retryable,
                now,
            ) {
                continue;
            }
            let token = format!("tick-error@{}#{id}", now.timestamp_millis());
            if let Err(e) = store.save_state(id, &state, &token).await {
                tracing::warn!(target_id = %id, error = %e, "could not record the failure in the target state");
            }
        }
    }
}
