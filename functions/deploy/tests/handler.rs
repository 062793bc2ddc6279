//! The deployment watcher's handler against in-memory ports: baselines, reviews, duplicates,
//! measurements, the pipeline hook, refusals. Each test is one scenario (GIVEN / WHEN / THEN).

mod common;

use chrono::Duration;
use headroom_core::deploy_ports::{
    ActivityStatus, ComponentView, ConfigVariantView, EndpointConfigView, EndpointVariantView,
    EndpointView, ModelView, ScalingActivity,
};
use headroom_core::identity::{ContainerIdentity, ModelIdentity};
use headroom_core::ids::{ComponentName, EndpointName, ScalableTargetId};
use headroom_core::lead_time::lead_time;
use headroom_core::memory::{count, MemoryEndpoints, MemoryReviewStore, MemoryScalingHistory};
use headroom_core::memory::{Calls, MemoryScalingTargets, MemoryStateStore};
use headroom_core::model::{ModelFingerprint, SampleSource};
use headroom_core::plan::parse_plan;
use headroom_core::ports::ErrorClass;
use headroom_core::review::{ReviewStatus, ScalingPolicySummary, REVIEW_TAG};
use headroom_core::usecase::deploy::{CheckAnswer, DeployError, ModelChange, ReviewAction};
use headroom_core::usecase::reviews::{ack_review, list_reviews};
use headroom_core::usecase::Ports;
use headroom_deploy::{Error, Outcome, Response};
use headroom_lambda::Classified as _;
use serde_json::{json, Value};

use common::{fixture, t, variant, World, ARN, IMAGE};

const PLAN: &str = r#"
version = 1
[[target]]
resource_id = "endpoint/chat-prod/variant/AllTraffic"
min_capacity = 2
max_capacity = 8
lead_time = "15m"
[target.lead_time_measured]
min_samples = 3
"#;

impl World {
    /// chat-prod/AllTraffic serves model v7 (config v7); config v8 with model v8 exists.
    fn new(plan: &str) -> Self {
        let endpoints = MemoryEndpoints::default();
        endpoints.put_endpoint(EndpointView {
            name: EndpointName::parse("chat-prod").expect("valid"),
            arn: Some(ARN.into()),
            config_name: Some("chat-prod-config-v7".into()),
            status: headroom_core::endpoint_status::EndpointStatus::InService,
            variants: vec![EndpointVariantView {
                name: "AllTraffic".into(),
                current_instances: Some(2),
                desired_instances: Some(2),
            }],
            last_modified: None,
        });
        for v in ["v7", "v8"] {
            endpoints.put_config(EndpointConfigView {
                name: format!("chat-prod-config-{v}"),
                variants: vec![ConfigVariantView {
                    name: "AllTraffic".into(),
                    model_name: Some(format!("chat-llama-{v}")),
                    instance_type: Some("ml.g4dn.xlarge".into()),
                    ..Default::default()
                }],
                ..Default::default()
            });
            endpoints.put_model(ModelView {
                name: format!("chat-llama-{v}"),
                arn: Some(format!(
                    "arn:aws:sagemaker:us-east-1:123456789012:model/chat-llama-{v}"
                )),
                containers: vec![ContainerIdentity {
                    image: Some(IMAGE.into()),
                    model_data: Some(format!("s3://models/chat-llama/{v}/model.tar.gz")),
                    model_package: None,
                }],
            });
        }
        let history = MemoryScalingHistory::default();
        history.put_policies(
            &variant(),
            vec![ScalingPolicySummary {
                name: "inv-per-instance".into(),
                policy_type: "TargetTrackingScaling".into(),
                metric: Some("SageMakerVariantInvocationsPerInstance".into()),
                target_value: Some(70.0),
                scale_in_cooldown_s: Some(300),
                scale_out_cooldown_s: Some(60),
                disable_scale_in: None,
                cooldown_s: None,
                steps: vec![],
                alarms: vec![],
                ..Default::default()
            }],
        );
        Self {
            endpoints,
            history,
            reviews: MemoryReviewStore::default(),
            aas: MemoryScalingTargets::default().with_target(variant(), 2, 8),
            store: MemoryStateStore::default().with_plan(plan),
        }
    }

    async fn handle(&self, event: &Value, now: &str) -> Result<Response, Error> {
        headroom_deploy::handle(self.ports(), event, t(now)).await
    }

    fn fingerprint(&self) -> Option<ModelFingerprint> {
        self.store.state(&variant()).model
    }
}

fn fp(version: &str) -> ModelFingerprint {
    ModelIdentity {
        endpoint: None,
        endpoint_config: None,
        inference_component: None,
        model_name: None,
        model_arn: None,
        containers: vec![ContainerIdentity {
            image: Some(IMAGE.into()),
            model_data: Some(format!("s3://models/chat-llama/{version}/model.tar.gz")),
            model_package: None,
        }],
        instance_type: None,
        version_label: None,
        observed_at: t("2026-01-01T00:00:00Z"),
    }
    .fingerprint()
}

fn endpoint_event(id: &str, status: &str, modified: &str, count: u32) -> Value {
    json!({
        "version": "0", "id": id, "detail-type": "SageMaker Endpoint State Change", "source": "aws.sagemaker",
        "account": "123456789012", "time": modified, "region": "us-east-1", "resources": [ARN],
        "detail": {
            "EndpointName": "chat-prod", "EndpointArn": ARN, "EndpointConfigName": "chat-prod-config-v7",
            "ProductionVariants": [{"VariantName": "AllTraffic", "DesiredWeight": 1.0, "DesiredInstanceCount": count}],
            "EndpointStatus": status, "LastModifiedTime": t(modified).timestamp_millis(), "Tags": {}
        }
    })
}

fn activity(id: &str, start: &str, secs: i64, to: u32) -> ScalingActivity {
    ScalingActivity {
        id: id.into(),
        started_at: t(start),
        ended_at: Some(t(start) + Duration::seconds(secs)),
        status: ActivityStatus::Successful,
        description: format!("Setting desired instance count to {to}."),
        cause: "monitor alarm TargetTracking-endpoint/chat-prod/variant/AllTraffic-AlarmHigh-1a2b in state ALARM triggered policy inv-per-instance".into(),
        message: None,
    }
}

/// GIVEN a baseline under v7, WHEN the endpoint switches to config v8 and SageMaker reports it.
async fn baseline_then_switch(w: &World) {
    let r = w
        .handle(
            &fixture("sagemaker/endpoint-in-service-docs.json"),
            "2026-03-14T08:00:00Z",
        )
        .await
        .expect("baseline");
    assert_eq!(r.targets[0].change, ModelChange::Baseline);
    w.endpoints
        .switch_config("chat-prod", "chat-prod-config-v8");
}

#[tokio::test]
async fn first_sighting_is_a_baseline_without_review() {
    let w = World::new(PLAN);
    let r = w
        .handle(
            &fixture("sagemaker/endpoint-in-service-docs.json"),
            "2026-03-14T08:00:00Z",
        )
        .await
        .expect("handled");
    assert_eq!(r.outcome, Outcome::Watched);
    assert_eq!(r.targets[0].change, ModelChange::Baseline);
    assert!(r.targets[0].review.is_none());
    assert_eq!(
        w.fingerprint(),
        Some(fp("v7")),
        "the fingerprint is in force in the target state"
    );
    let stored = w.reviews.identity(&variant()).expect("MODEL item stored");
    assert_eq!(stored.model_name.as_deref(), Some("chat-llama-v7"));
    assert_eq!(
        stored.endpoint_config.as_deref(),
        Some("chat-prod-config-v7")
    );
    assert!(w.reviews.all().is_empty());
    assert_eq!(count(&w.endpoints.tag_calls), 0);
    // The decision log carries the model identity in force.
    let log = w.store.log();
    assert_eq!(
        log.last().and_then(|r| r["model"].as_str()),
        Some(fp("v7").as_str())
    );
}

#[tokio::test]
async fn a_model_change_opens_one_review_and_tags_the_endpoint() {
    let w = World::new(PLAN);
    baseline_then_switch(&w).await;
    let r = w
        .handle(
            &fixture("sagemaker/endpoint-in-service-v8-a.json"),
            "2026-03-14T09:12:00Z",
        )
        .await
        .expect("handled");
    let target = &r.targets[0];
    assert_eq!(target.change, ModelChange::Changed);
    assert_eq!(
        target.previous_fingerprint.as_deref(),
        Some(fp("v7").as_str())
    );
    let review = target.review.as_ref().expect("review");
    assert_eq!(review.action, ReviewAction::Opened);
    assert!(review.tagged);
    assert_eq!(
        w.endpoints.tags(ARN).get(REVIEW_TAG).map(String::as_str),
        Some("open")
    );
    assert_eq!(w.fingerprint(), Some(fp("v8")));

    let reviews = w.reviews.all();
    assert_eq!(reviews.len(), 1);
    let rv = &reviews[0];
    assert_eq!(rv.status, ReviewStatus::Open);
    assert_eq!(
        rv.previous.as_ref().and_then(|p| p.model_name.as_deref()),
        Some("chat-llama-v7")
    );
    assert_eq!(rv.current.model_name.as_deref(), Some("chat-llama-v8"));
    assert_eq!(
        rv.policies.len(),
        1,
        "the policies attached when the change was seen"
    );
    assert_eq!(rv.policies[0].target_value, Some(70.0));
    assert_eq!((rv.bounds.plan_min, rv.bounds.plan_max), (2, 8));
    assert_eq!(rv.bounds.observed.map(|b| (b.min, b.max)), Some((2, 8)));
    assert!(
        !rv.recent_decisions.is_empty(),
        "decisions logged under v7 are in the review"
    );
    assert!(rv
        .recent_decisions
        .iter()
        .all(|d| d["model"] == json!(fp("v7"))));
    // The decision log records the change under the new identity.
    let last = w.store.log().last().cloned().expect("a record");
    assert_eq!(last["model"], json!(fp("v8")));
    assert!(
        last["notes"].to_string().contains("model identity changed"),
        "{last}"
    );
}

#[tokio::test]
async fn several_events_for_one_change_make_one_review() {
    let w = World::new(PLAN);
    baseline_then_switch(&w).await;
    // SageMaker sends two IN_SERVICE events (different ids) and a deployment event; one is
    // delivered twice by EventBridge.
    for (name, now) in [
        (
            "sagemaker/endpoint-in-service-v8-a.json",
            "2026-03-14T09:12:00Z",
        ),
        (
            "sagemaker/endpoint-in-service-v8-b.json",
            "2026-03-14T09:12:01Z",
        ),
        (
            "sagemaker/endpoint-in-service-v8-a.json",
            "2026-03-14T09:12:02Z",
        ),
        (
            "sagemaker/deployment-capacity-scaling-out.json",
            "2026-03-14T12:00:10Z",
        ),
    ] {
        w.handle(&fixture(name), now).await.expect("handled");
    }
    let reviews = w.reviews.all();
    assert_eq!(reviews.len(), 1, "{reviews:#?}");
    assert_eq!(reviews[0].revision, 1, "written once");
    assert_eq!(count(&w.endpoints.tag_calls), 1);
}

#[tokio::test]
async fn an_endpoint_without_managed_targets_is_a_no_op_without_mutation() {
    let w = World::new(PLAN);
    let mut ev = fixture("sagemaker/endpoint-in-service-docs.json");
    ev["detail"]["EndpointName"] = json!("someone-elses-endpoint");
    let r = w
        .handle(&ev, "2026-03-14T08:00:00Z")
        .await
        .expect("handled");
    assert_eq!(r.outcome, Outcome::Ignored);
    assert!(r
        .reason
        .as_deref()
        .is_some_and(|s| s.contains("someone-elses-endpoint")));
    assert_eq!(w.store.calls.mutations(), 0);
    assert_eq!(Calls::get(&w.aas.calls.register), 0);
    assert_eq!(count(&w.reviews.writes), 0);
    assert_eq!(count(&w.endpoints.tag_calls), 0);
    assert_eq!(
        count(&w.endpoints.describes),
        0,
        "no managed variant and no component: nothing to describe"
    );
}

#[tokio::test]
async fn other_event_kinds_are_refused_without_mutation() {
    let w = World::new(PLAN);
    let err = w
        .handle(&fixture("schedule/tick-rule.json"), "2026-03-14T08:00:00Z")
        .await
        .expect_err("refused");
    assert!(matches!(err, Error::WrongFunction(_)), "{err}");
    assert!(err.to_string().contains("headroom-tick"), "{err}");
    assert!(!err.is_retryable());
    let err = w
        .handle(&json!({"hello": "world"}), "2026-03-14T08:00:00Z")
        .await
        .expect_err("refused");
    assert!(matches!(err, Error::BadEvent(_)), "{err}");
    assert_eq!(w.store.calls.mutations(), 0);
    assert_eq!(count(&w.endpoints.describes), 0);
}

#[tokio::test]
async fn activities_become_samples_of_the_model_then_in_force() {
    let w = World::new(PLAN);
    w.history.put_activities(
        &variant(),
        vec![
            activity("a1", "2026-03-10T10:00:00Z", 300, 3),
            activity("a2", "2026-03-11T10:00:00Z", 360, 4),
            activity("a3", "2026-03-12T10:00:00Z", 420, 5),
        ],
    );
    let r = w
        .handle(
            &fixture("sagemaker/endpoint-in-service-docs.json"),
            "2026-03-14T08:00:00Z",
        )
        .await
        .expect("handled");
    assert_eq!(r.targets[0].lead_samples_added, 3);
    let plan = parse_plan("test", PLAN).expect("valid plan");
    let state = w.store.state(&variant());
    assert!(state
        .lead_samples
        .iter()
        .all(|s| s.model.as_deref() == Some(fp("v7").as_str())
            && s.source == SampleSource::AasActivity));
    let lt = lead_time(&plan.targets[0], &state.lead_samples, state.model.as_ref());
    // p90 of [300, 360, 420] = 420 s x 1.25 = 525 s.
    assert_eq!((lt.source, lt.span.as_secs()), ("measured", 525));

    // Reading the same activities again adds nothing.
    let r = w
        .handle(
            &fixture("sagemaker/endpoint-updating-tags-list.json"),
            "2026-03-14T09:05:01Z",
        )
        .await
        .expect("handled");
    assert_eq!(r.targets[0].lead_samples_added, 0);

    // WHEN the model changes, THEN the old samples stay, marked as v7's, and the lead time falls
    // back to the configured value until v8 has its own measurements.
    w.endpoints
        .switch_config("chat-prod", "chat-prod-config-v8");
    w.handle(
        &fixture("sagemaker/endpoint-in-service-v8-a.json"),
        "2026-03-14T09:12:00Z",
    )
    .await
    .expect("handled");
    let state = w.store.state(&variant());
    assert_eq!(state.lead_samples.len(), 3);
    assert!(state
        .lead_samples
        .iter()
        .all(|s| s.model.as_deref() == Some(fp("v7").as_str())));
    let lt = lead_time(&plan.targets[0], &state.lead_samples, state.model.as_ref());
    assert_eq!((lt.source, lt.span.as_secs()), ("configured", 15 * 60));
    // A plan that lets earlier models count keeps using them.
    let counting =
        parse_plan("test", &format!("{PLAN}count_previous_models = true\n")).expect("valid plan");
    let lt = lead_time(
        &counting.targets[0],
        &state.lead_samples,
        state.model.as_ref(),
    );
    assert_eq!((lt.source, lt.span.as_secs()), ("measured", 525));
    // The review shows the warm-up measured under v7.
    let rv = &w.reviews.all()[0];
    assert_eq!(
        (rv.warmup.samples, rv.warmup.p50_s, rv.warmup.max_s),
        (3, Some(360), Some(420))
    );
    assert_eq!(rv.warmup.lead_time_source, "measured");
}

#[tokio::test]
async fn updating_to_in_service_with_more_instances_is_measured_once() {
    let w = World::new(PLAN);
    let events = [
        endpoint_event("e1", "IN_SERVICE", "2026-03-14T08:00:00Z", 2),
        endpoint_event("e2", "UPDATING", "2026-03-14T10:00:00Z", 4),
        endpoint_event("e3", "IN_SERVICE", "2026-03-14T10:07:12Z", 4),
        // The second event SageMaker sends for the same state change.
        endpoint_event("e4", "IN_SERVICE", "2026-03-14T10:07:12Z", 4),
    ];
    for (i, ev) in events.iter().enumerate() {
        w.handle(ev, &format!("2026-03-14T10:{:02}:00Z", 10 + i))
            .await
            .expect("handled");
    }
    let samples = w.store.state(&variant()).lead_samples;
    assert_eq!(samples.len(), 1, "{samples:?}");
    assert_eq!(samples[0].seconds, 432);
    assert_eq!(samples[0].source, SampleSource::EndpointState);
    assert_eq!(samples[0].model.as_deref(), Some(fp("v7").as_str()));
}

#[tokio::test]
async fn missing_scaling_activities_do_not_stop_the_identity_check() {
    let w = World::new(PLAN);
    w.history.fail_activities(Some(ErrorClass::Retryable));
    baseline_then_switch(&w).await;
    let r = w
        .handle(
            &fixture("sagemaker/endpoint-in-service-v8-a.json"),
            "2026-03-14T09:12:00Z",
        )
        .await
        .expect("handled");
    assert_eq!(r.targets[0].change, ModelChange::Changed);
    assert!(
        r.targets[0]
            .notes
            .iter()
            .any(|n| n.contains("scaling activities unavailable")),
        "{:?}",
        r.targets[0].notes
    );
    assert_eq!(w.reviews.all().len(), 1);
}

#[tokio::test]
async fn pipeline_check_answers_open_until_the_review_is_acknowledged() {
    let w = World::new(PLAN);
    let check = fixture("pipeline/check.json");
    let r = w
        .handle(&check, "2026-03-14T07:00:00Z")
        .await
        .expect("answered");
    assert_eq!(
        (r.outcome, r.review),
        (Outcome::Answered, Some(CheckAnswer::Clear))
    );

    baseline_then_switch(&w).await;
    w.handle(
        &fixture("sagemaker/endpoint-in-service-v8-a.json"),
        "2026-03-14T09:12:00Z",
    )
    .await
    .expect("handled");
    let writes_before = w.store.calls.mutations();
    let r = w
        .handle(&check, "2026-03-14T09:30:00Z")
        .await
        .expect("answered");
    assert_eq!(r.review, Some(CheckAnswer::Open));
    assert_eq!(r.open_reviews.len(), 1);
    assert_eq!(r.open_reviews[0].fingerprint, fp("v8"));
    assert_eq!(
        w.store.calls.mutations(),
        writes_before,
        "a check writes nothing"
    );

    let plan = parse_plan("test", PLAN).expect("valid plan");
    let id = r.open_reviews[0].id.clone();
    let acked = ack_review(
        &w.reviews,
        &w.endpoints,
        &plan,
        &id,
        "ana",
        "target 70 inv/instance still fits v8 (load test 2026-03-14)",
        t("2026-03-14T10:00:00Z"),
    )
    .await
    .expect("acknowledged");
    assert_eq!(acked.review.status, ReviewStatus::Acked);
    assert_eq!(acked.tag, Some("acked"));
    assert_eq!(
        w.endpoints.tags(ARN).get(REVIEW_TAG).map(String::as_str),
        Some("acked")
    );
    let r = w
        .handle(&check, "2026-03-14T10:01:00Z")
        .await
        .expect("answered");
    assert_eq!(r.review, Some(CheckAnswer::Clear));
    // Acknowledging twice is refused with who did it.
    let err = ack_review(
        &w.reviews,
        &w.endpoints,
        &plan,
        &id,
        "bo",
        "again",
        t("2026-03-14T10:02:00Z"),
    )
    .await
    .expect_err("already");
    assert!(err.to_string().contains("ana"), "{err}");
    let err = ack_review(
        &w.reviews,
        &w.endpoints,
        &plan,
        "rv-000000000000",
        "bo",
        "x",
        t("2026-03-14T10:02:00Z"),
    )
    .await
    .expect_err("unknown");
    assert!(matches!(err, DeployError::ReviewNotFound { .. }));
    assert_eq!(
        list_reviews(&w.reviews, &plan, false)
            .await
            .expect("listed")
            .len(),
        0
    );
    assert_eq!(
        list_reviews(&w.reviews, &plan, true)
            .await
            .expect("listed")
            .len(),
        1
    );
}

#[tokio::test]
async fn pipeline_check_for_an_unmanaged_endpoint_says_so() {
    let w = World::new(PLAN);
    let mut check = fixture("pipeline/check.json");
    check["endpoint"] = json!("chat-staging");
    let r = w
        .handle(&check, "2026-03-14T07:00:00Z")
        .await
        .expect("answered");
    assert_eq!(
        (r.outcome, r.review),
        (Outcome::Ignored, Some(CheckAnswer::Unmanaged))
    );
}

#[tokio::test]
async fn pipeline_deployed_checks_the_identity_and_keeps_its_label() {
    let w = World::new(PLAN);
    baseline_then_switch(&w).await;
    let r = w
        .handle(&fixture("pipeline/deployed.json"), "2026-03-14T09:12:00Z")
        .await
        .expect("handled");
    assert_eq!(r.targets[0].change, ModelChange::Changed);
    assert_eq!(
        r.targets[0].review.as_ref().map(|rv| rv.action),
        Some(ReviewAction::Opened)
    );
    let stored = w.reviews.identity(&variant()).expect("identity");
    assert_eq!(
        stored.version_label.as_deref(),
        Some("llama3-8b-2026-03-14.2")
    );
    // The SageMaker events that follow the same rollout: no second review, label kept.
    w.handle(
        &fixture("sagemaker/endpoint-in-service-v8-a.json"),
        "2026-03-14T09:13:00Z",
    )
    .await
    .expect("handled");
    assert_eq!(w.reviews.all().len(), 1);
    assert_eq!(
        w.reviews
            .identity(&variant())
            .and_then(|i| i.version_label)
            .as_deref(),
        Some("llama3-8b-2026-03-14.2")
    );
}

#[tokio::test]
async fn a_model_that_comes_back_after_an_ack_reopens_its_review() {
    let w = World::new(PLAN);
    let plan = parse_plan("test", PLAN).expect("valid plan");
    baseline_then_switch(&w).await;
    w.handle(
        &fixture("sagemaker/endpoint-in-service-v8-a.json"),
        "2026-03-14T09:12:00Z",
    )
    .await
    .expect("handled");
    let id = w.reviews.all()[0].id.clone();
    ack_review(
        &w.reviews,
        &w.endpoints,
        &plan,
        &id,
        "ana",
        "fine",
        t("2026-03-14T10:00:00Z"),
    )
    .await
    .expect("acked");
    // Rolled back to v7 (a review for v7), then v8 again.
    w.endpoints
        .switch_config("chat-prod", "chat-prod-config-v7");
    w.handle(
        &endpoint_event("rb", "IN_SERVICE", "2026-03-14T11:00:00Z", 2),
        "2026-03-14T11:00:05Z",
    )
    .await
    .expect("handled");
    w.endpoints
        .switch_config("chat-prod", "chat-prod-config-v8");
    let r = w
        .handle(
            &endpoint_event("again", "IN_SERVICE", "2026-03-14T12:00:00Z", 2),
            "2026-03-14T12:00:05Z",
        )
        .await
        .expect("handled");
    assert_eq!(
        r.targets[0].review.as_ref().map(|rv| rv.action),
        Some(ReviewAction::Reopened)
    );
    let v8 = w
        .reviews
        .all()
        .into_iter()
        .find(|r| r.id == id)
        .expect("v8 review");
    assert_eq!(
        (v8.status, v8.occurrences, v8.earlier_acks.len()),
        (ReviewStatus::Open, 2, 1)
    );
    assert_eq!(w.reviews.all().len(), 2, "one review per new model");
    assert_eq!(
        w.endpoints.tags(ARN).get(REVIEW_TAG).map(String::as_str),
        Some("open")
    );
}

#[tokio::test]
async fn reviews_can_be_turned_off_by_the_plan() {
    let plan = format!("{PLAN}[target.review]\nenabled = false\n");
    let w = World::new(&plan);
    baseline_then_switch(&w).await;
    let r = w
        .handle(
            &fixture("sagemaker/endpoint-in-service-v8-a.json"),
            "2026-03-14T09:12:00Z",
        )
        .await
        .expect("handled");
    assert_eq!(
        r.targets[0].review.as_ref().map(|rv| rv.action),
        Some(ReviewAction::Disabled)
    );
    assert!(w.reviews.all().is_empty());
    assert_eq!(count(&w.endpoints.tag_calls), 0);
    assert_eq!(
        w.fingerprint(),
        Some(fp("v8")),
        "the identity in force still moves"
    );
}

#[tokio::test]
async fn tagging_can_be_turned_off_by_the_plan() {
    let plan = format!("{PLAN}[target.review]\ntag_endpoint = false\n");
    let w = World::new(&plan);
    baseline_then_switch(&w).await;
    w.handle(
        &fixture("sagemaker/endpoint-in-service-v8-a.json"),
        "2026-03-14T09:12:00Z",
    )
    .await
    .expect("handled");
    assert_eq!(w.reviews.all().len(), 1);
    assert!(!w.reviews.all()[0].tagged);
    assert_eq!(count(&w.endpoints.tag_calls), 0);
}

#[tokio::test]
async fn an_endpoint_config_event_waits_for_the_endpoint_to_use_it() {
    let w = World::new(PLAN);
    let ev = fixture("sagemaker/endpoint-config-created.json");
    let r = w
        .handle(&ev, "2026-03-14T09:04:13Z")
        .await
        .expect("handled");
    assert_eq!(r.outcome, Outcome::Ignored, "config v8 is not in force yet");
    assert_eq!(w.store.calls.mutations(), 0);
    // Once chat-prod uses it, the same event checks the identity.
    w.handle(
        &fixture("sagemaker/endpoint-in-service-docs.json"),
        "2026-03-14T08:00:00Z",
    )
    .await
    .expect("baseline");
    w.endpoints
        .switch_config("chat-prod", "chat-prod-config-v8");
    let r = w
        .handle(&ev, "2026-03-14T09:20:00Z")
        .await
        .expect("handled");
    assert_eq!(r.targets[0].change, ModelChange::Changed);
}

#[tokio::test]
async fn inference_components_are_watched_on_their_endpoint() {
    let plan = r#"
version = 1
[[target]]
resource_id = "inference-component/ic-llama"
min_capacity = 1
max_capacity = 4
"#;
    let w = World::new(plan);
    // An endpoint hosting components names no model in its config's variant.
    w.endpoints.put_config(EndpointConfigView {
        name: "chat-prod-config-v7".into(),
        variants: vec![ConfigVariantView {
            name: "AllTraffic".into(),
            model_name: None,
            instance_type: Some("ml.g5.2xlarge".into()),
            ..Default::default()
        }],
        ..Default::default()
    });
    let ic = ComponentName::parse("ic-llama").expect("valid");
    let put = |artifact: &str| {
        w.endpoints.put_component(ComponentView {
            name: ic.clone(),
            arn: None,
            endpoint: Some("chat-prod".into()),
            variant: Some("AllTraffic".into()),
            model_name: None,
            container: Some(ContainerIdentity {
                image: Some(IMAGE.into()),
                model_data: Some(artifact.into()),
                model_package: None,
            }),
            status: Some("InService".into()),
        })
    };
    put("s3://models/ic/v1/");
    let r = w
        .handle(
            &fixture("sagemaker/endpoint-in-service-docs.json"),
            "2026-03-14T08:00:00Z",
        )
        .await
        .expect("handled");
    assert_eq!(r.targets[0].change, ModelChange::Baseline);
    put("s3://models/ic/v2/");
    let r = w
        .handle(
            &fixture("sagemaker/endpoint-in-service-v8-a.json"),
            "2026-03-14T09:12:00Z",
        )
        .await
        .expect("handled");
    assert_eq!(r.targets[0].change, ModelChange::Changed);
    let rv = &w.reviews.all()[0];
    assert_eq!(rv.target.to_string(), "inference-component/ic-llama");
    assert_eq!(
        rv.endpoint_arn.as_deref(),
        Some(ARN),
        "the hosting endpoint is tagged"
    );
    assert_eq!(
        w.endpoints.tags(ARN).get(REVIEW_TAG).map(String::as_str),
        Some("open")
    );
}

#[tokio::test]
async fn a_racing_event_that_read_the_old_state_finds_the_review_open() {
    let w = World::new(PLAN);
    baseline_then_switch(&w).await;
    let before = w.store.state(&variant());
    w.handle(
        &fixture("sagemaker/endpoint-in-service-v8-a.json"),
        "2026-03-14T09:12:00Z",
    )
    .await
    .expect("handled");
    // GIVEN a second invocation that read the target state before the first one saved it
    // (simulated by putting the old state back), WHEN it handles the other event of the change,
    // THEN it computes the same review id, finds it open, and opens nothing new.
    w.store.put_state(&variant(), before);
    let r = w
        .handle(
            &fixture("sagemaker/endpoint-in-service-v8-b.json"),
            "2026-03-14T09:12:01Z",
        )
        .await
        .expect("handled");
    assert_eq!(r.targets[0].change, ModelChange::Changed);
    assert_eq!(
        r.targets[0].review.as_ref().map(|rv| rv.action),
        Some(ReviewAction::AlreadyOpen)
    );
    let reviews = w.reviews.all();
    assert_eq!(reviews.len(), 1);
    assert_eq!(reviews[0].revision, 1, "not rewritten");
    assert_eq!(w.fingerprint(), Some(fp("v8")));
}

#[tokio::test]
async fn a_redelivered_event_that_finds_a_new_model_still_puts_it_in_force() {
    let w = World::new(PLAN);
    let ev = fixture("sagemaker/endpoint-in-service-docs.json");
    w.handle(&ev, "2026-03-14T08:00:00Z")
        .await
        .expect("baseline");
    w.endpoints
        .switch_config("chat-prod", "chat-prod-config-v8");
    // EventBridge delivers the same event (same id) again after the rollout completed.
    let r = w
        .handle(&ev, "2026-03-14T09:30:00Z")
        .await
        .expect("handled");
    assert_eq!(r.targets[0].change, ModelChange::Changed);
    assert_eq!(w.fingerprint(), Some(fp("v8")));
    let r = w
        .handle(&ev, "2026-03-14T09:31:00Z")
        .await
        .expect("handled");
    assert_eq!(r.targets[0].change, ModelChange::Unchanged);
    assert_eq!(w.reviews.all().len(), 1);
}

/// Issue 11, item 11: an event about chat-prod must not describe an inference component of
/// another endpoint, so that component's failures cannot fail it.
#[tokio::test]
async fn an_event_about_one_endpoint_does_not_touch_components_of_others() {
    // GIVEN chat-prod (a model-based endpoint) and a component on another endpoint, whose
    // DescribeInferenceComponent is throttled
    let plan = format!(
        "{PLAN}\n[[target]]\nresource_id = \"inference-component/ic-elsewhere\"\nmin_capacity = 1\nmax_capacity = 4\n"
    );
    let w = World::new(&plan);
    w.endpoints.fail_component("ic-elsewhere");
    // WHEN chat-prod's own event arrives
    let r = w
        .handle(
            &fixture("sagemaker/endpoint-in-service-docs.json"),
            "2026-03-14T08:00:00Z",
        )
        .await
        .expect("the other endpoint's component does not fail this event");
    // THEN it watched chat-prod's variant only
    let targets: Vec<&str> = r.targets.iter().map(|t| t.target.as_str()).collect();
    assert_eq!(targets, ["endpoint/chat-prod/variant/AllTraffic"]);
}

/// A state store whose next state writes fail (throttled), over the world's memory store.
struct FailingSaves<'a> {
    inner: &'a MemoryStateStore,
    fail: std::sync::atomic::AtomicUsize,
}

impl headroom_core::ports::StateStore for FailingSaves<'_> {
    async fn load_plan(
        &self,
    ) -> Result<Option<headroom_core::ports::StoredPlan>, headroom_core::ports::PortError> {
        self.inner.load_plan().await
    }
    async fn save_plan(
        &self,
        plan: &headroom_core::ports::StoredPlan,
        expected: u64,
    ) -> Result<headroom_core::ports::SaveOutcome, headroom_core::ports::PortError> {
        self.inner.save_plan(plan, expected).await
    }
    async fn load_states(
        &self,
        ids: &[ScalableTargetId],
    ) -> Result<Vec<(ScalableTargetId, headroom_core::TargetState)>, headroom_core::ports::PortError>
    {
        self.inner.load_states(ids).await
    }
    async fn save_state(
        &self,
        id: &ScalableTargetId,
        state: &headroom_core::TargetState,
        token: &str,
    ) -> Result<headroom_core::ports::SaveOutcome, headroom_core::ports::PortError> {
        use std::sync::atomic::Ordering;
        if self
            .fail
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
            .is_ok()
        {
            return Err(headroom_core::ports::PortError::new(
                "save the state",
                ErrorClass::Retryable,
                "throttled",
            ));
        }
        self.inner.save_state(id, state, token).await
    }
    async fn append_log_entry(
        &self,
        entry: &headroom_core::model::LogEntry,
    ) -> Result<(), headroom_core::ports::PortError> {
        self.inner.append_log_entry(entry).await
    }
    async fn recent_log(
        &self,
        id: &ScalableTargetId,
        limit: usize,
    ) -> Result<Vec<headroom_core::model::LogEntry>, headroom_core::ports::PortError> {
        self.inner.recent_log(id, limit).await
    }
}

/// Issue 11, item 2: a failure between the identity check and the state write on the first
/// sighting must not lose the fingerprint: the retry still puts it in force.
#[tokio::test]
async fn a_failed_state_write_on_the_first_sighting_keeps_the_fingerprint_for_the_retry() {
    let w = World::new(PLAN);
    let failing = FailingSaves {
        inner: &w.store,
        fail: std::sync::atomic::AtomicUsize::new(1),
    };
    let ports = Ports::new(&w.aas, &failing)
        .with_history(&w.history)
        .with_endpoints(&w.endpoints)
        .with_reviews(&w.reviews);
    let ev = fixture("sagemaker/endpoint-in-service-docs.json");
    // WHEN the first sighting fails at the state write, and Lambda retries it
    let first = headroom_deploy::handle(ports, &ev, t("2026-03-14T08:00:00Z")).await;
    assert!(first.is_err_and(|e| e.is_retryable()));
    let r = headroom_deploy::handle(ports, &ev, t("2026-03-14T08:01:00Z"))
        .await
        .expect("the retry succeeds");
    // THEN the fingerprint is in force, recorded as the baseline, and the identity is stored
    assert_eq!(w.fingerprint(), Some(fp("v7")), "{r:?}");
    assert_eq!(r.targets[0].change, ModelChange::Baseline);
    assert!(
        r.targets[0].notes.iter().all(|n| !n.contains("meanwhile")),
        "{:?}",
        r.targets[0].notes
    );
    assert_eq!(
        w.reviews.identity(&variant()).map(|i| i.fingerprint()),
        Some(fp("v7"))
    );
}

#[tokio::test]
async fn a_review_carries_the_lint_of_the_old_and_new_models_measurements() {
    use headroom_core::memory::MemoryDemand;
    use headroom_core::metrics_port::Workload;
    // GIVEN a baseline under v7, then the endpoint switched to v8 at 08:30
    let w = World::new(PLAN);
    baseline_then_switch(&w).await;
    w.endpoints.put_endpoint(EndpointView {
        name: EndpointName::parse("chat-prod").expect("valid"),
        arn: Some(ARN.into()),
        config_name: Some("chat-prod-config-v8".into()),
        status: headroom_core::endpoint_status::EndpointStatus::InService,
        variants: vec![EndpointVariantView {
            name: "AllTraffic".into(),
            current_instances: Some(2),
            desired_instances: Some(2),
        }],
        last_modified: Some(t("2026-03-14T08:30:00Z")),
    });
    // AND CloudWatch measured ModelLatency 1.1 s under v7 and 2.3 s since the switch
    let measured = |from: &str, to: &str, latency: f64| Workload {
        from: t(from),
        to: t(to),
        model_latency_mean_s: Some(latency),
        concurrency_max: None,
        invocations_per_instance_per_min: Some(30.0),
    };
    let demand = MemoryDemand::default()
        .with_workload(
            variant(),
            measured("2026-03-13T00:00:00Z", "2026-03-14T08:30:00Z", 1.1),
        )
        .with_workload(
            variant(),
            measured("2026-03-14T08:30:00Z", "2026-03-14T10:00:00Z", 2.3),
        );
    let ports = w.ports().with_demand(&demand);
    // WHEN SageMaker reports the change at 09:12
    headroom_deploy::handle(
        ports,
        &fixture("sagemaker/endpoint-in-service-v8-a.json"),
        t("2026-03-14T09:12:00Z"),
    )
    .await
    .expect("handled");
    // THEN the review holds both windows and the target value scaled by the latency change
    let rv = &w.reviews.all()[0];
    let lint = rv.lint.as_ref().expect("the review carries the lint");
    let old = lint.old_model.as_ref().expect("old model measured");
    assert_eq!(
        (old.from, old.to),
        (t("2026-03-13T08:30:00Z"), t("2026-03-14T08:30:00Z"))
    );
    let new = lint.new_model.as_ref().expect("new model measured");
    assert_eq!(
        (new.from, new.to),
        (t("2026-03-14T08:30:00Z"), t("2026-03-14T09:12:00Z"))
    );
    let tv = lint
        .findings
        .iter()
        .find(|f| f.rule == "target-value")
        .expect("a target-value finding");
    assert_eq!(tv.change, "TargetValue 70 -> 33");
    assert!(
        tv.evidence.contains("1.10 s under the old model"),
        "{}",
        tv.evidence
    );
    // AND the new model's 2.3 s requests are judged too long for an invocation count
    assert!(
        lint.findings.iter().any(|f| f.rule == "metric-fit"),
        "{:?}",
        lint.findings
    );
    // AND a pipeline's check lists the findings with the open review
    let check = json!({
        "kind": "headroom.pipeline/v1", "action": "check", "endpoint": "chat-prod",
        "pipeline_run_id": "run-1"
    });
    let answer = headroom_deploy::handle(ports, &check, t("2026-03-14T09:20:00Z"))
        .await
        .expect("check");
    assert_eq!(answer.review, Some(CheckAnswer::Open));
    let brief = serde_json::to_value(&answer.open_reviews[0]).expect("json");
    assert_eq!(brief["findings"][0]["rule"], "target-value", "{brief}");
}

#[tokio::test]
async fn a_review_opened_as_the_rollout_ends_says_the_new_model_is_not_measured_yet() {
    use headroom_core::memory::MemoryDemand;
    let w = World::new(PLAN);
    baseline_then_switch(&w).await;
    let demand = MemoryDemand::default();
    // The endpoint gives no LastModifiedTime: the change is "now", nothing measured since.
    headroom_deploy::handle(
        w.ports().with_demand(&demand),
        &fixture("sagemaker/endpoint-in-service-v8-a.json"),
        t("2026-03-14T09:12:00Z"),
    )
    .await
    .expect("handled");
    let rv = &w.reviews.all()[0];
    let lint = rv.lint.as_ref().expect("lint");
    assert!(lint.new_model.is_none());
    assert!(
        rv.gaps
            .iter()
            .any(|g| g.contains("no measurements under the new model yet")),
        "{:?}",
        rv.gaps
    );
}

/// The function's home in the fixtures' account and region.
fn home() -> headroom_core::alarms::Home {
    headroom_core::alarms::Home::from_function_arn(
        "arn:aws:lambda:us-east-1:123456789012:function:headroom-deploy",
    )
    .expect("a function ARN")
}

impl World {
    async fn handle_at_home(
        &self,
        event: &Value,
        home: Option<&headroom_core::alarms::Home>,
        now: &str,
    ) -> Result<Response, Error> {
        headroom_deploy::handle_at_home(self.ports(), event, home, "function-arn", t(now)).await
    }

    fn untouched(&self) {
        assert_eq!(self.store.calls.mutations(), 0);
        assert_eq!(Calls::get(&self.aas.calls.register), 0);
        assert_eq!(count(&self.reviews.writes), 0);
        assert_eq!(count(&self.endpoints.tag_calls), 0);
        assert_eq!(count(&self.endpoints.describes), 0);
    }
}

#[tokio::test]
async fn an_endpoint_event_from_another_account_or_region_is_refused_untouched() {
    // GIVEN the managed endpoint's own event, and copies naming another account or region (in
    // the envelope or in the endpoint's ARN), as a forwarding event bus would deliver them
    let own = fixture("sagemaker/endpoint-in-service-docs.json");
    let foreign_arn = "arn:aws:sagemaker:us-east-1:999999999999:endpoint/chat-prod";
    let mut copies = Vec::new();
    for (field, value) in [
        ("account", json!("999999999999")),
        ("region", json!("eu-west-1")),
    ] {
        let mut ev = own.clone();
        ev[field] = value;
        copies.push(ev);
    }
    let mut by_arn = own.clone();
    by_arn["detail"]["EndpointArn"] = json!(foreign_arn);
    copies.push(by_arn);
    for ev in &copies {
        let w = World::new(PLAN);
        // WHEN the function in 123456789012 / us-east-1 receives one
        let err = w
            .handle_at_home(ev, Some(&home()), "2026-03-14T08:00:00Z")
            .await
            .expect_err("refused");
        // THEN it is refused, permanently, naming the endpoint and both accounts, and nothing
        // is read or written
        let text = err.to_string();
        assert!(
            matches!(&err, Error::Failed(DeployError::Refused { .. })),
            "{text}"
        );
        assert!(!err.is_retryable());
        assert!(
            text.contains("endpoint chat-prod") && text.contains("123456789012"),
            "{text}"
        );
        w.untouched();
    }
    // The own account's event is watched as ever.
    let w = World::new(PLAN);
    let r = w
        .handle_at_home(&own, Some(&home()), "2026-03-14T08:00:00Z")
        .await
        .expect("watched");
    assert_eq!(r.targets[0].change, ModelChange::Baseline);
}

#[tokio::test]
async fn without_a_home_sagemaker_events_are_refused_and_pipelines_still_answered() {
    let w = World::new(PLAN);
    let err = w
        .handle_at_home(
            &fixture("sagemaker/endpoint-in-service-docs.json"),
            None,
            "2026-03-14T08:00:00Z",
        )
        .await
        .expect_err("refused");
    assert!(
        matches!(&err, Error::Failed(DeployError::UnknownHome { .. })),
        "{err}"
    );
    assert!(err.to_string().contains("HEADROOM_FUNCTION_ARN"), "{err}");
    w.untouched();
    // A pipeline's direct call names no account: it is answered without a home.
    let r = w
        .handle_at_home(
            &fixture("pipeline/check.json"),
            None,
            "2026-03-14T08:00:00Z",
        )
        .await
        .expect("answered");
    assert!(r.review.is_some(), "{r:?}");
}

#[tokio::test]
async fn a_model_package_approval_from_another_account_is_refused_untouched() {
    let w = World::new(PLAN);
    let mut ev = fixture("sagemaker/model-package-approved.json");
    ev["account"] = json!("999999999999");
    let err = w
        .handle_at_home(&ev, Some(&home()), "2026-03-14T08:00:00Z")
        .await
        .expect_err("refused");
    assert!(
        matches!(&err, Error::Failed(DeployError::Refused { .. })),
        "{err}"
    );
    assert!(err.to_string().contains("model package"), "{err}");
    w.untouched();
}
