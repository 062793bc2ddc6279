//! A deployment pipeline's own call (`headroom.pipeline/v1`), as headroom uses it; the format
//! and its strict parser are in `headroom_events::pipeline`.

use crate::ids::{ComponentName, EndpointName, VariantName};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PipelineAction {
    /// A rollout finished: check the model identity of the endpoint's managed targets.
    Deployed,
    /// Answer whether a policy review is open for the endpoint.
    Check,
}

impl PipelineAction {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Deployed => "deployed",
            Self::Check => "check",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PipelineHook {
    pub action: PipelineAction,
    pub endpoint: EndpointName,
    pub variant: Option<VariantName>,
    pub inference_component: Option<ComponentName>,
    pub model_version: Option<String>,
    pub pipeline_run_id: String,
}

impl PipelineHook {
    pub fn idempotency_key(&self) -> String {
        format!(
            "pipeline:{}:{}:{}",
            self.pipeline_run_id,
            self.action.as_str(),
            self.endpoint
        )
    }
}
