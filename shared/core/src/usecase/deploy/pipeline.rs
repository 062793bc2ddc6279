//! A deployment pipeline's call (`headroom.pipeline/v1`): `deployed` watches the named targets
//! as a SageMaker event would, with the pipeline's label; `check` answers whether a review is
//! open (or pending, for an approved package not rolled out yet), so the pipeline can hold a
//! promotion.

use chrono::{DateTime, Utc};

use crate::deploy_ports::{Endpoints, ReviewStore, ScalingHistory};
use crate::metrics_port::DemandHistory;
use crate::ports::{ScalingTargets, StateStore};
use crate::reconcile::load_plan;
use crate::review::ReviewStatus;
use crate::trigger::{PipelineAction, PipelineHook};

use super::error::port;
use super::observe::Observer;
use super::targets::Only;
use super::watch::Watch;
use super::{CheckAnswer, DeployError, Outcome, Response, ReviewBrief, Watcher};

impl<T, H, E, S, R, D> Watcher<'_, T, H, E, S, R, D>
where
    T: ScalingTargets,
    H: ScalingHistory,
    E: Endpoints,
    S: StateStore,
    R: ReviewStore,
    D: DemandHistory,
{
    pub async fn on_pipeline(
        &self,
        hook: &PipelineHook,
        now: DateTime<Utc>,
    ) -> Result<Response, DeployError> {
        let (_, plan) = load_plan(self.state).await?;
        let mut observer = Observer::new(self.endpoints, now);
        let only = Only {
            variant: hook.variant.clone(),
            component: hook.inference_component.clone(),
        };
        let trigger = format!("pipeline:{}:{}", hook.pipeline_run_id, hook.action.as_str());
        let targets = self
            .targets_on(&plan, &hook.endpoint, &only, &mut observer)
            .await?;
        let mut response = Response::new(
            trigger.clone(),
            Some(hook.endpoint.to_string()),
            Outcome::Watched,
        );
        if targets.is_empty() {
            tracing::info!(trigger, endpoint = %hook.endpoint, "no managed target matches the pipeline hook: nothing to do");
            response.outcome = Outcome::Ignored;
            response.reason = Some(format!(
                "no target managed by the plan matches endpoint {}{}: check the names in the hook",
                hook.endpoint,
                hook.variant
                    .as_ref()
                    .map(|v| format!(" variant {v}"))
                    .or_else(|| hook
                        .inference_component
                        .as_ref()
                        .map(|c| format!(" inference component {c}")))
                    .unwrap_or_default()
            ));
            if hook.action == PipelineAction::Check {
                response.review = Some(CheckAnswer::Unmanaged);
            }
            return Ok(response);
        }
        match hook.action {
            PipelineAction::Check => {
                response.outcome = Outcome::Answered;
                for target in targets {
                    let id = &target.id;
                    let reviews = self
                        .reviews
                        .reviews(id)
                        .await
                        .map_err(port(id, "list the reviews"))?;
                    for r in reviews {
                        match r.status {
                            ReviewStatus::Open => response.open_reviews.push(ReviewBrief::of(r)),
                            ReviewStatus::Pending => {
                                response.pending_reviews.push(ReviewBrief::of(r))
                            }
                            ReviewStatus::Acked
                            | ReviewStatus::Superseded
                            | ReviewStatus::Withdrawn => {}
                        }
                    }
                }
                // An open review holds the promotion; a pending one says a package approved
                // for a target was not judged yet (the pipeline decides whether that holds).
                response.review = Some(if !response.open_reviews.is_empty() {
                    CheckAnswer::Open
                } else if !response.pending_reviews.is_empty() {
                    CheckAnswer::Pending
                } else {
                    CheckAnswer::Clear
                });
                tracing::info!(
                    trigger,
                    endpoint = %hook.endpoint,
                    open_reviews = response.open_reviews.len(),
                    pending_reviews = response.pending_reviews.len(),
                    answer = response.review.map_or("", CheckAnswer::as_str),
                    "pipeline check answered"
                );
                Ok(response)
            }
            PipelineAction::Deployed => {
                let watch = Watch {
                    trigger,
                    key: hook.idempotency_key(),
                    event: None,
                    label: hook.model_version.clone(),
                    now,
                };
                for target in targets {
                    response
                        .targets
                        .push(self.watch_target(target, &mut observer, &watch).await?);
                }
                Ok(response)
            }
        }
    }
}
