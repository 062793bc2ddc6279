//! The tick's capacity check: for targets with a pending wake or a firing burst guard, read
//! SageMaker's desired and in-service counts and record what they show (wake latency, a higher
//! high-water mark). The rules are pure (`alarms::observe_capacity`); this only reads and writes.

use chrono::{DateTime, Utc};
use serde::Serialize;

use crate::alarms::{observe_capacity, wants_capacity_observation};
use crate::capacity_port::CurrentCapacity;
use crate::ids::ScalableTargetId;
use crate::plan::Plan;
use crate::ports::{SaveOutcome, StateStore, DESCRIBE_PAGE};
use crate::state::TargetState;

/// How often a conflicting write is retried before the next tick takes over.
const MAX_ATTEMPTS: usize = 3;

/// What one capacity check did.
#[derive(Debug, Default, Serialize)]
pub struct CapacityReport {
    /// Targets whose counts were read.
    pub observed: Vec<String>,
    /// Wake latencies recorded now: (target, seconds).
    pub woke: Vec<(String, i64)>,
    pub state_writes: usize,
    pub notes: Vec<String>,
    /// Failures, per target; a retryable one is tried again at the next tick anyway.
    pub errors: Vec<CapacityFailure>,
}

#[derive(Debug, Serialize)]
pub struct CapacityFailure {
    pub target: String,
    pub error: String,
    pub retryable: bool,
}

impl CapacityReport {
    fn fail(&mut self, id: &ScalableTargetId, error: impl std::fmt::Display, retryable: bool) {
        self.errors.push(CapacityFailure {
            target: id.to_string(),
            error: error.to_string(),
            retryable,
        });
    }
}

/// Checks pending wakes (and firing guards' high-water marks) of every managed target. Reads the
/// states a page at a time, calls SageMaker only for targets that need it, and writes a state only
/// when it changed, conditionally (a lost race is re-read and redone).
pub async fn check_pending_wakes<C: CurrentCapacity, S: StateStore>(
    capacity: &C,
    store: &S,
    plan: &Plan,
    now: DateTime<Utc>,
) -> CapacityReport {
    let mut report = CapacityReport::default();
    for page in plan.targets.chunks(DESCRIBE_PAGE) {
        let ids: Vec<ScalableTargetId> = page.iter().map(|t| t.id.clone()).collect();
        let states = match store.load_states(&ids).await {
            Ok(s) => s,
            Err(e) => {
                let retryable = e.is_retryable();
                for id in &ids {
                    report.fail(id, format!("failed to load the state page: {e}"), retryable);
                }
                continue;
            }
        };
        for target in page {
            let mut state = states
                .iter()
                .find(|(id, _)| id == &target.id)
                .map(|(_, s)| s.clone())
                .unwrap_or_default();
            for attempt in 0..MAX_ATTEMPTS {
                if !wants_capacity_observation(target, &state, now) {
                    break;
                }
                let counts = match capacity.desired_and_current(&target.id).await {
                    Ok(c) => c,
                    Err(e) => {
                        let retryable = e.is_retryable();
                        report.fail(&target.id, e, retryable);
                        break;
                    }
                };
                if attempt == 0 {
                    report.observed.push(target.id.to_string());
                }
                let Some((desired, current)) = counts else {
                    report.notes.push(format!(
                        "{}: SageMaker does not know this target",
                        target.id
                    ));
                    break;
                };
                let mut next: TargetState = state.clone();
                let notes = observe_capacity(target, &mut next, desired, current, now);
                if next.same_content(&state) {
                    break;
                }
                let token = format!("capacity@{}", now.timestamp_millis());
                match store.save_state(&target.id, &next, &token).await {
                    Ok(SaveOutcome::Saved) => {
                        report.state_writes += 1;
                        if next.wake_latencies != state.wake_latencies {
                            if let Some(l) = next.wake_latencies.last() {
                                report.woke.push((target.id.to_string(), l.seconds));
                            }
                        }
                        for note in notes {
                            tracing::info!(target_id = %target.id, note = %note, "capacity check");
                            report.notes.push(format!("{}: {note}", target.id));
                        }
                        break;
                    }
                    Ok(SaveOutcome::Conflict) => {
                        match store.load_states(std::slice::from_ref(&target.id)).await {
                            Ok(fresh) => {
                                state =
                                    fresh.into_iter().next().map(|(_, s)| s).unwrap_or_default();
                                if attempt + 1 == MAX_ATTEMPTS {
                                    report.fail(
                                        &target.id,
                                        "lost the write race repeatedly; the next tick tries again",
                                        true,
                                    );
                                }
                            }
                            Err(e) => {
                                let retryable = e.is_retryable();
                                report.fail(&target.id, e, retryable);
                                break;
                            }
                        }
                    }
                    Err(e) => {
                        let retryable = e.is_retryable();
                        report.fail(&target.id, e, retryable);
                        break;
                    }
                }
            }
        }
    }
    report
}
