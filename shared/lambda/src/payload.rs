//! The payload a headroom Lambda takes: any JSON Lambda delivers, read into a `Value` by the
//! handler, so that JSON serde_json cannot read is answered `rejected` instead of retried.
//!
//! Lambda delivers any JSON its Invoke API accepted, and serde_json refuses some of it when it
//! builds a `serde_json::Value`: nesting deeper than its recursion limit of 128, a number beyond
//! a 64-bit float (`1e309`), a string with a lone UTF-16 surrogate (`"\ud800"`). With
//! `LambdaEvent<serde_json::Value>`, lambda_runtime fails such an invocation before the handler
//! runs, and Lambda retries an asynchronous event that no retry can make readable, until its
//! failure destination keeps it. [`RawEvent`] accepts any JSON text, so the handler runs, and
//! [`RawEvent::into_value`] fails with a permanent [`UnreadableEvent`] that
//! [`respond`](crate::respond) answers `rejected`:
//!
//! ```no_run
//! use headroom_lambda::{respond, Caller, RawEvent};
//! use lambda_runtime::{service_fn, Error, LambdaEvent};
//! # use headroom_lambda::UnreadableEvent;
//! # async fn handle(payload: &serde_json::Value) -> Result<serde_json::Value, UnreadableEvent> {
//! #     Ok(payload.clone()) // the function's own use case and error
//! # }
//!
//! #[tokio::main(flavor = "current_thread")]
//! async fn main() -> Result<(), Error> {
//!     lambda_runtime::run(service_fn(|event: LambdaEvent<RawEvent>| async move {
//!         let (raw, context) = event.into_parts();
//!         let payload = match raw.into_value() {
//!             Ok(payload) => payload,
//!             // Unreadable JSON does not say who sent it: `rejected` answers every caller (a
//!             // synchronous one reads it as the invocation's result).
//!             Err(unreadable) => {
//!                 return respond::<(), _>(Err(unreadable), &context.request_id, Caller::Asynchronous)
//!             }
//!         };
//!         respond(handle(&payload).await, &context.request_id, Caller::Asynchronous)
//!     }))
//!     .await
//! }
//! ```

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::Value;

use crate::Classified;

/// An invocation's payload as Lambda delivered it, not yet read. Its `Deserialize` accepts any
/// JSON text, however deep, whatever its numbers and escapes (serde_json skims a raw value
/// without building it), so lambda_runtime never fails an invocation over its payload.
#[derive(Debug, Deserialize)]
#[serde(transparent)]
pub struct RawEvent(Box<RawValue>);

impl RawEvent {
    /// The payload as a `Value`, or why serde_json cannot build one.
    pub fn into_value(self) -> Result<Value, UnreadableEvent> {
        serde_json::from_str(self.0.get()).map_err(|e| UnreadableEvent {
            problem: Problem::of(&e),
            line: e.line(),
            column: e.column(),
        })
    }
}

/// JSON that serde_json cannot read into a `Value`. Permanent: the same bytes fail the same way
/// on every retry. Its message is one line of a few hundred characters at most, whatever the
/// payload: it quotes none of it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "unreadable event (line {line}, column {column}): {problem}; a retry cannot read it either"
)]
pub struct UnreadableEvent {
    problem: Problem,
    line: usize,
    column: usize,
}

impl UnreadableEvent {
    pub fn problem(&self) -> Problem {
        self.problem
    }
}

impl Classified for UnreadableEvent {
    fn is_retryable(&self) -> bool {
        false
    }
}

/// What serde_json found wrong.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum Problem {
    #[error(
        "the JSON nests arrays and objects more than 128 levels deep, beyond what serde_json \
         reads: no AWS event nests so deep, send a flatter one"
    )]
    TooDeeplyNested,
    #[error(
        "a number is out of range of a 64-bit float, such as 1e309: send it as a string, or \
         within ±1.7e308"
    )]
    NumberOutOfRange,
    #[error(
        "a string is invalid: an escape is no Unicode character, such as the lone surrogate \
         \\ud800; escape a character outside the BMP as a high surrogate followed by a low one"
    )]
    InvalidString,
    /// Anything else serde_json refuses; Lambda delivers only valid JSON, so this should not be
    /// seen.
    #[error("the payload is not JSON that serde_json reads")]
    Other,
}

impl Problem {
    /// serde_json has no public error code for these (all are `Category::Syntax`): its messages,
    /// pinned by the tests below, are what tells them apart.
    fn of(e: &serde_json::Error) -> Self {
        let message = e.to_string();
        if message.starts_with("recursion limit exceeded") {
            Self::TooDeeplyNested
        } else if message.starts_with("number out of range") {
            Self::NumberOutOfRange
        } else if message.contains("surrogate")
            || message.contains("escape")
            || message.starts_with("invalid unicode code point")
        {
            Self::InvalidString
        } else {
            Self::Other
        }
    }
}

#[cfg(test)]
mod runtime_tests;
#[cfg(test)]
mod tests;
