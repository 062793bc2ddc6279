//! Where an event may come from, for the functions that receive other services' events (alarm
//! transitions, SageMaker and model-package events).

use crate::alarms::Home;

#[derive(Debug, Clone, Copy)]
pub enum Origin<'a> {
    /// Any account and region (`headroom explain`, the simulator, handler tests: nothing
    /// crosses accounts).
    Anywhere,
    /// The function's own account and region: an alarm transition from elsewhere is refused
    /// unless the plan names its alarm by ARN; a SageMaker event from elsewhere is refused.
    Home(&'a Home),
}
