//! Every event headroom accepts, parsed at the edge into a domain [`Trigger`]. The parsers are
//! lenient where AWS is loose (unknown fields, numbers as strings, missing optional parts) and
//! strict where headroom defines the format (explicit peak events, pipeline hooks).

pub mod alarm;
pub mod error;
pub mod pipeline;
pub mod sagemaker;
pub mod schedule;

#[cfg(test)]
mod test_fixtures;

pub use error::EventError;

pub use headroom_core::trigger::{Function, Trigger, WrongFunction};

/// Parses any event headroom accepts, recognising it by its shape.
pub fn parse_trigger(event: &serde_json::Value) -> Result<Trigger, EventError> {
    let obj = event.as_object().ok_or_else(|| EventError::Unrecognized {
        hint: "the event is not a JSON object".into(),
    })?;
    if let Some(kind) = obj.get("kind").and_then(|k| k.as_str()) {
        return match kind {
            schedule::PEAK_KIND => schedule::parse_peak(event).map(Trigger::Peak),
            pipeline::PIPELINE_KIND => pipeline::parse(event).map(Trigger::Pipeline),
            other => Err(EventError::Unrecognized {
                hint: format!(
                    "kind {other:?} is unknown: headroom accepts {:?} and {:?}",
                    schedule::PEAK_KIND,
                    pipeline::PIPELINE_KIND
                ),
            }),
        };
    }
    if obj.contains_key("alarmData") {
        return alarm::parse_direct(event).map(Trigger::Alarm);
    }
    match obj.get("detail-type").and_then(|d| d.as_str()) {
        Some(schedule::SCHEDULED_DETAIL_TYPE) => schedule::parse_tick(event).map(Trigger::Tick),
        Some(alarm::DETAIL_TYPE) => alarm::parse_eventbridge(event).map(Trigger::Alarm),
        Some(dt) if dt.starts_with("SageMaker ") => sagemaker::parse(event).map(Trigger::SageMaker),
        Some(dt) => Err(EventError::Unrecognized {
            hint: format!("EventBridge detail-type {dt:?} is not one headroom handles"),
        }),
        None => Err(EventError::Unrecognized {
            hint:
                "no `kind`, `alarmData` or `detail-type` field: see events/ for the accepted shapes"
                    .into(),
        }),
    }
}
