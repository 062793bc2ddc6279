//! The deployment pipeline hook: a JSON payload headroom defines and versions, for pipelines
//! that invoke the deployment watcher directly.
//!
//! ```json
//! {
//!   "kind": "headroom.pipeline/v1",
//!   "action": "deployed",
//!   "endpoint": "chat-prod",
//!   "variant": "AllTraffic",
//!   "model_version": "llama3-8b-2026-03-14.2",
//!   "pipeline_run_id": "deploy-chat-prod-4711"
//! }
//! ```
//!
//! - `action`: `deployed` (a rollout finished: check the model identity now, as the SageMaker
//!   events would) or `check` (before promoting: is a scaling-policy review open for this
//!   endpoint? The answer lets the pipeline gate).
//! - `variant` or `inference_component` (optional, not both): limit the call to that target;
//!   without them every managed target on the endpoint counts.
//! - `model_version`: the pipeline's own label for what it deployed; required for `deployed`,
//!   recorded next to the identity headroom reads from SageMaker.
//! - `pipeline_run_id`: the pipeline's run, for logs and to make a retried call idempotent.
//!
//! headroom owns this format, so it is strict: unknown fields are refused with the field named,
//! so that a typo never silently changes what the call means.

use headroom_core::{ComponentName, EndpointName, VariantName};
use serde::Deserialize;

use crate::EventError;

pub const PIPELINE_KIND: &str = "headroom.pipeline/v1";

const HOOK: &str = "pipeline hook";
const LABEL_MAX: usize = 256;

pub use headroom_core::trigger::pipeline::{PipelineAction, PipelineHook};

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Payload {
    kind: String,
    action: String,
    endpoint: String,
    #[serde(default)]
    variant: Option<String>,
    #[serde(default)]
    inference_component: Option<String>,
    #[serde(default)]
    model_version: Option<String>,
    pipeline_run_id: String,
}

fn label(field: &str, value: String) -> Result<String, EventError> {
    let trimmed = value.trim();
    if trimmed.is_empty() {
        return Err(EventError::malformed(HOOK, field, "is empty"));
    }
    if trimmed.len() > LABEL_MAX {
        return Err(EventError::malformed(
            HOOK,
            field,
            format!("is longer than {LABEL_MAX} characters"),
        ));
    }
    if trimmed.chars().any(char::is_control) {
        return Err(EventError::malformed(
            HOOK,
            field,
            "contains control characters",
        ));
    }
    Ok(trimmed.to_owned())
}

pub fn parse(event: &serde_json::Value) -> Result<PipelineHook, EventError> {
    let p: Payload = serde_json::from_value(event.clone()).map_err(|e| {
        EventError::malformed(
            HOOK,
            "(payload)",
            format!("{e}; expected {{kind, action, endpoint, pipeline_run_id, [variant | inference_component], [model_version]}}"),
        )
    })?;
    if p.kind != PIPELINE_KIND {
        return Err(EventError::malformed(
            HOOK,
            "kind",
            format!("is {:?}, expected {PIPELINE_KIND:?}", p.kind),
        ));
    }
    let action = match p.action.as_str() {
        "deployed" => PipelineAction::Deployed,
        "check" => PipelineAction::Check,
        other => {
            return Err(EventError::malformed(
                HOOK,
                "action",
                format!("is {other:?}, expected \"deployed\" or \"check\""),
            ))
        }
    };
    let endpoint = EndpointName::parse(p.endpoint)
        .map_err(|e| EventError::malformed(HOOK, "endpoint", e.to_string()))?;
    let variant = p
        .variant
        .map(VariantName::parse)
        .transpose()
        .map_err(|e| EventError::malformed(HOOK, "variant", e.to_string()))?;
    let inference_component = p
        .inference_component
        .map(ComponentName::parse)
        .transpose()
        .map_err(|e| EventError::malformed(HOOK, "inference_component", e.to_string()))?;
    if variant.is_some() && inference_component.is_some() {
        return Err(EventError::malformed(
            HOOK,
            "inference_component",
            "cannot be given together with `variant`: name one target",
        ));
    }
    let model_version = p
        .model_version
        .map(|v| label("model_version", v))
        .transpose()?;
    if action == PipelineAction::Deployed && model_version.is_none() {
        return Err(EventError::malformed(
            HOOK,
            "model_version",
            "is required for action \"deployed\": say what was rolled out",
        ));
    }
    Ok(PipelineHook {
        action,
        endpoint,
        variant,
        inference_component,
        model_version,
        pipeline_run_id: label("pipeline_run_id", p.pipeline_run_id)?,
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // a test that cannot unwrap has failed
mod tests {
    use super::*;
    use serde_json::json;

    fn fixture(name: &str) -> serde_json::Value {
        crate::test_fixtures::fixture(&format!("pipeline/{name}"))
    }

    #[test]
    fn fixtures_parse_through_parse_trigger() {
        let deployed = match crate::parse_trigger(&fixture("deployed.json")).unwrap() {
            crate::Trigger::Pipeline(h) => h,
            other => panic!("{other:?}"),
        };
        assert_eq!(deployed.action, PipelineAction::Deployed);
        assert_eq!(deployed.endpoint.as_str(), "chat-prod");
        assert_eq!(
            deployed.variant.as_ref().map(VariantName::as_str),
            Some("AllTraffic")
        );
        assert_eq!(
            deployed.model_version.as_deref(),
            Some("llama3-8b-2026-03-14.2")
        );
        let check = match crate::parse_trigger(&fixture("check.json")).unwrap() {
            crate::Trigger::Pipeline(h) => h,
            other => panic!("{other:?}"),
        };
        assert_eq!(check.action, PipelineAction::Check);
        assert!(check.variant.is_none());
        assert_ne!(deployed.idempotency_key(), check.idempotency_key());
    }

    fn base() -> serde_json::Value {
        json!({"kind": PIPELINE_KIND, "action": "check", "endpoint": "chat-prod", "pipeline_run_id": "run-1"})
    }

    #[test]
    fn unknown_fields_are_refused_by_name() {
        let mut p = base();
        p["varient"] = json!("AllTraffic");
        let err = parse(&p).unwrap_err().to_string();
        assert!(err.contains("varient"), "{err}");
    }

    #[test]
    fn refuses_bad_values_naming_the_field() {
        let cases = [
            ("action", json!("promote"), "action"),
            ("endpoint", json!("bad_name"), "endpoint"),
            ("variant", json!(""), "variant"),
            ("pipeline_run_id", json!("  "), "pipeline_run_id"),
            ("kind", json!("headroom.pipeline/v2"), "kind"),
        ];
        for (field, value, named) in cases {
            let mut p = base();
            p[field] = value;
            let err = parse(&p).unwrap_err().to_string();
            assert!(err.contains(named), "{field}: {err}");
        }
        let mut p = base();
        p["action"] = json!("deployed");
        assert!(parse(&p).unwrap_err().to_string().contains("model_version"));
        let mut p = base();
        p["variant"] = json!("AllTraffic");
        p["inference_component"] = json!("ic-a");
        assert!(parse(&p)
            .unwrap_err()
            .to_string()
            .contains("inference_component"));
        let mut p = base();
        p.as_object_mut().map(|o| o.remove("pipeline_run_id"));
        assert!(parse(&p)
            .unwrap_err()
            .to_string()
            .contains("pipeline_run_id"));
    }

    #[test]
    fn check_needs_no_model_version() {
        let hook = parse(&base()).unwrap();
        assert_eq!(hook.action, PipelineAction::Check);
        assert_eq!(hook.model_version, None);
    }
}
