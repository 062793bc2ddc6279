//! A model package's state change: when another version of the package a managed target serves
//! is approved, open a pending review for the target before the rollout; when a version with a
//! pending review is rejected or set back to manual approval, withdraw that review (the rules
//! are in `crate::review::package`). Any other status is ignored with the reason, and so is an
//! event no managed target's stored identity or pending review connects to; nothing is written
//! then.

use std::slice;

use chrono::{DateTime, Utc};

use crate::deploy_ports::{Endpoints, ReviewStore, ScalingHistory};
use crate::identity::{ContainerIdentity, ModelIdentity};
use crate::metrics_port::DemandHistory;
use crate::plan::TargetPlan;
use crate::ports::{SaveOutcome, ScalingTargets, StateStore};
use crate::reconcile::load_plan;
use crate::review::build_review;
use crate::review::package::{
    decide_pending, package_fit, pending_review, pending_review_id, withdraw, PackageApproval,
    PackageFit, PendingDecision,
};
use crate::review::ReviewInput;
use crate::trigger::model_package::{ApprovalStatus, PackageArn, MODEL_PACKAGE_STATE};
use crate::trigger::ModelPackageEvent;

use super::error::port;
use super::review_open::Evidence;
use super::{
    DeployError, ModelChange, Outcome, Response, ReviewAction, ReviewReport, TargetReport, Watcher,
};

impl<T, H, E, S, R, D> Watcher<'_, T, H, E, S, R, D>
where
    T: ScalingTargets,
    H: ScalingHistory,
    E: Endpoints,
    S: StateStore,
    R: ReviewStore,
    D: DemandHistory,
{
    pub async fn on_model_package(
        &self,
        ev: &ModelPackageEvent,
        now: DateTime<Utc>,
    ) -> Result<Response, DeployError> {
        let status = ev.approval.as_ref().map_or("none", ApprovalStatus::as_str);
        let trigger = format!("sagemaker:{MODEL_PACKAGE_STATE}:{status}");
        let ignored = |reason: String| ignored(&trigger, &ev.arn, reason);
        match &ev.approval {
            Some(ApprovalStatus::Approved) => {}
            Some(ApprovalStatus::Rejected | ApprovalStatus::PendingManualApproval) => {
                return self.on_withdrawal(ev, status, &trigger, now).await;
            }
            _ => {
                return Ok(ignored(format!(
                    "model package {} is {status}: only an approval opens a pending review, and only a rejection or a return to manual approval withdraws one",
                    ev.arn
                )))
            }
        }
        let Some(approved) = PackageArn::parse(&ev.arn) else {
            return Ok(ignored(format!(
                "model package {} is not a versioned package (arn:...:model-package/GROUP/VERSION): no target can serve another version of it",
                ev.arn
            )));
        };
        let (_, plan) = load_plan(self.state).await?;
        let mut response = Response::new(trigger.clone(), None, Outcome::Watched);
        for target in &plan.targets {
            let id = &target.id;
            let stored = self
                .reviews
                .load_identity(id)
                .await
                .map_err(port(id, "load the stored model identity"))?;
            // Nothing stored yet: no deployment event has shown what the target serves.
            let Some(stored) = stored else {
                continue;
            };
            let mut report = TargetReport {
                target: id.to_string(),
                change: ModelChange::Approved,
                fingerprint: None,
                previous_fingerprint: Some(stored.fingerprint()),
                review: None,
                lead_samples_added: 0,
                notes: Vec::new(),
            };
            match package_fit(Some(&stored), &approved) {
                PackageFit::NotServed => continue,
                PackageFit::AlreadyServing => {
                    report.change = ModelChange::Unchanged;
                    report
                        .notes
                        .push(format!("{} serves already: no pending review", ev.arn));
                }
                PackageFit::OtherVersion { serving } => {
                    let approval = PackageApproval {
                        arn: ev.arn.clone(),
                        group: approved.group.to_owned(),
                        version: approved.version,
                        approved_at: ev.at.unwrap_or(now),
                        serving,
                    };
                    report.review = Some(
                        self.open_pending(target, ev, &trigger, stored, approval, now, &mut report)
                            .await?,
                    );
                }
            }
            response.targets.push(report);
        }
        if response.targets.is_empty() {
            return Ok(ignored(format!(
                "no target managed by the plan serves model package group {} ({}): headroom knows what a target serves from the model identity it stored at the target's last deployment event",
                approved.group, approved.group_arn
            )));
        }
        Ok(response)
    }

    /// The package version `ev` names is `status` now, no longer approved: each managed
    /// target's pending review of it (the id says which) is closed as withdrawn.
    async fn on_withdrawal(
        &self,
        ev: &ModelPackageEvent,
        status: &str,
        trigger: &str,
        now: DateTime<Utc>,
    ) -> Result<Response, DeployError> {
        let (_, plan) = load_plan(self.state).await?;
        let mut response = Response::new(trigger.to_owned(), None, Outcome::Watched);
        for target in &plan.targets {
            let id = &target.id;
            let review_id = pending_review_id(id, &ev.arn);
            let Some(stored) = self
                .reviews
                .load_review(id, &review_id)
                .await
                .map_err(port(id, "load the pending review"))?
            else {
                continue;
            };
            let mut report = TargetReport {
                target: id.to_string(),
                change: ModelChange::Withdrawn,
                fingerprint: Some(stored.fingerprint.clone()),
                previous_fingerprint: Some(stored.previous_fingerprint.clone()),
                review: None,
                lead_samples_added: 0,
                notes: Vec::new(),
            };
            let at = ev.at.unwrap_or(now);
            let action = match withdraw(&stored, status, at) {
                // Still awaiting its rollout: its approval is newer than this event.
                None if stored.awaits_rollout() => {
                    report.notes.push(format!(
                        "review {review_id} records an approval after this {status} event (at {}): nothing to withdraw",
                        at.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
                    ));
                    ReviewAction::Outdated
                }
                None => {
                    report.notes.push(format!(
                        "review {review_id} is {}: nothing to withdraw",
                        stored.status.as_str()
                    ));
                    ReviewAction::AlreadyClosed
                }
                Some(closed) => match self
                    .reviews
                    .save_review(&closed)
                    .await
                    .map_err(port(id, "store the withdrawn review"))?
                {
                    SaveOutcome::Saved => {
                        tracing::warn!(
                            target_id = %id,
                            review_id = %review_id,
                            package = %ev.arn,
                            approval = status,
                            "pending scaling-policy review withdrawn: the package version it is about is no longer approved"
                        );
                        report.notes.push(format!(
                            "review {review_id} withdrawn: {} is {status}",
                            ev.arn
                        ));
                        ReviewAction::Withdrawn
                    }
                    SaveOutcome::Conflict => {
                        return Err(DeployError::WithdrawalConflict {
                            id: review_id.to_string(),
                        })
                    }
                },
            };
            report.review = Some(ReviewReport {
                id: Some(review_id),
                action,
                tagged: false,
            });
            response.targets.push(report);
        }
        if response.targets.is_empty() {
            return Ok(ignored(
                trigger,
                &ev.arn,
                format!(
                    "model package {} is {status}: no target managed by the plan has a pending review of it, so there is nothing to withdraw",
                    ev.arn
                ),
            ));
        }
        Ok(response)
    }

    #[allow(clippy::too_many_arguments)]
    async fn open_pending(
        &self,
        target: &TargetPlan,
        ev: &ModelPackageEvent,
        trigger: &str,
        serving: ModelIdentity,
        approval: PackageApproval,
        now: DateTime<Utc>,
        report: &mut TargetReport,
    ) -> Result<ReviewReport, DeployError> {
        let id = &target.id;
        if !target.review.enabled {
            tracing::info!(target_id = %id, package = %ev.arn, "model package approved; the plan turns reviews off for this target");
            return Ok(ReviewReport {
                id: None,
                action: ReviewAction::Disabled,
                tagged: false,
            });
        }
        let state = self
            .state
            .load_states(slice::from_ref(id))
            .await
            .map_err(port(id, "load the target state"))?
            .into_iter()
            .next()
            .map(|(_, s)| s)
            .unwrap_or_default();
        let Evidence {
            policies,
            observed,
            decisions,
            gaps,
        } = self.evidence(id).await?;
        let previous_fingerprint = state.model.clone().unwrap_or_else(|| serving.fingerprint());
        let declared = declared_identity(ev, &serving, now);
        report.fingerprint = Some(declared.fingerprint());
        report.previous_fingerprint = Some(previous_fingerprint.clone());
        let fresh = pending_review(
            build_review(ReviewInput {
                target,
                at: now,
                trigger: trigger.to_owned(),
                endpoint_arn: None,
                tagged: false,
                previous_fingerprint: previous_fingerprint.clone(),
                previous: Some(serving).filter(|s| s.fingerprint() == previous_fingerprint),
                current: declared,
                policies: policies.unwrap_or_default(),
                observed,
                decisions,
                samples: &state.lead_samples,
                gaps,
                // The lint compares measurements under the new model, which serves nowhere yet.
                lint: None,
            }),
            approval,
        );
        let review_id = fresh.id.clone();
        let existing = self
            .reviews
            .load_review(id, &review_id)
            .await
            .map_err(port(id, "load the review"))?;
        let action = match decide_pending(existing, fresh) {
            PendingDecision::Create(r) => match self
                .reviews
                .save_review(&r)
                .await
                .map_err(port(id, "store the pending review"))?
            {
                SaveOutcome::Saved => ReviewAction::Pending,
                // Another event of the same approval stored it first.
                SaveOutcome::Conflict => ReviewAction::AlreadyPending,
            },
            // Approved again after a withdrawal: pending again, as this approval's review.
            PendingDecision::Renew(r) => match self
                .reviews
                .save_review(&r)
                .await
                .map_err(port(id, "store the renewed pending review"))?
            {
                SaveOutcome::Saved => ReviewAction::Pending,
                SaveOutcome::Conflict => ReviewAction::AlreadyPending,
            },
            PendingDecision::Exists(r) => {
                report
                    .notes
                    .push(format!("review {review_id} is {}", r.status.as_str()));
                ReviewAction::AlreadyPending
            }
        };
        tracing::warn!(
            target_id = %id,
            review_id = %review_id,
            action = action.as_str(),
            package = %ev.arn,
            previous = %previous_fingerprint,
            "scaling-policy review pending: a new version of the model package this target serves was approved"
        );
        report.notes.push(format!("review {review_id} {action}"));
        Ok(ReviewReport {
            id: Some(review_id),
            action,
            tagged: false,
        })
    }
}

/// The answer to a model package event that changes nothing, logged with its reason.
fn ignored(trigger: &str, package: &str, reason: String) -> Response {
    tracing::info!(trigger, package, reason, "model package event ignored");
    let mut r = Response::new(trigger.to_owned(), None, Outcome::Ignored);
    r.reason = Some(reason);
    r
}

/// What the approved package would serve behind the target: its declared containers (each
/// naming the package), on the endpoint that serves now.
fn declared_identity(
    ev: &ModelPackageEvent,
    serving: &ModelIdentity,
    now: DateTime<Utc>,
) -> ModelIdentity {
    let mut containers = ev.containers.clone();
    if containers.is_empty() {
        containers.push(ContainerIdentity {
            image: None,
            model_data: None,
            model_package: Some(ev.arn.clone()),
        });
    }
    ModelIdentity {
        endpoint: serving.endpoint.clone(),
        endpoint_config: None,
        inference_component: serving.inference_component.clone(),
        model_name: None,
        model_arn: None,
        containers,
        instance_type: None,
        version_label: None,
        observed_at: now,
    }
}
