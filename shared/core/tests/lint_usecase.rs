//! `usecase::lint::run` over the in-memory ports: what it reads, what it finds, what it says it
//! could not read.
#![allow(clippy::unwrap_used)] // a test that cannot unwrap has failed

use std::sync::atomic::Ordering;

use chrono::{DateTime, Utc};
use headroom_core::deploy_ports::{
    ComponentView, ConfigVariantView, EndpointConfigView, EndpointVariantView, EndpointView,
    ManagedInstanceScalingView,
};
use headroom_core::lint::{Serving, Severity};
use headroom_core::memory::{
    block_on, MemoryDemand, MemoryEndpoints, MemoryScalingHistory, MemoryScalingTargets,
    MemoryStateStore,
};
use headroom_core::metrics_port::Workload;
use headroom_core::review::ScalingPolicySummary;
use headroom_core::usecase::lint::{run, LintError, DEFAULT_WINDOW};
use headroom_core::usecase::Ports;
use headroom_core::{EndpointName, ScalableTargetId};

const PLAN: &str = r#"
version = 1
[[target]]
resource_id = "endpoint/chat/variant/AllTraffic"
min_capacity = 1
max_capacity = 8
[target.lint]
concurrency_per_instance = 2

[[target]]
resource_id = "inference-component/chat-ic"
min_capacity = 0
max_capacity = 4
"#;

fn now() -> DateTime<Utc> {
    "2026-03-14T09:00:00Z".parse().unwrap()
}

fn chat() -> ScalableTargetId {
    "endpoint/chat/variant/AllTraffic".parse().unwrap()
}

fn ic() -> ScalableTargetId {
    "inference-component/chat-ic".parse().unwrap()
}

struct World {
    aas: MemoryScalingTargets,
    store: MemoryStateStore,
    history: MemoryScalingHistory,
    endpoints: MemoryEndpoints,
    demand: MemoryDemand,
}

fn endpoint(name: &str, config: &str) -> EndpointView {
    EndpointView {
        name: EndpointName::parse(name).unwrap(),
        arn: None,
        config_name: Some(config.into()),
        status: headroom_core::endpoint_status::EndpointStatus::InService,
        variants: vec![EndpointVariantView {
            name: "AllTraffic".into(),
            current_instances: Some(2),
            desired_instances: Some(2),
        }],
        last_modified: None,
    }
}

fn world() -> World {
    let history = MemoryScalingHistory::default();
    history.put_policies(
        &chat(),
        vec![ScalingPolicySummary {
            name: "chat-invocations".into(),
            policy_type: "TargetTrackingScaling".into(),
            metric: Some("SageMakerVariantInvocationsPerInstance".into()),
            target_value: Some(70.0),
            scale_out_cooldown_s: Some(300),
            scale_in_cooldown_s: Some(600),
            ..Default::default()
        }],
    );
    let endpoints = MemoryEndpoints::default();
    endpoints.put_endpoint(endpoint("chat", "chat-cfg"));
    endpoints.put_config(EndpointConfigView {
        name: "chat-cfg".into(),
        variants: vec![ConfigVariantView {
            name: "AllTraffic".into(),
            model_name: Some("chat-model".into()),
            instance_type: Some("ml.g5.xlarge".into()),
            ..Default::default()
        }],
        ..Default::default()
    });
    endpoints.put_endpoint(endpoint("llm", "llm-cfg"));
    endpoints.put_config(EndpointConfigView {
        name: "llm-cfg".into(),
        variants: vec![ConfigVariantView {
            name: "AllTraffic".into(),
            instance_type: Some("ml.g5.12xlarge".into()),
            managed_instance_scaling: Some(ManagedInstanceScalingView {
                enabled: true,
                min_instances: Some(0),
                max_instances: Some(2),
                ..Default::default()
            }),
            ..Default::default()
        }],
        ..Default::default()
    });
    endpoints.put_component(ComponentView {
        name: headroom_core::ComponentName::parse("chat-ic").unwrap(),
        arn: None,
        endpoint: Some("llm".into()),
        variant: Some("AllTraffic".into()),
        model_name: Some("llm-model".into()),
        container: None,
        status: Some("InService".into()),
    });
    let day = Workload {
        from: now() - chrono::Duration::hours(24),
        to: now(),
        model_latency_mean_s: Some(2.3),
        concurrency_max: Some(3.0),
        invocations_per_instance_per_min: Some(40.0),
    };
    World {
        aas: MemoryScalingTargets::default(),
        store: MemoryStateStore::default().with_plan(PLAN),
        history,
        endpoints,
        demand: MemoryDemand::default().with_workload(chat(), day),
    }
}

#[test]
fn every_target_is_judged_with_its_own_facts() {
    // GIVEN a variant whose TargetValue 70 exceeds the derived 2 x 60 / 2.3 s x 0.5 = 26, and an
    // inference component at 0 copies with no policy and nothing to wake it
    let w = world();
    let ports = Ports::new(&w.aas, &w.store)
        .with_history(&w.history)
        .with_endpoints(&w.endpoints)
        .with_demand(&w.demand);
    // WHEN the whole plan is linted
    let report = block_on(run(ports, None, now(), DEFAULT_WINDOW)).unwrap();
    // THEN each target has its own findings, and an error exists
    assert_eq!(report.targets.len(), 2);
    let chat = &report.targets[0];
    assert_eq!(chat.serving, Serving::RealTime);
    let tv = chat
        .findings
        .iter()
        .find(|f| f.rule == "target-value")
        .unwrap();
    assert_eq!(tv.severity, Severity::Error);
    assert_eq!(tv.change, "TargetValue 70 -> 26");
    assert!(
        tv.evidence.contains("2026-03-13T09:00Z..2026-03-14T09:00Z"),
        "{}",
        tv.evidence
    );
    assert!(
        chat.findings.iter().any(|f| f.rule == "metric-fit"),
        "2.3 s requests on an invocation count"
    );
    let ic = &report.targets[1];
    assert_eq!(ic.serving, Serving::Component);
    let rules: Vec<&str> = ic.findings.iter().map(|f| f.rule.as_str()).collect();
    assert_eq!(rules, ["no-policy", "scale-to-zero"]);
    assert!(report.has_errors());
    // AND the metrics were read in one call for both targets
    assert_eq!(w.demand.workload_calls.load(Ordering::Relaxed), 1);
}

#[test]
fn one_target_can_be_named() {
    let w = world();
    let ports = Ports::new(&w.aas, &w.store)
        .with_history(&w.history)
        .with_endpoints(&w.endpoints)
        .with_demand(&w.demand);
    let report = block_on(run(ports, Some(&ic()), now(), DEFAULT_WINDOW)).unwrap();
    assert_eq!(report.targets.len(), 1);
    assert_eq!(report.targets[0].target, "inference-component/chat-ic");
    let other: ScalableTargetId = "endpoint/nope/variant/AllTraffic".parse().unwrap();
    let err = block_on(run(ports, Some(&other), now(), DEFAULT_WINDOW)).unwrap_err();
    assert!(matches!(err, LintError::Unmanaged { .. }), "{err}");
}

#[test]
fn without_metrics_the_report_says_what_is_unknown() {
    // GIVEN no CloudWatch port
    let w = world();
    let ports = Ports::new(&w.aas, &w.store)
        .with_history(&w.history)
        .with_endpoints(&w.endpoints);
    let report = block_on(run(ports, Some(&chat()), now(), DEFAULT_WINDOW)).unwrap();
    let t = &report.targets[0];
    // THEN the target value is not judged, and the gap is named
    assert!(
        t.gaps.iter().any(|g| g.contains("no CloudWatch metrics")),
        "{:?}",
        t.gaps
    );
    let tv = t
        .findings
        .iter()
        .find(|f| f.rule == "target-value")
        .unwrap();
    assert_eq!(tv.severity, Severity::Info);
    assert!(!report.has_errors());
}

#[test]
fn a_missing_endpoint_is_a_gap_not_a_failure() {
    let w = world();
    w.endpoints.remove_endpoint("chat");
    let ports = Ports::new(&w.aas, &w.store)
        .with_history(&w.history)
        .with_endpoints(&w.endpoints)
        .with_demand(&w.demand);
    let report = block_on(run(ports, Some(&chat()), now(), DEFAULT_WINDOW)).unwrap();
    let t = &report.targets[0];
    assert_eq!(t.serving, Serving::Unknown);
    assert!(
        t.gaps
            .iter()
            .any(|g| g.contains("endpoint chat does not exist")),
        "{:?}",
        t.gaps
    );
}
