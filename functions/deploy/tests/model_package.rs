//! Model package approvals through the deploy handler, against in-memory ports: the pending
//! review an approval opens, its duplicates, the statuses ignored, the rollout that supersedes
//! it, the rejection that withdraws it, and what a pipeline's `check` answers meanwhile. One scenario per test (GIVEN / WHEN /
//! THEN).

mod common;

use headroom_core::deploy_ports::{
    ConfigVariantView, EndpointConfigView, EndpointVariantView, EndpointView, ModelView,
};
use headroom_core::identity::ContainerIdentity;
use headroom_core::ids::EndpointName;
use headroom_core::memory::{count, MemoryEndpoints, MemoryReviewStore, MemoryScalingHistory};
use headroom_core::memory::{MemoryScalingTargets, MemoryStateStore};
use headroom_core::plan::parse_plan;
use headroom_core::review::package::pending_review_id;
use headroom_core::review::{Review, ReviewStatus, REVIEW_TAG};
use headroom_core::usecase::deploy::{CheckAnswer, ModelChange, ReviewAction};
use headroom_core::usecase::reviews::{ack_review, list_reviews};
use headroom_deploy::{Outcome, Response};
use serde_json::{json, Value};

use common::{fixture, t, variant, World, ARN, IMAGE};

const GROUP: &str = "arn:aws:sagemaker:us-east-1:123456789012:model-package/chat-llama";

const PLAN: &str = r#"
version = 1
[[target]]
resource_id = "endpoint/chat-prod/variant/AllTraffic"
min_capacity = 2
max_capacity = 8
"#;

/// The approval fixture (chat-llama/9).
fn approval() -> Value {
    fixture("sagemaker/model-package-approved.json")
}

fn package(version: u32) -> String {
    format!("{GROUP}/{version}")
}

fn in_service(id: &str, at: &str) -> Value {
    json!({
        "version": "0", "id": id, "detail-type": "SageMaker Endpoint State Change", "source": "aws.sagemaker",
        "account": "123456789012", "time": at, "region": "us-east-1", "resources": [ARN],
        "detail": {
            "EndpointName": "chat-prod", "EndpointArn": ARN, "EndpointStatus": "IN_SERVICE",
            "ProductionVariants": [{"VariantName": "AllTraffic", "DesiredInstanceCount": 2}],
            "LastModifiedTime": t(at).timestamp_millis()
        }
    })
}

fn check() -> Value {
    json!({"kind": "headroom.pipeline/v1", "action": "check", "endpoint": "chat-prod", "pipeline_run_id": "run-42"})
}

impl World {
    /// chat-prod/AllTraffic serves model chat-llama-v8, deployed from package chat-llama/8;
    /// config v9 with the model of package chat-llama/9 exists.
    fn new() -> Self {
        Self::with_plan(PLAN)
    }

    fn with_plan(plan: &str) -> Self {
        let endpoints = MemoryEndpoints::default();
        endpoints.put_endpoint(EndpointView {
            name: EndpointName::parse("chat-prod").expect("valid"),
            arn: Some(ARN.into()),
            config_name: Some("chat-prod-config-v8".into()),
            status: headroom_core::endpoint_status::EndpointStatus::InService,
            variants: vec![EndpointVariantView {
                name: "AllTraffic".into(),
                current_instances: Some(2),
                desired_instances: Some(2),
            }],
            last_modified: None,
        });
        for v in [8, 9] {
            endpoints.put_config(EndpointConfigView {
                name: format!("chat-prod-config-v{v}"),
                variants: vec![ConfigVariantView {
                    name: "AllTraffic".into(),
                    model_name: Some(format!("chat-llama-v{v}")),
                    instance_type: Some("ml.g5.2xlarge".into()),
                    ..Default::default()
                }],
                ..Default::default()
            });
            endpoints.put_model(ModelView {
                name: format!("chat-llama-v{v}"),
                arn: None,
                containers: vec![ContainerIdentity {
                    image: Some(IMAGE.into()),
                    model_data: Some(format!("s3://models/chat-llama/v{v}/model.tar.gz")),
                    model_package: Some(package(v)),
                }],
            });
        }
        Self {
            endpoints,
            history: MemoryScalingHistory::default(),
            reviews: MemoryReviewStore::default(),
            aas: MemoryScalingTargets::default().with_target(variant(), 2, 8),
            store: MemoryStateStore::default().with_plan(plan),
        }
    }

    async fn handle(&self, event: &Value, now: &str) -> Response {
        headroom_deploy::handle(self.ports(), event, t(now))
            .await
            .expect("handled")
    }

    /// GIVEN the first deployment event recorded v8 (package chat-llama/8) as the baseline.
    async fn baseline(&self) {
        let r = self
            .handle(
                &in_service("e-base", "2026-03-14T07:00:00Z"),
                "2026-03-14T07:00:01Z",
            )
            .await;
        assert_eq!(r.targets[0].change, ModelChange::Baseline);
    }

    /// `reviews ack` of review `id` by ana at `at`, under the test plan.
    async fn ack(
        &self,
        id: &str,
        note: &str,
        at: &str,
    ) -> Result<headroom_core::usecase::reviews::Acked, headroom_core::usecase::deploy::DeployError>
    {
        let plan = parse_plan("t", PLAN).expect("plan");
        ack_review(
            &self.reviews,
            &self.endpoints,
            &plan,
            id,
            "ana",
            note,
            t(at),
        )
        .await
    }

    fn review(&self, id: &str) -> Review {
        self.reviews
            .all()
            .into_iter()
            .find(|r| r.id == id)
            .expect("stored review")
    }
}

#[tokio::test]
async fn an_approval_of_the_next_version_opens_one_pending_review() {
    let w = World::new();
    w.baseline().await;
    // WHEN chat-llama/9 is approved, and EventBridge delivers the event twice
    let first = w.handle(&approval(), "2026-03-14T08:40:13Z").await;
    let second = w.handle(&approval(), "2026-03-14T08:40:20Z").await;
    // THEN one pending review, not tagged, named after the target and the package
    let pending = pending_review_id(&variant(), &package(9));
    let report = &first.targets[0];
    assert_eq!(first.outcome, Outcome::Watched);
    assert_eq!(report.change, ModelChange::Approved);
    let review = report.review.as_ref().expect("review");
    assert_eq!(
        (review.id.as_ref(), review.action, review.tagged),
        (Some(&pending), ReviewAction::Pending, false)
    );
    assert_eq!(
        second.targets[0].review.as_ref().map(|r| r.action),
        Some(ReviewAction::AlreadyPending)
    );
    let stored = w.reviews.all();
    assert_eq!(stored.len(), 1, "{stored:#?}");
    let r = &stored[0];
    assert_eq!((r.status, r.revision), (ReviewStatus::Pending, 1));
    let p = r.package.as_ref().expect("the approved package");
    assert_eq!(
        (p.arn.as_str(), p.version, p.serving.as_str()),
        (package(9).as_str(), 9, package(8).as_str())
    );
    assert_eq!(p.approved_at, t("2026-03-14T08:40:12Z"), "the event's time");
    assert_eq!(
        r.previous.as_ref().and_then(|m| m.model_name.as_deref()),
        Some("chat-llama-v8")
    );
    assert_eq!(
        r.current.containers[0].model_data.as_deref(),
        Some("s3://models/chat-llama/v9/model.tar.gz"),
        "what the package declares"
    );
    assert_eq!((r.bounds.plan_min, r.bounds.plan_max), (2, 8));
    assert_eq!(count(&w.endpoints.tag_calls), 0);
    assert!(!w.endpoints.tags(ARN).contains_key(REVIEW_TAG));
    // `reviews list` shows it without --all.
    let plan = parse_plan("t", PLAN).expect("plan");
    let listed = list_reviews(&w.reviews, &plan, false)
        .await
        .expect("listed");
    assert_eq!(listed.len(), 1);
}

#[tokio::test]
async fn a_pipeline_check_answers_pending_until_the_pending_review_is_acknowledged() {
    let w = World::new();
    w.baseline().await;
    w.handle(&approval(), "2026-03-14T08:40:13Z").await;
    // WHEN the pipeline checks before promoting
    let r = w.handle(&check(), "2026-03-14T08:45:00Z").await;
    // THEN pending, with the package
    assert_eq!(r.review, Some(CheckAnswer::Pending));
    assert!(r.open_reviews.is_empty());
    assert_eq!(r.pending_reviews.len(), 1);
    assert_eq!(
        r.pending_reviews[0].package.as_deref(),
        Some(package(9).as_str())
    );
    // WHEN an operator acknowledges it (the endpoint was never tagged: no tag call)
    let acked = w
        .ack(
            &r.pending_reviews[0].id,
            "target 70 inv/instance fits v9 (load test 2026-03-14)",
            "2026-03-14T09:00:00Z",
        )
        .await
        .expect("acknowledged");
    assert_eq!(
        (acked.review.status, acked.tag),
        (ReviewStatus::Acked, None)
    );
    // THEN the check is clear
    let r = w.handle(&check(), "2026-03-14T09:01:00Z").await;
    assert_eq!(r.review, Some(CheckAnswer::Clear));
}

#[tokio::test]
async fn the_rollout_supersedes_the_pending_review_and_opens_its_own() {
    let w = World::new();
    w.baseline().await;
    w.handle(&approval(), "2026-03-14T08:40:13Z").await;
    let pending = pending_review_id(&variant(), &package(9));
    // WHEN chat-llama/9 rolls out
    w.endpoints
        .switch_config("chat-prod", "chat-prod-config-v9");
    let r = w
        .handle(
            &in_service("e-v9", "2026-03-14T10:00:00Z"),
            "2026-03-14T10:00:01Z",
        )
        .await;
    // THEN the rollout's review is open and names the pending one, which is superseded
    let report = &r.targets[0];
    assert_eq!(report.change, ModelChange::Changed);
    let opened = report.review.as_ref().expect("review");
    assert_eq!(opened.action, ReviewAction::Opened);
    let rollout_id = opened.id.clone().expect("id");
    let rollout = w.review(&rollout_id);
    assert_eq!(rollout.status, ReviewStatus::Open);
    assert_eq!(rollout.pending_review.as_ref(), Some(&pending));
    assert_eq!(
        rollout.package.as_ref().map(|p| p.arn.as_str()),
        Some(package(9).as_str())
    );
    let closed = w.review(&pending);
    assert_eq!(closed.status, ReviewStatus::Superseded);
    assert_eq!(closed.superseded_by.as_ref(), Some(&rollout_id));
    assert!(
        report.notes.iter().any(|n| n.contains("superseded")),
        "{:?}",
        report.notes
    );
    // One review to judge: the check says open, the list shows only the rollout's.
    let r = w.handle(&check(), "2026-03-14T10:05:00Z").await;
    assert_eq!(
        (r.review, r.open_reviews.len(), r.pending_reviews.len()),
        (Some(CheckAnswer::Open), 1, 0)
    );
    let plan = parse_plan("t", PLAN).expect("plan");
    let listed = list_reviews(&w.reviews, &plan, false)
        .await
        .expect("listed");
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].id, rollout_id);
    // A superseded review cannot be acknowledged.
    let err = w
        .ack(&pending, "late", "2026-03-14T10:06:00Z")
        .await
        .expect_err("superseded");
    assert!(err.to_string().contains("superseded"), "{err}");
    // The approval redelivered after the rollout changes nothing: v9 serves already.
    let writes = count(&w.reviews.writes);
    let again = w.handle(&approval(), "2026-03-14T10:10:00Z").await;
    assert_eq!(again.targets[0].change, ModelChange::Unchanged);
    assert!(again.targets[0].review.is_none());
    assert_eq!(count(&w.reviews.writes), writes);
}

/// The approval fixture with another `ModelApprovalStatus`.
fn with_status(status: &str) -> Value {
    let mut ev = approval();
    ev["detail"]["ModelApprovalStatus"] = json!(status);
    ev
}

#[tokio::test]
async fn statuses_that_neither_approve_nor_withdraw_are_ignored_with_the_reason() {
    let w = World::new();
    w.baseline().await;
    let mutations = w.store.calls.mutations();
    let writes = count(&w.reviews.writes);
    // GIVEN no pending review, WHEN the version is rejected or set back to manual approval
    for status in ["Rejected", "PendingManualApproval"] {
        let r = w.handle(&with_status(status), "2026-03-14T08:40:13Z").await;
        // THEN there is nothing to withdraw
        assert_eq!(r.outcome, Outcome::Ignored, "{status}");
        let reason = r.reason.unwrap_or_default();
        assert!(
            reason.contains(status) && reason.contains("nothing to withdraw"),
            "{reason}"
        );
    }
    // WHEN a status AWS may add later arrives
    let r = w
        .handle(&with_status("Archived"), "2026-03-14T08:41:00Z")
        .await;
    assert_eq!(r.outcome, Outcome::Ignored);
    let reason = r.reason.unwrap_or_default();
    assert!(
        reason.contains("Archived") && reason.contains("only an approval"),
        "{reason}"
    );
    assert!(w.reviews.all().is_empty());
    assert_eq!(count(&w.reviews.writes), writes);
    assert_eq!(w.store.calls.mutations(), mutations);
}

#[tokio::test]
async fn a_rejection_withdraws_the_pending_review_until_the_version_is_approved_again() {
    let w = World::new();
    w.baseline().await;
    w.handle(&approval(), "2026-03-14T08:40:13Z").await;
    let pending = pending_review_id(&variant(), &package(9));
    // WHEN chat-llama/9 is rejected before it rolls out, and the event comes twice
    let mut rejected = with_status("Rejected");
    rejected["time"] = json!("2026-03-14T09:30:00Z");
    let first = w.handle(&rejected, "2026-03-14T09:30:02Z").await;
    let writes = count(&w.reviews.writes);
    let second = w.handle(&rejected, "2026-03-14T09:30:09Z").await;
    // THEN its pending review is withdrawn once, with the status and the event's time
    let report = &first.targets[0];
    assert_eq!(
        (first.outcome, report.change),
        (Outcome::Watched, ModelChange::Withdrawn)
    );
    let action = |r: &Response| r.targets[0].review.as_ref().map(|v| v.action);
    assert_eq!(action(&first), Some(ReviewAction::Withdrawn));
    assert_eq!(action(&second), Some(ReviewAction::AlreadyClosed));
    assert_eq!(
        count(&w.reviews.writes),
        writes,
        "a duplicate writes nothing"
    );
    let closed = w.review(&pending);
    assert_eq!(
        (closed.status, closed.revision),
        (ReviewStatus::Withdrawn, 2)
    );
    let why = closed.withdrawn.as_ref().expect("withdrawal");
    assert_eq!(
        (why.status.as_str(), why.at),
        ("Rejected", t("2026-03-14T09:30:00Z"))
    );
    // The pipeline's check is clear, the list shows nothing to do, an ack is refused.
    let r = w.handle(&check(), "2026-03-14T09:35:00Z").await;
    assert_eq!(r.review, Some(CheckAnswer::Clear));
    let plan = parse_plan("t", PLAN).expect("plan");
    let listed = list_reviews(&w.reviews, &plan, false)
        .await
        .expect("listed");
    assert!(listed.is_empty(), "{listed:#?}");
    let err = w
        .ack(&pending, "late", "2026-03-14T09:36:00Z")
        .await
        .expect_err("withdrawn");
    assert!(err.to_string().contains("withdrawn"), "{err}");
    // WHEN the old approval is redelivered after the rejection, THEN nothing changes
    let writes = count(&w.reviews.writes);
    let redelivered = w.handle(&approval(), "2026-03-14T10:00:00Z").await;
    assert_eq!(action(&redelivered), Some(ReviewAction::AlreadyPending));
    assert_eq!(count(&w.reviews.writes), writes);
    assert_eq!(w.review(&pending).status, ReviewStatus::Withdrawn);
    // WHEN the version is approved again (a new event)
    let mut approved_again = approval();
    approved_again["time"] = json!("2026-03-14T11:00:00Z");
    let again = w.handle(&approved_again, "2026-03-14T11:00:02Z").await;
    // THEN its review is pending again, as a second occurrence of the same id
    assert_eq!(action(&again), Some(ReviewAction::Pending));
    let renewed = w.review(&pending);
    assert_eq!(
        (renewed.status, renewed.revision, renewed.occurrences),
        (ReviewStatus::Pending, 3, 2)
    );
    assert!(renewed.withdrawn.is_none());
    let r = w.handle(&check(), "2026-03-14T11:05:00Z").await;
    assert_eq!(r.review, Some(CheckAnswer::Pending));
}

#[tokio::test]
async fn a_rejection_older_than_the_approval_withdraws_nothing() {
    let w = World::new();
    w.baseline().await;
    w.handle(&approval(), "2026-03-14T08:40:13Z").await;
    let writes = count(&w.reviews.writes);
    // WHEN a rejection from before the approval (08:40:12) arrives after it
    let mut late = with_status("Rejected");
    late["time"] = json!("2026-03-14T08:00:00Z");
    let r = w.handle(&late, "2026-03-14T08:41:00Z").await;
    // THEN the review stays pending, and says why
    let report = &r.targets[0];
    assert_eq!(
        report.review.as_ref().map(|v| v.action),
        Some(ReviewAction::Outdated)
    );
    assert!(
        report
            .notes
            .iter()
            .any(|n| n.contains("after this Rejected event")),
        "{:?}",
        report.notes
    );
    assert_eq!(count(&w.reviews.writes), writes);
    let pending = pending_review_id(&variant(), &package(9));
    assert_eq!(w.review(&pending).status, ReviewStatus::Pending);
}

#[tokio::test]
async fn an_acknowledged_pending_review_is_withdrawn_too_and_keeps_its_acknowledgement() {
    let w = World::new();
    w.baseline().await;
    w.handle(&approval(), "2026-03-14T08:40:13Z").await;
    let pending = pending_review_id(&variant(), &package(9));
    w.ack(&pending, "v9 load-tested", "2026-03-14T09:00:00Z")
        .await
        .expect("acknowledged");
    // WHEN the version is set back to manual approval
    let r = w
        .handle(
            &with_status("PendingManualApproval"),
            "2026-03-14T09:30:00Z",
        )
        .await;
    // THEN the review is withdrawn, its acknowledgement kept as the record
    assert_eq!(
        r.targets[0].review.as_ref().map(|v| v.action),
        Some(ReviewAction::Withdrawn)
    );
    let closed = w.review(&pending);
    assert_eq!(closed.status, ReviewStatus::Withdrawn);
    assert_eq!(closed.ack.as_ref().map(|a| a.by.as_str()), Some("ana"));
}

#[tokio::test]
async fn a_rejection_after_the_rollout_leaves_the_superseded_review_alone() {
    let w = World::new();
    w.baseline().await;
    w.handle(&approval(), "2026-03-14T08:40:13Z").await;
    w.endpoints
        .switch_config("chat-prod", "chat-prod-config-v9");
    w.handle(
        &in_service("e-v9", "2026-03-14T10:00:00Z"),
        "2026-03-14T10:00:01Z",
    )
    .await;
    let writes = count(&w.reviews.writes);
    // WHEN the rolled-out version is rejected afterwards (a late or out-of-order event)
    let r = w
        .handle(&with_status("Rejected"), "2026-03-14T10:30:00Z")
        .await;
    // THEN nothing is written: the rollout's open review is the one to judge
    assert_eq!(
        r.targets[0].review.as_ref().map(|v| v.action),
        Some(ReviewAction::AlreadyClosed)
    );
    assert_eq!(count(&w.reviews.writes), writes);
    let pending = pending_review_id(&variant(), &package(9));
    assert_eq!(w.review(&pending).status, ReviewStatus::Superseded);
}

#[tokio::test]
async fn an_approval_in_a_group_no_target_serves_is_ignored_without_writes() {
    let w = World::new();
    // GIVEN no deployment event yet: nothing stored says what chat-prod serves
    let r = w.handle(&approval(), "2026-03-14T08:40:13Z").await;
    assert_eq!(r.outcome, Outcome::Ignored);
    assert!(r
        .reason
        .as_deref()
        .is_some_and(|s| s.contains("chat-llama")));
    // GIVEN a baseline, WHEN a package of another group (or another account's same-named
    // group) is approved
    w.baseline().await;
    for other in [
        "arn:aws:sagemaker:us-east-1:123456789012:model-package/embeddings/4",
        "arn:aws:sagemaker:us-east-1:999999999999:model-package/chat-llama/9",
    ] {
        let mut ev = approval();
        ev["detail"]["ModelPackageArn"] = json!(other);
        let r = w.handle(&ev, "2026-03-14T08:41:00Z").await;
        assert_eq!(r.outcome, Outcome::Ignored, "{other}");
        assert!(r.targets.is_empty());
    }
    assert!(w.reviews.all().is_empty());
    assert_eq!(count(&w.endpoints.tag_calls), 0);
}

#[tokio::test]
async fn reviews_turned_off_by_the_plan_open_no_pending_review() {
    let w = World::with_plan(&format!("{PLAN}[target.review]\nenabled = false\n"));
    w.baseline().await;
    let r = w.handle(&approval(), "2026-03-14T08:40:13Z").await;
    assert_eq!(
        r.targets[0].review.as_ref().map(|r| r.action),
        Some(ReviewAction::Disabled)
    );
    assert!(w.reviews.all().is_empty());
}
