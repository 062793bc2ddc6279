//! A SageMaker model registry change (`SageMaker Model Package State Change`), as headroom uses
//! it: the earliest sign that the model behind a managed target is about to change (the parser
//! is `headroom_events::model_package`).

use chrono::{DateTime, Utc};

use crate::identity::ContainerIdentity;

pub const MODEL_PACKAGE_STATE: &str = "SageMaker Model Package State Change";

/// `ModelApprovalStatus` (CreateModelPackage's enum), with a fallback for values AWS adds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ApprovalStatus {
    Approved,
    Rejected,
    PendingManualApproval,
    Other(String),
}

impl ApprovalStatus {
    /// The API's spelling (`Approved`), or the UPPER_SNAKE one of its documentation
    /// (`APPROVED`), in any case.
    pub fn parse(s: &str) -> Self {
        let folded: String = s
            .chars()
            .filter(|c| *c != '_')
            .flat_map(char::to_lowercase)
            .collect();
        match folded.as_str() {
            "approved" => Self::Approved,
            "rejected" => Self::Rejected,
            "pendingmanualapproval" => Self::PendingManualApproval,
            _ => Self::Other(s.to_owned()),
        }
    }

    pub fn as_str(&self) -> &str {
        match self {
            Self::Approved => "Approved",
            Self::Rejected => "Rejected",
            Self::PendingManualApproval => "PendingManualApproval",
            Self::Other(s) => s,
        }
    }
}

/// A versioned model package ARN, split: `arn:P:sagemaker:R:A:model-package/GROUP/VERSION`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PackageArn<'a> {
    /// Everything before the version: the group's packages share it, and it names the
    /// partition, region and account (a same-named group elsewhere has another one).
    pub group_arn: &'a str,
    pub group: &'a str,
    pub version: u32,
}

impl<'a> PackageArn<'a> {
    /// `None` for anything but a versioned model package ARN (an unversioned package's ARN,
    /// `.../model-package/NAME`, has no group).
    pub fn parse(arn: &'a str) -> Option<Self> {
        let (head, path) = arn.split_once(":model-package/")?;
        if !head.starts_with("arn:") || head.split(':').count() != 5 {
            return None;
        }
        let (group, version) = path.split_once('/')?;
        if group.is_empty() || version.contains('/') {
            return None;
        }
        let version = version.parse().ok().filter(|v| *v > 0)?;
        let group_arn = &arn[..head.len() + ":model-package/".len() + group.len()];
        Some(Self {
            group_arn,
            group,
            version,
        })
    }
}

/// A model package's state change, as headroom uses it.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelPackageEvent {
    /// EventBridge's event id.
    pub id: Option<String>,
    /// The envelope's `time`.
    pub at: Option<DateTime<Utc>>,
    /// `ModelPackageArn`: always present (the parser refuses an event without it).
    pub arn: String,
    pub group: Option<String>,
    pub version: Option<u32>,
    /// `None` when the event carries no `ModelApprovalStatus`.
    pub approval: Option<ApprovalStatus>,
    pub created_at: Option<DateTime<Utc>>,
    /// `InferenceSpecification.Containers`: what the package would serve, each naming the
    /// package itself.
    pub containers: Vec<ContainerIdentity>,
    /// The envelope's account and region, and the package's ARN.
    pub provenance: crate::trigger::Provenance,
}

impl ModelPackageEvent {
    /// The same delivery twice has the same key.
    pub fn idempotency_key(&self) -> String {
        match &self.id {
            Some(id) => format!("sagemaker:{id}"),
            None => format!(
                "sagemaker:{MODEL_PACKAGE_STATE}:{}:{}",
                self.arn,
                self.approval.as_ref().map_or("-", ApprovalStatus::as_str)
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versioned_arns_split_into_group_and_version() {
        let p = PackageArn::parse("arn:aws:sagemaker:us-east-1:123456789012:model-package/chat/9")
            .expect("versioned");
        assert_eq!(
            p.group_arn,
            "arn:aws:sagemaker:us-east-1:123456789012:model-package/chat"
        );
        assert_eq!((p.group, p.version), ("chat", 9));
        for not_versioned in [
            "arn:aws:sagemaker:us-east-1:123456789012:model-package/chat",
            "arn:aws:sagemaker:us-east-1:123456789012:model-package/chat/0",
            "arn:aws:sagemaker:us-east-1:123456789012:model-package/chat/v9",
            "arn:aws:sagemaker:us-east-1:123456789012:model-package/chat/9/x",
            "arn:aws:sagemaker:us-east-1:123456789012:model/chat/9",
            "chat/9",
        ] {
            assert_eq!(PackageArn::parse(not_versioned), None, "{not_versioned}");
        }
    }

    #[test]
    fn approval_statuses_in_both_spellings() {
        assert_eq!(ApprovalStatus::parse("Approved"), ApprovalStatus::Approved);
        assert_eq!(ApprovalStatus::parse("APPROVED"), ApprovalStatus::Approved);
        assert_eq!(
            ApprovalStatus::parse("PENDING_MANUAL_APPROVAL"),
            ApprovalStatus::PendingManualApproval
        );
        assert_eq!(
            ApprovalStatus::parse("Withdrawn"),
            ApprovalStatus::Other("Withdrawn".into())
        );
    }
}
