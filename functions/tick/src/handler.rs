//! Maps the tick's events to domain input and the outcome to a response. All rules live in
//! headroom-core; this file only routes.

use chrono::{DateTime, Utc};
use headroom_core::capacity_port::CurrentCapacity;
use headroom_core::metrics_port::{DemandHistory, NoDemand};
use headroom_core::peaks::peak_change;
use headroom_core::ports::{ScalingTargets, StateStore, DESCRIBE_PAGE};
use headroom_core::reconcile::{
    load_plan, reconcile_named, EventChange, ReconcileError, TickFailure, TickReport,
};
use headroom_core::state::take_state;
use headroom_core::usecase::forecast_refresh::tick_with_forecasts;
use headroom_core::ScalableTargetId;
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
/// the tick already read every state, so it knows which forecasts are due at no extra cost; the
/// use case is `headroom_core::usecase::forecast_refresh::tick_with_forecasts`).
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
            let report = tick_with_forecasts(aas, store, Some(capacity), metrics, now).await?;
            let failed = report.errors.iter().filter(|e| e.retryable).count();
            for failure in &report.errors {
                tracing::error!(target_id = %failure.target, retryable = failure.retryable, error = %failure.error, "reconcile failed");
            }
            record_failures(store, &report.errors, now).await;
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
            if !state.record_error(&failure.error, None, failure.retryable, now) {
                continue;
            }
            let token = format!("tick-error@{}#{id}", now.timestamp_millis());
            if let Err(e) = store.save_state(id, &state, &token).await {
                tracing::warn!(target_id = %id, error = %e, "could not record the failure in the target state");
            }
        }
    }
}

impl headroom_lambda::Classified for HandlerError {
    fn is_retryable(&self) -> bool {
        HandlerError::is_retryable(self)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // a failed unwrap is a failed test
mod tests {
    use std::sync::atomic::{AtomicBool, Ordering};

    use headroom_core::capacity_port::NoCapacity;
    use headroom_core::memory::{MemoryScalingTargets, MemoryStateStore};
    use headroom_core::model::{Observed, Suspended};
    use headroom_core::ports::{ErrorClass, FailureKind, PortError};

    use super::*;

    /// AAS in memory whose RegisterScalableTarget is denied while `deny` is set.
    #[derive(Default)]
    struct DenyingAas {
        inner: MemoryScalingTargets,
        deny: AtomicBool,
    }

    impl ScalingTargets for DenyingAas {
        async fn describe(
            &self,
            ids: &[ScalableTargetId],
        ) -> Result<Vec<Observed>, headroom_core::ports::PortError> {
            self.inner.describe(ids).await
        }

        async fn register(
            &self,
            id: &ScalableTargetId,
            min: u32,
            max: u32,
            suspended: Suspended,
        ) -> Result<(), PortError> {
            if self.deny.load(Ordering::SeqCst) {
                return Err(PortError::new(
                    format!("register the scalable target {id}"),
                    ErrorClass::Permanent,
                    "denied",
                )
                .with_answer(
                    FailureKind::Access,
                    Some("AccessDeniedException".into()),
                    "not authorized to perform: application-autoscaling:RegisterScalableTarget",
                ));
            }
            self.inner.register(id, min, max, suspended).await
        }
    }

    fn t(s: &str) -> DateTime<Utc> {
        s.parse().unwrap()
    }

    #[tokio::test]
    async fn a_failing_target_records_its_error_and_since_when_until_it_converges() {
        // GIVEN a managed target whose registration AAS denies
        let id: ScalableTargetId = "endpoint/chat/variant/AllTraffic".parse().unwrap();
        let store = MemoryStateStore::default().with_plan(&format!(
            "version = 1\n[[target]]\nresource_id = \"{id}\"\nmin_capacity = 2\nmax_capacity = 6\n"
        ));
        let aas = DenyingAas::default();
        aas.deny.store(true, Ordering::SeqCst);
        let tick = serde_json::from_str::<serde_json::Value>(include_str!(
            "../../../events/schedule/tick-rule.json"
        ))
        .unwrap();

        // WHEN two ticks fail the same way
        for at in ["2026-03-14T09:00:00Z", "2026-03-14T09:01:00Z"] {
            let out = handle(&aas, &store, &NoCapacity, &tick, t(at))
                .await
                .unwrap();
            assert!(matches!(out, Outcome::Tick(ref r) if r.errors.len() == 1));
        }
        // THEN the state holds the error once, since the first tick
        let state = store.state(&id);
        let error = state.last_error.clone().expect("the failure is recorded");
        assert_eq!(error.since, t("2026-03-14T09:00:00Z"));
        assert!(error.message.contains("AccessDeniedException"), "{error:?}");
        assert!(!error.retryable);

        // WHEN AAS accepts again THEN the next tick converges, and the one after finds AAS in
        // step and clears the error (the state is written before AAS is called, so the tick that
        // registers cannot know yet that the register will succeed)
        aas.deny.store(false, Ordering::SeqCst);
        handle(&aas, &store, &NoCapacity, &tick, t("2026-03-14T09:02:00Z"))
            .await
            .unwrap();
        assert_eq!(aas.inner.get(&id).map(|o| o.min), Some(2));
        handle(&aas, &store, &NoCapacity, &tick, t("2026-03-14T09:03:00Z"))
            .await
            .unwrap();
        assert_eq!(store.state(&id).last_error, None);
    }
}
