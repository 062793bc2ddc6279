//! A SageMaker endpoint, deployment or endpoint-config state change, as headroom uses it (the
//! parser, lenient where AWS is loose, is `headroom_events::sagemaker`).

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};

use crate::endpoint_status::EndpointStatus;
use crate::ids::{EndpointName, VariantName};

pub const ENDPOINT_STATE: &str = "SageMaker Endpoint State Change";
pub const DEPLOYMENT_STATE: &str = "SageMaker Endpoint Deployment State Change";
pub const CONFIG_STATE: &str = "SageMaker Endpoint Config State Change";

/// Which of the three SageMaker events headroom handles.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SageMakerEventKind {
    EndpointState,
    DeploymentState,
    ConfigState,
}

impl SageMakerEventKind {
    pub fn detail_type(self) -> &'static str {
        match self {
            Self::EndpointState => ENDPOINT_STATE,
            Self::DeploymentState => DEPLOYMENT_STATE,
            Self::ConfigState => CONFIG_STATE,
        }
    }
}

/// One `VariantStatus` entry of a deployment event (Creating, Updating, ActivatingTraffic, ...).
#[derive(Debug, Clone, PartialEq)]
pub struct VariantStatus {
    pub status: String,
    pub message: Option<String>,
    pub started_at: Option<DateTime<Utc>>,
}

/// What an event says about one production variant.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct VariantInfo {
    /// Optional in the documented example: an endpoint with one variant may omit it.
    pub name: Option<VariantName>,
    pub desired_instance_count: Option<u32>,
    pub current_instance_count: Option<u32>,
    pub desired_weight: Option<f64>,
    /// Endpoint-config events name the model behind each variant.
    pub model_name: Option<String>,
    pub instance_type: Option<String>,
    pub statuses: Vec<VariantStatus>,
}

/// A SageMaker endpoint, deployment or endpoint-config state change, as headroom uses it.
#[derive(Debug, Clone, PartialEq)]
pub struct SageMakerEvent {
    pub kind: SageMakerEventKind,
    /// EventBridge's event id (differs between the several events of one change).
    pub id: Option<String>,
    /// The envelope's `time`.
    pub at: Option<DateTime<Utc>>,
    /// Absent only for endpoint-config events.
    pub endpoint: Option<EndpointName>,
    pub endpoint_arn: Option<String>,
    pub endpoint_config: Option<String>,
    pub status: Option<EndpointStatus>,
    pub created_at: Option<DateTime<Utc>>,
    pub last_modified_at: Option<DateTime<Utc>>,
    pub variants: Vec<VariantInfo>,
    /// A blue/green deployment in progress: the config being rolled out and its variants.
    pub pending_config: Option<String>,
    pub pending_variants: Vec<VariantInfo>,
    pub tags: BTreeMap<String, String>,
    /// The envelope's account and region, and the endpoint's ARN.
    pub provenance: crate::trigger::Provenance,
}

impl SageMakerEvent {
    /// When the change happened: the endpoint's `LastModifiedTime`, else the envelope's time.
    pub fn occurred_at(&self) -> Option<DateTime<Utc>> {
        self.last_modified_at.or(self.at)
    }

    /// The same delivery twice has the same key; two events of one change have different keys
    /// (their effects are idempotent anyway).
    pub fn idempotency_key(&self) -> String {
        match &self.id {
            Some(id) => format!("sagemaker:{id}"),
            None => format!(
                "sagemaker:{}:{}:{}:{}",
                self.kind.detail_type(),
                self.endpoint
                    .as_ref()
                    .map(EndpointName::as_str)
                    .or(self.endpoint_config.as_deref())
                    .unwrap_or("-"),
                self.status
                    .as_ref()
                    .map(ToString::to_string)
                    .unwrap_or_default(),
                self.occurred_at()
                    .map(|t| t.timestamp_millis())
                    .unwrap_or_default()
            ),
        }
    }

    /// The variant called `name`, or the only variant when the event names none.
    pub fn variant(&self, name: &VariantName) -> Option<&VariantInfo> {
        self.variants
            .iter()
            .find(|v| v.name.as_ref() == Some(name))
            .or_else(|| match self.variants.as_slice() {
                [only] if only.name.is_none() => Some(only),
                _ => None,
            })
    }
}
