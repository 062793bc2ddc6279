//! The deployment watcher's use cases: SageMaker endpoint, deployment and endpoint-config state
//! changes, model package approvals, and deployment pipelines' own calls
//! (`headroom.pipeline/v1`). It keeps the model identity behind each managed target, opens a
//! scaling-policy review when it changes (a pending one as soon as a new version of the package
//! it serves is approved: `model_package.rs`), and measures how long new capacity really takes
//! so that pre-scaling uses a measured lead time.
//!
//! For each managed target an event concerns: read the identity serving now (`observe.rs`),
//! compare it with the fingerprint in force (the target state's `model`), open a review when it
//! changed (`review_open.rs`), then reconcile the target with an event change that records the
//! new fingerprint and the scale-out measurements (`watch.rs`), and store the full identity.
//! Endpoints with no managed target are a logged no-op: nothing is written, nothing in AWS
//! changes. The pure rules are in `crate::identity`, `crate::review` and `crate::lead_samples`.

mod error;
mod model_package;
mod observe;
mod pipeline;
mod review_lint;
mod review_open;
mod sagemaker_event;
mod targets;
mod watch;

use chrono::{DateTime, Utc};
use serde::Serialize;

use crate::deploy_ports::{Endpoints, ReviewStore, ScalingHistory};
use crate::metrics_port::DemandHistory;
use crate::model::{ModelFingerprint, ReviewId};
use crate::ports::{ScalingTargets, StateStore};
use crate::trigger::{ModelPackageEvent, PipelineHook, SageMakerEvent};
pub use crate::usecase::Origin;

use super::Ports;

pub use error::{port, DeployError};
pub use observe::{Observation, Observer};
pub use watch::record;

/// The ports the watcher uses, borrowed for one invocation.
struct Watcher<'a, T, H, E, S, R, D> {
    targets: &'a T,
    history: &'a H,
    endpoints: &'a E,
    state: &'a S,
    reviews: &'a R,
    /// CloudWatch: the measurements a review's lint compares (`()`: none, a gap in the review).
    demand: &'a D,
}

impl<'a, T, H, E, S, R, D> Watcher<'a, T, H, E, S, R, D> {
    fn of<C>(ports: Ports<'a, T, H, C, E, S, R, D>) -> Self {
        Watcher {
            targets: ports.targets,
            history: ports.history,
            endpoints: ports.endpoints,
            state: ports.state,
            reviews: ports.reviews,
            demand: ports.demand,
        }
    }
}

/// What the watcher knows about a model change when it opens the review: when the new model
/// took over, and what serves it (for the review's lint).
struct ChangeContext {
    changed_at: DateTime<Utc>,
    serving: Result<crate::usecase::lint::ServingFacts, String>,
}

/// Refuses an event from another account or region than `origin`'s home: the first check, before
/// anything is read or written.
fn refuse_foreign(
    origin: Origin<'_>,
    what: &str,
    provenance: &crate::trigger::Provenance,
) -> Result<(), DeployError> {
    match origin {
        Origin::Home(home) => match home.foreign_event(what, provenance) {
            Some(reason) => Err(DeployError::Refused { reason }),
            None => Ok(()),
        },
        Origin::Anywhere => Ok(()),
    }
}

/// A SageMaker endpoint, deployment or endpoint-config state change, from `origin`.
pub async fn on_sagemaker<T, H, C, E, S, R, D>(
    ports: Ports<'_, T, H, C, E, S, R, D>,
    event: &SageMakerEvent,
    origin: Origin<'_>,
    now: DateTime<Utc>,
) -> Result<Response, DeployError>
where
    T: ScalingTargets,
    H: ScalingHistory,
    E: Endpoints,
    S: StateStore,
    R: ReviewStore,
    D: DemandHistory,
{
    let what = match (&event.endpoint, &event.endpoint_config) {
        (Some(e), _) => format!("the SageMaker event about endpoint {e}"),
        (None, Some(c)) => format!("the SageMaker event about endpoint config {c}"),
        (None, None) => "the SageMaker event".to_owned(),
    };
    refuse_foreign(origin, &what, &event.provenance)?;
    Watcher::of(ports).on_sagemaker(event, now).await
}

/// A model package's state change: an approval of another version of a package a managed
/// target serves opens a pending review; anything else is ignored, with the reason. From
/// `origin`, as [`on_sagemaker`].
pub async fn on_model_package<T, H, C, E, S, R, D>(
    ports: Ports<'_, T, H, C, E, S, R, D>,
    event: &ModelPackageEvent,
    origin: Origin<'_>,
    now: DateTime<Utc>,
) -> Result<Response, DeployError>
where
    T: ScalingTargets,
    H: ScalingHistory,
    E: Endpoints,
    S: StateStore,
    R: ReviewStore,
    D: DemandHistory,
{
    refuse_foreign(
        origin,
        &format!("the approval of model package {}", event.arn),
        &event.provenance,
    )?;
    Watcher::of(ports).on_model_package(event, now).await
}

/// A deployment pipeline's call: `deployed` (check the identities now) or `check` (is a review
/// open?).
pub async fn on_pipeline<T, H, C, E, S, R, D>(
    ports: Ports<'_, T, H, C, E, S, R, D>,
    hook: &PipelineHook,
    now: DateTime<Utc>,
) -> Result<Response, DeployError>
where
    T: ScalingTargets,
    H: ScalingHistory,
    E: Endpoints,
    S: StateStore,
    R: ReviewStore,
    D: DemandHistory,
{
    Watcher::of(ports).on_pipeline(hook, now).await
}

/// `kind` of the handler's answer (what a pipeline calling the Lambda reads).
pub const RESULT_KIND: &str = "headroom.deploy-result/v1";

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
    /// For `check`: `open` (a review is open: hold the promotion), `pending` (none is open, but
    /// a package approved for a target awaits review before it rolls out), `clear`, or
    /// `unmanaged` (no managed target matches: check the endpoint name).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub review: Option<CheckAnswer>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub open_reviews: Vec<ReviewBrief>,
    /// For `check`: the pending reviews (approved packages not serving yet).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub pending_reviews: Vec<ReviewBrief>,
}

impl Response {
    pub(super) fn new(trigger: String, endpoint: Option<String>, outcome: Outcome) -> Self {
        Self {
            kind: RESULT_KIND,
            trigger,
            endpoint,
            outcome,
            reason: None,
            targets: Vec::new(),
            review: None,
            open_reviews: Vec::new(),
            pending_reviews: Vec::new(),
        }
    }
}

/// What happened to one target.
#[derive(Debug, Clone, Serialize)]
pub struct TargetReport {
    pub target: String,
    pub change: ModelChange,
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
    pub action: ReviewAction,
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
    /// The lint's findings when the review opened (`headroom reviews show` has the evidence
    /// windows); empty for reviews stored before the lint.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub findings: Vec<crate::lint::Finding>,
    /// A pending review's approved package (its versioned ARN).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub package: Option<String>,
}

impl ReviewBrief {
    pub(super) fn of(r: crate::review::Review) -> Self {
        Self {
            id: r.id.clone(),
            target: r.target.to_string(),
            opened_at: r.opened_at,
            model: r.current.summary(),
            fingerprint: r.fingerprint.clone(),
            previous_fingerprint: r.previous_fingerprint.clone(),
            package: r
                .package
                .filter(|_| r.status == crate::review::ReviewStatus::Pending)
                .map(|p| p.arn),
            findings: r.lint.map(|l| l.findings).unwrap_or_default(),
        }
    }
}

/// What the watch found behind one target.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ModelChange {
    /// First sighting: recorded as the baseline, no review.
    Baseline,
    Unchanged,
    /// Another model serves now: a review is opened (unless the plan turns reviews off).
    Changed,
    /// Nothing serves behind the target now (deleted, or not created yet).
    Absent,
    /// Another version of the model package the target serves was approved: it does not serve
    /// yet (a pending review is opened unless the plan turns reviews off).
    Approved,
    /// A package version with a pending review for the target is no longer approved.
    Withdrawn,
}

/// What a model change did to its review.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ReviewAction {
    Opened,
    /// An acknowledged review of the same change is open again.
    Reopened,
    AlreadyOpen,
    /// The plan turns reviews off for this target.
    Disabled,
    /// An approved package opened a pending review.
    Pending,
    /// Another event of the same approval already opened it (it may be acknowledged or
    /// superseded since).
    AlreadyPending,
    /// The package version's approval was withdrawn: its pending review is closed.
    Withdrawn,
    /// The review was closed already (rolled out, superseded or withdrawn): nothing to do.
    AlreadyClosed,
    /// The event is older than the approval the review records (delivered late): nothing to do.
    Outdated,
}

impl ReviewAction {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Opened => "opened",
            Self::Reopened => "reopened",
            Self::AlreadyOpen => "already_open",
            Self::Disabled => "disabled",
            Self::Pending => "pending",
            Self::AlreadyPending => "already_pending",
            Self::Withdrawn => "withdrawn",
            Self::AlreadyClosed => "already_closed",
            Self::Outdated => "outdated",
        }
    }
}

impl std::fmt::Display for ReviewAction {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A pipeline `check`'s answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CheckAnswer {
    /// A review is open: hold the promotion.
    Open,
    /// No review is open, but an approved package awaits review before it rolls out.
    Pending,
    Clear,
    /// No managed target matches: check the endpoint name.
    Unmanaged,
}

impl CheckAnswer {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Open => "open",
            Self::Pending => "pending",
            Self::Clear => "clear",
            Self::Unmanaged => "unmanaged",
        }
    }
}
