//! A model package approval end to end against moto over HTTP, with the real adapters: a
//! target whose stored model identity (the `MODEL` item) names package chat-llama/8 gets one
//! pending review in DynamoDB when chat-llama/9 is approved (twice delivered), `reviews list`
//! shows it, a pipeline `check` answers "pending", its acknowledgement is stored conditionally
//! like any review's, and a rejection of the version withdraws it. Only DynamoDB and Application Auto Scaling are read: an
//! approval describes nothing in SageMaker.

use chrono::{SubsecRound, Utc};
use headroom_adapters::aas_history::AasHistory;
use headroom_adapters::dynamo_reviews::DynamoReviews;
use headroom_adapters::sagemaker_models::SageMakerModels;
use headroom_adapters::AasScalingTargets;
use headroom_core::deploy_ports::ReviewStore;
use headroom_core::identity::{ContainerIdentity, ModelIdentity};
use headroom_core::ids::ScalableTargetId;
use headroom_core::ports::ScalingTargets;
use headroom_core::review::package::pending_review_id;
use headroom_core::review::ReviewStatus;
use headroom_core::usecase::deploy::{CheckAnswer, ModelChange, ReviewAction};
use headroom_core::usecase::reviews::{ack_review, list_reviews};
use headroom_core::usecase::Ports;
use headroom_core::Suspended;
use headroom_tests::{sdk_config, table_with_plan, unique, CallCounter};
use serde_json::{json, Value};

const APPROVED: &str = include_str!("../../events/sagemaker/model-package-approved.json");
const GROUP: &str = "arn:aws:sagemaker:us-east-1:123456789012:model-package/chat-llama";

#[tokio::test]
async fn an_approval_opens_one_pending_review_in_dynamodb_and_the_check_answers_pending() {
    // GIVEN a managed variant registered with AAS, and the MODEL item the watcher stored at its
    // last deployment event: model chat-llama-v8, deployed from package chat-llama/8
    let config = sdk_config().await;
    let sm_counter = CallCounter::default();
    let sagemaker = sm_counter.sagemaker_client(&config);
    let dynamo = aws_sdk_dynamodb::Client::new(&config);
    let aas_client = aws_sdk_applicationautoscaling::Client::new(&config);
    let endpoint = unique("pkg");
    let id = ScalableTargetId::variant(&endpoint, "AllTraffic").expect("valid id");
    let aas = AasScalingTargets::new(aas_client.clone());
    aas.register(&id, 1, 4, Suspended::default())
        .await
        .expect("register the target");
    let plan_text = format!(
        "version = 1\n[[target]]\nresource_id = \"{id}\"\nmin_capacity = 1\nmax_capacity = 4\n"
    );
    let (store, plan) = table_with_plan(
        &dynamo,
        "moto-package.toml",
        &plan_text,
        Utc::now().trunc_subsecs(0),
    )
    .await;
    let reviews = DynamoReviews::new(dynamo.clone(), store.table().to_owned());
    reviews
        .save_identity(
            &id,
            &ModelIdentity {
                endpoint: Some(endpoint.clone()),
                endpoint_config: Some(format!("{endpoint}-v8")),
                inference_component: None,
                model_name: Some("chat-llama-v8".into()),
                model_arn: None,
                containers: vec![ContainerIdentity {
                    image: Some(
                        "123456789012.dkr.ecr.us-east-1.amazonaws.com/llm-server:2.4".into(),
                    ),
                    model_data: None,
                    model_package: Some(format!("{GROUP}/8")),
                }],
                instance_type: None,
                version_label: None,
                observed_at: Utc::now().trunc_subsecs(0),
            },
        )
        .await
        .expect("store the MODEL item");
    let endpoints = SageMakerModels::new(sagemaker.clone());
    let history = AasHistory::new(aas_client.clone());
    let ports = Ports::new(&aas, &store)
        .with_history(&history)
        .with_endpoints(&endpoints)
        .with_reviews(&reviews);

    // WHEN chat-llama/9 is approved and EventBridge delivers the event twice
    let event: Value = serde_json::from_str(APPROVED).expect("the fixture is JSON");
    let first = headroom_deploy::handle(ports, &event, Utc::now())
        .await
        .expect("handled");
    let second = headroom_deploy::handle(ports, &event, Utc::now())
        .await
        .expect("handled again");

    // THEN one pending review is stored, with the bounds AAS reported, and nothing in SageMaker
    // was described or tagged
    assert_eq!(first.targets[0].change, ModelChange::Approved, "{first:?}");
    let pending = pending_review_id(&id, &format!("{GROUP}/9"));
    assert_eq!(
        first.targets[0]
            .review
            .as_ref()
            .map(|r| (r.id.clone(), r.action)),
        Some((Some(pending.clone()), ReviewAction::Pending))
    );
    assert_eq!(
        second.targets[0].review.as_ref().map(|r| r.action),
        Some(ReviewAction::AlreadyPending)
    );
    let stored = reviews.reviews(&id).await.expect("list the reviews");
    assert_eq!(stored.len(), 1, "{stored:#?}");
    let r = &stored[0];
    assert_eq!(
        (r.id.clone(), r.status, r.revision),
        (pending.clone(), ReviewStatus::Pending, 1)
    );
    assert_eq!(
        r.package.as_ref().map(|p| (p.version, p.serving.clone())),
        Some((9, format!("{GROUP}/8")))
    );
    assert_eq!(r.bounds.observed.map(|b| (b.min, b.max)), Some((1, 4)));
    assert!(
        sm_counter.snapshot().is_empty(),
        "an approval describes nothing in SageMaker: {:?}",
        sm_counter.snapshot()
    );
    let observed = aas
        .describe(std::slice::from_ref(&id))
        .await
        .expect("describe");
    assert_eq!(
        observed[0].bounds().min,
        1,
        "an approval changes no capacity"
    );

    // AND `reviews list` shows it, a pipeline check answers pending
    let listed = list_reviews(&reviews, &plan, false).await.expect("listed");
    assert_eq!(listed.len(), 1);
    let check = json!({"kind": "headroom.pipeline/v1", "action": "check", "endpoint": endpoint, "pipeline_run_id": unique("run")});
    let answer = headroom_deploy::handle(ports, &check, Utc::now())
        .await
        .expect("answered");
    assert_eq!(answer.review, Some(CheckAnswer::Pending), "{answer:?}");

    // WHEN it is acknowledged, THEN the stored revision moves and the check is clear
    let acked = ack_review(
        &reviews,
        &endpoints,
        &plan,
        &pending,
        "ana",
        "v9's load test fits target 70",
        Utc::now(),
    )
    .await
    .expect("acknowledged");
    assert_eq!(
        acked.tag, None,
        "a pending review never tagged the endpoint"
    );
    let again = reviews
        .load_review(&id, &pending)
        .await
        .expect("load")
        .expect("stored");
    assert_eq!((again.status, again.revision), (ReviewStatus::Acked, 2));
    let answer = headroom_deploy::handle(ports, &check, Utc::now())
        .await
        .expect("answered");
    assert_eq!(answer.review, Some(CheckAnswer::Clear));

    // WHEN chat-llama/9 is rejected before it rolls out, THEN the acknowledged review is
    // withdrawn by a conditional write (revision 3), and `reviews list` has nothing to show
    let mut rejected = event.clone();
    rejected["detail"]["ModelApprovalStatus"] = json!("Rejected");
    let r = headroom_deploy::handle(ports, &rejected, Utc::now())
        .await
        .expect("handled");
    assert_eq!(
        r.targets[0].review.as_ref().map(|v| v.action),
        Some(ReviewAction::Withdrawn),
        "{r:?}"
    );
    let closed = reviews
        .load_review(&id, &pending)
        .await
        .expect("load")
        .expect("stored");
    assert_eq!(
        (closed.status, closed.revision),
        (ReviewStatus::Withdrawn, 3)
    );
    assert_eq!(
        closed.withdrawn.as_ref().map(|w| w.status.as_str()),
        Some("Rejected")
    );
    assert_eq!(
        closed.ack.as_ref().map(|a| a.by.as_str()),
        Some("ana"),
        "the acknowledgement is kept as the record"
    );
}
