//! What the deployment watcher remembers per target between SageMaker events.

use serde::{Deserialize, Serialize};

use crate::endpoint_transitions::Transitions;
use crate::identity::ModelHistory;

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeployFacts {
    /// Which model fingerprint was in force from when, so that a scale-out measured late is
    /// attributed to the model that served when it happened.
    #[serde(default, skip_serializing_if = "ModelHistory::is_empty")]
    pub models: ModelHistory,
    /// The endpoint's provisioning phase in progress and its last time in service.
    #[serde(default, skip_serializing_if = "Transitions::is_empty")]
    pub transition: Transitions,
}

impl DeployFacts {
    pub fn is_empty(&self) -> bool {
        self.models.is_empty() && self.transition.is_empty()
    }
}
