//! headroom's core: the plan, capacity claims, the pure decision, and the ports through which the
//! edges (Lambda handlers, the CLI, the simulator) observe and change the world.
//!
//! A newcomer changing a rule reads `decide.rs` (arbitration, drift, pause), `peaks.rs` (peak
//! windows), `claim.rs` (holding and ramping down) and, for alarms and deployments, `alarms.rs`,
//! `review.rs`, `identity.rs` and `lead_samples.rs`. None of these does I/O.

pub mod alarm_prune;
pub mod alarms;
pub mod capacity_port;
pub mod claim;
pub mod cron;
pub mod decide;
pub mod deploy_ports;
pub mod duration;
pub mod endpoint_status;
pub mod forecast;
pub mod identity;
pub mod ids;
pub mod lead_samples;
pub mod lead_time;
pub mod lint;
pub mod log;
#[cfg(any(test, feature = "memory"))]
pub mod memory;
pub mod metrics_port;
pub mod peaks;
pub mod plan;
pub mod ports;
pub mod reconcile;
pub mod review;
pub mod state;
pub mod suggest;
pub mod text;
pub mod trigger;
pub mod usecase;

pub use claim::{Claim, ClaimNow, ClaimSource, Ramp};
pub use decide::{decide, Action, Bounds, Decision, Observed, Suspended};
pub use duration::Span;
pub use ids::{ComponentName, EndpointName, IdError, ScalableTargetId, VariantName};
pub use plan::{parse_plan, Plan, PlanError, TargetPlan};
pub use state::TargetState;
