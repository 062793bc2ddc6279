//! The deployment watcher end to end against moto over HTTP, with the real adapters: a SageMaker
//! endpoint serving model v1 is seen (baseline), then serves model v2 (one review, the endpoint
//! tagged), a pipeline's `check` answers "open", an acknowledgement flips the tag and `check`
//! answers "clear". An endpoint no plan manages causes no write and no tag.
//!
//! moto lacks UpdateEndpoint (HTTP 500), so the model change is made the way moto supports:
//! delete the endpoint and create it again under the same name with the second endpoint config.
//! To headroom this is the same observation as a completed UpdateEndpoint: DescribeEndpoint names
//! another config, whose variant serves another model. (moto drops the endpoint's tags with it,
//! which does not matter here: the review tag is written after the change.) moto also lacks
//! DescribeScalingActivities: the watcher notes it and carries on, which this test checks too.

use aws_sdk_applicationautoscaling::types::{
    MetricType, PolicyType, PredefinedMetricSpecification, ScalableDimension, ServiceNamespace,
    TargetTrackingScalingPolicyConfiguration,
};
use aws_sdk_sagemaker::types::{
    ContainerDefinition, ProductionVariant, ProductionVariantInstanceType,
};
use chrono::{SubsecRound, Utc};
use headroom_adapters::aas_history::AasHistory;
use headroom_adapters::dynamo_reviews::DynamoReviews;
use headroom_adapters::sagemaker_models::SageMakerModels;
use headroom_adapters::AasScalingTargets;
use headroom_core::deploy_ports::ReviewStore;
use headroom_core::ids::ScalableTargetId;
use headroom_core::ports::{ScalingTargets, StateStore};
use headroom_core::review::ReviewStatus;
use headroom_core::usecase::deploy::{CheckAnswer, ModelChange, ReviewAction};
use headroom_core::usecase::reviews::ack_review;
use headroom_core::usecase::Ports;
use headroom_core::Suspended;
use headroom_deploy::Outcome;
use headroom_tests::{sdk_config, table_with_plan, unique, CallCounter};
use serde_json::{json, Value};

const IN_SERVICE: &str = include_str!("../../events/sagemaker/endpoint-in-service-v8-a.json");
const IN_SERVICE_AGAIN: &str = include_str!("../../events/sagemaker/endpoint-in-service-v8-b.json");
const CHECK: &str = include_str!("../../events/pipeline/check.json");

/// A model and an endpoint config named `<endpoint>-<version>` serving `version`'s weights.
async fn model_and_config(sagemaker: &aws_sdk_sagemaker::Client, endpoint: &str, version: &str) {
    let name = format!("{endpoint}-{version}");
    sagemaker
        .create_model()
        .model_name(&name)
        .execution_role_arn("arn:aws:iam::123456789012:role/sagemaker")
        .primary_container(
            ContainerDefinition::builder()
                .image("123456789012.dkr.ecr.us-east-1.amazonaws.com/llm-server:2.4")
                .model_data_url(format!("s3://models/{endpoint}/{version}/model.tar.gz"))
                .build(),
        )
        .send()
        .await
        .expect("create the model in moto");
    sagemaker
        .create_endpoint_config()
        .endpoint_config_name(&name)
        .production_variants(
            ProductionVariant::builder()
                .variant_name("AllTraffic")
                .model_name(&name)
                .initial_instance_count(1)
                .instance_type(ProductionVariantInstanceType::MlG4DnXlarge)
                .build(),
        )
        .send()
        .await
        .expect("create the endpoint config in moto");
}

/// The sample event, about `endpoint` (with the ARN moto gives it).
fn event_for(text: &str, endpoint: &str) -> Value {
    let mut ev: Value = serde_json::from_str(text).expect("the sample event is JSON");
    // Each delivery of a new event has its own EventBridge id.
    ev["id"] = json!(unique("event"));
    ev["detail"]["EndpointName"] = json!(endpoint);
    ev["detail"]["EndpointArn"] = json!(format!(
        "arn:aws:sagemaker:us-east-1:123456789012:endpoint/{endpoint}"
    ));
    ev["detail"]["EndpointConfigName"] = json!(format!("{endpoint}-v2"));
    ev
}

/// The endpoint's `headroom:policy-review` tag. AWS's AddTags overwrites the value of an existing
/// key; moto (5.x) appends a second tag with the same key instead, so the last one written is
/// the value AWS would hold.
async fn review_tag(sagemaker: &aws_sdk_sagemaker::Client, arn: &str) -> Option<String> {
    sagemaker
        .list_tags()
        .resource_arn(arn)
        .send()
        .await
        .expect("list the endpoint's tags")
        .tags()
        .iter()
        .rev()
        .find(|t| t.key() == Some("headroom:policy-review"))
        .and_then(|t| t.value().map(str::to_owned))
}

#[tokio::test]
async fn a_model_change_opens_one_review_tags_the_endpoint_and_gates_the_pipeline() {
    // GIVEN an endpoint in moto serving model v1, its variant registered with AAS and a
    // target-tracking policy attached
    let config = sdk_config().await;
    let sm_counter = CallCounter::default();
    let sagemaker = sm_counter.sagemaker_client(&config);
    let dynamo_counter = CallCounter::default();
    let dynamo = dynamo_counter.dynamo_client(&config);
    let aas_client = aws_sdk_applicationautoscaling::Client::new(&config);
    let endpoint = unique("deploy");
    model_and_config(&sagemaker, &endpoint, "v1").await;
    model_and_config(&sagemaker, &endpoint, "v2").await;
    sagemaker
        .create_endpoint()
        .endpoint_name(&endpoint)
        .endpoint_config_name(format!("{endpoint}-v1"))
        .send()
        .await
        .expect("create the endpoint in moto");
    let arn = format!("arn:aws:sagemaker:us-east-1:123456789012:endpoint/{endpoint}");
    let id = ScalableTargetId::variant(&endpoint, "AllTraffic").expect("valid id");
    let aas = AasScalingTargets::new(aas_client.clone());
    aas.register(&id, 1, 4, Suspended::default())
        .await
        .expect("register the target");
    aas_client
        .put_scaling_policy()
        .policy_name("invocations-per-instance")
        .service_namespace(ServiceNamespace::Sagemaker)
        .resource_id(id.resource_id())
        .scalable_dimension(ScalableDimension::SageMakerVariantDesiredInstanceCount)
        .policy_type(PolicyType::TargetTrackingScaling)
        .target_tracking_scaling_policy_configuration(
            TargetTrackingScalingPolicyConfiguration::builder()
                .target_value(70.0)
                .predefined_metric_specification(
                    PredefinedMetricSpecification::builder()
                        .predefined_metric_type(MetricType::SageMakerVariantInvocationsPerInstance)
                        .build()
                        .expect("valid metric"),
                )
                .scale_in_cooldown(300)
                .scale_out_cooldown(60)
                .build()
                .expect("valid policy"),
        )
        .send()
        .await
        .expect("attach the policy");

    // AND a stored plan that manages the variant
    let plan_text = format!(
        "version = 1\n[[target]]\nresource_id = \"{id}\"\nmin_capacity = 1\nmax_capacity = 4\n"
    );
    let (store, plan) = table_with_plan(
        &dynamo,
        "moto-deploy.toml",
        &plan_text,
        Utc::now().trunc_subsecs(0),
    )
    .await;
    let table = store.table().to_owned();

    let endpoints = SageMakerModels::new(sagemaker.clone());
    let history = AasHistory::new(aas_client.clone());
    let reviews = DynamoReviews::new(dynamo.clone(), table.clone());
    let deploy = Ports::new(&aas, &store)
        .with_history(&history)
        .with_endpoints(&endpoints)
        .with_reviews(&reviews);

    // WHEN SageMaker reports the endpoint in service under v1, THEN that is the baseline
    let first = headroom_deploy::handle(deploy, &event_for(IN_SERVICE, &endpoint), Utc::now())
        .await
        .expect("baseline handled");
    assert_eq!(first.targets[0].change, ModelChange::Baseline, "{first:?}");
    assert!(
        first.targets[0]
            .notes
            .iter()
            .any(|n| n.contains("scaling activities unavailable")),
        "moto lacks DescribeScalingActivities; the watcher notes it and carries on: {:?}",
        first.targets[0].notes
    );
    assert_eq!(review_tag(&sagemaker, &arn).await, None);
    let baseline = store
        .load_states(std::slice::from_ref(&id))
        .await
        .expect("state")[0]
        .1
        .model
        .clone();
    assert!(baseline.is_some(), "the fingerprint is in force");

    // WHEN the endpoint serves v2 (moto: delete and recreate it with the v2 config, see the top)
    // and SageMaker sends two IN_SERVICE events for that change
    sagemaker
        .delete_endpoint()
        .endpoint_name(&endpoint)
        .send()
        .await
        .expect("delete the endpoint");
    sagemaker
        .create_endpoint()
        .endpoint_name(&endpoint)
        .endpoint_config_name(format!("{endpoint}-v2"))
        .send()
        .await
        .expect("recreate the endpoint with the v2 config");
    sm_counter.reset();
    dynamo_counter.reset();
    let changed = headroom_deploy::handle(deploy, &event_for(IN_SERVICE, &endpoint), Utc::now())
        .await
        .expect("change handled");
    // Each resource is described once per event, and the tag is one call.
    for op in [
        "DescribeEndpoint",
        "DescribeEndpointConfig",
        "DescribeModel",
        "AddTags",
    ] {
        assert_eq!(sm_counter.get(op), 1, "{op}: {:?}", sm_counter.snapshot());
    }
    eprintln!(
        "calls for one model change: SageMaker {:?}, DynamoDB {:?}",
        sm_counter.snapshot(),
        dynamo_counter.snapshot()
    );
    let again =
        headroom_deploy::handle(deploy, &event_for(IN_SERVICE_AGAIN, &endpoint), Utc::now())
            .await
            .expect("second event handled");

    // THEN one review is open, with the old and new model and the attached policy
    assert_eq!(changed.targets[0].change, ModelChange::Changed);
    assert_eq!(
        changed.targets[0].review.as_ref().map(|r| r.action),
        Some(ReviewAction::Opened)
    );
    assert_eq!(again.targets[0].change, ModelChange::Unchanged);
    let list = reviews.reviews(&id).await.expect("list the reviews");
    assert_eq!(list.len(), 1, "{list:#?}");
    let review = &list[0];
    assert_eq!(review.status, ReviewStatus::Open);
    assert_eq!(
        review.previous.as_ref().and_then(|p| p.model_name.clone()),
        Some(format!("{endpoint}-v1"))
    );
    assert_eq!(review.current.model_name, Some(format!("{endpoint}-v2")));
    assert_eq!(
        review.current.containers[0].model_data.as_deref(),
        Some(format!("s3://models/{endpoint}/v2/model.tar.gz").as_str())
    );
    assert_eq!(review.policies.len(), 1);
    assert_eq!(review.policies[0].target_value, Some(70.0));
    assert_eq!(review.policies[0].scale_in_cooldown_s, Some(300));
    assert_eq!(review.bounds.observed.map(|b| (b.min, b.max)), Some((1, 4)));
    assert!(
        review
            .recent_decisions
            .iter()
            .all(|d| d["model"] == json!(baseline)),
        "only decisions under the old model"
    );
    // AND the endpoint carries the tag
    assert_eq!(review_tag(&sagemaker, &arn).await.as_deref(), Some("open"));
    // AND the decision log reads the change against the model identity
    let log = store
        .recent_log(&id, 10)
        .await
        .expect("read the decision log")
        .into_iter()
        .map(|e| e.body)
        .collect::<Vec<_>>();
    assert!(
        log.iter().any(|r| r["model"] == json!(review.fingerprint)
            && r["notes"].to_string().contains("model identity changed")),
        "{log:#?}"
    );

    // WHEN a pipeline asks before promoting, THEN the answer is "open"
    let mut check: Value = serde_json::from_str(CHECK).expect("the sample hook is JSON");
    check["endpoint"] = json!(endpoint);
    let answer = headroom_deploy::handle(deploy, &check, Utc::now())
        .await
        .expect("check answered");
    assert_eq!(
        (answer.outcome, answer.review),
        (Outcome::Answered, Some(CheckAnswer::Open))
    );
    assert_eq!(answer.open_reviews[0].id, review.id);

    // WHEN an operator acknowledges it, THEN the tag flips and the pipeline may go on
    let acked = ack_review(
        &reviews,
        &endpoints,
        &plan,
        &review.id,
        "ana",
        "target value re-checked with a load test",
        Utc::now(),
    )
    .await
    .expect("acknowledged");
    assert_eq!(acked.tag, Some("acked"));
    assert_eq!(review_tag(&sagemaker, &arn).await.as_deref(), Some("acked"));
    let answer = headroom_deploy::handle(deploy, &check, Utc::now())
        .await
        .expect("check answered");
    assert_eq!(answer.review, Some(CheckAnswer::Clear));

    // WHEN an endpoint the plan does not manage changes, THEN nothing is written or tagged
    sm_counter.reset();
    dynamo_counter.reset();
    let other = headroom_deploy::handle(
        deploy,
        &event_for(IN_SERVICE, &unique("unmanaged")),
        Utc::now(),
    )
    .await
    .expect("handled");
    assert_eq!(other.outcome, Outcome::Ignored);
    assert_eq!(sm_counter.get("AddTags"), 0);
    assert_eq!(
        sm_counter.get("DescribeEndpoint"),
        0,
        "nothing to describe for an unmanaged variant"
    );
    let writes: usize = ["PutItem", "TransactWriteItems", "UpdateItem", "DeleteItem"]
        .iter()
        .map(|op| dynamo_counter.get(op))
        .sum();
    assert_eq!(writes, 0, "{:?}", dynamo_counter.snapshot());
}
