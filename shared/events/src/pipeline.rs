//! The deployment pipeline hook. (Filled in by the deployment watcher.)

use crate::EventError;

pub const PIPELINE_KIND: &str = "headroom.pipeline/v1";

#[derive(Debug, Clone, PartialEq)]
pub struct PipelineHook {}

pub fn parse(_event: &serde_json::Value) -> Result<PipelineHook, EventError> {
    Err(EventError::Unrecognized { hint: "pipeline hooks are not supported yet".into() })
}
