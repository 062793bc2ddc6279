//! `headroom explain` for the deployment watcher's events: what it would do, from the event and
//! the plan alone (no AWS call, nothing changed).

use headroom_core::ids::{EndpointName, ScalableTargetId};
use headroom_core::plan::{Plan, TargetPlan};
use headroom_events::pipeline::{PipelineAction, PipelineHook};
use headroom_events::sagemaker::{EndpointStatus, SageMakerEvent, SageMakerEventKind};
use headroom_events::Trigger;
use serde_json::{json, Value};

use headroom_core::model::{SampleSource, LEAD_SAMPLES_KEPT};

const SOURCE_ACTIVITY: SampleSource = SampleSource::AasActivity;
const SOURCE_ENDPOINT: SampleSource = SampleSource::EndpointState;

const FUNCTION: &str = "headroom-deploy";

/// What the deployment watcher would do with `trigger` under `plan`.
pub fn explain(trigger: &Trigger, plan: &Plan) -> Value {
    match trigger {
        Trigger::SageMaker(ev) => sagemaker(ev, plan),
        Trigger::Pipeline(hook) => pipeline(hook, plan),
        other => json!({
            "handled_by": match other {
                Trigger::Alarm(_) => "headroom-alarm",
                _ => "headroom-tick",
            },
            "deployment_watcher": format!("refuses {} events", other.kind()),
        }),
    }
}

fn variants_on<'p>(plan: &'p Plan, endpoint: &EndpointName) -> Vec<&'p TargetPlan> {
    plan.targets
        .iter()
        .filter(|t| matches!(&t.id, ScalableTargetId::Variant { endpoint: e, .. } if e == endpoint))
        .collect()
}

fn components(plan: &Plan) -> Vec<String> {
    plan.targets
        .iter()
        .filter(|t| matches!(t.id, ScalableTargetId::InferenceComponent(_)))
        .map(|t| t.id.to_string())
        .collect()
}

fn target_steps(t: &TargetPlan, measure: Option<String>) -> Value {
    let review = if !t.review.enabled {
        "if it changed: record it, no review (the plan turns reviews off)".to_owned()
    } else if t.review.tag_endpoint {
        "if it changed: open one review (old/new model, policies, bounds, decisions and warm-up under the old model), tag the endpoint headroom:policy-review=open".to_owned()
    } else {
        "if it changed: open one review (old/new model, policies, bounds, decisions and warm-up under the old model); no tag (plan)".to_owned()
    };
    let mut steps = vec![
        "read the identity serving now (DescribeEndpoint -> DescribeEndpointConfig -> DescribeModel, or DescribeInferenceComponent)".to_owned(),
        "first sighting: record it as the baseline, no review".to_owned(),
        review,
        format!(
            "read AAS scaling activities; record successful scale-outs as lead-time samples ({SOURCE_ACTIVITY}, newest {LEAD_SAMPLES_KEPT} kept)"
        ),
    ];
    steps.extend(measure);
    steps.push("reconcile the target with the model fingerprint in force".to_owned());
    let m = &t.measured_lead_time;
    json!({
        "target": t.id.to_string(),
        "steps": steps,
        "lead_time": {
            "configured": t.lead_time.to_string(),
            "measured_rule": format!(
                "p{} of scale-outs under the model in force x {} within {}..{}, once {} are measured; earlier models {}",
                m.percentile, m.margin, m.min, m.max, m.min_samples,
                if m.count_previous_models { "count" } else { "do not count" }
            ),
        },
    })
}

fn transition_step(status: Option<&EndpointStatus>) -> Option<String> {
    let s = status?;
    Some(match s {
        EndpointStatus::Creating | EndpointStatus::Updating => {
            format!("{s}: remember when provisioning started ({SOURCE_ENDPOINT} measurement)")
        }
        EndpointStatus::InService => format!(
            "{s}: if provisioning was pending and the variant's count grew under the same model, record the duration ({SOURCE_ENDPOINT})"
        ),
        EndpointStatus::RollingBack | EndpointStatus::Failed | EndpointStatus::UpdateRollbackFailed | EndpointStatus::OutOfService | EndpointStatus::Deleting => {
            format!("{s}: drop any pending provisioning start (nothing to measure)")
        }
        _ => format!("{s}: no measurement"),
    })
}

fn sagemaker(ev: &SageMakerEvent, plan: &Plan) -> Value {
    let event = json!({
        "detail_type": ev.kind.detail_type(),
        "id": ev.id,
        "endpoint": ev.endpoint.as_ref().map(ToString::to_string),
        "endpoint_config": ev.endpoint_config,
        "status": ev.status.as_ref().map(ToString::to_string),
        "occurred_at": ev.occurred_at(),
        "idempotency_key": ev.idempotency_key(),
    });
    let ics = components(plan);
    let Some(endpoint) = ev
        .endpoint
        .as_ref()
        .filter(|_| ev.kind != SageMakerEventKind::ConfigState)
    else {
        return json!({
            "handled_by": FUNCTION,
            "event": event,
            "would": [
                "find the managed endpoint (DescribeEndpoint per managed endpoint) whose config in force is this one",
                "none yet (the usual case: a config is created before the endpoint switches): nothing to do, the endpoint's own events follow",
                "one: check the identities of its managed targets, as for an endpoint state change",
            ],
        });
    };
    let variants = variants_on(plan, endpoint);
    if variants.is_empty() && ics.is_empty() {
        return json!({
            "handled_by": FUNCTION,
            "event": event,
            "managed_targets": [],
            "would": [format!("nothing: endpoint {endpoint} has no target managed by the plan (logged no-op, nothing written, no AWS change)")],
        });
    }
    let measure = (ev.kind == SageMakerEventKind::EndpointState)
        .then(|| transition_step(ev.status.as_ref()))
        .flatten();
    json!({
        "handled_by": FUNCTION,
        "event": event,
        "managed_targets": variants.iter().map(|t| target_steps(t, measure.clone())).collect::<Vec<_>>(),
        "inference_components_to_check": ics,
        "note": (!ics.is_empty()).then_some("inference components are described to learn whether they run on this endpoint"),
    })
}

fn pipeline(hook: &PipelineHook, plan: &Plan) -> Value {
    let mut targets: Vec<&TargetPlan> = variants_on(plan, &hook.endpoint);
    if let Some(v) = &hook.variant {
        targets
            .retain(|t| matches!(&t.id, ScalableTargetId::Variant { variant, .. } if variant == v));
    }
    let named_ic = hook
        .inference_component
        .as_ref()
        .map(|c| ScalableTargetId::InferenceComponent(c.clone()))
        .filter(|id| plan.target(id).is_some());
    if hook.inference_component.is_some() {
        targets.clear();
    }
    let ics: Vec<String> = match (&hook.variant, &named_ic, &hook.inference_component) {
        (None, Some(id), _) => vec![id.to_string()],
        (None, None, None) => components(plan),
        _ => Vec::new(),
    };
    let hook_json = json!({
        "action": hook.action.as_str(),
        "endpoint": hook.endpoint.to_string(),
        "variant": hook.variant.as_ref().map(ToString::to_string),
        "inference_component": hook.inference_component.as_ref().map(ToString::to_string),
        "model_version": hook.model_version,
        "pipeline_run_id": hook.pipeline_run_id,
    });
    if targets.is_empty() && ics.is_empty() {
        return json!({
            "handled_by": FUNCTION,
            "hook": hook_json,
            "managed_targets": [],
            "would": [match hook.action {
                PipelineAction::Check => "answer review = \"unmanaged\": no managed target matches (check the names)",
                PipelineAction::Deployed => "nothing: no managed target matches the hook (logged no-op)",
            }],
        });
    }
    let names: Vec<String> = targets.iter().map(|t| t.id.to_string()).collect();
    match hook.action {
        PipelineAction::Check => json!({
            "handled_by": FUNCTION,
            "hook": hook_json,
            "managed_targets": names,
            "inference_components_to_check": ics,
            "would": ["read the reviews of these targets (no AWS change)", "answer review = \"open\" if any is open (hold the promotion), else \"clear\""],
        }),
        PipelineAction::Deployed => json!({
            "handled_by": FUNCTION,
            "hook": hook_json,
            "managed_targets": targets.iter().map(|t| target_steps(t, None)).collect::<Vec<_>>(),
            "inference_components_to_check": ics,
            "label": format!("the identity is stored with the pipeline's label {:?}", hook.model_version.as_deref().unwrap_or_default()),
        }),
    }
}
