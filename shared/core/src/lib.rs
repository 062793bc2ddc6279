//! headroom's core: the plan, capacity claims, the pure decision, and the ports through which the
//! edges (Lambda handlers, the CLI, the simulator) observe and change the world.
//!
//! A newcomer changing a rule reads `decide.rs` (arbitration, drift, pause), `peaks.rs` (peak
//! windows), `claim.rs` (holding and ramping down) and, for alarms and deployments, `alarms.rs`,
//! `review.rs`, `identity.rs`, `lead_samples.rs` and `endpoint_transitions.rs`. None of these
//! does I/O. The words they share (bounds, alarm states and names, fingerprints, samples) are in
//! `model/`, what a target remembers is in `state/`, and the use cases that run a trigger
//! through the ports are in `usecase/`. Imports only go down that list: no module imports one
//! that imports it back (`tests/module_graph.rs`).

pub mod alarm_prune;
pub mod alarms;
pub mod capacity_port;
pub mod claim;
pub mod cron;
pub mod decide;
pub mod deploy_ports;
pub mod duration;
pub mod endpoint_status;
pub mod endpoint_transitions;
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
pub mod model;
pub mod newest;
pub mod peaks;
pub mod plan;
pub mod ports;
pub mod reconcile;
pub mod review;
pub mod state;
pub mod suggest;
pub mod surge;
pub mod text;
pub mod trigger;
pub mod usecase;
pub mod utc_text;

pub use claim::{Claim, ClaimNow, ClaimSource, Ramp};
pub use decide::{decide, Action, Decision};
pub use duration::Span;
pub use ids::{ComponentName, EndpointName, IdError, ScalableTargetId, VariantName};
pub use model::{
    AlarmName, AlarmState, Bounds, LeadSample, LogEntry, ModelFingerprint, Observed, ReviewId,
    SampleSource, Suspended,
};
pub use plan::{parse_plan, Plan, PlanError, TargetPlan};
pub use state::TargetState;
