//! The tick's single pass over every managed target, and what it reports. The pass itself
//! is feature-blind reconcile (`crate::reconcile`); the features it consults are here: the
//! capacity check of pending wakes and firing guards (`alarms`), and which forecasts are due
//! (`forecast`).

use chrono::{DateTime, Utc};
use serde::Serialize;

use crate::alarms::{observe_capacity, wants_capacity_observation};
use crate::capacity_port::{Counts, CurrentCapacity};
use crate::decide::Action;
use crate::forecast::is_due;
use crate::ids::ScalableTargetId;
use crate::plan::Plan;
use crate::ports::{ScalingTargets, StateStore, DESCRIBE_PAGE};
use crate::reconcile::{reconcile_observed, Observation, TargetOutcome};
use crate::state::{answer_at, take_state_at, TargetState};

/// What one tick did.
#[derive(Debug, Default, Serialize)]
pub struct TickReport {
    pub plan_version: u64,
    pub targets: usize,
    pub registered: Vec<String>,
    pub paused: Vec<String>,
    pub drifted: Vec<String>,
    pub state_writes: usize,
    /// What SageMaker's counts showed (wake latencies, high-water marks), per target.
    pub observed: Vec<String>,
    pub errors: Vec<TickFailure>,
    /// Targets whose demand forecast is due for its hourly refresh
    /// (`usecase::forecast_refresh::refresh_forecasts`), found in the states the tick read anyway.
    pub forecast_due: Vec<ScalableTargetId>,
    /// Forecasts the tick refreshed after its pass.
    #[serde(skip_serializing_if = "is_zero")]
    pub forecasts_refreshed: usize,
    /// Refreshes that failed (left due for the next tick; they do not fail the tick).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub forecast_errors: Vec<TickFailure>,
    /// Schedule reviews the refresh's verdicts opened, updated or reopened: `(id, action)`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub schedule_reviews: Vec<(String, &'static str)>,
}

#[derive(Debug, Serialize)]
pub struct TickFailure {
    pub target: String,
    pub error: String,
    /// AWS's error code, when AWS answered (`ThrottlingException`, `AccessDeniedException`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
    pub retryable: bool,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// The tick's single pass over the plan, a page of 50 targets at a time: one describe and one
/// state read per page; for the few targets whose state asks for it (a pending wake, a firing
/// burst guard), SageMaker's counts are read and observed first (`alarms::observe_capacity`), so a
/// raised high-water mark or a measured wake latency lands in the same decision and write.
/// SageMaker is read at most once per target; when the write loses a race, the target is redone
/// from fresh reads with the same counts, so the observation is not lost.
pub async fn tick_plan_observing<A: ScalingTargets, S: StateStore, C: CurrentCapacity>(
    aas: &A,
    store: &S,
    capacity: Option<&C>,
    plan: &Plan,
    plan_version: u64,
    now: DateTime<Utc>,
) -> TickReport {
    let mut report = TickReport {
        plan_version,
        targets: plan.targets.len(),
        ..TickReport::default()
    };
    for page in plan.targets.chunks(DESCRIBE_PAGE) {
        let ids: Vec<ScalableTargetId> = page.iter().map(|t| t.id.clone()).collect();
        let (observed, mut states) = match (aas.describe(&ids).await, store.load_states(&ids).await)
        {
            (Ok(o), Ok(s)) => (o, s),
            (Err(e), _) | (_, Err(e)) => {
                let retryable = e.is_retryable();
                for id in &ids {
                    report.errors.push(TickFailure {
                        target: id.to_string(),
                        error: format!("failed to observe the page: {e}"),
                        code: e.code().map(str::to_owned),
                        retryable,
                    });
                }
                continue;
            }
        };
        for (i, target) in page.iter().enumerate() {
            let before = take_state_at(&mut states, i, &target.id);
            if target.forecast.is_some() && is_due(before.forecast.as_deref(), now) {
                report.forecast_due.push(target.id.clone());
            }
            let mut counts = None;
            if let Some(capacity) =
                capacity.filter(|_| wants_capacity_observation(target, &before, now))
            {
                match capacity.desired_and_current(&target.id).await {
                    Ok(Some(found)) => counts = Some(found),
                    Ok(None) => {
                        tracing::warn!(target_id = %target.id, "SageMaker does not know this target: no capacity observed")
                    }
                    // The decision goes ahead without the observation; the next tick reads again.
                    Err(e) => report.errors.push(TickFailure {
                        target: target.id.to_string(),
                        retryable: e.is_retryable(),
                        code: e.code().map(str::to_owned),
                        error: format!("failed to read SageMaker capacity: {e}"),
                    }),
                }
            }
            let observe = counts.map(|c: Counts| {
                move |state: &mut TargetState| {
                    observe_capacity(target, state, c.desired, c.current, now)
                }
            });
            let seen = answer_at(&observed, i, |o| o.id == target.id).map(|k| &observed[k]);
            let page_reads = (seen, before);
            // Another invocation may write this target meanwhile: then it is redone alone, from
            // fresh reads, with the same observation.
            let result = reconcile_observed(
                aas,
                store,
                target,
                now,
                "tick",
                observe.as_ref().map(|o| o as Observation<'_>),
                page_reads,
            )
            .await;
            match result {
                Ok((outcome, notes)) => {
                    let TargetOutcome {
                        decision,
                        state_written,
                        ..
                    } = outcome;
                    // Most targets of most ticks change nothing: their name is not even
                    // formatted.
                    let name = || target.id.to_string();
                    if state_written {
                        report.state_writes += 1;
                    }
                    match decision.action {
                        Action::Register { .. } => report.registered.push(name()),
                        Action::Paused { .. } => report.paused.push(name()),
                        Action::None => {}
                    }
                    if decision.drift.is_some() {
                        report.drifted.push(name());
                    }
                    if !notes.is_empty() {
                        report
                            .observed
                            .push(format!("{}: {}", name(), notes.join("; ")));
                    }
                }
                Err(e) => report.errors.push(TickFailure {
                    target: target.id.to_string(),
                    retryable: e.is_retryable(),
                    code: e.aws_code().map(str::to_owned),
                    error: e.to_string(),
                }),
            }
        }
    }
    report
}
