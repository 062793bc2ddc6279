//! Every event headroom accepts, parsed at the edge into a domain [`Trigger`]. The parsers are
//! lenient where AWS is loose (unknown fields, numbers as strings, missing optional parts) and
//! strict where headroom defines the format (explicit peak events, pipeline hooks).

pub mod alarm;
mod envelope;
pub mod error;
mod lenient;
pub mod model_package;
pub mod pipeline;
pub mod sagemaker;
pub mod schedule;

#[cfg(test)]
mod crate_fit;
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
        Some(model_package::MODEL_PACKAGE_STATE) => {
            model_package::parse(event).map(Trigger::ModelPackage)
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Every fixture under `events/` is recognised as what its folder says, and every one under
    /// `events/invalid/` is refused.
    #[test]
    fn every_fixture_is_the_trigger_its_folder_names() {
        let dir = test_fixtures::events_dir();
        let mut seen = 0;
        for (folder, kinds) in [
            ("alarms", &["alarm transition"][..]),
            (
                "sagemaker",
                &["SageMaker state change", "model package state change"],
            ),
            ("schedule", &["tick", "peak event"]),
            ("pipeline", &["pipeline hook"]),
            ("invalid", &[]),
        ] {
            for entry in std::fs::read_dir(format!("{dir}/{folder}")).expect("fixture folder") {
                let name = entry
                    .expect("entry")
                    .file_name()
                    .to_string_lossy()
                    .into_owned();
                if !name.ends_with(".json") {
                    continue;
                }
                let parsed = parse_trigger(&test_fixtures::fixture(&format!("{folder}/{name}")));
                match parsed {
                    Ok(t) => assert!(kinds.contains(&t.kind()), "{folder}/{name}: {}", t.kind()),
                    Err(e) => assert!(kinds.is_empty(), "{folder}/{name}: {e}"),
                }
                seen += 1;
            }
        }
        assert!(seen >= 25, "expected every fixture, saw {seen}");
    }
}
