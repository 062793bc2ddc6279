//! The EventBridge envelope, read with `aws_lambda_events`' own type, and the envelope time of
//! the events whose envelope is headroom's.

use aws_lambda_events::eventbridge::EventBridgeEvent;
use chrono::{DateTime, Utc};
use serde::de::{Deserializer, IgnoredAny, Visitor};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::lenient::read;
use crate::EventError;

/// The EventBridge envelope (`version, id, detail-type, source, account, time, region,
/// resources, detail`) as EventBridge sends it: `source` and `detail-type` present, `time` RFC
/// 3339. Its `detail` is left to the parser that knows it, which reads it first (see
/// [`Unread`]).
pub(crate) type EventBridgeEnvelope = EventBridgeEvent<Unread>;

/// Reads the EventBridge envelope of `event`, for an error about a `kind` of event.
pub(crate) fn eventbridge(
    kind: &'static str,
    event: &Value,
) -> Result<EventBridgeEnvelope, EventError> {
    read(kind, "", event).map_err(|e| match e {
        EventError::Malformed {
            kind,
            field,
            problem,
        } => {
            // chrono's own words ("input contains invalid characters") do not say what it wants.
            let expected = if field == "time" {
                "EventBridge sends an RFC 3339 time such as 2026-03-14T09:42:32Z"
            } else {
                "see events/ for EventBridge envelopes"
            };
            EventError::Malformed {
                kind,
                field,
                problem: format!("{problem} ({expected})"),
            }
        }
        other => other,
    })
}

/// An envelope's `detail`, not read with the envelope: each parser reads its detail itself,
/// before the envelope, so that what is wrong with the alarm is said before what is wrong with
/// the envelope around it. Any JSON is accepted, and a missing `detail` too: a scheduled event
/// has `{}`, EventBridge Scheduler's the string `"{}"`, and the tick reads neither.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub(crate) struct Unread;

impl<'de> Deserialize<'de> for Unread {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct UnreadVisitor;
        impl<'de> Visitor<'de> for UnreadVisitor {
            type Value = Unread;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_none<E>(self) -> Result<Unread, E> {
                Ok(Unread)
            }
            fn visit_unit<E>(self) -> Result<Unread, E> {
                Ok(Unread)
            }
            fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Unread, D::Error> {
                IgnoredAny::deserialize(d).map(|_| Unread)
            }
        }
        // As an option, so that a missing field reaches `visit_none` instead of failing.
        deserializer.deserialize_option(UnreadVisitor)
    }
}

/// Reads the envelope's `time`: ISO 8601 normally, epoch milliseconds (a number, or a number in
/// a string) in the SageMaker developer guide's example.
pub fn envelope_time(event: &Value) -> Option<DateTime<Utc>> {
    event.get("time").and_then(instant)
}

/// An RFC 3339 instant, or epoch milliseconds as an integer or a string.
pub(crate) fn instant(value: &Value) -> Option<DateTime<Utc>> {
    match value {
        Value::String(s) => DateTime::parse_from_rfc3339(s)
            .map(|t| t.with_timezone(&Utc))
            .ok()
            .or_else(|| {
                s.parse::<i64>()
                    .ok()
                    .and_then(DateTime::from_timestamp_millis)
            }),
        Value::Number(n) => n.as_i64().and_then(DateTime::from_timestamp_millis),
        _ => None,
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // a test that cannot unwrap has failed
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn unread_accepts_any_detail_and_none() {
        for detail in [
            json!({}),
            json!("{}"),
            json!(null),
            json!([1, {"a": 2}]),
            json!(3),
        ] {
            let event =
                json!({"detail-type": "Scheduled Event", "source": "aws.events", "detail": detail});
            assert!(eventbridge("tick", &event).is_ok(), "{event}");
        }
        let event = json!({"detail-type": "Scheduled Event", "source": "aws.events"});
        assert!(eventbridge("tick", &event).is_ok());
    }

    #[test]
    fn envelope_errors_name_the_field_and_say_where_it_is() {
        let err = eventbridge("tick", &json!({"detail-type": "Scheduled Event"}))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("missing field `source`") && err.contains("events/"),
            "{err}"
        );
        let err = eventbridge(
            "tick",
            &json!({"detail-type": "Scheduled Event", "source": "aws.events", "time": "x"}),
        )
        .unwrap_err()
        .to_string();
        assert!(
            err.contains("field `time`") && err.contains("RFC 3339"),
            "{err}"
        );
        let err = eventbridge(
            "tick",
            &json!({"detail-type": "Scheduled Event", "source": "aws.events", "resources": ["a", 5]}),
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("field `resources[1]`"), "{err}");
    }
}
