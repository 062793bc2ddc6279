//! What serde accepts of the JSON that serde_json cannot read into a `Value`, and what
//! `RawEvent` makes of it.

use serde::de::IgnoredAny;

use super::*;
use crate::{respond, Caller};

/// JSON that Lambda delivers and serde_json cannot read into a `Value`, each with its problem.
pub(super) fn unreadable() -> [(&'static str, String, Problem); 3] {
    [
        (
            "nested 200 deep",
            format!("{}{}", "[".repeat(200), "]".repeat(200)),
            Problem::TooDeeplyNested,
        ),
        (
            "a number beyond f64",
            r#"{"detail": {"n": 1e309}}"#.to_owned(),
            Problem::NumberOutOfRange,
        ),
        (
            "a lone surrogate",
            r#"{"detail": {"s": "\ud800"}}"#.to_owned(),
            Problem::InvalidString,
        ),
    ]
}

/// An ordinary event (events/schedule/tick-rule.json).
pub(super) const NORMAL: &str = r#"{"version": "0", "id": "53dc4d37-cffa-4f76-80c9-8b7d4a4d2eaa",
    "detail-type": "Scheduled Event", "source": "aws.events", "account": "123456789012",
    "time": "2026-12-03T16:35:00Z", "region": "us-east-1",
    "resources": ["arn:aws:events:us-east-1:123456789012:rule/headroom-tick"], "detail": {}}"#;

#[test]
fn serde_json_cannot_read_them_into_a_value() {
    for (what, json, _) in unreadable() {
        assert!(
            serde_json::from_slice::<Value>(json.as_bytes()).is_err(),
            "{what}: serde_json reads it now, and RawEvent is no longer needed for it"
        );
    }
}

#[test]
fn ignored_any_and_raw_value_accept_them_all() {
    // Both skim the text without building it: no depth limit, no number parsed, no escape
    // decoded. Only the raw value keeps the text to read afterwards.
    for (what, json, _) in unreadable() {
        let bytes = json.as_bytes();
        assert!(
            serde_json::from_slice::<IgnoredAny>(bytes).is_ok(),
            "{what}"
        );
        let raw = serde_json::from_slice::<Box<RawValue>>(bytes)
            .unwrap_or_else(|e| panic!("{what}: {e}"));
        assert_eq!(raw.get(), json, "{what}");
    }
}

#[test]
fn a_raw_event_reads_them_and_says_what_is_wrong_in_one_bounded_line() {
    for (what, json, problem) in unreadable() {
        let raw: RawEvent =
            serde_json::from_slice(json.as_bytes()).unwrap_or_else(|e| panic!("{what}: {e}"));
        let err = raw.into_value().expect_err(what);
        assert_eq!(err.problem(), problem, "{what}");
        assert!(!err.is_retryable(), "{what}");
        let message = err.to_string();
        assert!(
            message.starts_with("unreadable event (line 1, column "),
            "{what}: {message}"
        );
        assert!(!message.contains('\n'), "{what}: {message}");
        assert!(message.len() <= 1000, "{what}: {} bytes", message.len());
    }
}

#[test]
fn the_message_names_each_problem() {
    let messages: Vec<String> = unreadable()
        .into_iter()
        .map(|(_, _, problem)| problem.to_string())
        .collect();
    assert!(
        messages[0].contains("more than 128 levels deep"),
        "{}",
        messages[0]
    );
    assert!(
        messages[1].contains("number is out of range"),
        "{}",
        messages[1]
    );
    assert!(messages[2].contains("string is invalid"), "{}", messages[2]);
}

#[test]
fn other_surrogate_mistakes_are_invalid_strings_and_other_errors_other() {
    for json in [r#""\udc00""#, r#""\ud800\u0041""#, r#""\ud800x""#] {
        let raw: RawEvent = serde_json::from_str(json).unwrap_or_else(|e| panic!("{json}: {e}"));
        let err = raw.into_value().expect_err(json);
        assert_eq!(err.problem(), Problem::InvalidString, "{json}: {err}");
    }
    let not_json = serde_json::from_str::<Value>("[1,]").expect_err("a trailing comma");
    assert_eq!(Problem::of(&not_json), Problem::Other);
}

#[test]
fn a_normal_event_reads_into_the_value_serde_json_reads() {
    let raw: RawEvent = serde_json::from_str(NORMAL).expect("raw");
    let expected: Value = serde_json::from_str(NORMAL).expect("value");
    assert_eq!(raw.into_value().expect("readable"), expected);
}

#[test]
fn an_unreadable_event_is_answered_rejected_not_failed() {
    for (what, json, _) in unreadable() {
        let raw: RawEvent = serde_json::from_str(&json).expect(what);
        let answer = respond::<(), _>(raw.into_value().map(|_| ()), "r1", Caller::Asynchronous)
            .unwrap_or_else(|e| panic!("{what}: the invocation failed: {e}"));
        assert_eq!(answer["handled"], "rejected", "{what}");
        assert!(
            answer["error"]
                .as_str()
                .is_some_and(|e| e.starts_with("unreadable event (")),
            "{what}: {answer}"
        );
    }
}
