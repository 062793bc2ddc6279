//! CloudWatch alarm transitions. (Filled in by the alarm-automation work.)

use crate::EventError;

pub const DETAIL_TYPE: &str = "CloudWatch Alarm State Change";

#[derive(Debug, Clone, PartialEq)]
pub struct AlarmTransition {}

pub fn parse_eventbridge(_event: &serde_json::Value) -> Result<AlarmTransition, EventError> {
    Err(EventError::Unrecognized { hint: "alarm events are not supported yet".into() })
}

pub fn parse_direct(_event: &serde_json::Value) -> Result<AlarmTransition, EventError> {
    Err(EventError::Unrecognized { hint: "alarm events are not supported yet".into() })
}
