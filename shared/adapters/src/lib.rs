//! headroom's AWS edge: every AWS SDK call lives here, behind the ports of `headroom-core`.
//! Each module implements one port for one service and classifies SDK errors (`error.rs`) into
//! retryable or permanent `PortError`s, keeping the SDK error as the source.
//!
//! One line per module below; add yours at the end of the list.

pub mod aas;
pub mod aas_history;
pub mod cloudwatch;
pub mod cloudwatch_lint;
pub mod config;
pub mod dynamo;
pub mod dynamo_reviews;
pub mod env;
pub mod error;
pub mod sagemaker_capacity;
pub mod sagemaker_models;

#[cfg(test)]
mod test_support;

pub use aas::AasScalingTargets;
pub use cloudwatch::CloudWatchDemand;
pub use cloudwatch_lint::CloudWatchLint;
pub use config::{AwsSettings, Clients};
pub use dynamo::{create_table, DynamoStateStore, TableCreated};
pub use dynamo_reviews::DynamoReviews;
pub use env::FunctionEnv;
pub use sagemaker_capacity::SageMakerCapacity;

/// `(adapter type name, its operations)` for a function's `operations.rs`, the name and the list
/// taken from the same type so they cannot disagree.
#[macro_export]
macro_rules! adapter {
    ($t:ident) => {
        (stringify!($t), $t::OPERATIONS)
    };
}
