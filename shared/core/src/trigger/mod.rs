//! What an event asks headroom to do, as domain values (the parsers that build them from AWS's
//! JSON are `headroom_events`), and which function handles each: the one routing table, used
//! by the Lambdas to refuse what is not theirs, by `headroom explain`, and by the template
//! consistency test.

pub mod model_package;
pub mod pipeline;
pub mod sagemaker;
pub mod tick;

use std::fmt;

use crate::alarms::AlarmTransition;
use crate::peaks::PeakRequest;

pub use model_package::{ApprovalStatus, ModelPackageEvent};
pub use pipeline::{PipelineAction, PipelineHook};
pub use sagemaker::{SageMakerEvent, SageMakerEventKind};
pub use tick::Tick;

pub use crate::model::Provenance;

/// What an event asks headroom to do.
#[derive(Debug, Clone, PartialEq)]
pub enum Trigger {
    /// The periodic safety-net tick (EventBridge scheduled rule or Scheduler without input).
    Tick(Tick),
    /// An explicit peak from a user's EventBridge Scheduler schedule.
    Peak(PeakRequest),
    /// A CloudWatch alarm transition (EventBridge or direct alarm action).
    Alarm(AlarmTransition),
    /// A SageMaker endpoint, deployment or endpoint-config state change.
    SageMaker(SageMakerEvent),
    /// A model package's approval status changed in the SageMaker model registry.
    ModelPackage(ModelPackageEvent),
    /// A deployment pipeline's own call.
    Pipeline(PipelineHook),
}

impl Trigger {
    /// A short name for logs and errors.
    pub fn kind(&self) -> &'static str {
        match self {
            Trigger::Tick(_) => "tick",
            Trigger::Peak(_) => "peak event",
            Trigger::Alarm(_) => "alarm transition",
            Trigger::SageMaker(_) => "SageMaker state change",
            Trigger::ModelPackage(_) => "model package state change",
            Trigger::Pipeline(_) => "pipeline hook",
        }
    }

    /// The function that handles this trigger.
    pub fn function(&self) -> Function {
        match self {
            Trigger::Tick(_) | Trigger::Peak(_) => Function::Tick,
            Trigger::Alarm(_) => Function::Alarm,
            Trigger::SageMaker(_) | Trigger::ModelPackage(_) | Trigger::Pipeline(_) => {
                Function::Deploy
            }
        }
    }
}

/// headroom's Lambda functions. Adding a trigger means adding it to [`Trigger::function`];
/// adding a function means adding it here and to `infra/template.yaml`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Function {
    /// Ticks and explicit peaks: `functions/tick`.
    Tick,
    /// CloudWatch alarm transitions: `functions/alarm`.
    Alarm,
    /// SageMaker state changes (endpoints and model packages) and pipeline hooks:
    /// `functions/deploy`.
    Deploy,
}

impl Function {
    pub const ALL: [Function; 3] = [Function::Tick, Function::Alarm, Function::Deploy];

    /// The function's name (its crate, its binary and its `FunctionName` in the template).
    pub fn name(self) -> &'static str {
        match self {
            Function::Tick => "headroom-tick",
            Function::Alarm => "headroom-alarm",
            Function::Deploy => "headroom-deploy",
        }
    }

    /// What the function takes, for the error that refuses anything else.
    pub fn handles(self) -> &'static str {
        match self {
            Function::Tick => "ticks and explicit peak events",
            Function::Alarm => "CloudWatch alarm transitions",
            Function::Deploy => {
                "SageMaker endpoint, deployment, endpoint-config and model package state changes and headroom.pipeline/v1 hooks"
            }
        }
    }
}

impl fmt::Display for Function {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A trigger delivered to a function that does not handle it: a wiring mistake (a rule or hook
/// pointing at the wrong function). Permanent: a retry reaches the same function.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{function} handles {handles}, not a {kind}: route it to {route}", handles = function.handles())]
pub struct WrongFunction {
    pub function: Function,
    pub kind: &'static str,
    pub route: Function,
}

impl WrongFunction {
    /// `trigger`, delivered to `function`, which does not handle it.
    pub fn new(trigger: &Trigger, function: Function) -> Self {
        WrongFunction {
            function,
            kind: trigger.kind(),
            route: trigger.function(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_function_is_the_route_of_some_trigger_and_refuses_the_others() {
        let tick = Trigger::Tick(Tick { at: None, id: None });
        assert_eq!(tick.function(), Function::Tick);
        let err = WrongFunction::new(&tick, Function::Alarm);
        assert_eq!(err.route, Function::Tick);
        assert!(
            err.to_string().contains("route it to headroom-tick"),
            "{err}"
        );
        assert!(
            err.to_string()
                .starts_with("headroom-alarm handles CloudWatch alarm transitions"),
            "{err}"
        );
    }
}
