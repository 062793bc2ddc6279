//! The AWS operations this function can call: the adapters its `main` builds, each with the
//! operations its methods call (`OPERATIONS` on the adapter, next to the calls). This is the one
//! list; tests/tests/infra_consistency.rs checks that it names exactly the adapters this crate
//! uses, that each adapter's list matches the SDK calls in its source, and that the function's
//! IAM policy in infra/template.yaml allows these operations and nothing else (apart from what
//! Application Auto Scaling requires of a RegisterScalableTarget caller, listed there apart).

use std::collections::BTreeSet;

use headroom_adapters::{AasScalingTargets, DynamoStateStore, SageMakerCapacity};

/// `(adapter type name, its operations)`, the name and the list taken from the same type.
macro_rules! adapter {
    ($t:ident) => {
        (stringify!($t), $t::OPERATIONS)
    };
}

/// Every adapter this function builds.
pub const ADAPTERS: &[(&str, &[&str])] = &[
    adapter!(AasScalingTargets),
    adapter!(DynamoStateStore),
    adapter!(SageMakerCapacity),
];

/// Every AWS operation (`service:Action`, as IAM names it) this function can call.
pub fn operations() -> BTreeSet<&'static str> {
    ADAPTERS
        .iter()
        .flat_map(|(_, ops)| ops.iter().copied())
        .collect()
}
