//! CloudWatch alarm transitions, in both envelopes CloudWatch uses:
//! - EventBridge: `detail-type: "CloudWatch Alarm State Change"`, the alarm in `detail`, the alarm
//!   ARN in `resources[0]`, an event `id`;
//! - the direct Lambda alarm action: `source, alarmArn, accountId, time, region, alarmData`, with
//!   `alarmData` shaped like the EventBridge `detail` and no event id.
//!
//! The EventBridge envelope is `aws_lambda_events`' own type; the alarm inside either envelope
//! and the direct action's envelope are headroom's (`AlarmData` and `DirectAction` say why).
//! Parsing is lenient where AWS is loose: unknown fields are ignored, `reasonData` (a JSON
//! document inside a string) is never needed, metric-math alarms lack `metricStat`, composite
//! alarms have no metrics at all, and timestamps come as `2026-03-14T09:42:31.412+0000` (no colon
//! in the offset) as well as RFC 3339. Only what headroom acts on is required: the alarm name,
//! the new state and a time.

use std::collections::BTreeMap;

use chrono::{DateTime, NaiveDateTime, Utc};
use serde::Deserialize;
use serde_json::Value;

pub use headroom_core::alarms::AlarmTransition;
pub use headroom_core::model::AlarmState;

use headroom_core::plan::{MAX_ALARM_ARN, MAX_ALARM_NAME};
use headroom_core::surge::AlarmReading;
use headroom_core::text::{cut, cut_to};

use crate::envelope;
use crate::lenient::{self, Lenient, LenientObject};
use crate::EventError;

pub const DETAIL_TYPE: &str = "CloudWatch Alarm State Change";
/// The only namespace whose dimensions name SageMaker targets.
pub const SAGEMAKER_NAMESPACE: &str = "AWS/SageMaker";

const KIND: &str = "CloudWatch alarm event";

/// Reads a CloudWatch timestamp: RFC 3339, or CloudWatch's `+0000` offset form.
pub fn parse_time(text: &str) -> Option<DateTime<Utc>> {
    if let Ok(t) = DateTime::parse_from_rfc3339(text) {
        return Some(t.with_timezone(&Utc));
    }
    for format in ["%Y-%m-%dT%H:%M:%S%.f%z", "%Y-%m-%dT%H:%M:%S%z"] {
        if let Ok(t) = DateTime::parse_from_str(text, format) {
            return Some(t.with_timezone(&Utc));
        }
    }
    // No offset at all: CloudWatch means UTC.
    NaiveDateTime::parse_from_str(text, "%Y-%m-%dT%H:%M:%S%.f")
        .ok()
        .map(|n| n.and_utc())
}

/// The alarm in an event: the EventBridge `detail`, or the direct action's `alarmData`.
///
/// headroom's own type, not `aws_lambda_events`' `CloudWatchAlarmData<C, R>`: whatever `C` and
/// `R`, its `state` is the crate's `CloudWatchAlarmState`, which requires `reason` and
/// `timestamp` (headroom reads a state without a timestamp at the envelope's `time`) and reads a
/// state without `value` as OK (headroom refuses it: an OK that CloudWatch never sent would end a
/// guard's hold). The AWS documentation shows no state without these fields, so this is
/// headroom's tolerance, not AWS's shape; `crate_fit` tests both differences.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct AlarmData {
    #[serde(default)]
    alarm_name: Option<String>,
    #[serde(default, deserialize_with = "lenient::present_object")]
    state: Option<StateData>,
    #[serde(default, deserialize_with = "lenient::present_object")]
    previous_state: Option<StateData>,
    /// Read only to route the alarm (dimensions, metric name): never a reason to refuse it.
    #[serde(default)]
    configuration: LenientObject<Configuration>,
}

/// `state` or `previousState`. `reason` (free text) is never read; `reasonData` (a JSON document
/// inside a string) only for the newest datapoint and the threshold, and never a reason to refuse
/// the event.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct StateData {
    #[serde(default)]
    value: Option<String>,
    #[serde(default)]
    timestamp: Option<String>,
    #[serde(default)]
    reason_data: Lenient<String>,
}

/// What headroom reads of a metric alarm's `reasonData`.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ReasonData {
    #[serde(default)]
    threshold: Lenient<f64>,
    /// Oldest first (CloudWatch lists them in time order).
    #[serde(default)]
    recent_datapoints: Lenient<Vec<Lenient<f64>>>,
    /// Each with its timestamp, when CloudWatch includes them.
    #[serde(default)]
    evaluated_datapoints: Lenient<Vec<LenientObject<EvaluatedDatapoint>>>,
}

#[derive(Deserialize)]
struct EvaluatedDatapoint {
    #[serde(default)]
    timestamp: Lenient<String>,
    #[serde(default)]
    value: Lenient<f64>,
}

/// The newest datapoint and the threshold of a state's `reasonData`: the evaluated datapoint with
/// the latest timestamp, else the last of `recentDatapoints`. `None` for anything else (a
/// composite alarm's, a missing or unreadable document, no datapoint).
fn reading(reason_data: Option<&str>) -> Option<AlarmReading> {
    let data: ReasonData = serde_json::from_str(reason_data?).ok()?;
    let threshold = *data.threshold.get()?;
    let evaluated = data
        .evaluated_datapoints
        .get()
        .into_iter()
        .flatten()
        .filter_map(|d| {
            let d = d.get()?;
            Some((parse_time(d.timestamp.get()?)?, *d.value.get()?))
        })
        .max_by_key(|(at, _)| *at)
        .map(|(_, v)| v);
    let newest = evaluated.or_else(|| {
        data.recent_datapoints
            .get()?
            .iter()
            .rev()
            .find_map(|v| v.get().copied())
    })?;
    AlarmReading::new(newest, threshold)
}

/// The alarm's `configuration`, as far as headroom reads it: the metrics.
///
/// headroom's own type, because the crate's are too strict for real alarms:
/// `CloudWatchMetricAlarmConfiguration` requires a `metricStat` in every metric, which a
/// metric-math alarm's expression entry does not have, and `CloudWatchCompositeAlarmConfiguration`
/// requires `actionsSuppressor` and both suppressor periods, which a composite alarm without an
/// actions suppressor does not have (events/alarms/eventbridge-metric-math-alarm.json and
/// eventbridge-composite-alarm.json; `crate_fit` tests both).
#[derive(Default, Deserialize)]
struct Configuration {
    #[serde(default)]
    metrics: Lenient<Vec<LenientObject<MetricDefinition>>>,
}

/// One entry of `metrics`: a metric with its `metricStat`, or a math expression without one.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct MetricDefinition {
    #[serde(default)]
    metric_stat: LenientObject<MetricStat>,
}

#[derive(Deserialize)]
struct MetricStat {
    #[serde(default)]
    metric: LenientObject<Metric>,
}

#[derive(Deserialize)]
struct Metric {
    #[serde(default)]
    namespace: Lenient<String>,
    #[serde(default)]
    name: Lenient<String>,
    #[serde(default)]
    dimensions: Lenient<BTreeMap<String, Lenient<String>>>,
}

impl Configuration {
    /// The metric of each entry of `metrics` that is in AWS/SageMaker, in order; `None` for an
    /// entry that is an expression, in another namespace or of another shape.
    fn sagemaker_metrics(&self) -> impl Iterator<Item = Option<&Metric>> {
        self.metrics
            .get()
            .map(Vec::as_slice)
            .unwrap_or_default()
            .iter()
            .map(|entry| {
                let metric = entry.get()?.metric_stat.get()?.metric.get()?;
                (metric.namespace.get().map(String::as_str) == Some(SAGEMAKER_NAMESPACE))
                    .then_some(metric)
            })
    }
}

/// The AWS/SageMaker dimensions of the alarm's metrics. A metric alarm has one `metricStat`; a
/// metric-math alarm has one per input (and expressions without any); a composite alarm has none.
/// A dimension whose inputs disagree is left out rather than guessed.
fn dimensions(config: &Configuration) -> BTreeMap<String, String> {
    let mut out: BTreeMap<String, String> = BTreeMap::new();
    let mut conflicting: Vec<String> = Vec::new();
    for metric in config.sagemaker_metrics().flatten() {
        let Some(dims) = metric.dimensions.get() else {
            continue;
        };
        for (k, v) in dims {
            let Some(v) = v.get() else { continue };
            match out.get(k) {
                Some(existing) if existing != v => conflicting.push(k.clone()),
                _ => {
                    out.insert(k.clone(), v.clone());
                }
            }
        }
    }
    for k in conflicting {
        out.remove(&k);
    }
    out
}

/// The AWS/SageMaker metric of a metric alarm: its configuration has exactly one metric, a
/// `metricStat` in that namespace. Metric-math alarms (several inputs, or an expression) and
/// composite alarms (no metrics) have none.
fn metric_name(config: &Configuration) -> Option<String> {
    let mut metrics = config.sagemaker_metrics();
    let (Some(only), None) = (metrics.next(), metrics.next()) else {
        return None;
    };
    only?.name.get().filter(|n| !n.trim().is_empty()).cloned()
}

impl StateData {
    /// The state and the instant it was entered, when the event says; `at` is the field path.
    fn read(self, at: &str) -> Result<StateAt, EventError> {
        let value = self.value.ok_or_else(|| {
            EventError::malformed(KIND, format!("{at}.value"), "is missing or not a string")
        })?;
        let state = value
            .parse::<AlarmState>()
            .map_err(|e| EventError::malformed(KIND, format!("{at}.value"), e))?;
        let entered = match self.timestamp {
            None => None,
            Some(text) => Some(parse_time(&text).ok_or_else(|| {
                EventError::malformed(
                    KIND,
                    format!("{at}.timestamp"),
                    format!(
                        "{:?} is not a timestamp (expected e.g. 2026-03-14T09:42:31.412+0000)",
                        cut(&text)
                    ),
                )
            })?),
        };
        Ok((state, entered))
    }
}

/// An alarm state and the instant it was entered, when the event says.
type StateAt = (AlarmState, Option<DateTime<Utc>>);

/// An event's alarm once read and checked, before the envelope around it is.
struct Alarm {
    name: String,
    state: AlarmState,
    state_at: Option<DateTime<Utc>>,
    previous: Option<AlarmState>,
    dimensions: BTreeMap<String, String>,
    metric_name: Option<String>,
    reading: Option<AlarmReading>,
}

/// What the envelope around the alarm says.
struct Origin {
    arn: Option<String>,
    time: Option<DateTime<Utc>>,
    event_id: Option<String>,
    account: Option<String>,
    region: Option<String>,
}

impl Alarm {
    /// Reads the alarm at `event[field]` (`detail` or `alarmData`).
    fn read(event: &Value, field: &str) -> Result<Self, EventError> {
        let data: AlarmData = lenient::read(KIND, field, lenient::object_at(KIND, event, field)?)?;
        let name = data
            .alarm_name
            .filter(|n| !n.trim().is_empty())
            .ok_or_else(|| {
                EventError::malformed(KIND, format!("{field}.alarmName"), "is missing or empty")
            })?;
        let state_data = data
            .state
            .ok_or_else(|| EventError::malformed(KIND, format!("{field}.state"), "is missing"))?;
        let reading = reading(state_data.reason_data.get().map(String::as_str));
        let (state, state_at) = state_data.read(&format!("{field}.state"))?;
        let previous = match data.previous_state {
            Some(s) => Some(s.read(&format!("{field}.previousState"))?.0),
            None => None,
        };
        let config = data.configuration.into_inner().unwrap_or_default();
        Ok(Self {
            name,
            state,
            state_at,
            previous,
            dimensions: dimensions(&config),
            metric_name: metric_name(&config),
            reading,
        })
    }

    fn into_transition(self, field: &str, origin: Origin) -> Result<AlarmTransition, EventError> {
        // The state's own timestamp orders transitions; the envelope time is the fallback.
        let at = self.state_at.or(origin.time).ok_or_else(|| {
            EventError::malformed(
                KIND,
                format!("{field}.state.timestamp"),
                "is missing and the envelope has no `time`",
            )
        })?;
        let origin_field = |value: Option<String>| {
            value
                .filter(|s| !s.is_empty())
                .map(|s| cut_to(&s, MAX_ORIGIN).into_owned())
        };
        let t = AlarmTransition {
            alarm_name: self.name.into(),
            alarm_arn: origin.arn,
            state: self.state,
            previous: self.previous,
            at,
            dimensions: self.dimensions,
            metric_name: self.metric_name,
            event_id: origin.event_id,
            // Checked against the function's own by the handler (`alarms::Home`).
            account: origin_field(origin.account),
            region: origin_field(origin.region),
            reading: self.reading,
        };
        within_limits(&t, field)?;
        Ok(t)
    }
}

/// Account ids are 12 digits and region names short; a longer value is cut (it is only ever
/// compared with the function's own, and quoted).
const MAX_ORIGIN: usize = 64;

/// CloudWatch's own limits: alarm and metric names 1-255 characters, dimension names 255 and
/// values 1024; an alarm ARN is its name plus at most ~100 characters; EventBridge ids are UUIDs.
/// Anything longer is not from CloudWatch, and would bloat the state it is remembered in.
const MAX_DIMENSION_VALUE: usize = 1024;
const MAX_EVENT_ID: usize = 256;

fn within_limits(t: &AlarmTransition, field_prefix: &str) -> Result<(), EventError> {
    let too_long = |field: String, text: &str, limit: usize| {
        (text.chars().count() > limit).then(|| {
            EventError::malformed(
                KIND,
                field,
                format!(
                    "{:?} is longer than CloudWatch allows ({limit} characters)",
                    cut(text)
                ),
            )
        })
    };
    let checks = [
        too_long(
            format!("{field_prefix}.alarmName"),
            &t.alarm_name,
            MAX_ALARM_NAME,
        ),
        t.alarm_arn
            .as_deref()
            .and_then(|a| too_long("alarm ARN".into(), a, MAX_ALARM_ARN)),
        t.metric_name.as_deref().and_then(|m| {
            too_long(
                format!("{field_prefix}.configuration.metrics.metricStat.metric.name"),
                m,
                MAX_ALARM_NAME,
            )
        }),
        t.event_id
            .as_deref()
            .and_then(|i| too_long("id".into(), i, MAX_EVENT_ID)),
    ];
    if let Some(e) = checks.into_iter().flatten().next() {
        return Err(e);
    }
    for (k, v) in &t.dimensions {
        let field = format!("{field_prefix}.configuration.metrics.metricStat.metric.dimensions");
        if let Some(e) = too_long(field.clone(), k, MAX_ALARM_NAME)
            .or_else(|| too_long(field, v, MAX_DIMENSION_VALUE))
        {
            return Err(e);
        }
    }
    Ok(())
}

/// `CloudWatch Alarm State Change` from EventBridge.
pub fn parse_eventbridge(event: &Value) -> Result<AlarmTransition, EventError> {
    // The alarm first: what is wrong with it says more than what is wrong with its envelope.
    let alarm = Alarm::read(event, "detail")?;
    let envelope = envelope::eventbridge(KIND, event)?;
    let arn = envelope
        .resources
        .unwrap_or_default()
        .into_iter()
        .find(|a| a.contains(":alarm:"));
    alarm.into_transition(
        "detail",
        Origin {
            arn,
            time: envelope.time,
            event_id: envelope.id.filter(|s| !s.is_empty()),
            account: envelope.account,
            region: envelope.region,
        },
    )
}

/// The direct Lambda alarm action's envelope: everything around `alarmData`.
///
/// headroom's own type, not `aws_lambda_events`' `CloudWatchAlarm<C, R>`: that holds the alarm
/// as the crate's `CloudWatchAlarmData`, whose state does not fit (see [`AlarmData`]). A field of
/// another type counts as absent.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct DirectAction {
    #[serde(default)]
    alarm_arn: Lenient<String>,
    #[serde(default)]
    account_id: Lenient<String>,
    #[serde(default)]
    region: Lenient<String>,
    #[serde(default)]
    time: Lenient<String>,
}

/// The direct Lambda alarm action (no event id: the idempotency key falls back to the alarm ARN
/// and the state timestamp).
pub fn parse_direct(event: &Value) -> Result<AlarmTransition, EventError> {
    let alarm = Alarm::read(event, "alarmData")?;
    let action: DirectAction = lenient::read(KIND, "", event)?;
    alarm.into_transition(
        "alarmData",
        Origin {
            arn: action.alarm_arn.non_empty().map(str::to_owned),
            time: action.time.get().and_then(|t| parse_time(t)),
            event_id: None,
            account: action.account_id.into_inner(),
            region: action.region.into_inner(),
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn cloudwatch_timestamps_parse_with_and_without_offset_colon() {
        let a = parse_time("2026-03-14T09:42:31.412+0000").unwrap();
        let b = parse_time("2026-03-14T09:42:31.412Z").unwrap();
        let c = parse_time("2026-03-14T10:42:31.412+01:00").unwrap();
        assert_eq!(a, b);
        assert_eq!(a, c);
        assert_eq!(
            parse_time("2026-03-14T09:42:31+0000").unwrap().timestamp(),
            a.timestamp()
        );
        assert!(parse_time("yesterday").is_none());
    }

    #[test]
    fn a_direct_action_without_state_names_the_field() {
        let err =
            parse_direct(&json!({"alarmArn": "arn", "alarmData": {"alarmName": "x"}})).unwrap_err();
        assert!(err.to_string().contains("alarmData.state"), "{err}");
        let err =
            parse_direct(&json!({"alarmData": {"alarmName": "x", "state": {"value": "RED"}}}))
                .unwrap_err();
        assert!(err.to_string().contains("alarmData.state.value"), "{err}");
        assert!(err.to_string().contains("RED"), "{err}");
    }

    fn fixture(name: &str) -> Value {
        crate::test_fixtures::fixture(&format!("alarms/{name}"))
    }

    fn alarm(name: &str) -> AlarmTransition {
        match crate::parse_trigger(&fixture(name)) {
            Ok(crate::Trigger::Alarm(t)) => t,
            other => panic!("{name}: expected an alarm transition, got {other:?}"),
        }
    }

    fn time(s: &str) -> DateTime<Utc> {
        parse_time(s).unwrap_or_else(|| panic!("bad test time {s}"))
    }

    #[test]
    fn every_alarm_fixture_parses_into_the_transition_it_describes() {
        // (fixture, alarm name, state, previous, state timestamp, event id?, SageMaker dimensions)
        type Row = (
            &'static str,
            &'static str,
            AlarmState,
            AlarmState,
            &'static str,
            bool,
            &'static [(&'static str, &'static str)],
        );
        let table: [Row; 9] = [
            (
                "eventbridge-burst-alarm.json",
                "headroom-chat-prod-burst",
                AlarmState::Alarm,
                AlarmState::Ok,
                "2026-03-14T09:42:31.412+0000",
                true,
                &[("EndpointName", "chat-prod"), ("VariantName", "AllTraffic")],
            ),
            (
                "eventbridge-burst-ok.json",
                "headroom-chat-prod-burst",
                AlarmState::Ok,
                AlarmState::Alarm,
                "2026-03-14T10:17:31.887+0000",
                true,
                &[("EndpointName", "chat-prod"), ("VariantName", "AllTraffic")],
            ),
            // Metric math: the dimensions come from the expression's inputs.
            (
                "eventbridge-metric-math-alarm.json",
                "headroom-chat-prod-burst-math",
                AlarmState::Alarm,
                AlarmState::Ok,
                "2026-03-14T09:44:04.958+0000",
                true,
                &[("EndpointName", "chat-prod"), ("VariantName", "AllTraffic")],
            ),
            // Composite: no metrics, no dimensions, no suppressor fields.
            (
                "eventbridge-composite-alarm.json",
                "headroom-chat-prod-burst-composite",
                AlarmState::Alarm,
                AlarmState::Ok,
                "2026-03-14T09:42:39.604+0000",
                true,
                &[],
            ),
            (
                "direct-action-burst-alarm.json",
                "headroom-chat-prod-burst",
                AlarmState::Alarm,
                AlarmState::Ok,
                "2026-03-14T09:42:31.412+0000",
                false,
                &[("EndpointName", "chat-prod"), ("VariantName", "AllTraffic")],
            ),
            (
                "eventbridge-backlog-alarm.json",
                "headroom-summarize-async-backlog",
                AlarmState::Alarm,
                AlarmState::Ok,
                "2026-03-14T06:03:00.820+0000",
                true,
                &[("EndpointName", "summarize-async")],
            ),
            (
                "direct-action-backlog-ok.json",
                "headroom-summarize-async-backlog",
                AlarmState::Ok,
                AlarmState::Alarm,
                "2026-03-14T06:14:00.640+0000",
                false,
                &[("EndpointName", "summarize-async")],
            ),
            (
                "eventbridge-ic-no-capacity-alarm.json",
                "headroom-llama-ic-no-capacity",
                AlarmState::Alarm,
                AlarmState::InsufficientData,
                "2026-03-14T11:20:01.738+0000",
                true,
                &[("InferenceComponentName", "llama-8b-ic")],
            ),
            // Not SageMaker: the dimensions are not kept.
            (
                "eventbridge-unknown-alarm.json",
                "billing-estimated-charges-high",
                AlarmState::Alarm,
                AlarmState::Ok,
                "2026-03-14T09:50:10.208+0000",
                true,
                &[],
            ),
        ];
        for (file, name, state, previous, at, has_id, dims) in table {
            let t = alarm(file);
            assert_eq!(t.alarm_name, name, "{file}");
            assert_eq!((t.state, t.previous), (state, Some(previous)), "{file}");
            assert_eq!(t.at, time(at), "{file}");
            assert_eq!(t.event_id.is_some(), has_id, "{file}");
            let arn = t.alarm_arn.unwrap_or_else(|| panic!("{file}: no ARN"));
            assert!(arn.ends_with(&format!(":alarm:{name}")), "{file}: {arn}");
            let want: BTreeMap<String, String> = dims
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect();
            assert_eq!(t.dimensions, want, "{file}");
        }
    }

    #[test]
    fn the_newest_datapoint_and_threshold_are_read_from_reason_data() {
        let reading = |file: &str| alarm(file).reading.map(|r| (r.newest(), r.threshold()));
        // The evaluated datapoint with the latest timestamp (09:40, 41.5), not the first listed.
        assert_eq!(reading("eventbridge-burst-alarm.json"), Some((41.5, 30.0)));
        assert_eq!(
            reading("direct-action-burst-alarm.json"),
            Some((41.5, 30.0))
        );
        assert_eq!(reading("eventbridge-burst-ok.json"), Some((14.0, 30.0)));
        // Only recentDatapoints (oldest first): the last one.
        let mut e = fixture("eventbridge-burst-alarm.json");
        e["detail"]["state"]["reasonData"] =
            json!("{\"recentDatapoints\":[38.0,41.5,39.0],\"threshold\":30.0}");
        assert_eq!(
            parse_eventbridge(&e).unwrap().reading.map(|r| r.newest()),
            Some(39.0)
        );
        // No datapoint, a composite alarm's triggeringAlarms: nothing to read.
        assert_eq!(reading("eventbridge-burst-insufficient-data.json"), None);
        assert_eq!(reading("eventbridge-composite-alarm.json"), None);
        // Unreadable reasonData never refuses the event: the transition comes without a reading.
        for bad in [
            json!("not json"),
            json!(42),
            json!("{\"threshold\":\"high\"}"),
            json!("{\"recentDatapoints\":[1e999],\"threshold\":30}"),
        ] {
            let mut e = fixture("eventbridge-burst-alarm.json");
            e["detail"]["state"]["reasonData"] = bad.clone();
            let t = parse_eventbridge(&e).unwrap_or_else(|err| panic!("{bad}: {err}"));
            assert_eq!(t.reading, None, "{bad}");
            assert_eq!(t.state, AlarmState::Alarm);
        }
    }

    #[test]
    fn the_state_timestamp_wins_over_the_envelope_time_which_is_the_fallback() {
        let mut e = fixture("eventbridge-burst-alarm.json");
        assert_eq!(
            parse_eventbridge(&e).unwrap().at,
            time("2026-03-14T09:42:31.412Z")
        );
        e["detail"]["state"]
            .as_object_mut()
            .unwrap()
            .remove("timestamp");
        assert_eq!(
            parse_eventbridge(&e).unwrap().at,
            time("2026-03-14T09:42:32Z")
        );
        e.as_object_mut().unwrap().remove("time");
        let err = parse_eventbridge(&e).unwrap_err().to_string();
        assert!(err.contains("detail.state.timestamp"), "{err}");
    }

    #[test]
    fn unknown_fields_and_odd_shapes_are_tolerated_but_bad_values_are_named() {
        let mut e = fixture("eventbridge-burst-alarm.json");
        e["detail"]["evaluationState"] = json!("PARTIAL_DATA");
        e["detail"]["configuration"]["metrics"] = json!("not a list");
        e["detail"]["state"]["reasonData"] = json!({"already": "an object"});
        e["brandNewTopLevel"] = json!([1, 2, 3]);
        let t = parse_eventbridge(&e).unwrap();
        assert!(t.dimensions.is_empty());
        e["detail"]["state"]["timestamp"] = json!("14/03/2026 09:42");
        let err = parse_eventbridge(&e).unwrap_err().to_string();
        assert!(
            err.contains("detail.state.timestamp") && err.contains("14/03/2026"),
            "{err}"
        );
        let err = parse_eventbridge(
            &json!({"detail-type": DETAIL_TYPE, "detail": {"state": {"value": "OK"}}}),
        )
        .unwrap_err();
        assert!(err.to_string().contains("detail.alarmName"), "{err}");
        let err = parse_eventbridge(&json!({"detail-type": DETAIL_TYPE})).unwrap_err();
        assert!(err.to_string().contains("`detail`"), "{err}");
    }

    #[test]
    fn the_alarm_is_checked_before_its_envelope() {
        // No `source` either, but the alarm's own problem is the one worth reading.
        let event = json!({"detail-type": DETAIL_TYPE, "detail": {}});
        let err = parse_eventbridge(&event).unwrap_err().to_string();
        assert!(err.contains("detail.alarmName"), "{err}");
        let mut event = fixture("eventbridge-burst-alarm.json");
        event.as_object_mut().unwrap().remove("source");
        let err = parse_eventbridge(&event).unwrap_err().to_string();
        assert!(err.contains("missing field `source`"), "{err}");
    }

    #[test]
    fn metric_alarms_name_their_sagemaker_metric_and_others_none() {
        let table = [
            (
                "eventbridge-burst-alarm.json",
                Some("InvocationsPerInstance"),
            ),
            (
                "direct-action-burst-alarm.json",
                Some("InvocationsPerInstance"),
            ),
            (
                "eventbridge-backlog-alarm.json",
                Some("HasBacklogWithoutCapacity"),
            ),
            (
                "direct-action-backlog-ok.json",
                Some("HasBacklogWithoutCapacity"),
            ),
            (
                "eventbridge-ic-no-capacity-alarm.json",
                Some("NoCapacityInvocationFailures"),
            ),
            ("eventbridge-metric-math-alarm.json", None),
            ("eventbridge-composite-alarm.json", None),
            // A metric alarm, but not in AWS/SageMaker.
            ("eventbridge-unknown-alarm.json", None),
        ];
        for (file, want) in table {
            assert_eq!(alarm(file).metric_name.as_deref(), want, "{file}");
        }
        // One input with an expression beside it is still metric math.
        let mut e = fixture("eventbridge-burst-alarm.json");
        e["detail"]["configuration"]["metrics"]
            .as_array_mut()
            .unwrap()
            .push(json!({"id": "e1", "expression": "m1*2", "returnData": true}));
        assert_eq!(parse_eventbridge(&e).unwrap().metric_name, None);
    }

    #[test]
    fn conflicting_math_inputs_drop_the_dimension() {
        let data = json!({"configuration": {"metrics": [
            {"id": "e1", "expression": "m1+m2", "returnData": true},
            {"id": "m1", "metricStat": {"metric": {"namespace": "AWS/SageMaker", "name": "Invocations",
                "dimensions": {"EndpointName": "a", "VariantName": "v"}}}},
            {"id": "m2", "metricStat": {"metric": {"namespace": "AWS/SageMaker", "name": "Invocations",
                "dimensions": {"EndpointName": "a", "VariantName": "w"}}}},
            {"id": "m3", "metricStat": {"metric": {"namespace": "Custom", "name": "x",
                "dimensions": {"EndpointName": "other"}}}}
        ]}});
        let data: AlarmData = lenient::read(KIND, "detail", &data).unwrap();
        let dims = dimensions(&data.configuration.into_inner().unwrap());
        assert_eq!(dims.get("EndpointName").map(String::as_str), Some("a"));
        assert!(!dims.contains_key("VariantName"));
    }

    #[test]
    fn the_envelope_names_its_account_and_region() {
        let t = parse_eventbridge(&fixture("eventbridge-burst-alarm.json")).unwrap();
        assert_eq!(t.account.as_deref(), Some("123456789012"));
        assert_eq!(t.region.as_deref(), Some("us-east-1"));
        let t = parse_direct(&fixture("direct-action-burst-alarm.json")).unwrap();
        assert_eq!(t.account.as_deref(), Some("123456789012"));
        assert_eq!(t.region.as_deref(), Some("us-east-1"));
    }

    #[test]
    fn names_longer_than_cloudwatch_allows_are_refused_and_not_quoted_whole() {
        let huge = "b".repeat(5 * 1024 * 1024);
        let mut ev = fixture("eventbridge-burst-alarm.json");
        ev["detail"]["alarmName"] = huge.clone().into();
        let err = parse_eventbridge(&ev).unwrap_err().to_string();
        assert!(err.contains("detail.alarmName"), "{}", cut(&err));
        assert!(err.contains("255 characters"), "{}", cut(&err));
        assert!(err.len() < 1_000, "the message quotes {} bytes", err.len());
        // 255 characters is still a name.
        ev["detail"]["alarmName"] = "b".repeat(255).into();
        assert!(parse_eventbridge(&ev).is_ok());
        // A huge event id would be remembered in the state as an idempotency key.
        let mut ev = fixture("eventbridge-burst-alarm.json");
        ev["id"] = "i".repeat(10_000).into();
        assert!(parse_eventbridge(&ev).is_err());
        // A huge bad state value is not echoed whole either.
        let mut ev = fixture("eventbridge-burst-alarm.json");
        ev["detail"]["state"]["value"] = huge.into();
        let err = parse_eventbridge(&ev).unwrap_err().to_string();
        assert!(err.len() < 1_000, "the message quotes {} bytes", err.len());
    }
}
