//! The AWS operations this function can call: the adapters its `main` builds, each with the
//! operations its methods call (`OPERATIONS` on the adapter, next to the calls). This is the one
//! list; tests/tests/infra_consistency.rs checks that it names exactly the adapters this crate
//! uses, that each adapter's list matches the SDK calls in its source, and that the function's
//! IAM policy in infra/template.yaml allows these operations and nothing else (apart from what
//! Application Auto Scaling requires of a RegisterScalableTarget caller, listed there apart).

use headroom_adapters::{
    adapter, AasScalingTargets, CloudWatchDemand, DynamoReviews, DynamoStateStore,
    SageMakerCapacity,
};

/// Every adapter this function builds.
pub const ADAPTERS: &[(&str, &[&str])] = &[
    adapter!(AasScalingTargets),
    adapter!(DynamoStateStore),
    adapter!(SageMakerCapacity),
    adapter!(CloudWatchDemand),
    adapter!(DynamoReviews),
];
