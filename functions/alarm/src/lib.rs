//! The alarm function: CloudWatch alarm transitions (EventBridge rule or direct alarm action)
//! become `guard` and `wake` claims on the targets the plan names, applied at once.

pub mod handler;
pub mod operations;

pub use handler::{handle, handle_in, AlarmReport, HandlerError, TargetReport};
