//! Watching one target: read the identity serving now, compare it with the fingerprint in
//! force, open a review when it changed, and reconcile the target with the new fingerprint and
//! the scale-out measurements (`record`, the pure part, applied inside the reconcile).

use std::slice;
use std::sync::atomic::{AtomicUsize, Ordering};

use chrono::{DateTime, Utc};

use crate::deploy_ports::ScalingActivity;
use crate::deploy_ports::{Endpoints, ReviewStore, ScalingHistory};
use crate::endpoint_status::EndpointStatus;
use crate::identity::{assess, merge_for_storage, IdentityChange, ModelIdentity};
use crate::ids::ScalableTargetId;
use crate::lead_samples::{activity_samples, merge_samples};
use crate::metrics_port::DemandHistory;
use crate::model::ModelFingerprint;
use crate::plan::TargetPlan;
use crate::ports::{ScalingTargets, StateStore};
use crate::reconcile::{reconcile_target, EventChange};
use crate::state::TargetState;
use crate::trigger::{SageMakerEvent, SageMakerEventKind};

use super::error::port;
use super::observe::{Observation, Observer};
use super::{ChangeContext, DeployError, ModelChange, TargetReport, Watcher};
use crate::usecase::lint::serving_in;

/// Per-invocation context of one watch.
pub(super) struct Watch<'e> {
    pub(super) trigger: String,
    pub(super) key: String,
    pub(super) event: Option<&'e SageMakerEvent>,
    pub(super) label: Option<String>,
    pub(super) now: DateTime<Utc>,
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
    pub(super) async fn watch_target(
        &self,
        target: &TargetPlan,
        observer: &mut Observer<'_, E>,
        watch: &Watch<'_>,
    ) -> Result<TargetReport, DeployError> {
        let id = &target.id;
        let mut report = TargetReport {
            target: id.to_string(),
            change: ModelChange::Absent,
            fingerprint: None,
            previous_fingerprint: None,
            review: None,
            lead_samples_added: 0,
            notes: Vec::new(),
        };
        let (mut identity, endpoint_arn) = match observer.observe(id).await? {
            Observation::Serving {
                identity,
                endpoint_arn,
            } => (*identity, endpoint_arn),
            Observation::Absent { why } => {
                tracing::info!(target_id = %id, trigger = %watch.trigger, why, "nothing serves behind the target: identity not checked");
                report.notes.push(why);
                return Ok(report);
            }
        };
        identity.version_label = watch.label.clone();
        let fingerprint = identity.fingerprint();
        report.fingerprint = Some(fingerprint.clone());

        let state = self
            .state
            .load_states(slice::from_ref(id))
            .await
            .map_err(port(id, "load the target state"))?
            .into_iter()
            .next()
            .map(|(_, s)| s)
            .unwrap_or_default();
        let stored = self
            .reviews
            .load_identity(id)
            .await
            .map_err(port(id, "load the stored model identity"))?;
        let previous = state
            .model
            .clone()
            .or_else(|| stored.as_ref().map(ModelIdentity::fingerprint));
        report.previous_fingerprint = previous.clone();

        match assess(previous.as_ref(), &identity) {
            IdentityChange::Baseline => {
                report.change = ModelChange::Baseline;
                tracing::info!(target_id = %id, fingerprint = %fingerprint, model = %identity.summary(), "model identity baseline recorded (no review)");
            }
            IdentityChange::Unchanged => report.change = ModelChange::Unchanged,
            IdentityChange::Changed {
                previous_fingerprint,
            } => {
                report.change = ModelChange::Changed;
                let previous_identity = stored
                    .clone()
                    .filter(|s| s.fingerprint() == previous_fingerprint);
                let change = change_context(observer, id, watch.now).await?;
                report.review = Some(
                    self.open_review(
                        target,
                        watch,
                        &identity,
                        endpoint_arn,
                        &previous_fingerprint,
                        previous_identity,
                        &state,
                        change,
                        &mut report.notes,
                    )
                    .await?,
                );
            }
        }
        // Measurements are best effort: a missing permission or moto's missing operation must
        // not stop the identity check; the next event measures again.
        let activities: Vec<ScalingActivity> = match self.history.activities(id).await {
            Ok(a) => a,
            Err(e) => {
                tracing::warn!(target_id = %id, error = %e, retryable = e.is_retryable(), "scaling activities unavailable: no AAS measurement this time");
                report
                    .notes
                    .push(format!("scaling activities unavailable: {e}"));
                Vec::new()
            }
        };
        let transition = match (watch.event, id) {
            (Some(ev), ScalableTargetId::Variant { variant, .. })
                if ev.kind == SageMakerEventKind::EndpointState =>
            {
                ev.status.clone().map(|s| {
                    (
                        s,
                        ev.occurred_at().unwrap_or(watch.now),
                        ev.variant(variant).and_then(|v| v.desired_instance_count),
                    )
                })
            }
            _ => None,
        };
        let since = watch
            .event
            .and_then(SageMakerEvent::occurred_at)
            .unwrap_or(watch.now);
        let added = AtomicUsize::new(0);
        let apply = |state: &mut TargetState| -> Vec<String> {
            let (notes, n) = record(
                state,
                &fingerprint,
                previous.as_ref(),
                &identity.summary(),
                since,
                transition.as_ref(),
                &activities,
            );
            added.store(n, Ordering::SeqCst);
            notes
        };
        let change = EventChange {
            // The observation, not only the event, is what gets applied: a redelivered event that
            // finds another model in force (level-triggered) must still put it in force.
            key: format!("{}@{fingerprint}", watch.key),
            apply: &apply,
        };
        let outcome = reconcile_target(
            self.targets,
            self.state,
            target,
            watch.now,
            &watch.trigger,
            Some(&change),
        )
        .await?;
        // The full identity is stored only once the state holds its fingerprint: stored first,
        // a failure in between made the retry take it for the previous identity, and the
        // fingerprint never reached the state (issue 11, item 2). In this order a retry finds
        // the fingerprint in force and stores the identity then; storing it twice is harmless.
        if let Some(to_store) = merge_for_storage(stored.as_ref(), &identity) {
            self.reviews
                .save_identity(id, &to_store)
                .await
                .map_err(port(id, "store the model identity"))?;
        }
        report.lead_samples_added = added.load(Ordering::SeqCst);
        report.notes.extend(outcome.notes);
        Ok(report)
    }
}

/// The pure part of a watch, applied to the freshly read target state inside the reconcile:
/// puts the observed fingerprint in force (unless another invocation moved it meanwhile),
/// keeps the model history, and records scale-out measurements. Returns the decision-log notes
/// and how many samples were added.
pub fn record(
    state: &mut TargetState,
    fingerprint: &ModelFingerprint,
    expected_previous: Option<&ModelFingerprint>,
    summary: &str,
    since: DateTime<Utc>,
    transition: Option<&(EndpointStatus, DateTime<Utc>, Option<u32>)>,
    activities: &[ScalingActivity],
) -> (Vec<String>, usize) {
    let mut notes = Vec::new();
    if state.model.as_ref() != Some(fingerprint) {
        if state.model.as_ref() == expected_previous {
            notes.push(match expected_previous {
                None => {
                    format!("model identity {fingerprint} recorded as the baseline ({summary})")
                }
                Some(prev) => {
                    format!("model identity changed from {prev} to {fingerprint} ({summary})")
                }
            });
            state.model = Some(fingerprint.clone());
            state.deploy.models.record(fingerprint, since);
        } else {
            notes.push(format!(
                "model identity moved to {} meanwhile: left as is for the next event",
                state.model.as_deref().unwrap_or("-")
            ));
        }
    }
    if state.deploy.models.is_empty() {
        if let Some(m) = state.model.clone() {
            state.deploy.models.record(&m, since);
        }
    }
    let mut samples = Vec::new();
    if let Some((status, at, desired)) = transition {
        let model = state.model.as_ref();
        samples.extend(
            state
                .deploy
                .transition
                .observe(status, *at, *desired, model),
        );
    }
    samples.extend(activity_samples(activities, &state.deploy.models));
    let added = merge_samples(&mut state.lead_samples, samples);
    if added > 0 {
        notes.push(format!("{added} scale-out measurement(s) recorded"));
    }
    (notes, added)
}

/// When the new model took over and what serves it, read through the observer's cache (the
/// event's own reads already described the endpoint, its config and the component: no extra
/// call). The change is the hosting endpoint's LastModifiedTime, or `now` when SageMaker gave
/// none or one in the future.
async fn change_context<E: Endpoints>(
    observer: &mut Observer<'_, E>,
    id: &ScalableTargetId,
    now: DateTime<Utc>,
) -> Result<ChangeContext, DeployError> {
    let (endpoint, variant, component) = match id {
        ScalableTargetId::Variant {
            endpoint, variant, ..
        } => (
            Some(endpoint.to_string()),
            variant.as_str().to_owned(),
            false,
        ),
        ScalableTargetId::InferenceComponent(name) => {
            let c = observer.component(name).await?;
            (
                c.as_ref().and_then(|c| c.endpoint.clone()),
                c.and_then(|c| c.variant).unwrap_or_default(),
                true,
            )
        }
    };
    let endpoint = match endpoint.map(crate::ids::EndpointName::parse) {
        Some(Ok(name)) => observer.endpoint(&name).await?,
        _ => None,
    };
    let changed_at = endpoint
        .as_ref()
        .and_then(|e| e.last_modified)
        .filter(|t| *t <= now)
        .unwrap_or(now);
    let config = match endpoint.as_ref().and_then(|e| e.config_name.clone()) {
        Some(name) => observer.config(&name).await?,
        None => None,
    };
    let serving = match config {
        Some(c) => serving_in(&c, &variant, component),
        None => Err(format!("no endpoint config found behind {id}")),
    };
    Ok(ChangeContext {
        changed_at,
        serving,
    })
}
