//! The plan: which targets headroom manages and what each feature may do to them.

#[cfg(any(test, feature = "memory"))]
mod builder;
pub mod file;
pub mod forecast;
pub mod lint;
mod model;
mod validate;

#[cfg(any(test, feature = "memory"))]
pub use builder::{PlanBuilder, TargetBuilder};
pub use file::PlanFile;
pub use forecast::{DemandKind, ForecastMode, ForecastPolicy};
pub use lint::LintPolicy;
pub use model::*;
pub use validate::{
    parse_plan, valid_claim_name, PlanError, PlanIssue, DEFAULT_GUARD_HOLD, DEFAULT_KEEP_FOR,
    DEFAULT_LEAD_TIME, DEFAULT_RAMP, LONGEST_HOLD, MAX_ALARM_ARN, MAX_ALARM_NAME, MAX_CAPACITY,
    MAX_PLAN_BYTES,
};
