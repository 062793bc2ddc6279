//! What every function does between the raw event and its use case: parse the event into a
//! trigger, refuse one that another function handles (naming it), and classify the use case's
//! error for Lambda's retry. A function's crate then only wires its ports and calls its use case.

use headroom_core::trigger::{Function, Trigger, WrongFunction};
use headroom_core::usecase::{alarm::AlarmError, deploy::DeployError, tick::TickError};
use headroom_events::{parse_trigger, EventError};

use crate::Classified;

/// Why an event did not reach its use case, or how the use case failed.
#[derive(Debug, thiserror::Error)]
pub enum EdgeError<E> {
    /// The event is not one headroom accepts, or is malformed.
    #[error(transparent)]
    BadEvent(#[from] EventError),
    /// Another function handles this trigger.
    #[error(transparent)]
    WrongFunction(#[from] WrongFunction),
    #[error(transparent)]
    Failed(E),
}

/// Parses `event` into the trigger it asks for (any function's: see [`misrouted`]).
pub fn parse<E>(event: &serde_json::Value) -> Result<Trigger, EdgeError<E>> {
    Ok(parse_trigger(event)?)
}

/// The answer to a trigger that `function` does not handle: names the function that does.
pub fn misrouted<E>(trigger: &Trigger, function: Function) -> EdgeError<E> {
    EdgeError::WrongFunction(WrongFunction::new(trigger, function))
}

impl<E: Classified> Classified for EdgeError<E> {
    fn is_retryable(&self) -> bool {
        match self {
            // A bad or misrouted event fails the same way every time.
            Self::BadEvent(_) | Self::WrongFunction(_) => false,
            Self::Failed(e) => e.is_retryable(),
        }
    }
}

impl Classified for TickError {
    fn is_retryable(&self) -> bool {
        TickError::is_retryable(self)
    }
}

impl Classified for AlarmError {
    fn is_retryable(&self) -> bool {
        AlarmError::is_retryable(self)
    }
}

impl Classified for DeployError {
    fn is_retryable(&self) -> bool {
        DeployError::is_retryable(self)
    }
}
