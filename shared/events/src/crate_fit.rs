//! Where `aws_lambda_events`' types fit the events headroom accepts, and where they do not.
//! Each of headroom's own types names its test here: the crate's type rejecting (or misreading)
//! the shape, headroom's parser accepting (or refusing) it. When a crate upgrade loosens one of
//! these, its test fails, and the own type can give way to the crate's.

use aws_lambda_events::cloudwatch_alarms::{
    CloudWatchAlarm, CloudWatchAlarmState, CloudWatchAlarmStateValue,
    CloudWatchCompositeAlarmConfiguration, CloudWatchMetricAlarmConfiguration,
};
use aws_lambda_events::eventbridge::EventBridgeEvent;
use serde_json::{json, Map, Value};

use crate::envelope::Unread;
use crate::test_fixtures::fixture;
use crate::{parse_trigger, Trigger};

fn alarm(event: &Value) -> crate::alarm::AlarmTransition {
    match parse_trigger(event) {
        Ok(Trigger::Alarm(t)) => t,
        other => panic!("expected an alarm transition, got {other:?}"),
    }
}

fn remove(value: &mut Value, pointer: &str, key: &str) {
    value
        .pointer_mut(pointer)
        .and_then(Value::as_object_mut)
        .unwrap_or_else(|| panic!("{pointer} is an object"))
        .remove(key)
        .unwrap_or_else(|| panic!("{pointer} has {key}"));
}

#[test]
fn the_crates_envelope_reads_every_eventbridge_fixture_but_the_sagemaker_docs_example() {
    let dir = crate::test_fixtures::events_dir();
    let mut read = 0;
    for sub in ["alarms", "sagemaker", "schedule"] {
        for entry in std::fs::read_dir(format!("{dir}/{sub}")).expect("fixture dir") {
            let name = format!(
                "{sub}/{}",
                entry.expect("entry").file_name().to_string_lossy()
            );
            let event = fixture(&name);
            if event.get("detail-type").is_none() {
                continue; // the direct alarm action and the peak: no EventBridge envelope
            }
            let parsed = serde_json::from_value::<EventBridgeEvent<Value>>(event);
            let expected_to_fail = name == "sagemaker/endpoint-in-service-docs.json";
            assert_eq!(parsed.is_err(), expected_to_fail, "{name}: {parsed:?}");
            read += 1;
        }
    }
    assert!(read >= 15, "expected the EventBridge fixtures, read {read}");
}

#[test]
fn the_crates_envelope_rejects_the_sagemaker_docs_epoch_time_which_headroom_reads() {
    let mut event = fixture("sagemaker/endpoint-in-service-docs.json");
    assert_eq!(event["time"], "1583831889050");
    assert!(serde_json::from_value::<EventBridgeEvent<Value>>(event.clone()).is_err());
    match parse_trigger(&event) {
        Ok(Trigger::SageMaker(e)) => {
            assert_eq!(e.at.map(|t| t.timestamp_millis()), Some(1_583_831_889_050));
        }
        other => panic!("{other:?}"),
    }
    // The time is the only reason: in RFC 3339 the crate reads the same event.
    event["time"] = json!("2020-03-10T09:18:09.050Z");
    assert!(serde_json::from_value::<EventBridgeEvent<Value>>(event).is_ok());
}

#[test]
fn schedulers_string_detail_fits_the_crates_envelope_only_with_a_detail_type_that_takes_any_json() {
    let event = fixture("schedule/tick-scheduler-no-input.json");
    assert_eq!(event["detail"], "{}");
    let as_object = serde_json::from_value::<EventBridgeEvent<Map<String, Value>>>(event.clone());
    assert!(as_object.is_err(), "{as_object:?}");
    assert!(serde_json::from_value::<EventBridgeEvent<Unread>>(event.clone()).is_ok());
    match parse_trigger(&event) {
        Ok(Trigger::Tick(t)) => {
            assert_eq!(
                t.id.as_deref(),
                Some("0f3c2c31-9a8e-4a3b-a0f4-2b6fd3f3d9c1")
            );
            assert!(t.at.is_some());
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn schedulers_custom_input_has_no_envelope_for_the_crate_to_read() {
    let event = fixture("schedule/peak.json");
    let err = serde_json::from_value::<EventBridgeEvent<Value>>(event.clone()).unwrap_err();
    assert!(err.to_string().contains("detail-type"), "{err}");
    assert!(matches!(parse_trigger(&event), Ok(Trigger::Peak(_))));
}

#[test]
fn the_crates_metric_alarm_configuration_rejects_metric_math_which_headroom_routes() {
    let event = fixture("alarms/eventbridge-metric-math-alarm.json");
    let config = event["detail"]["configuration"].clone();
    let err = serde_json::from_value::<CloudWatchMetricAlarmConfiguration>(config).unwrap_err();
    assert!(err.to_string().contains("metricStat"), "{err}");
    let t = alarm(&event);
    assert_eq!(
        t.dimensions.get("EndpointName").map(String::as_str),
        Some("chat-prod")
    );
    // A plain metric alarm fits the crate's type: the expression entry is the reason.
    let plain = fixture("alarms/eventbridge-burst-alarm.json")["detail"]["configuration"].clone();
    assert!(serde_json::from_value::<CloudWatchMetricAlarmConfiguration>(plain).is_ok());
}

#[test]
fn the_crates_metric_alarm_configuration_rejects_a_daily_period_which_headroom_routes() {
    // PutMetricAlarm accepts any multiple of 60 for `Period`, up to Period x EvaluationPeriods
    // of 7 days; the crate reads the period as a u16 (at most 65535 seconds).
    let mut event = fixture("alarms/eventbridge-burst-alarm.json");
    event["detail"]["configuration"]["metrics"][0]["metricStat"]["period"] = json!(86_400);
    let config = event["detail"]["configuration"].clone();
    let err = serde_json::from_value::<CloudWatchMetricAlarmConfiguration>(config).unwrap_err();
    assert!(err.to_string().contains("86400"), "{err}");
    assert_eq!(
        alarm(&event).metric_name.as_deref(),
        Some("InvocationsPerInstance")
    );
}

#[test]
fn the_crates_composite_configuration_rejects_a_composite_without_suppressor() {
    let event = fixture("alarms/eventbridge-composite-alarm.json");
    let mut config = event["detail"]["configuration"].clone();
    let err = serde_json::from_value::<CloudWatchCompositeAlarmConfiguration>(config.clone())
        .unwrap_err();
    assert!(err.to_string().contains("actionsSuppressor"), "{err}");
    assert_eq!(
        alarm(&event).alarm_name,
        "headroom-chat-prod-burst-composite"
    );
    // With an actions suppressor, which headroom's composite alarms do not use, it fits.
    config["actionsSuppressor"] = json!("maintenance-window");
    config["actionsSuppressorWaitPeriod"] = json!(60);
    config["actionsSuppressorExtensionPeriod"] = json!(60);
    assert!(serde_json::from_value::<CloudWatchCompositeAlarmConfiguration>(config).is_ok());
}

#[test]
fn the_crates_alarm_state_requires_the_timestamp_headroom_can_do_without() {
    let mut event = fixture("alarms/eventbridge-burst-alarm.json");
    let state = event["detail"]["state"].clone();
    assert!(serde_json::from_value::<CloudWatchAlarmState<Value>>(state).is_ok());
    remove(&mut event, "/detail/state", "timestamp");
    let state = event["detail"]["state"].clone();
    let err = serde_json::from_value::<CloudWatchAlarmState<Value>>(state).unwrap_err();
    assert!(err.to_string().contains("timestamp"), "{err}");
    // headroom reads the transition at the envelope's time.
    assert_eq!(alarm(&event).at.to_rfc3339(), "2026-03-14T09:42:32+00:00");
}

#[test]
fn the_crates_direct_action_type_fits_the_envelope_but_holds_the_crates_alarm_state() {
    let mut event = fixture("alarms/direct-action-burst-alarm.json");
    assert!(serde_json::from_value::<CloudWatchAlarm<Value, Value>>(event.clone()).is_ok());
    remove(&mut event, "/alarmData/state", "timestamp");
    let err = serde_json::from_value::<CloudWatchAlarm<Value, Value>>(event.clone()).unwrap_err();
    assert!(err.to_string().contains("timestamp"), "{err}");
    assert_eq!(
        alarm(&event).at.to_rfc3339(),
        "2026-03-14T09:42:31.412+00:00"
    );
}

#[test]
fn the_crates_alarm_state_reads_a_missing_value_as_ok_which_headroom_refuses() {
    let mut event = fixture("alarms/eventbridge-burst-alarm.json");
    remove(&mut event, "/detail/state", "value");
    let state = event["detail"]["state"].clone();
    let read = serde_json::from_value::<CloudWatchAlarmState<Value>>(state).unwrap();
    assert_eq!(read.value, CloudWatchAlarmStateValue::Ok);
    let err = parse_trigger(&event).unwrap_err().to_string();
    assert!(err.contains("detail.state.value"), "{err}");
}
