//! SageMaker endpoint statuses, as events and DescribeEndpoint report them. A domain type: the
//! lead-time measurement reads status transitions.

use std::fmt;

/// An endpoint's status. The EventBridge form is UPPER_SNAKE (`IN_SERVICE`); DescribeEndpoint's
/// is CamelCase (`InService`); both parse. Anything else is kept verbatim.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EndpointStatus {
    InService,
    Creating,
    Updating,
    SystemUpdating,
    RollingBack,
    OutOfService,
    Deleting,
    Failed,
    UpdateRollbackFailed,
    Other(String),
}

impl EndpointStatus {
    pub fn parse(raw: &str) -> Self {
        let folded: String = raw
            .chars()
            .filter(|c| *c != '_' && *c != '-' && *c != ' ')
            .map(|c| c.to_ascii_lowercase())
            .collect();
        match folded.as_str() {
            "inservice" => Self::InService,
            "creating" => Self::Creating,
            "updating" => Self::Updating,
            "systemupdating" => Self::SystemUpdating,
            "rollingback" => Self::RollingBack,
            "outofservice" => Self::OutOfService,
            "deleting" => Self::Deleting,
            "failed" => Self::Failed,
            "updaterollbackfailed" => Self::UpdateRollbackFailed,
            _ => Self::Other(raw.to_owned()),
        }
    }
}

impl fmt::Display for EndpointStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = match self {
            Self::InService => "IN_SERVICE",
            Self::Creating => "CREATING",
            Self::Updating => "UPDATING",
            Self::SystemUpdating => "SYSTEM_UPDATING",
            Self::RollingBack => "ROLLING_BACK",
            Self::OutOfService => "OUT_OF_SERVICE",
            Self::Deleting => "DELETING",
            Self::Failed => "FAILED",
            Self::UpdateRollbackFailed => "UPDATE_ROLLBACK_FAILED",
            Self::Other(s) => s,
        };
        f.write_str(s)
    }
}
