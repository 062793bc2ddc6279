//! The deployment watcher's handler: an event in, a report out, generic over the ports.
//!
//! For each managed target the event concerns: read the identity serving now, compare it with
//! the fingerprint in force (the target state's `model`), open a review when it changed, store
//! the full identity, then reconcile the target with an event change that records the new
//! fingerprint and the scale-out measurements. Endpoints with no managed target are a logged
//! no-op: nothing is written and nothing in AWS changes.

use std::slice;
use std::sync::atomic::{AtomicUsize, Ordering};

use chrono::{DateTime, Utc};
use headroom_core::deploy_ports::{Endpoints, ReviewStore, ScalingActivity, ScalingHistory};
use headroom_core::identity::{assess, merge_for_storage, IdentityChange, ModelIdentity};
use headroom_core::ids::{ComponentName, EndpointName, ScalableTargetId, VariantName};
use headroom_core::model::{ModelFingerprint, ReviewId};
use headroom_core::plan::{Plan, TargetPlan};
use headroom_core::ports::{SaveOutcome, ScalingTargets, StateStore};
use headroom_core::reconcile::{load_plan, reconcile_target, EventChange};
use headroom_core::review::{
    build_review, decide_open, OpenDecision, ReviewInput, ReviewStatus, REVIEW_TAG, TAG_OPEN,
};
use headroom_core::state::TargetState;
use headroom_events::pipeline::{PipelineAction, PipelineHook};
use headroom_events::sagemaker::{EndpointStatus, SageMakerEvent, SageMakerEventKind};
use headroom_events::{parse_trigger, Trigger};
use serde::Serialize;

use crate::error::{port, DeployError};
use crate::observe::{Observation, Observer};
use headroom_core::lead_samples::{activity_samples, merge_samples};

/// `kind` of the handler's answer (what a pipeline calling the Lambda reads).
pub const RESULT_KIND: &str = "headroom.deploy-result/v1";

/// The ports the watcher uses, borrowed for one invocation.
pub struct Deploy<'a, E, H, R, A, S> {
    pub endpoints: &'a E,
    pub history: &'a H,
    pub reviews: &'a R,
    pub aas: &'a A,
    pub store: &'a S,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// No managed target concerned: nothing read beyond finding that out, nothing written.
    Ignored,
    /// Identities checked and measurements recorded.
    Watched,
    /// A pipeline's `check` answered.
    Answered,
}

/// The answer to one event.
#[derive(Debug, Clone, Serialize)]
pub struct Response {
    pub kind: &'static str,
    pub trigger: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub endpoint: Option<String>,
    pub outcome: Outcome,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub targets: Vec<TargetReport>,
    /// For `check`: `open` (a review is open: hold the promotion), `clear`, or `unmanaged` (no
    /// managed target matches: check the endpoint name).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub review: Option<&'static str>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub open_reviews: Vec<ReviewBrief>,
}

impl Response {
    fn new(trigger: String, endpoint: Option<String>, outcome: Outcome) -> Self {
        Self {
            kind: RESULT_KIND,
            trigger,
            endpoint,
            outcome,
            reason: None,
            targets: Vec::new(),
            review: None,
            open_reviews: Vec::new(),
        }
    }
}

/// What happened to one target.
#[derive(Debug, Clone, Serialize)]
pub struct TargetReport {
    pub target: String,
    /// `baseline`, `unchanged`, `changed` or `absent` (nothing serves behind it now).
    pub change: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fingerprint: Option<ModelFingerprint>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub previous_fingerprint: Option<ModelFingerprint>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub review: Option<ReviewReport>,
    pub lead_samples_added: usize,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct ReviewReport {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<ReviewId>,
    /// `opened`, `reopened`, `already_open`, or `disabled` (the plan turned reviews off).
    pub action: &'static str,
    pub tagged: bool,
}

/// An open review, as a pipeline's `check` sees it.
#[derive(Debug, Clone, Serialize)]
pub struct ReviewBrief {
    pub id: ReviewId,
    pub target: String,
    pub opened_at: DateTime<Utc>,
    pub model: String,
    pub fingerprint: ModelFingerprint,
    pub previous_fingerprint: ModelFingerprint,
}

/// Which targets of an endpoint a pipeline hook names.
#[derive(Debug, Clone, Default)]
struct Only {
    variant: Option<VariantName>,
    component: Option<ComponentName>,
}

impl Only {
    fn allows(&self, id: &ScalableTargetId) -> bool {
        match (id, &self.variant, &self.component) {
            (_, None, None) => true,
            (ScalableTargetId::Variant { variant, .. }, Some(v), _) => variant == v,
            (ScalableTargetId::InferenceComponent(name), _, Some(c)) => name == c,
            _ => false,
        }
    }
}

/// Per-invocation context of one watch.
struct Watch<'e> {
    trigger: String,
    key: String,
    event: Option<&'e SageMakerEvent>,
    label: Option<String>,
    now: DateTime<Utc>,
}

fn route_for(trigger: &Trigger) -> &'static str {
    match trigger {
        Trigger::Tick(_) | Trigger::Peak(_) => "the tick function (headroom-tick)",
        Trigger::Alarm(_) => "the alarm function (headroom-alarm)",
        Trigger::SageMaker(_) | Trigger::Pipeline(_) => "the deployment watcher",
    }
}

impl<E, H, R, A, S> Deploy<'_, E, H, R, A, S>
where
    E: Endpoints,
    H: ScalingHistory,
    R: ReviewStore,
    A: ScalingTargets,
    S: StateStore,
{
    /// Handles any event: refuses what is not the watcher's, with the function to route it to.
    pub async fn handle(
        &self,
        event: &serde_json::Value,
        now: DateTime<Utc>,
    ) -> Result<Response, DeployError> {
        match parse_trigger(event)? {
            Trigger::SageMaker(ev) => self.on_sagemaker(&ev, now).await,
            Trigger::Pipeline(hook) => self.on_pipeline(&hook, now).await,
            other => Err(DeployError::WrongTrigger {
                kind: other.kind(),
                route: route_for(&other),
            }),
        }
    }

    pub async fn on_sagemaker(
        &self,
        ev: &SageMakerEvent,
        now: DateTime<Utc>,
    ) -> Result<Response, DeployError> {
        let (_, plan) = load_plan(self.store).await?;
        let mut observer = Observer::new(self.endpoints, now);
        let trigger = format!(
            "sagemaker:{}{}",
            ev.kind.detail_type(),
            ev.status
                .as_ref()
                .map(|s| format!(":{s}"))
                .unwrap_or_default()
        );
        let (endpoint, targets) = match (&ev.endpoint, ev.kind) {
            (
                Some(endpoint),
                SageMakerEventKind::EndpointState | SageMakerEventKind::DeploymentState,
            ) => (
                endpoint.clone(),
                self.targets_on(&plan, endpoint, &Only::default(), &mut observer)
                    .await?,
            ),
            _ => {
                let config = ev.endpoint_config.clone().unwrap_or_default();
                match self.endpoint_using(&plan, &config, &mut observer).await? {
                    Some(endpoint) => {
                        let targets = self
                            .targets_on(&plan, &endpoint, &Only::default(), &mut observer)
                            .await?;
                        (endpoint, targets)
                    }
                    None => {
                        tracing::info!(trigger, endpoint_config = %config, "no managed endpoint uses this config: nothing to do");
                        let mut r = Response::new(trigger, None, Outcome::Ignored);
                        r.reason = Some(format!(
                            "no managed endpoint uses endpoint config {config} (yet): the endpoint's own events follow when one switches to it"
                        ));
                        return Ok(r);
                    }
                }
            }
        };
        let mut response = Response::new(
            trigger.clone(),
            Some(endpoint.to_string()),
            Outcome::Watched,
        );
        if targets.is_empty() {
            tracing::info!(trigger, endpoint = %endpoint, "endpoint has no target managed by the plan: nothing to do");
            response.outcome = Outcome::Ignored;
            response.reason = Some(format!(
                "endpoint {endpoint} has no target managed by the plan: headroom leaves it alone"
            ));
            return Ok(response);
        }
        let watch = Watch {
            trigger,
            key: ev.idempotency_key(),
            event: Some(ev),
            label: None,
            now,
        };
        for target in targets {
            response
                .targets
                .push(self.watch_target(target, &mut observer, &watch).await?);
        }
        Ok(response)
    }

    pub async fn on_pipeline(
        &self,
        hook: &PipelineHook,
        now: DateTime<Utc>,
    ) -> Result<Response, DeployError> {
        let (_, plan) = load_plan(self.store).await?;
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
                response.review = Some("unmanaged");
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
                    response.open_reviews.extend(
                        reviews
                            .into_iter()
                            .filter(|r| r.status == ReviewStatus::Open)
                            .map(|r| ReviewBrief {
                                id: r.id.clone(),
                                target: r.target.to_string(),
                                opened_at: r.opened_at,
                                model: r.current.summary(),
                                fingerprint: r.fingerprint.clone(),
                                previous_fingerprint: r.previous_fingerprint.clone(),
                            }),
                    );
                }
                let open = !response.open_reviews.is_empty();
                response.review = Some(if open { "open" } else { "clear" });
                tracing::info!(
                    trigger,
                    endpoint = %hook.endpoint,
                    open_reviews = response.open_reviews.len(),
                    answer = response.review.unwrap_or_default(),
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

    /// The managed targets hosted on `endpoint` (inference components are described to find
    /// their endpoint).
    async fn targets_on<'p>(
        &self,
        plan: &'p Plan,
        endpoint: &EndpointName,
        only: &Only,
        observer: &mut Observer<'_, E>,
    ) -> Result<Vec<&'p TargetPlan>, DeployError> {
        let mut out = Vec::new();
        // Components are described only when this endpoint can host them: an event about one
        // endpoint touches only the targets on it (issue 11, item 11).
        let mut hosts_components = None;
        for t in &plan.targets {
            if !only.allows(&t.id) {
                continue;
            }
            let on_endpoint = match &t.id {
                ScalableTargetId::Variant { endpoint: e, .. } => e == endpoint,
                ScalableTargetId::InferenceComponent(_) => {
                    let hosts = match hosts_components {
                        Some(h) => h,
                        None => {
                            *hosts_components.insert(observer.may_host_components(endpoint).await?)
                        }
                    };
                    hosts
                        && observer.endpoint_of(&t.id).await?.as_deref() == Some(endpoint.as_str())
                }
            };
            if on_endpoint {
                out.push(t);
            }
        }
        Ok(out)
    }

    /// The managed endpoint whose config in force is `config`, if any.
    async fn endpoint_using(
        &self,
        plan: &Plan,
        config: &str,
        observer: &mut Observer<'_, E>,
    ) -> Result<Option<EndpointName>, DeployError> {
        let mut seen = std::collections::BTreeSet::new();
        for t in &plan.targets {
            let Some(name) = observer.endpoint_of(&t.id).await? else {
                continue;
            };
            if !seen.insert(name.clone()) {
                continue;
            }
            let Ok(endpoint) = EndpointName::parse(name) else {
                continue;
            };
            if observer
                .endpoint(&endpoint)
                .await?
                .and_then(|e| e.config_name)
                .as_deref()
                == Some(config)
            {
                return Ok(Some(endpoint));
            }
        }
        Ok(None)
    }

    async fn watch_target(
        &self,
        target: &TargetPlan,
        observer: &mut Observer<'_, E>,
        watch: &Watch<'_>,
    ) -> Result<TargetReport, DeployError> {
        let id = &target.id;
        let mut report = TargetReport {
            target: id.to_string(),
            change: "absent",
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
            .store
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
                report.change = "baseline";
                tracing::info!(target_id = %id, fingerprint = %fingerprint, model = %identity.summary(), "model identity baseline recorded (no review)");
            }
            IdentityChange::Unchanged => report.change = "unchanged",
            IdentityChange::Changed {
                previous_fingerprint,
            } => {
                report.change = "changed";
                let previous_identity = stored
                    .clone()
                    .filter(|s| s.fingerprint() == previous_fingerprint);
                report.review = Some(
                    self.open_review(
                        target,
                        watch,
                        &identity,
                        endpoint_arn,
                        &previous_fingerprint,
                        previous_identity,
                        &state,
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
            self.aas,
            self.store,
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

    #[allow(clippy::too_many_arguments)]
    async fn open_review(
        &self,
        target: &TargetPlan,
        watch: &Watch<'_>,
        identity: &ModelIdentity,
        endpoint_arn: Option<String>,
        previous_fingerprint: &ModelFingerprint,
        previous: Option<ModelIdentity>,
        state: &TargetState,
        notes: &mut Vec<String>,
    ) -> Result<ReviewReport, DeployError> {
        let id = &target.id;
        if !target.review.enabled {
            tracing::info!(target_id = %id, previous = %previous_fingerprint, current = %identity.fingerprint(), "model identity changed; the plan turns reviews off for this target");
            return Ok(ReviewReport {
                id: None,
                action: "disabled",
                tagged: false,
            });
        }
        // What to show the reviewer. A retryable failure retries the event (nothing is stored
        // yet); a permanent one leaves a gap in the record rather than no record at all.
        let mut gaps = Vec::new();
        let policies = match self.history.policies(id).await {
            Ok(p) => p,
            Err(e) if e.is_retryable() => return Err(port(id, "describe the scaling policies")(e)),
            Err(e) => {
                gaps.push(format!("scaling policies unavailable: {e}"));
                Vec::new()
            }
        };
        let observed = match self.aas.describe(slice::from_ref(id)).await {
            Ok(list) => list.into_iter().find(|o| &o.id == id).map(|o| o.bounds()),
            Err(e) if e.is_retryable() => return Err(port(id, "describe the scalable target")(e)),
            Err(e) => {
                gaps.push(format!("scalable target bounds unavailable: {e}"));
                None
            }
        };
        let decisions = match self.store.recent_log(id, 200).await {
            Ok(d) => d,
            Err(e) if e.is_retryable() => return Err(port(id, "read the decision log")(e)),
            Err(e) => {
                gaps.push(format!("decision log unavailable: {e}"));
                Vec::new()
            }
        };
        if target.review.tag_endpoint && endpoint_arn.is_none() {
            gaps.push("the endpoint's ARN is unknown: it was not tagged".into());
        }
        let tag_arn = endpoint_arn.clone().filter(|_| target.review.tag_endpoint);
        let fresh = build_review(ReviewInput {
            target,
            at: watch.now,
            trigger: watch.trigger.clone(),
            endpoint_arn,
            tagged: tag_arn.is_some(),
            previous_fingerprint: previous_fingerprint.to_owned(),
            previous,
            current: identity.clone(),
            policies,
            observed,
            decisions,
            samples: &state.lead_samples,
            gaps,
        });
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
                    SaveOutcome::Saved if reopening => "reopened",
                    SaveOutcome::Saved => "opened",
                    // Another event of the same change stored it first.
                    SaveOutcome::Conflict => "already_open",
                }
            }
            OpenDecision::AlreadyOpen(_) => "already_open",
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
            action,
            previous = %previous_fingerprint,
            current = %identity.fingerprint(),
            model = %identity.summary(),
            policies = policies_attached,
            tagged,
            "scaling-policy review: the model behind this target changed"
        );
        notes.push(format!("review {review_id} {action}"));
        Ok(ReviewReport {
            id: Some(review_id),
            action,
            tagged,
        })
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
