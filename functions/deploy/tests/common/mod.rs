//! What the deploy handler's tests share: the in-memory world they run in, and its helpers. Each
//! test file builds its own endpoint, configs and models into it (a rollout of v7 to v8 in one,
//! model packages chat-llama/8 and /9 in the other).

use chrono::{DateTime, Utc};
use headroom_core::ids::ScalableTargetId;
use headroom_core::memory::{MemoryEndpoints, MemoryReviewStore, MemoryScalingHistory};
use headroom_core::memory::{MemoryScalingTargets, MemoryStateStore};
use headroom_core::usecase::Ports;
use serde_json::Value;

pub const ARN: &str = "arn:aws:sagemaker:us-east-1:123456789012:endpoint/chat-prod";
pub const IMAGE: &str = "763104351884.dkr.ecr.us-east-1.amazonaws.com/djl-inference:0.29.0-lmi11";

pub fn t(s: &str) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(s)
        .expect("valid time")
        .with_timezone(&Utc)
}

/// This package's directory as cargo gives it when the test runs. The compile-time value would
/// be another clone's when cargo reuses a test binary from a target dir shared between clones.
fn manifest_dir() -> String {
    std::env::var("CARGO_MANIFEST_DIR").unwrap_or_else(|_| env!("CARGO_MANIFEST_DIR").to_owned())
}

/// The fixture at `events/{path}`.
pub fn fixture(path: &str) -> Value {
    let full = format!("{}/../../events/{path}", manifest_dir());
    serde_json::from_str(&std::fs::read_to_string(&full).expect("fixture exists"))
        .expect("fixture is JSON")
}

/// The one managed target: chat-prod's AllTraffic variant.
pub fn variant() -> ScalableTargetId {
    "endpoint/chat-prod/variant/AllTraffic"
        .parse()
        .expect("valid id")
}

/// The ports the deploy handler takes, all in memory.
pub struct World {
    pub endpoints: MemoryEndpoints,
    pub history: MemoryScalingHistory,
    pub reviews: MemoryReviewStore,
    pub aas: MemoryScalingTargets,
    pub store: MemoryStateStore,
}

/// The handler's ports over a [`World`].
pub type WorldPorts<'a> = Ports<
    'a,
    MemoryScalingTargets,
    MemoryScalingHistory,
    (),
    MemoryEndpoints,
    MemoryStateStore,
    MemoryReviewStore,
>;

impl World {
    pub fn ports(&self) -> WorldPorts<'_> {
        Ports::new(&self.aas, &self.store)
            .with_history(&self.history)
            .with_endpoints(&self.endpoints)
            .with_reviews(&self.reviews)
    }
}
