//! The tick function: the one-minute safety net that reconciles every managed target (and so
//! applies plan peaks on time), and explicit peak events from EventBridge Scheduler.

pub mod handler;
pub mod operations;

pub use handler::{handle, handle_with_metrics, HandlerError, Outcome};
