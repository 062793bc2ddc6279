//! The deployment watcher: reacts to SageMaker endpoint, deployment and endpoint-config state
//! changes and to deployment pipelines' own calls (`headroom.pipeline/v1`). It keeps the model
//! identity behind each managed target, opens a scaling-policy review when it changes, and
//! measures how long new capacity really takes so that pre-scaling uses a measured lead time.
//!
//! `handler.rs` is the flow (generic over the ports), `observe.rs` reads identities from
//! SageMaker (the pure rules it applies are in headroom-core: `identity.rs`, `review.rs`, and
//! `lead_samples.rs`, which turns scaling activities and endpoint transitions into lead-time
//! samples), `reviews.rs` lists and acknowledges reviews (shared with the CLI),
//! `explain.rs` says what would happen without calling AWS, and `memory.rs` has in-memory ports
//! for tests and dry runs.

pub mod error;
pub mod explain;
pub mod handler;
pub mod memory;
pub mod observe;
pub mod operations;
pub mod reviews;

pub use error::DeployError;
pub use explain::explain;
pub use handler::{Deploy, Outcome, Response};
pub use reviews::{ack_review, list_reviews, Acked};
