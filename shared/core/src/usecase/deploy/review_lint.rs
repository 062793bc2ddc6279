//! The lint a review carries: `headroom lint`'s rules, run when the review opens, with the old
//! model's measurements (the day before the change) beside the new model's first ones (from
//! the change to now, when at least [`NEW_MODEL_MIN`] have passed; the SageMaker event that
//! reveals a change usually arrives as the rollout ends, so there are often none yet and the
//! review says so). The change is the endpoint's LastModifiedTime when SageMaker gave one,
//! otherwise the moment the watcher saw the new model.

use chrono::{DateTime, Duration, Utc};

use crate::lint::lint;
use crate::metrics_port::{DemandHistory, Workload};
use crate::plan::TargetPlan;
use crate::review::{ReviewLint, ScalingPolicySummary};
use crate::state::TargetState;
use crate::usecase::lint::{gather_with, workloads};

use super::{ChangeContext, Watcher};

/// The old model's window: a day covers its daily cycle.
pub const OLD_MODEL_WINDOW: Duration = Duration::hours(24);
/// Less time than this under the new model measures nothing worth comparing (standard metrics
/// arrive once a minute and a few minutes late: aws-facts.md).
pub const NEW_MODEL_MIN: Duration = Duration::minutes(10);

impl<T, H, E, S, R, D> Watcher<'_, T, H, E, S, R, D>
where
    D: DemandHistory,
{
    /// Best effort: what cannot be read becomes a gap of the review, never a failed event.
    pub(super) async fn review_lint(
        &self,
        target: &TargetPlan,
        state: &TargetState,
        policies: &[ScalingPolicySummary],
        change: ChangeContext,
        now: DateTime<Utc>,
        gaps: &mut Vec<String>,
    ) -> ReviewLint {
        let changed_at = change.changed_at;
        let ids = [target.id.clone()];
        let (before, gap) =
            workloads(self.demand, &ids, changed_at - OLD_MODEL_WINDOW, changed_at).await;
        gaps.extend(gap.map(|g| format!("lint: {g}")));
        let old_model = before.and_then(|mut w| w.pop());
        let new_model = if now - changed_at >= NEW_MODEL_MIN {
            let (after, gap) = workloads(self.demand, &ids, changed_at, now).await;
            gaps.extend(gap.map(|g| format!("lint: {g}")));
            after.and_then(|mut w| w.pop())
        } else {
            if self.demand.is_wired() {
                gaps.push(format!(
                    "lint: no measurements under the new model yet (it serves since {}; the \
                     lint needs {} min): run `headroom lint {}` once it has served",
                    changed_at.format("%Y-%m-%dT%H:%M:%SZ"),
                    NEW_MODEL_MIN.num_minutes(),
                    target.id
                ));
            }
            None
        };
        let gathered = gather_with(
            policies.to_vec(),
            change.serving,
            self.demand,
            target,
            state,
        )
        .await;
        gaps.extend(gathered.gaps.iter().map(|g| format!("lint: {g}")));
        let findings = lint(&gathered.facts(target, new_model.as_ref(), old_model.as_ref()));
        ReviewLint {
            findings,
            old_model,
            new_model: new_model.filter(|w: &Workload| w.from < w.to),
        }
    }
}
