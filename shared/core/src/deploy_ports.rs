//! The deployment watcher's ports, in headroom's terms: what SageMaker says serves behind an
//! endpoint, what Application Auto Scaling did and has attached, and where model identities and
//! policy reviews are kept. Adapters (`headroom-adapters`) implement them with the AWS SDK, tests
//! with memory. Like `ports.rs`, they return domain types and classified [`PortError`]s.

use std::future::Future;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::endpoint_status::EndpointStatus;
use crate::identity::{ContainerIdentity, ModelIdentity};
use crate::ids::{ComponentName, EndpointName, ScalableTargetId};
use crate::model::ReviewId;
use crate::ports::{PortError, SaveOutcome};
use crate::review::schedule::ScheduleReview;
use crate::review::{Review, ScalingPolicySummary};

/// DescribeEndpoint, as far as identity and measurement need it.
#[derive(Debug, Clone, PartialEq)]
pub struct EndpointView {
    pub name: EndpointName,
    pub arn: Option<String>,
    /// The config in force (during an update, still the old one until it completes).
    pub config_name: Option<String>,
    /// DescribeEndpoint's status.
    pub status: EndpointStatus,
    pub variants: Vec<EndpointVariantView>,
    pub last_modified: Option<DateTime<Utc>>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EndpointVariantView {
    pub name: String,
    pub current_instances: Option<u32>,
    pub desired_instances: Option<u32>,
}

/// DescribeEndpointConfig: which model each variant serves, on what.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct EndpointConfigView {
    pub name: String,
    pub variants: Vec<ConfigVariantView>,
    /// The config has an `AsyncInferenceConfig`: an asynchronous endpoint (requests queue).
    #[serde(default)]
    pub async_inference: bool,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ConfigVariantView {
    pub name: String,
    /// Absent for variants that host inference components (the components name their models).
    pub model_name: Option<String>,
    pub instance_type: Option<String>,
    /// The variant has a `ServerlessConfig` (no instances to count).
    #[serde(default)]
    pub serverless: bool,
    /// `ManagedInstanceScaling`: how SageMaker itself adds and releases the instances of an
    /// endpoint that hosts inference components.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub managed_instance_scaling: Option<ManagedInstanceScalingView>,
}

/// A variant's `ManagedInstanceScaling` (DescribeEndpointConfig).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ManagedInstanceScalingView {
    /// `Status = ENABLED`.
    pub enabled: bool,
    pub min_instances: Option<u32>,
    pub max_instances: Option<u32>,
    /// `ScaleInPolicy.Strategy`: `IDLE_RELEASE` or `CONSOLIDATION`; absent when no policy is set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scale_in_strategy: Option<String>,
    /// `ScaleInPolicy.CooldownInMinutes` as configured (SageMaker's default is 20 when unset).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scale_in_cooldown_minutes: Option<u32>,
}

/// DescribeModel: what the model's containers run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelView {
    pub name: String,
    pub arn: Option<String>,
    /// The primary container, or every container of an inference pipeline, in order.
    pub containers: Vec<ContainerIdentity>,
}

/// DescribeInferenceComponent: where it runs and what it serves.
#[derive(Debug, Clone, PartialEq)]
pub struct ComponentView {
    pub name: ComponentName,
    pub arn: Option<String>,
    pub endpoint: Option<String>,
    pub variant: Option<String>,
    pub model_name: Option<String>,
    /// The component's own container, when it names one instead of (or beside) a model.
    pub container: Option<ContainerIdentity>,
    pub status: Option<String>,
}

/// SageMaker, as the deployment watcher uses it. `Ok(None)` means "no such resource" (deleted,
/// or never created): not an error, since deletions race with events.
pub trait Endpoints: Send + Sync {
    fn describe_endpoint(
        &self,
        name: &EndpointName,
    ) -> impl Future<Output = Result<Option<EndpointView>, PortError>> + Send;

    fn describe_endpoint_config(
        &self,
        name: &str,
    ) -> impl Future<Output = Result<Option<EndpointConfigView>, PortError>> + Send;

    fn describe_model(
        &self,
        name: &str,
    ) -> impl Future<Output = Result<Option<ModelView>, PortError>> + Send;

    fn describe_inference_component(
        &self,
        name: &ComponentName,
    ) -> impl Future<Output = Result<Option<ComponentView>, PortError>> + Send;

    /// AddTags on the endpoint (creates or overwrites the tag).
    fn tag_endpoint(
        &self,
        endpoint_arn: &str,
        key: &str,
        value: &str,
    ) -> impl Future<Output = Result<(), PortError>> + Send;
}

/// An Application Auto Scaling activity's outcome.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum ActivityStatus {
    Successful,
    InProgress,
    Pending,
    Failed,
    Unfulfilled,
    Overridden,
    Other(String),
}

/// One scaling activity of a target (DescribeScalingActivities).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ScalingActivity {
    pub id: String,
    pub started_at: DateTime<Utc>,
    pub ended_at: Option<DateTime<Utc>>,
    pub status: ActivityStatus,
    /// "Setting desired instance count to 6."
    pub description: String,
    /// "monitor alarm TargetTracking-...-AlarmHigh-... in state ALARM triggered policy ...", or
    /// "minimum capacity was set to 6".
    pub cause: String,
    pub message: Option<String>,
}

/// Application Auto Scaling's record of a target: its policies and its recent activities.
pub trait ScalingHistory: Send + Sync {
    /// The scaling policies attached to `id` (DescribeScalingPolicies).
    fn policies(
        &self,
        id: &ScalableTargetId,
    ) -> impl Future<Output = Result<Vec<ScalingPolicySummary>, PortError>> + Send;

    /// The most recent scaling activities of `id` (one page, newest first; AAS keeps six weeks).
    fn activities(
        &self,
        id: &ScalableTargetId,
    ) -> impl Future<Output = Result<Vec<ScalingActivity>, PortError>> + Send;
}

/// Where model identities (`MODEL`) and policy reviews (`REVIEW#<id>`) are kept, under the
/// target's partition (docs/state-table.md).
pub trait ReviewStore: Send + Sync {
    fn load_identity(
        &self,
        id: &ScalableTargetId,
    ) -> impl Future<Output = Result<Option<ModelIdentity>, PortError>> + Send;

    /// Stores the full identity in force (overwrites; the fingerprint in the target state is the
    /// authority for "changed or not", this item is the detail).
    fn save_identity(
        &self,
        id: &ScalableTargetId,
        identity: &ModelIdentity,
    ) -> impl Future<Output = Result<(), PortError>> + Send;

    fn load_review(
        &self,
        id: &ScalableTargetId,
        review_id: &ReviewId,
    ) -> impl Future<Output = Result<Option<Review>, PortError>> + Send;

    /// Writes `review` as revision `review.revision + 1` if the stored revision is still
    /// `review.revision` (0: the review must not exist yet). A lost race is `Conflict`.
    fn save_review(
        &self,
        review: &Review,
    ) -> impl Future<Output = Result<SaveOutcome, PortError>> + Send;

    /// Every review of a target, open and acknowledged, newest first.
    fn reviews(
        &self,
        id: &ScalableTargetId,
    ) -> impl Future<Output = Result<Vec<Review>, PortError>> + Send;
}

/// Where schedule reviews (`SCHEDULE#<id>`) are kept, under the target's partition beside the
/// policy reviews (docs/state-table.md). The same conditional-write rule as [`ReviewStore`].
pub trait ScheduleReviewStore: Send + Sync {
    /// Whether a store is wired: the tick opens schedule reviews only with one (the simulator
    /// and the tests that do not look at reviews leave it `()`).
    fn is_wired(&self) -> bool {
        true
    }

    fn load_schedule_review(
        &self,
        id: &ScalableTargetId,
        review_id: &ReviewId,
    ) -> impl Future<Output = Result<Option<ScheduleReview>, PortError>> + Send;

    /// Writes `review` as revision `review.revision + 1` if the stored revision is still
    /// `review.revision` (0: it must not exist yet). A lost race is `Conflict`.
    fn save_schedule_review(
        &self,
        review: &ScheduleReview,
    ) -> impl Future<Output = Result<SaveOutcome, PortError>> + Send;

    /// Every schedule review of a target, open and acknowledged, newest first.
    fn schedule_reviews(
        &self,
        id: &ScalableTargetId,
    ) -> impl Future<Output = Result<Vec<ScheduleReview>, PortError>> + Send;
}

/// No review store: the verdicts stay in the forecast state, no review is opened.
impl ScheduleReviewStore for () {
    fn is_wired(&self) -> bool {
        false
    }

    async fn load_schedule_review(
        &self,
        _id: &ScalableTargetId,
        _review_id: &ReviewId,
    ) -> Result<Option<ScheduleReview>, PortError> {
        Ok(None)
    }

    async fn save_schedule_review(
        &self,
        _review: &ScheduleReview,
    ) -> Result<SaveOutcome, PortError> {
        Ok(SaveOutcome::Saved)
    }

    async fn schedule_reviews(
        &self,
        _id: &ScalableTargetId,
    ) -> Result<Vec<ScheduleReview>, PortError> {
        Ok(Vec::new())
    }
}
