//! SageMaker endpoint state, deployment and config events. (Filled in by the deployment watcher.)

use crate::EventError;

#[derive(Debug, Clone, PartialEq)]
pub struct SageMakerEvent {}

pub fn parse(_event: &serde_json::Value) -> Result<SageMakerEvent, EventError> {
    Err(EventError::Unrecognized { hint: "SageMaker events are not supported yet".into() })
}
