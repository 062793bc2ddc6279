//! In-memory versions of the deployment watcher's ports, for the handler tests, the CLI's dry
//! runs and the simulator. They count calls, so a test can assert that an ignored event made no
//! AWS mutation, and can be told to fail like AWS does.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use crate::deploy_ports::{
    ComponentView, EndpointConfigView, EndpointView, Endpoints, ModelView, ReviewStore,
    ScalingActivity, ScalingHistory, ScheduleReviewStore,
};
use crate::identity::ModelIdentity;
use crate::ids::{ComponentName, EndpointName, ScalableTargetId};
use crate::model::ReviewId;
use crate::ports::{ErrorClass, PortError, SaveOutcome};
use crate::review::schedule::ScheduleReview;
use crate::review::{Review, ScalingPolicySummary};

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn bump(c: &AtomicUsize) {
    c.fetch_add(1, Ordering::SeqCst);
}

pub fn count(c: &AtomicUsize) -> usize {
    c.load(Ordering::SeqCst)
}

#[derive(Debug, thiserror::Error)]
#[error("{0}")]
struct Injected(String);

/// SageMaker in memory: endpoints, configs, models, inference components and endpoint tags.
#[derive(Debug, Default)]
pub struct MemoryEndpoints {
    endpoints: Mutex<BTreeMap<String, EndpointView>>,
    configs: Mutex<BTreeMap<String, EndpointConfigView>>,
    models: Mutex<BTreeMap<String, ModelView>>,
    components: Mutex<BTreeMap<String, ComponentView>>,
    tags: Mutex<BTreeMap<String, BTreeMap<String, String>>>,
    /// Inference components whose DescribeInferenceComponent fails (retryable, as throttling).
    failing_components: Mutex<Vec<String>>,
    pub describes: AtomicUsize,
    pub tag_calls: AtomicUsize,
}

impl MemoryEndpoints {
    pub fn put_endpoint(&self, e: EndpointView) {
        lock(&self.endpoints).insert(e.name.to_string(), e);
    }
    pub fn put_config(&self, c: EndpointConfigView) {
        lock(&self.configs).insert(c.name.clone(), c);
    }
    pub fn put_model(&self, m: ModelView) {
        lock(&self.models).insert(m.name.clone(), m);
    }
    pub fn put_component(&self, c: ComponentView) {
        lock(&self.components).insert(c.name.to_string(), c);
    }
    pub fn remove_endpoint(&self, name: &str) {
        lock(&self.endpoints).remove(name);
    }
    /// Makes DescribeInferenceComponent of `name` fail with a retryable error.
    pub fn fail_component(&self, name: &str) {
        lock(&self.failing_components).push(name.to_owned());
    }
    /// The tags of the resource with this ARN.
    pub fn tags(&self, arn: &str) -> BTreeMap<String, String> {
        lock(&self.tags).get(arn).cloned().unwrap_or_default()
    }
    /// Points an endpoint at another config (what UpdateEndpoint does once it completes).
    pub fn switch_config(&self, endpoint: &str, config: &str) {
        if let Some(e) = lock(&self.endpoints).get_mut(endpoint) {
            e.config_name = Some(config.to_owned());
        }
    }
}

impl Endpoints for MemoryEndpoints {
    async fn describe_endpoint(
        &self,
        name: &EndpointName,
    ) -> Result<Option<EndpointView>, PortError> {
        bump(&self.describes);
        Ok(lock(&self.endpoints).get(name.as_str()).cloned())
    }

    async fn describe_endpoint_config(
        &self,
        name: &str,
    ) -> Result<Option<EndpointConfigView>, PortError> {
        bump(&self.describes);
        Ok(lock(&self.configs).get(name).cloned())
    }

    async fn describe_model(&self, name: &str) -> Result<Option<ModelView>, PortError> {
        bump(&self.describes);
        Ok(lock(&self.models).get(name).cloned())
    }

    async fn describe_inference_component(
        &self,
        name: &ComponentName,
    ) -> Result<Option<ComponentView>, PortError> {
        bump(&self.describes);
        if lock(&self.failing_components)
            .iter()
            .any(|f| f == name.as_str())
        {
            return Err(PortError::new(
                format!("describe inference component {name}"),
                ErrorClass::Retryable,
                Injected("injected throttling".into()),
            ));
        }
        Ok(lock(&self.components).get(name.as_str()).cloned())
    }

    async fn tag_endpoint(
        &self,
        endpoint_arn: &str,
        key: &str,
        value: &str,
    ) -> Result<(), PortError> {
        bump(&self.tag_calls);
        lock(&self.tags)
            .entry(endpoint_arn.to_owned())
            .or_default()
            .insert(key.to_owned(), value.to_owned());
        Ok(())
    }
}

/// AAS policies and activities in memory; activities can be made to fail.
#[derive(Debug, Default)]
pub struct MemoryScalingHistory {
    policies: Mutex<BTreeMap<ScalableTargetId, Vec<ScalingPolicySummary>>>,
    activities: Mutex<BTreeMap<ScalableTargetId, Vec<ScalingActivity>>>,
    fail_activities: Mutex<Option<ErrorClass>>,
    pub calls: AtomicUsize,
}

impl MemoryScalingHistory {
    pub fn put_policies(&self, id: &ScalableTargetId, p: Vec<ScalingPolicySummary>) {
        lock(&self.policies).insert(id.clone(), p);
    }
    pub fn put_activities(&self, id: &ScalableTargetId, a: Vec<ScalingActivity>) {
        lock(&self.activities).insert(id.clone(), a);
    }
    /// Makes DescribeScalingActivities fail (as moto's missing operation, or throttling, would).
    pub fn fail_activities(&self, class: Option<ErrorClass>) {
        *lock(&self.fail_activities) = class;
    }
}

impl ScalingHistory for MemoryScalingHistory {
    async fn policies(
        &self,
        id: &ScalableTargetId,
    ) -> Result<Vec<ScalingPolicySummary>, PortError> {
        bump(&self.calls);
        Ok(lock(&self.policies).get(id).cloned().unwrap_or_default())
    }

    async fn activities(&self, id: &ScalableTargetId) -> Result<Vec<ScalingActivity>, PortError> {
        bump(&self.calls);
        if let Some(class) = *lock(&self.fail_activities) {
            return Err(PortError::new(
                format!("describe the scaling activities of {id}"),
                class,
                Injected("injected failure".into()),
            ));
        }
        let mut list = lock(&self.activities).get(id).cloned().unwrap_or_default();
        list.sort_by_key(|a| std::cmp::Reverse(a.started_at));
        Ok(list)
    }
}

/// MODEL and REVIEW# items in memory, with the same conditional-write rule as DynamoDB.
#[derive(Debug, Default)]
pub struct MemoryReviewStore {
    identities: Mutex<BTreeMap<ScalableTargetId, ModelIdentity>>,
    reviews: Mutex<BTreeMap<(ScalableTargetId, ReviewId), Review>>,
    schedule: Mutex<BTreeMap<(ScalableTargetId, ReviewId), ScheduleReview>>,
    pub writes: AtomicUsize,
}

impl MemoryReviewStore {
    pub fn all(&self) -> Vec<Review> {
        lock(&self.reviews).values().cloned().collect()
    }
    pub fn schedule_all(&self) -> Vec<ScheduleReview> {
        lock(&self.schedule).values().cloned().collect()
    }
    pub fn identity(&self, id: &ScalableTargetId) -> Option<ModelIdentity> {
        lock(&self.identities).get(id).cloned()
    }
}

impl ReviewStore for MemoryReviewStore {
    async fn load_identity(
        &self,
        id: &ScalableTargetId,
    ) -> Result<Option<ModelIdentity>, PortError> {
        Ok(lock(&self.identities).get(id).cloned())
    }

    async fn save_identity(
        &self,
        id: &ScalableTargetId,
        identity: &ModelIdentity,
    ) -> Result<(), PortError> {
        bump(&self.writes);
        lock(&self.identities).insert(id.clone(), identity.clone());
        Ok(())
    }

    async fn load_review(
        &self,
        id: &ScalableTargetId,
        review_id: &ReviewId,
    ) -> Result<Option<Review>, PortError> {
        Ok(lock(&self.reviews)
            .get(&(id.clone(), review_id.clone()))
            .cloned())
    }

    async fn save_review(&self, review: &Review) -> Result<SaveOutcome, PortError> {
        bump(&self.writes);
        let mut reviews = lock(&self.reviews);
        let key = (review.target.clone(), review.id.clone());
        let stored = reviews.get(&key).map_or(0, |r| r.revision);
        if stored != review.revision {
            return Ok(SaveOutcome::Conflict);
        }
        let mut next = review.clone();
        next.revision += 1;
        reviews.insert(key, next);
        Ok(SaveOutcome::Saved)
    }

    async fn reviews(&self, id: &ScalableTargetId) -> Result<Vec<Review>, PortError> {
        let mut list: Vec<Review> = lock(&self.reviews)
            .iter()
            .filter(|((t, _), _)| t == id)
            .map(|(_, r)| r.clone())
            .collect();
        list.sort_by_key(|r| std::cmp::Reverse(r.opened_at));
        Ok(list)
    }
}

impl ScheduleReviewStore for MemoryReviewStore {
    async fn load_schedule_review(
        &self,
        id: &ScalableTargetId,
        review_id: &ReviewId,
    ) -> Result<Option<ScheduleReview>, PortError> {
        Ok(lock(&self.schedule)
            .get(&(id.clone(), review_id.clone()))
            .cloned())
    }

    async fn save_schedule_review(
        &self,
        review: &ScheduleReview,
    ) -> Result<SaveOutcome, PortError> {
        bump(&self.writes);
        let mut reviews = lock(&self.schedule);
        let key = (review.target.clone(), review.id.clone());
        if reviews.get(&key).map_or(0, |r| r.revision) != review.revision {
            return Ok(SaveOutcome::Conflict);
        }
        let mut next = review.clone();
        next.revision += 1;
        reviews.insert(key, next);
        Ok(SaveOutcome::Saved)
    }

    async fn schedule_reviews(
        &self,
        id: &ScalableTargetId,
    ) -> Result<Vec<ScheduleReview>, PortError> {
        let mut list: Vec<ScheduleReview> = lock(&self.schedule)
            .iter()
            .filter(|((t, _), _)| t == id)
            .map(|(_, r)| r.clone())
            .collect();
        list.sort_by_key(|r| std::cmp::Reverse(r.opened_at));
        Ok(list)
    }
}
