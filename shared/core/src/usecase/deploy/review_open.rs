//! Opening a scaling-policy review when the model behind a target changed: what the reviewer
//! needs (old and new model, policies, bounds, recent decisions, warm-up under the old model),
//! stored once per change, and the endpoint tagged when the plan asks for it. The target's
//! pending reviews (approved packages, `review::package`) are superseded by it.

use std::slice;

use crate::deploy_ports::{Endpoints, ReviewStore, ScalingHistory};
use crate::identity::ModelIdentity;
use crate::ids::ScalableTargetId;
use crate::metrics_port::DemandHistory;
use crate::model::Bounds;
use crate::model::ModelFingerprint;
use crate::plan::TargetPlan;
use crate::ports::SaveOutcome;
use crate::ports::{ScalingTargets, StateStore};
use crate::review::package::{link_rollout, supersede};
use crate::review::{
    build_review, decide_open, OpenDecision, ReviewInput, ScalingPolicySummary, REVIEW_TAG,
    TAG_OPEN,
};
use crate::state::TargetState;

use super::error::port;
use super::watch::Watch;
use super::{ChangeContext, DeployError, ReviewAction, ReviewReport, Watcher};

impl<T, H, E, S, R, D> Watcher<'_, T, H, E, S, R, D>
where
    T: ScalingTargets,
    H: ScalingHistory,
    E: Endpoints,
    S: StateStore,
    R: ReviewStore,
    D: DemandHistory,
{
    #[allow(clippy::too_many_arguments)]
    pub(super) async fn open_review(
        &self,
        target: &TargetPlan,
        watch: &Watch<'_>,
        identity: &ModelIdentity,
        endpoint_arn: Option<String>,
        previous_fingerprint: &ModelFingerprint,
        previous: Option<ModelIdentity>,
        state: &TargetState,
        change: ChangeContext,
        notes: &mut Vec<String>,
    ) -> Result<ReviewReport, DeployError> {
        let id = &target.id;
        if !target.review.enabled {
            tracing::info!(target_id = %id, previous = %previous_fingerprint, current = %identity.fingerprint(), "model identity changed; the plan turns reviews off for this target");
            return Ok(ReviewReport {
                id: None,
                action: ReviewAction::Disabled,
                tagged: false,
            });
        }
        let Evidence {
            policies,
            observed,
            decisions,
            mut gaps,
        } = self.evidence(id).await?;
        // Without the policies there is nothing to judge ("no policy" would be wrong).
        let lint = match &policies {
            Some(p) => Some(
                self.review_lint(target, state, p, change, watch.now, &mut gaps)
                    .await,
            ),
            None => None,
        };
        let policies = policies.unwrap_or_default();
        // The target's reviews: a pending review of the package now serving hands it over,
        // and every pending one is superseded once this review is stored.
        let stored_reviews = self
            .reviews
            .reviews(id)
            .await
            .map_err(port(id, "list the reviews"))?;
        if target.review.tag_endpoint && endpoint_arn.is_none() {
            gaps.push("the endpoint's ARN is unknown: it was not tagged".into());
        }
        let tag_arn = endpoint_arn.clone().filter(|_| target.review.tag_endpoint);
        let mut fresh = build_review(ReviewInput {
            target,
            at: watch.now,
            trigger: watch.trigger.clone(),
            endpoint_arn,
            tagged: tag_arn.is_some(),
            previous_fingerprint: previous_fingerprint.clone(),
            previous,
            current: identity.clone(),
            policies,
            observed,
            decisions,
            samples: &state.lead_samples,
            gaps,
            lint,
        });
        link_rollout(&mut fresh, &stored_reviews);
        let review_id = fresh.id.clone();
        let policies_attached = fresh.policies.len();
        let existing = self
            .reviews
            .load_review(id, &review_id)
            .await
            .map_err(port(id, "load the review"))?;
        let action = match decide_open(existing, fresh) {
            OpenDecision::Create(r) | OpenDecision::Reopen(r) => {
                let reopening = r.revision > 0;
                match self
                    .reviews
                    .save_review(&r)
                    .await
                    .map_err(port(id, "store the review"))?
                {
                    SaveOutcome::Saved if reopening => ReviewAction::Reopened,
                    SaveOutcome::Saved => ReviewAction::Opened,
                    // Another event of the same change stored it first.
                    SaveOutcome::Conflict => ReviewAction::AlreadyOpen,
                }
            }
            OpenDecision::AlreadyOpen(_) => ReviewAction::AlreadyOpen,
        };
        let mut tagged = false;
        if let Some(arn) = &tag_arn {
            // Tagging again when already open heals a tag lost to an earlier failure.
            match self.endpoints.tag_endpoint(arn, REVIEW_TAG, TAG_OPEN).await {
                Ok(()) => tagged = true,
                Err(e) if e.is_retryable() => return Err(port(arn, "tag the endpoint")(e)),
                Err(e) => {
                    tracing::warn!(target_id = %id, review_id = %review_id, error = %e, "could not tag the endpoint for the review");
                    notes.push(format!("review {review_id}: endpoint not tagged: {e}"));
                }
            }
        }
        tracing::warn!(
            target_id = %id,
            review_id = %review_id,
            action = action.as_str(),
            previous = %previous_fingerprint,
            current = %identity.fingerprint(),
            model = %identity.summary(),
            policies = policies_attached,
            tagged,
            "scaling-policy review: the model behind this target changed"
        );
        notes.push(format!("review {review_id} {action}"));
        // Also when the review was already open: a retry after a failure here closes them.
        for closed in supersede(&stored_reviews, &review_id) {
            match self
                .reviews
                .save_review(&closed)
                .await
                .map_err(port(id, "supersede the pending review"))?
            {
                SaveOutcome::Saved => {
                    tracing::info!(target_id = %id, review_id = %closed.id, superseded_by = %review_id, package = closed.package.as_ref().map_or("", |p| p.arn.as_str()), "pending review superseded by the rollout's review");
                    notes.push(format!(
                        "pending review {} superseded by {review_id}",
                        closed.id
                    ));
                }
                // Acknowledged meanwhile: the next rollout supersedes it.
                SaveOutcome::Conflict => notes.push(format!(
                    "pending review {} changed meanwhile: left as is",
                    closed.id
                )),
            }
        }
        Ok(ReviewReport {
            id: Some(review_id),
            action,
            tagged,
        })
    }
}

/// What a review shows besides the models: gathered for a rollout's review and for a pending
/// one alike.
pub(super) struct Evidence {
    /// `None` when they could not be read (a gap says why).
    pub(super) policies: Option<Vec<ScalingPolicySummary>>,
    pub(super) observed: Option<Bounds>,
    pub(super) decisions: Vec<serde_json::Value>,
    pub(super) gaps: Vec<String>,
}

impl<T, H, E, S, R, D> Watcher<'_, T, H, E, S, R, D>
where
    T: ScalingTargets,
    H: ScalingHistory,
    E: Endpoints,
    S: StateStore,
    R: ReviewStore,
    D: DemandHistory,
{
    /// The policies, bounds and recent decisions of `id`. A retryable failure retries the event
    /// (nothing is stored yet); a permanent one leaves a gap in the record rather than no
    /// record at all.
    pub(super) async fn evidence(&self, id: &ScalableTargetId) -> Result<Evidence, DeployError> {
        let mut gaps = Vec::new();
        let policies = match self.history.policies(id).await {
            Ok(p) => Some(p),
            Err(e) if e.is_retryable() => return Err(port(id, "describe the scaling policies")(e)),
            Err(e) => {
                gaps.push(format!("scaling policies unavailable: {e}"));
                None
            }
        };
        let observed = match self.targets.describe(slice::from_ref(id)).await {
            Ok(list) => list.into_iter().find(|o| &o.id == id).map(|o| o.bounds()),
            Err(e) if e.is_retryable() => return Err(port(id, "describe the scalable target")(e)),
            Err(e) => {
                gaps.push(format!("scalable target bounds unavailable: {e}"));
                None
            }
        };
        let decisions = match self.state.recent_log(id, 200).await {
            Ok(d) => d.into_iter().map(|entry| entry.body).collect(),
            Err(e) if e.is_retryable() => return Err(port(id, "read the decision log")(e)),
            Err(e) => {
                gaps.push(format!("decision log unavailable: {e}"));
                Vec::new()
            }
        };
        Ok(Evidence {
            policies,
            observed,
            decisions,
            gaps,
        })
    }
}
