//! `SageMaker Model Package State Change` events from EventBridge: a model package created, or
//! its approval status changed, in the SageMaker model registry.
//!
//! The detail follows DescribeModelPackage (`ModelPackageGroupName`, `ModelPackageVersion`,
//! `ModelPackageArn`, `ModelApprovalStatus`, `CreationTime`, `InferenceSpecification`, ...);
//! its times are ISO strings, where the endpoint events' are epoch milliseconds. Like the other SageMaker parsers this one
//! reads only what headroom needs and ignores the rest; it refuses an event only when the
//! package cannot be named (`ModelPackageArn` missing or not a model package ARN). The approval
//! status is read in either spelling (`Approved`, `APPROVED`); an unknown one is kept.

use headroom_core::identity::ContainerIdentity;
use serde::Deserialize;
use serde_json::Value;

use crate::envelope::instant;
use crate::lenient::{self, Lenient, LenientObject};
use crate::sagemaker::{epoch_millis, Envelope};
use crate::EventError;

pub use headroom_core::trigger::model_package::{
    ApprovalStatus, ModelPackageEvent, PackageArn, MODEL_PACKAGE_STATE,
};

const KIND: &str = "SageMaker model package event";

#[derive(Default, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
struct Detail {
    model_package_arn: Lenient<String>,
    model_package_group_name: Lenient<String>,
    /// An integer, or (leniently) a numeric string.
    model_package_version: Option<Value>,
    model_approval_status: Lenient<String>,
    creation_time: Option<Value>,
    inference_specification: LenientObject<InferenceSpecification>,
}

#[derive(Default, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
struct InferenceSpecification {
    containers: Lenient<Vec<LenientObject<Container>>>,
}

#[derive(Default, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
struct Container {
    image: Lenient<String>,
    model_data_url: Lenient<String>,
}

fn version(value: Option<&Value>) -> Option<u32> {
    match value? {
        Value::Number(n) => n.as_u64().and_then(|v| u32::try_from(v).ok()),
        Value::String(s) => s.parse().ok(),
        _ => None,
    }
}

/// Parses a model package state change (recognised by `detail-type`).
pub fn parse(event: &Value) -> Result<ModelPackageEvent, EventError> {
    // The endpoint events' envelope (its `detail-type` was read to route here).
    let mut envelope: Envelope = lenient::read(KIND, "", event)?;
    let detail =
        crate::sagemaker::sagemaker_detail(KIND, envelope.source.get(), envelope.detail.take())?;
    let detail: Detail = lenient::read(KIND, "detail", &detail)?;
    let arn = detail.model_package_arn.non_empty().ok_or_else(|| {
        EventError::malformed(
            KIND,
            "detail.ModelPackageArn",
            "is missing: headroom cannot tell which model package changed",
        )
    })?;
    if !arn.starts_with("arn:") || !arn.contains(":model-package/") {
        return Err(EventError::malformed(
            KIND,
            "detail.ModelPackageArn",
            format!(
                "is {:?}, not a model package ARN (arn:aws:sagemaker:REGION:ACCOUNT:model-package/...)",
                headroom_core::text::cut(arn)
            ),
        ));
    }
    let split = PackageArn::parse(arn);
    let containers = detail
        .inference_specification
        .into_inner()
        .and_then(|spec| spec.containers.into_inner())
        .unwrap_or_default()
        .into_iter()
        .filter_map(LenientObject::into_inner)
        .map(|c| ContainerIdentity {
            image: c.image.non_empty().map(str::to_owned),
            model_data: c.model_data_url.non_empty().map(str::to_owned),
            model_package: Some(arn.to_owned()),
        })
        .collect();
    Ok(ModelPackageEvent {
        provenance: envelope.provenance(Some(arn)),
        id: envelope.id.non_empty().map(str::to_owned),
        at: envelope.time.as_ref().and_then(instant),
        arn: arn.to_owned(),
        group: detail
            .model_package_group_name
            .non_empty()
            .map(str::to_owned)
            .or_else(|| split.as_ref().map(|p| p.group.to_owned())),
        version: version(detail.model_package_version.as_ref())
            .or_else(|| split.as_ref().map(|p| p.version)),
        approval: detail
            .model_approval_status
            .non_empty()
            .map(ApprovalStatus::parse),
        created_at: detail.creation_time.as_ref().and_then(epoch_millis),
        containers,
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // a test that cannot unwrap has failed
mod tests {
    use super::*;
    use serde_json::json;

    fn fixture() -> Value {
        crate::test_fixtures::fixture("sagemaker/model-package-approved.json")
    }

    #[test]
    fn the_approved_fixture_names_its_package_and_containers() {
        let e = parse(&fixture()).unwrap();
        assert_eq!(
            e.arn,
            "arn:aws:sagemaker:us-east-1:123456789012:model-package/chat-llama/9"
        );
        assert_eq!(e.group.as_deref(), Some("chat-llama"));
        assert_eq!(e.version, Some(9));
        assert_eq!(e.approval, Some(ApprovalStatus::Approved));
        assert!(e.created_at.is_some(), "an ISO CreationTime");
        assert!(e.at.is_some());
        assert_eq!(e.containers.len(), 1);
        assert_eq!(
            e.containers[0].model_package.as_deref(),
            Some(e.arn.as_str())
        );
        assert!(e.containers[0]
            .model_data
            .as_deref()
            .is_some_and(|d| d.starts_with("s3://")));
        assert!(e.idempotency_key().starts_with("sagemaker:"));
    }

    #[test]
    fn other_statuses_and_loose_shapes_are_read_not_refused() {
        let mut ev = fixture();
        ev["detail"]["ModelApprovalStatus"] = json!("REJECTED");
        ev["detail"]["ModelPackageVersion"] = json!("9");
        ev["detail"]["InferenceSpecification"] = json!("not an object");
        let e = parse(&ev).unwrap();
        assert_eq!(e.approval, Some(ApprovalStatus::Rejected));
        assert_eq!(e.version, Some(9));
        assert!(e.containers.is_empty());
        ev["detail"]
            .as_object_mut()
            .unwrap()
            .remove("ModelApprovalStatus");
        assert_eq!(parse(&ev).unwrap().approval, None);
    }

    #[test]
    fn an_event_that_names_no_package_is_refused() {
        let mut ev = fixture();
        ev["detail"]
            .as_object_mut()
            .unwrap()
            .remove("ModelPackageArn");
        let err = parse(&ev).unwrap_err();
        assert!(err.to_string().contains("ModelPackageArn"), "{err}");
        ev["detail"]["ModelPackageArn"] =
            json!("arn:aws:sagemaker:us-east-1:123456789012:model/chat");
        let err = parse(&ev).unwrap_err();
        assert!(err.to_string().contains("not a model package ARN"), "{err}");
        let mut ev = fixture();
        ev["source"] = json!("aws.s3");
        assert!(parse(&ev)
            .unwrap_err()
            .to_string()
            .contains("aws.sagemaker"));
    }
}
