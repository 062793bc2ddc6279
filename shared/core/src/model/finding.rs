//! A lint finding: the vocabulary shared by the lint rules (`crate::lint`) and the reviews that
//! store their findings (`crate::review`), kept here so neither imports the other.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    /// Worth knowing; nothing is wrong yet.
    Info,
    /// Likely to scale badly: check it.
    Warn,
    /// Cannot work as configured: a pipeline should not promote.
    Error,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Info => "info",
            Self::Warn => "warn",
            Self::Error => "error",
        }
    }
}

/// One finding: which rule, how bad, what was measured or read (with its window), and what to
/// change.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Finding {
    pub rule: String,
    pub severity: Severity,
    /// The scalable target (`endpoint/E/variant/V`, `inference-component/IC`).
    pub target: String,
    /// The policy, alarm or config the finding is about, when it is about one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subject: Option<String>,
    pub evidence: String,
    pub change: String,
}
