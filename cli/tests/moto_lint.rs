//! `headroom lint` against moto: a variant with a target-tracking policy (AAS
//! PutScalingPolicy), its endpoint config (SageMaker), its measurements (CloudWatch
//! PutMetricData, read back through `headroom_tests::cbor_bridge`) and a stored plan. The report
//! names the findings with their evidence; the exit status gates on `error`.

use std::process::{Command, Output};

use aws_sdk_applicationautoscaling::types::{
    MetricType, PolicyType, PredefinedMetricSpecification, ScalableDimension, ServiceNamespace,
    TargetTrackingScalingPolicyConfiguration,
};
use aws_sdk_cloudwatch::primitives::DateTime as AwsDateTime;
use aws_sdk_cloudwatch::types::{Dimension, MetricDatum};
use chrono::{Duration, DurationRound, Utc};
use headroom_adapters::AasScalingTargets;
use headroom_core::ports::ScalingTargets;
use headroom_core::{ScalableTargetId, Suspended};
use headroom_tests::cbor_bridge::CborBridge;
use headroom_tests::cloudwatch::cloudwatch_client;
use headroom_tests::{create_endpoint, moto, sdk_config, table_with_plan, unique};

fn headroom(args: &[&str], cloudwatch: &str, table: &str) -> Output {
    Command::new(env!("CARGO_BIN_EXE_headroom"))
        .args(args)
        .env("AWS_ENDPOINT_URL", moto())
        .env("AWS_ENDPOINT_URL_CLOUDWATCH", cloudwatch)
        .env("AWS_ACCESS_KEY_ID", "testing")
        .env("AWS_SECRET_ACCESS_KEY", "testing")
        .env("AWS_REGION", "us-east-1")
        .env("HEADROOM_TABLE", table)
        .env("HEADROOM_AWS_MAX_ATTEMPTS", "1")
        .output()
        .expect("the headroom binary runs")
}

/// Writes one datapoint a minute of `metric` for the variant over the last `minutes`.
async fn put_minutely(
    cw: &aws_sdk_cloudwatch::Client,
    id: &ScalableTargetId,
    metric: &str,
    value: f64,
    minutes: i64,
) {
    let ScalableTargetId::Variant {
        endpoint, variant, ..
    } = id
    else {
        panic!("a variant")
    };
    let now = Utc::now()
        .duration_trunc(Duration::minutes(1))
        .expect("trunc");
    let data: Vec<MetricDatum> = (1..=minutes)
        .map(|m| {
            MetricDatum::builder()
                .metric_name(metric)
                .dimensions(
                    Dimension::builder()
                        .name("EndpointName")
                        .value(endpoint.as_str())
                        .build(),
                )
                .dimensions(
                    Dimension::builder()
                        .name("VariantName")
                        .value(variant.as_str())
                        .build(),
                )
                .timestamp(AwsDateTime::from_secs(
                    (now - Duration::minutes(m)).timestamp(),
                ))
                .value(value)
                .build()
        })
        .collect();
    cw.put_metric_data()
        .namespace("AWS/SageMaker")
        .set_metric_data(Some(data))
        .send()
        .await
        .unwrap_or_else(|e| {
            panic!(
                "PutMetricData {metric}: {}",
                aws_sdk_cloudwatch::error::DisplayErrorContext(e)
            )
        });
}

async fn put_policy(
    aas: &aws_sdk_applicationautoscaling::Client,
    id: &ScalableTargetId,
    target_value: f64,
    scale_in_cooldown: i32,
) {
    aas.put_scaling_policy()
        .policy_name("invocations-per-instance")
        .service_namespace(ServiceNamespace::Sagemaker)
        .resource_id(id.resource_id())
        .scalable_dimension(ScalableDimension::SageMakerVariantDesiredInstanceCount)
        .policy_type(PolicyType::TargetTrackingScaling)
        .target_tracking_scaling_policy_configuration(
            TargetTrackingScalingPolicyConfiguration::builder()
                .target_value(target_value)
                .predefined_metric_specification(
                    PredefinedMetricSpecification::builder()
                        .predefined_metric_type(MetricType::SageMakerVariantInvocationsPerInstance)
                        .build()
                        .expect("valid metric"),
                )
                .scale_out_cooldown(300)
                .scale_in_cooldown(scale_in_cooldown)
                .build()
                .expect("valid policy"),
        )
        .send()
        .await
        .expect("attach the policy");
}

#[tokio::test(flavor = "multi_thread")]
async fn lint_reports_findings_with_evidence_and_gates_on_errors() {
    // GIVEN a variant on ml.m5.large with TargetValue 70 and a scale-in cooldown of 60 s, whose
    // model answered in 2.3 s on average over the last hour
    let config = sdk_config().await;
    let bridge = CborBridge::start(moto());
    let cw = cloudwatch_client(&config, &bridge);
    let sagemaker = aws_sdk_sagemaker::Client::new(&config);
    let clients = headroom_adapters::Clients::new(&config);
    let endpoint = unique("lint");
    create_endpoint(&sagemaker, &endpoint, 2)
        .await
        .expect("endpoint");
    let id = ScalableTargetId::variant(&endpoint, "AllTraffic").expect("id");
    AasScalingTargets::new(clients.aas.clone())
        .register(&id, 1, 8, Suspended::default())
        .await
        .expect("register");
    put_policy(&clients.aas, &id, 70.0, 60).await;
    put_minutely(&cw, &id, "ModelLatency", 2_300_000.0, 50).await;
    put_minutely(&cw, &id, "InvocationsPerInstance", 20.0, 50).await;
    put_minutely(&cw, &id, "ConcurrentRequestsPerModel", 1.0, 50).await;
    // AND a plan saying one instance holds 2 concurrent requests at its latency objective
    let plan = format!(
        "version = 1\n[[target]]\nresource_id = \"{id}\"\nmin_capacity = 1\nmax_capacity = 8\n\
         [target.lint]\nconcurrency_per_instance = 2\n"
    );
    let (store, _) = table_with_plan(&clients.dynamo, "lint.toml", &plan, Utc::now()).await;
    let table = store.table().to_owned();

    // WHEN the last hour is linted, as JSON
    let out = headroom(&["lint", "--window", "1h", "--json"], &bridge.url(), &table);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    // THEN the exit status is 6 (an error finding) and stderr says so
    assert_eq!(out.status.code(), Some(6), "{stdout}\n{stderr}");
    assert!(stderr.contains("finding(s) of severity error"), "{stderr}");
    // AND the JSON names the rule, the evidence with its window, and the change
    let report: serde_json::Value = serde_json::from_str(&stdout).expect("JSON");
    assert_eq!(report["kind"], "headroom.lint/v1");
    let target = &report["targets"][0];
    assert_eq!(target["target"], id.to_string());
    assert_eq!(target["serving"], "real_time");
    let latency = target["measured"]["model_latency_mean_s"]
        .as_f64()
        .expect("latency");
    assert!((latency - 2.3).abs() < 1e-9, "{target}");
    let findings = target["findings"].as_array().expect("findings");
    let tv = findings
        .iter()
        .find(|f| f["rule"] == "target-value")
        .unwrap_or_else(|| panic!("{stdout}"));
    assert_eq!(tv["severity"], "error");
    // 2 x 60 / 2.3 s x 0.5 = 26.1
    assert_eq!(tv["change"], "TargetValue 70 -> 26");
    assert!(
        tv["evidence"]
            .as_str()
            .expect("text")
            .contains("ModelLatency mean 2.30 s"),
        "{tv}"
    );
    let cooldown = findings
        .iter()
        .find(|f| f["rule"] == "cooldowns")
        .unwrap_or_else(|| panic!("{stdout}"));
    assert_eq!(cooldown["severity"], "warn");
    assert_eq!(cooldown["change"], "ScaleInCooldown 60 -> 600");
    assert!(
        findings.iter().any(|f| f["rule"] == "metric-fit"),
        "{stdout}"
    );
    // AND CloudWatch was asked once for the workload
    assert_eq!(bridge.calls("GetMetricData"), 1);

    // WHEN the policy follows the report and the target is linted by name, as text
    put_policy(&clients.aas, &id, 26.0, 600).await;
    let out = headroom(
        &["lint", &id.to_string(), "--window", "1h"],
        &bridge.url(),
        &table,
    );
    let text = String::from_utf8_lossy(&out.stdout);
    // THEN no error remains: exit 0, and the table still shows the warning about the metric
    assert_eq!(
        out.status.code(),
        Some(0),
        "{text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!text.contains("target-value"), "{text}");
    assert!(
        text.contains("metric-fit") && text.contains("0 error(s)"),
        "{text}"
    );
    println!("{text}");

    // AND a target the plan does not manage is "not found" (4)
    let out = headroom(
        &["lint", "endpoint/nope/variant/AllTraffic"],
        &bridge.url(),
        &table,
    );
    assert_eq!(
        out.status.code(),
        Some(4),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

async fn put_alarm(cw: &aws_sdk_cloudwatch::Client, name: &str, metric: &str, endpoint: &str) {
    use aws_sdk_cloudwatch::types::{ComparisonOperator, Statistic};
    cw.put_metric_alarm()
        .alarm_name(name)
        .namespace("AWS/SageMaker")
        .metric_name(metric)
        .dimensions(
            Dimension::builder()
                .name("EndpointName")
                .value(endpoint)
                .build(),
        )
        .statistic(Statistic::Average)
        .period(60)
        .evaluation_periods(2)
        .threshold(1.0)
        .comparison_operator(ComparisonOperator::GreaterThanOrEqualToThreshold)
        .send()
        .await
        .unwrap_or_else(|e| {
            panic!(
                "PutMetricAlarm {name}: {}",
                aws_sdk_cloudwatch::error::DisplayErrorContext(e)
            )
        });
}

#[tokio::test(flavor = "multi_thread")]
async fn an_async_endpoint_at_zero_needs_its_wake_alarm_on_the_backlog() {
    use aws_sdk_sagemaker::types::{
        AsyncInferenceConfig, AsyncInferenceOutputConfig, ContainerDefinition, ProductionVariant,
        ProductionVariantInstanceType,
    };
    // GIVEN an asynchronous endpoint (AsyncInferenceConfig), min_capacity 0 in the plan, and a
    // wake alarm that watches the backlog's size instead of HasBacklogWithoutCapacity
    let config = sdk_config().await;
    let bridge = CborBridge::start(moto());
    let cw = cloudwatch_client(&config, &bridge);
    let sagemaker = aws_sdk_sagemaker::Client::new(&config);
    let clients = headroom_adapters::Clients::new(&config);
    let endpoint = unique("lint-async");
    sagemaker
        .create_model()
        .model_name(format!("{endpoint}-model"))
        .execution_role_arn("arn:aws:iam::123456789012:role/sagemaker")
        .primary_container(
            ContainerDefinition::builder()
                .image("123456789012.dkr.ecr.us-east-1.amazonaws.com/model:latest")
                .build(),
        )
        .send()
        .await
        .expect("model");
    sagemaker
        .create_endpoint_config()
        .endpoint_config_name(format!("{endpoint}-config"))
        .production_variants(
            ProductionVariant::builder()
                .variant_name("AllTraffic")
                .model_name(format!("{endpoint}-model"))
                .initial_instance_count(1)
                .instance_type(ProductionVariantInstanceType::MlM5Large)
                .build(),
        )
        .async_inference_config(
            AsyncInferenceConfig::builder()
                .output_config(
                    AsyncInferenceOutputConfig::builder()
                        .s3_output_path("s3://bucket/out")
                        .build(),
                )
                .build(),
        )
        .send()
        .await
        .expect("async endpoint config");
    sagemaker
        .create_endpoint()
        .endpoint_name(&endpoint)
        .endpoint_config_name(format!("{endpoint}-config"))
        .send()
        .await
        .expect("endpoint");
    let id = ScalableTargetId::variant(&endpoint, "AllTraffic").expect("id");
    AasScalingTargets::new(clients.aas.clone())
        .register(&id, 0, 4, Suspended::default())
        .await
        .expect("register");
    put_policy(&clients.aas, &id, 5.0, 600).await;
    let wake = format!("{endpoint}-wake");
    put_alarm(&cw, &wake, "ApproximateBacklogSize", &endpoint).await;
    let plan = format!(
        "version = 1\n[[target]]\nresource_id = \"{id}\"\nmin_capacity = 0\nmax_capacity = 4\n\
         [target.wake]\nalarms = [\"{wake}\"]\ncapacity = 1\n"
    );
    let (store, _) = table_with_plan(&clients.dynamo, "lint-async.toml", &plan, Utc::now()).await;
    let table = store.table().to_owned();
    let scale_to_zero = |out: &Output| -> Vec<(String, String)> {
        let report: serde_json::Value =
            serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("JSON: {e}"));
        let t = &report["targets"][0];
        assert_eq!(t["serving"], "async", "{t}");
        assert!(t["gaps"].is_null(), "everything was read: {t}");
        t["findings"]
            .as_array()
            .expect("findings")
            .iter()
            .filter(|f| f["rule"] == "scale-to-zero")
            .map(|f| {
                (
                    f["severity"].as_str().unwrap_or("").to_owned(),
                    f["evidence"].as_str().unwrap_or("").to_owned(),
                )
            })
            .collect()
    };

    // WHEN it is linted
    let out = headroom(&["lint", "--json", "--window", "1h"], &bridge.url(), &table);
    // THEN the wake alarm's metric (DescribeAlarms) and the missing wake are both warnings
    let found = scale_to_zero(&out);
    assert_eq!(found.len(), 2, "{found:?}");
    assert!(found.iter().all(|(s, _)| s == "warn"), "{found:?}");
    assert!(
        found[0].1.contains("watches ApproximateBacklogSize"),
        "{found:?}"
    );
    assert!(
        found[1].1.contains("HasBacklogWithoutCapacity"),
        "{found:?}"
    );
    assert_eq!(out.status.code(), Some(0), "warnings do not fail the gate");
    assert!(bridge.calls("DescribeAlarms") >= 1);

    // WHEN the wake alarm watches HasBacklogWithoutCapacity
    put_alarm(&cw, &wake, "HasBacklogWithoutCapacity", &endpoint).await;
    let out = headroom(&["lint", "--json", "--window", "1h"], &bridge.url(), &table);
    // THEN scale-out from zero is wired
    assert_eq!(scale_to_zero(&out), vec![]);
}
