//! What the three Lambda functions share at their edge: structured JSON logs, and one error
//! policy (style guide: match the error class to the trigger's retry).
//!
//! - Retryable errors (throttling, timeouts, lost write races) fail the invocation, so Lambda
//!   retries it and, in the end, its failure destination keeps the event.
//! - Permanent errors (bad input, an unmanaged target, access denied) cannot be helped by a retry:
//!   an asynchronous event is answered as rejected and logged with its reason; a direct caller
//!   (a deployment pipeline waiting for the answer) gets the error as the invocation's failure.

pub mod edge;
pub mod payload;

pub use edge::{misrouted, parse, EdgeError};
pub use payload::{RawEvent, UnreadableEvent};

use headroom_core::ports::PortError;
use serde::Serialize;
use serde_json::{json, Value};

/// JSON logs, one object per line, level from `RUST_LOG` (default `info`).
pub fn init_logging() {
    json_logs(std::io::stdout)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "info".into()),
        )
        .init();
}

/// The log format: one JSON object per line with the event's fields at the top level
/// (`action`, `target_id`, `min` ..., not nested under `fields`), so a Logs Insights query says
/// `filter action = "register"`. The README's "Logs" section lists the fields.
pub fn json_logs<W>(
    writer: W,
) -> tracing_subscriber::fmt::SubscriberBuilder<
    tracing_subscriber::fmt::format::JsonFields,
    tracing_subscriber::fmt::format::Format<tracing_subscriber::fmt::format::Json>,
    tracing::level_filters::LevelFilter,
    W,
>
where
    W: for<'w> tracing_subscriber::fmt::MakeWriter<'w> + Send + Sync + 'static,
{
    tracing_subscriber::fmt()
        .json()
        .flatten_event(true)
        .with_current_span(false)
        .with_span_list(false)
        .with_target(false)
        .with_writer(writer)
}

/// Call first in `main`, before any thread starts. Lambda sets `AWS_LAMBDA_MAX_CONCURRENCY=1`
/// on ordinary functions, and `lambda_runtime::run` then warns on every cold start that its
/// `concurrency-tokio` feature is off, although one invocation at a time is exactly what it
/// does and what headroom wants. A value of 1 (or none) asks for nothing else, so it is removed;
/// a larger one (Lambda Managed Instances) is kept, and the warning with it, because then the
/// warning is true.
pub fn prepare_runtime() {
    const VAR: &str = "AWS_LAMBDA_MAX_CONCURRENCY";
    if std::env::var(VAR)
        .ok()
        .and_then(|v| v.trim().parse::<u32>().ok())
        .is_some_and(|n| n <= 1)
    {
        std::env::remove_var(VAR);
    }
}

/// An error that knows whether trying again can help.
pub trait Classified: std::error::Error + Send + Sync + 'static {
    fn is_retryable(&self) -> bool;
}

/// How the event reached the function.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Caller {
    /// EventBridge, EventBridge Scheduler or a CloudWatch alarm action: nobody reads the answer.
    Asynchronous,
    /// A synchronous invoke whose caller reads the answer (the pipeline hook).
    Direct,
}

/// The AWS failure behind an error, if any: the first [`PortError`] in its source chain.
pub fn port_error_of<'a>(e: &'a (dyn std::error::Error + 'static)) -> Option<&'a PortError> {
    let mut next = Some(e);
    while let Some(e) = next {
        if let Some(port) = e.downcast_ref::<PortError>() {
            return Some(port);
        }
        next = e.source();
    }
    None
}

/// Turns a handler's result into the invocation's answer under the error policy above. The log
/// line and the answer carry the AWS error code as a field of its own (`error_code`), beside the
/// one-line message that already names it; a retryable error's message is what the failure
/// destination keeps (Lambda's `errorMessage`).
pub fn respond<O: Serialize, E: Classified>(
    result: Result<O, E>,
    request_id: &str,
    caller: Caller,
) -> Result<Value, lambda_runtime::Error> {
    match result {
        Ok(outcome) => Ok(serde_json::to_value(outcome)?),
        Err(e) => {
            let port = port_error_of(&e);
            let error_code = port.and_then(|p| p.code()).unwrap_or("");
            let operation = port.map_or("", |p| p.operation.as_str());
            if e.is_retryable() {
                tracing::warn!(error = %e, error_code, operation, request_id, retryable = true, "invocation failed; Lambda will retry");
                return Err(lambda_runtime::Error::from(e));
            }
            tracing::error!(error = %e, error_code, operation, request_id, retryable = false, "event rejected");
            match caller {
                Caller::Direct => Err(lambda_runtime::Error::from(e)),
                Caller::Asynchronous => {
                    let mut answer = json!({ "handled": "rejected", "error": e.to_string() });
                    if let Some(port) = port {
                        answer["error_code"] = json!(port.code());
                        answer["error_kind"] = json!(port.kind);
                    }
                    Ok(answer)
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug)]
    struct Failure(bool);
    impl std::fmt::Display for Failure {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            write!(f, "failure (retryable: {})", self.0)
        }
    }
    impl std::error::Error for Failure {}
    impl Classified for Failure {
        fn is_retryable(&self) -> bool {
            self.0
        }
    }

    #[test]
    fn retryable_errors_fail_the_invocation_and_permanent_ones_are_answered() {
        assert!(respond::<(), _>(Err(Failure(true)), "r1", Caller::Asynchronous).is_err());
        let answered = respond::<(), _>(Err(Failure(false)), "r2", Caller::Asynchronous).unwrap();
        assert_eq!(answered["handled"], "rejected");
        assert!(answered["error"]
            .as_str()
            .unwrap()
            .contains("retryable: false"));
        assert!(
            respond::<(), _>(Err(Failure(false)), "r3", Caller::Direct).is_err(),
            "a direct caller sees the failure"
        );
        assert_eq!(
            respond::<_, Failure>(Ok(json!({"x": 1})), "r4", Caller::Direct).unwrap()["x"],
            1
        );
    }

    /// What a test's subscriber writes, kept to be read back.
    #[derive(Clone, Default)]
    struct Buffer(std::sync::Arc<std::sync::Mutex<Vec<u8>>>);
    impl std::io::Write for Buffer {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    /// The lines `respond` logs for `error`, parsed.
    fn lines_logged_for(error: Failure) -> Vec<Value> {
        let buffer = Buffer::default();
        let writer = buffer.clone();
        let subscriber = json_logs(move || writer.clone()).finish();
        tracing::subscriber::with_default(subscriber, || {
            let _ = respond::<(), _>(Err(error), "r6", Caller::Asynchronous);
        });
        let text = String::from_utf8(buffer.0.lock().unwrap().clone()).unwrap();
        text.lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    /// What the template's metric filter counts as a permanent failure
    /// (`{ ($.level = "ERROR") && ($.retryable IS FALSE) }`, infra/template.yaml).
    fn counted_as_permanent(line: &Value) -> bool {
        line["level"] == "ERROR" && line["retryable"] == false
    }

    #[test]
    fn a_permanent_failure_is_logged_where_the_alarm_counts_it_and_a_retryable_one_is_not() {
        let permanent = lines_logged_for(Failure(false));
        assert_eq!(permanent.len(), 1, "{permanent:?}");
        assert!(counted_as_permanent(&permanent[0]), "{permanent:?}");
        assert_eq!(permanent[0]["message"], "event rejected");
        // A retryable one fails the invocation (Lambda's Errors metric): not counted twice.
        let retryable = lines_logged_for(Failure(true));
        assert_eq!(retryable.len(), 1, "{retryable:?}");
        assert!(!counted_as_permanent(&retryable[0]), "{retryable:?}");
    }

    #[test]
    fn a_decision_logs_flat_fields_not_debug_strings() {
        use headroom_core::decide::decide;
        use headroom_core::log::DecisionRecord;
        use headroom_core::model::{Observed, Suspended};

        let buffer = Buffer::default();
        let writer = buffer.clone();
        let subscriber = json_logs(move || writer.clone()).finish();

        // GIVEN a decision to register new bounds (AAS has 1..4, the plan says 2..6)
        let plan = headroom_core::parse_plan(
            "p",
            "version = 1\n[[target]]\nresource_id = \"endpoint/chat/variant/AllTraffic\"\nmin_capacity = 2\nmax_capacity = 6\n",
        )
        .unwrap();
        let target = &plan.targets[0];
        let observed = Observed {
            id: target.id.clone(),
            min: 1,
            max: 4,
            suspended: Suspended::default(),
        };
        let at = "2026-03-14T09:00:00Z".parse().unwrap();
        let decision = decide(
            target,
            Some(&observed),
            &Default::default(),
            target.lead_time,
            at,
        );
        let record = DecisionRecord {
            trigger: "tick".into(),
            decision,
            model: Some("m1-0123456789abcdef".into()),
            notes: vec![],
        };
        // WHEN it is logged
        tracing::subscriber::with_default(subscriber, || record.emit());
        // THEN the line is flat JSON fields
        let text = String::from_utf8(buffer.0.lock().unwrap().clone()).unwrap();
        let line: Value = serde_json::from_str(text.trim()).unwrap();
        assert_eq!(line["action"], "register", "{text}");
        assert_eq!(line["target_id"], "endpoint/chat/variant/AllTraffic");
        assert_eq!(line["min"], 2);
        assert_eq!(line["max"], 6);
        assert_eq!(line["trigger"], "tick");
        assert_eq!(line["model"], "m1-0123456789abcdef");
        assert_eq!(line["dynamic_scale_in_suspended"], false);
        assert!(line["reasons"].as_str().unwrap().contains("base minimum"));
        assert!(line.get("winner").is_none(), "no winner, no field: {text}");
        assert!(line.get("notes").is_none(), "{text}");
        assert!(
            !text.contains("Register {") && !text.contains("Suspended {"),
            "{text}"
        );
    }

    /// A handler error wrapping a port error, as `ReconcileError::Port` does.
    #[derive(Debug, thiserror::Error)]
    #[error("failed to reconcile endpoint/x/variant/v: {0}")]
    struct Wrapped(#[source] PortError);
    impl Classified for Wrapped {
        fn is_retryable(&self) -> bool {
            self.0.is_retryable()
        }
    }

    #[test]
    fn a_rejected_answer_carries_the_aws_code_once() {
        use headroom_core::ports::{ErrorClass, FailureKind};
        let port = PortError::new("save the target state", ErrorClass::Permanent, "sdk error")
            .with_answer(
                FailureKind::Aws,
                Some("ValidationException".into()),
                "Item size has exceeded the maximum allowed size",
            );
        let answered = respond::<(), _>(Err(Wrapped(port)), "r5", Caller::Asynchronous).unwrap();
        assert_eq!(answered["error_code"], "ValidationException");
        assert_eq!(answered["error_kind"], "aws");
        let error = answered["error"].as_str().unwrap();
        assert_eq!(error.matches("ValidationException").count(), 1, "{error}");
        assert_eq!(error.matches("maximum allowed size").count(), 1, "{error}");
    }
}
