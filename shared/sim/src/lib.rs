//! `headroom simulate`: a what-if simulator of SageMaker autoscaling, with and without headroom.
//!
//! A trace of requests drives simulated endpoints (`endpoint.rs`) whose desired count is set by a
//! model of Application Auto Scaling (`aas.rs`) reading simulated CloudWatch metrics
//! (`metrics.rs`, `cloudwatch.rs`). Three strategies run on the same traffic (`engine.rs`):
//! target tracking alone, target tracking steered by headroom's own core through its ports, and
//! an oracle with perfect foresight (`oracle.rs`). Every modelling assumption is written next to
//! the code that makes it.

pub mod aas;
pub mod announcement;
pub mod attribution;
pub mod chart;
pub mod cloudwatch;
pub mod endpoint;
pub mod engine;
pub mod invoke;
pub mod metrics;
pub mod novelty;
pub mod oracle;
pub mod report;
pub mod scenario;
pub mod stats;
pub mod suggest;
pub mod synthetic;
pub mod trace;
pub mod tune;
pub mod world;

pub use engine::{run_all, RunOptions, Strategy, StrategyResult};
pub use report::Report;
pub use scenario::Scenario;
pub use trace::Trace;
pub use world::World;
