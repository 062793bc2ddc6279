//! SageMaker endpoint state, deployment and endpoint-config events from EventBridge.
//!
//! AWS is loose here (SageMaker developer guide, "Automating SageMaker with EventBridge", and
//! the EventBridge schema registry): times are epoch milliseconds as integers or
//! floats (and the envelope `time` may be such a number in a string), statuses are UPPER_SNAKE
//! forms of DescribeEndpoint's enum with values the docs never list, `Tags` is a map in the docs
//! and a `[{Key, Value}]` list in the schema registry, and SageMaker may send several events for
//! one change. So this parser reads only what headroom needs, accepts every documented shape,
//! ignores unknown fields, and refuses an event only when the endpoint (or config) it is about
//! cannot be named. Envelope and detail are headroom's own types (`Envelope` says why the
//! `aws_lambda_events` envelope does not fit; the crate has no SageMaker detail types).

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use headroom_core::trigger::Provenance;
use headroom_core::{EndpointName, VariantName};
use serde::Deserialize;
use serde_json::Value;

use crate::envelope::instant;
use crate::lenient::{self, Lenient, LenientObject};
use crate::EventError;

const KIND: &str = "SageMaker event";

pub use headroom_core::endpoint_status::EndpointStatus;
pub use headroom_core::trigger::sagemaker::{
    SageMakerEvent, SageMakerEventKind, VariantInfo, VariantStatus, CONFIG_STATE, DEPLOYMENT_STATE,
    ENDPOINT_STATE,
};

/// Reads an epoch-milliseconds time: an integer, a float, a numeric string, or (leniently) an
/// RFC 3339 string as the model-package events use.
pub fn epoch_millis(value: &Value) -> Option<DateTime<Utc>> {
    match value {
        Value::Number(n) => n
            .as_i64()
            .or_else(|| {
                n.as_f64()
                    .filter(|f| f.is_finite())
                    .map(|f| f.round() as i64)
            })
            .and_then(DateTime::from_timestamp_millis),
        Value::String(s) => s
            .parse::<i64>()
            .ok()
            .and_then(DateTime::from_timestamp_millis)
            .or_else(|| {
                s.parse::<f64>()
                    .ok()
                    .filter(|f| f.is_finite())
                    .and_then(|f| DateTime::from_timestamp_millis(f.round() as i64))
            })
            .or_else(|| {
                DateTime::parse_from_rfc3339(s)
                    .ok()
                    .map(|t| t.with_timezone(&Utc))
            }),
        _ => None,
    }
}

/// A count as SageMaker sends it: an integer, a float (truncated) or a numeric string.
fn count(value: Option<&Value>) -> Option<u32> {
    match value? {
        Value::Number(n) => n
            .as_u64()
            .or_else(|| n.as_f64().filter(|f| *f >= 0.0).map(|f| f as u64)),
        Value::String(s) => s.parse().ok(),
        _ => None,
    }
    .and_then(|n| u32::try_from(n).ok())
}

/// A weight: a number or a numeric string.
fn weight(value: Option<&Value>) -> Option<f64> {
    match value? {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => s.parse().ok(),
        _ => None,
    }
}

/// `Tags` as `{"k": "v"}` or `[{"Key": "k", "Value": "v"}]`; anything else is ignored (tags are
/// informational, never a reason to refuse an event).
pub fn tags(value: Option<&Value>) -> BTreeMap<String, String> {
    let scalar = |v: &Value| match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    };
    match value {
        Some(Value::Object(map)) => map
            .iter()
            .filter_map(|(k, v)| Some((k.clone(), scalar(v)?)))
            .collect(),
        Some(Value::Array(items)) => items
            .iter()
            .filter_map(|item| {
                let key = item.get("Key").or_else(|| item.get("key"))?.as_str()?;
                let value = item
                    .get("Value")
                    .or_else(|| item.get("value"))
                    .and_then(scalar)
                    .unwrap_or_default();
                Some((key.to_owned(), value))
            })
            .collect(),
        _ => BTreeMap::new(),
    }
}

/// The EventBridge envelope of a SageMaker event.
///
/// headroom's own type, not `aws_lambda_events`' `EventBridgeEvent`: that types `time` as an
/// RFC 3339 instant, and so rejects the SageMaker developer guide's own example, whose
/// `"time": "1583831889050"` is epoch milliseconds in a string
/// (events/sagemaker/endpoint-in-service-docs.json; `crate_fit` tests it). A field of another
/// type counts as absent. The model package parser reads the same envelope.
#[derive(Deserialize)]
pub(crate) struct Envelope {
    #[serde(rename = "detail-type", default)]
    pub(crate) detail_type: Lenient<String>,
    #[serde(default)]
    pub(crate) source: Lenient<String>,
    #[serde(default)]
    pub(crate) id: Lenient<String>,
    #[serde(default)]
    pub(crate) account: Lenient<String>,
    #[serde(default)]
    pub(crate) region: Lenient<String>,
    /// RFC 3339, or epoch milliseconds as a number or in a string.
    #[serde(default)]
    pub(crate) time: Option<Value>,
    /// An object, or (from some senders) a JSON object inside a string.
    #[serde(default)]
    pub(crate) detail: Option<Value>,
}

impl Envelope {
    /// Where the event says it came from: the envelope's account and region, and the ARN of
    /// the resource it is about.
    pub(crate) fn provenance(&self, resource_arn: Option<&str>) -> Provenance {
        Provenance {
            account: self.account.non_empty().map(str::to_owned),
            region: self.region.non_empty().map(str::to_owned),
            resource_arn: resource_arn.map(str::to_owned),
        }
    }
}

/// What headroom reads of a SageMaker event's `detail` (`aws_lambda_events` has no SageMaker
/// types): the endpoint's state, CreateEndpointConfig's fields for config events, the summary of
/// a deployment in progress. Where AWS varies the shape (times as integers, floats or strings;
/// counts and weights as numbers or strings; `Tags` as a map or a `[{Key, Value}]` list) the
/// JSON is kept for the function that knows its forms. A field of another type counts as absent.
#[derive(Default, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
struct Detail {
    endpoint_name: Lenient<String>,
    endpoint_arn: Lenient<String>,
    endpoint_config_name: Lenient<String>,
    endpoint_status: Lenient<String>,
    endpoint_config_status: Lenient<String>,
    creation_time: Option<Value>,
    last_modified_time: Option<Value>,
    production_variants: Variants,
    /// Read only when it is an object.
    pending_deployment_summary: Option<Value>,
    tags: Option<Value>,
}

/// `ProductionVariants`: absent, null or a list; anything else is refused, since the variants
/// are what the event is about. An entry of another shape is a variant the event says nothing of.
type Variants = Option<Vec<LenientObject<Variant>>>;

/// `PendingDeploymentSummary` of a blue/green deployment.
#[derive(Default, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
struct PendingDeployment {
    endpoint_config_name: Lenient<String>,
    production_variants: Variants,
}

#[derive(Default, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
struct Variant {
    variant_name: Lenient<String>,
    desired_instance_count: Option<Value>,
    /// Endpoint-config events use CreateEndpointConfig's names for the count and the weight.
    initial_instance_count: Option<Value>,
    current_instance_count: Option<Value>,
    desired_weight: Option<Value>,
    initial_variant_weight: Option<Value>,
    model_name: Lenient<String>,
    instance_type: Lenient<String>,
    variant_status: Lenient<Vec<LenientObject<VariantStatusEntry>>>,
}

#[derive(Default, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
struct VariantStatusEntry {
    status: Lenient<String>,
    status_message: Lenient<String>,
    start_time: Option<Value>,
}

impl Variant {
    /// `at` is the variant's field path, for errors.
    fn read(self, at: &str) -> Result<VariantInfo, EventError> {
        let name = self
            .variant_name
            .non_empty()
            .map(|n| {
                VariantName::parse(n).map_err(|e| {
                    EventError::malformed(KIND, format!("{at}.VariantName"), e.to_string())
                })
            })
            .transpose()?;
        let statuses = self
            .variant_status
            .into_inner()
            .unwrap_or_default()
            .into_iter()
            .filter_map(|entry| {
                let entry = entry.into_inner()?;
                Some(VariantStatus {
                    status: entry.status.non_empty()?.to_owned(),
                    message: entry.status_message.non_empty().map(str::to_owned),
                    started_at: entry.start_time.as_ref().and_then(epoch_millis),
                })
            })
            .collect();
        Ok(VariantInfo {
            name,
            desired_instance_count: count(self.desired_instance_count.as_ref())
                .or_else(|| count(self.initial_instance_count.as_ref())),
            current_instance_count: count(self.current_instance_count.as_ref()),
            desired_weight: weight(self.desired_weight.as_ref())
                .or_else(|| weight(self.initial_variant_weight.as_ref())),
            model_name: self.model_name.non_empty().map(str::to_owned),
            instance_type: self.instance_type.non_empty().map(str::to_owned),
            statuses,
        })
    }
}

/// The variants of a list at field path `at`.
fn variants(list: Variants, at: &str) -> Result<Vec<VariantInfo>, EventError> {
    list.unwrap_or_default()
        .into_iter()
        .enumerate()
        .map(|(i, v)| {
            v.into_inner()
                .unwrap_or_default()
                .read(&format!("{at}[{i}]"))
        })
        .collect()
}

/// The `detail` object of an event from `aws.sagemaker` (for `kind`'s errors): a missing source
/// is accepted (direct invocations), another is refused; the detail must be an object.
pub(crate) fn sagemaker_detail(
    kind: &'static str,
    source: Option<&String>,
    detail: Option<Value>,
) -> Result<Value, EventError> {
    if let Some(source) = source {
        if source != "aws.sagemaker" {
            return Err(EventError::malformed(
                kind,
                "source",
                format!("is {source:?}, expected \"aws.sagemaker\""),
            ));
        }
    }
    match detail {
        Some(d @ Value::Object(_)) => Ok(d),
        // Some senders double-encode the detail; accept a JSON object inside a string.
        Some(Value::String(s)) => serde_json::from_str::<Value>(&s)
            .ok()
            .filter(Value::is_object)
            .ok_or_else(|| {
                EventError::malformed(
                    kind,
                    "detail",
                    "is a string that does not hold a JSON object",
                )
            }),
        _ => Err(EventError::malformed(
            kind,
            "detail",
            "is missing or not an object",
        )),
    }
}

/// Parses one of the three SageMaker events (recognised by `detail-type`).
pub fn parse(event: &Value) -> Result<SageMakerEvent, EventError> {
    let mut envelope: Envelope = lenient::read(KIND, "", event)?;
    let kind = match envelope.detail_type.get().map(String::as_str).unwrap_or_default() {
        ENDPOINT_STATE => SageMakerEventKind::EndpointState,
        DEPLOYMENT_STATE => SageMakerEventKind::DeploymentState,
        CONFIG_STATE => SageMakerEventKind::ConfigState,
        other => {
            return Err(EventError::Unrecognized {
                hint: format!(
                    "SageMaker detail-type {other:?} is not one headroom handles: it handles {ENDPOINT_STATE:?}, \
                     {DEPLOYMENT_STATE:?}, {CONFIG_STATE:?} and {:?}",
                    crate::model_package::MODEL_PACKAGE_STATE
                ),
            })
        }
    };
    let detail = sagemaker_detail(KIND, envelope.source.get(), envelope.detail.take())?;
    let detail: Detail = lenient::read(KIND, "detail", &detail)?;
    let endpoint = detail
        .endpoint_name
        .non_empty()
        .map(|n| {
            EndpointName::parse(n)
                .map_err(|e| EventError::malformed(KIND, "detail.EndpointName", e.to_string()))
        })
        .transpose()?;
    let endpoint_config = detail.endpoint_config_name.non_empty().map(str::to_owned);
    match kind {
        SageMakerEventKind::ConfigState if endpoint_config.is_none() => {
            return Err(EventError::malformed(
                KIND,
                "detail.EndpointConfigName",
                "is missing: an endpoint-config event must name its config",
            ));
        }
        SageMakerEventKind::EndpointState | SageMakerEventKind::DeploymentState
            if endpoint.is_none() =>
        {
            return Err(EventError::malformed(
                KIND,
                "detail.EndpointName",
                "is missing: headroom cannot tell which endpoint changed",
            ));
        }
        _ => {}
    }
    let status = detail
        .endpoint_status
        .non_empty()
        .or_else(|| detail.endpoint_config_status.non_empty())
        .map(EndpointStatus::parse);
    let variants_now = variants(detail.production_variants, "detail.ProductionVariants")?;
    let pending: Option<PendingDeployment> = match &detail.pending_deployment_summary {
        Some(p @ Value::Object(_)) => {
            Some(lenient::read(KIND, "detail.PendingDeploymentSummary", p)?)
        }
        _ => None,
    };
    let (pending_config, pending_variants) = match pending {
        Some(p) => (
            p.endpoint_config_name.non_empty().map(str::to_owned),
            variants(
                p.production_variants,
                "detail.PendingDeploymentSummary.ProductionVariants",
            )?,
        ),
        None => (None, Vec::new()),
    };
    Ok(SageMakerEvent {
        kind,
        id: envelope.id.non_empty().map(str::to_owned),
        at: envelope.time.as_ref().and_then(instant),
        endpoint,
        endpoint_arn: detail.endpoint_arn.non_empty().map(str::to_owned),
        provenance: envelope.provenance(detail.endpoint_arn.non_empty()),
        endpoint_config,
        status,
        created_at: detail.creation_time.as_ref().and_then(epoch_millis),
        last_modified_at: detail.last_modified_time.as_ref().and_then(epoch_millis),
        variants: variants_now,
        pending_config,
        pending_variants,
        tags: tags(detail.tags.as_ref()),
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // a test that cannot unwrap has failed
mod tests {
    use super::*;
    use serde_json::json;

    fn fixture(name: &str) -> Value {
        crate::test_fixtures::fixture(&format!("sagemaker/{name}"))
    }

    fn endpoint_event(detail: Value) -> Value {
        json!({
            "version": "0", "id": "e-1", "detail-type": ENDPOINT_STATE, "source": "aws.sagemaker",
            "account": "123456789012", "time": "2026-03-14T09:00:00Z", "region": "us-east-1",
            "resources": [], "detail": detail
        })
    }

    #[test]
    fn every_fixture_parses() {
        let dir = format!("{}/sagemaker", crate::test_fixtures::events_dir());
        let mut seen = 0;
        for entry in std::fs::read_dir(&dir).expect("events/sagemaker exists") {
            let path = entry.expect("dir entry").path();
            if path.extension().and_then(|e| e.to_str()) != Some("json") {
                continue;
            }
            let name = path
                .file_name()
                .and_then(|n| n.to_str())
                .unwrap_or_default()
                .to_owned();
            let event = fixture(&name);
            let parsed = crate::parse_trigger(&event).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert!(
                matches!(
                    parsed,
                    crate::Trigger::SageMaker(_) | crate::Trigger::ModelPackage(_)
                ),
                "{name} parsed as {parsed:?}"
            );
            seen += 1;
        }
        assert!(seen >= 5, "expected the SageMaker fixtures, found {seen}");
    }

    #[test]
    fn docs_example_with_epoch_time_string_and_tag_map() {
        let e = parse(&fixture("endpoint-in-service-docs.json")).unwrap();
        assert_eq!(e.kind, SageMakerEventKind::EndpointState);
        assert_eq!(
            e.endpoint.as_ref().map(EndpointName::as_str),
            Some("chat-prod")
        );
        assert_eq!(e.status, Some(EndpointStatus::InService));
        // "time": "1583831889050" is epoch milliseconds in a string.
        assert_eq!(e.at.map(|t| t.timestamp_millis()), Some(1_583_831_889_050));
        assert_eq!(e.tags.get("team").map(String::as_str), Some("ml-platform"));
        assert!(e.last_modified_at.is_some());
        assert_eq!(e.variants[0].desired_instance_count, Some(2));
    }

    #[test]
    fn schema_registry_shape_with_tag_list_and_float_times() {
        let e = parse(&fixture("endpoint-updating-tags-list.json")).unwrap();
        assert_eq!(e.status, Some(EndpointStatus::Updating));
        assert_eq!(
            e.tags.get("headroom:policy-review").map(String::as_str),
            Some("open")
        );
        assert_eq!(e.tags.get("env").map(String::as_str), Some("prod"));
        // 1773479100123.0 (a float) keeps its milliseconds.
        assert_eq!(
            e.last_modified_at.map(|t| t.timestamp_millis()),
            Some(1_773_479_100_123)
        );
    }

    #[test]
    fn unknown_statuses_are_kept_not_refused() {
        let e = parse(&endpoint_event(
            json!({"EndpointName": "chat-prod", "EndpointStatus": "WARMING_UP_SOMEHOW"}),
        ))
        .unwrap();
        assert_eq!(
            e.status,
            Some(EndpointStatus::Other("WARMING_UP_SOMEHOW".into()))
        );
        assert_eq!(
            EndpointStatus::parse("InService"),
            EndpointStatus::InService
        );
        assert_eq!(
            EndpointStatus::parse("SYSTEM_UPDATING"),
            EndpointStatus::SystemUpdating
        );
        assert_eq!(
            EndpointStatus::parse("UpdateRollbackFailed"),
            EndpointStatus::UpdateRollbackFailed
        );
    }

    #[test]
    fn deployment_event_reads_the_pending_config_and_variant_statuses() {
        let e = parse(&fixture("deployment-blue-green-baking.json")).unwrap();
        assert_eq!(e.kind, SageMakerEventKind::DeploymentState);
        assert_eq!(e.pending_config.as_deref(), Some("chat-prod-config-v8"));
        let statuses: Vec<&str> = e.pending_variants[0]
            .statuses
            .iter()
            .map(|s| s.status.as_str())
            .collect();
        assert_eq!(statuses, ["Baking"]);
        assert!(e.pending_variants[0].statuses[0].started_at.is_some());
    }

    #[test]
    fn config_event_names_the_models() {
        let e = parse(&fixture("endpoint-config-created.json")).unwrap();
        assert_eq!(e.kind, SageMakerEventKind::ConfigState);
        assert!(e.endpoint.is_none());
        assert_eq!(e.endpoint_config.as_deref(), Some("chat-prod-config-v8"));
        assert_eq!(e.variants[0].model_name.as_deref(), Some("chat-llama-v8"));
        assert_eq!(
            e.variants[0].instance_type.as_deref(),
            Some("ml.g4dn.xlarge")
        );
    }

    #[test]
    fn several_events_for_one_change_have_distinct_keys_and_one_instant() {
        let a = parse(&fixture("endpoint-in-service-v8-a.json")).unwrap();
        let b = parse(&fixture("endpoint-in-service-v8-b.json")).unwrap();
        assert_ne!(a.idempotency_key(), b.idempotency_key());
        assert_eq!(a.occurred_at(), b.occurred_at());
        assert_eq!(a.endpoint, b.endpoint);
    }

    #[test]
    fn refuses_events_that_name_no_endpoint() {
        let err = parse(&endpoint_event(json!({"EndpointStatus": "IN_SERVICE"}))).unwrap_err();
        assert!(err.to_string().contains("EndpointName"), "{err}");
        let err = parse(&endpoint_event(
            json!({"EndpointName": "bad_name!", "EndpointStatus": "IN_SERVICE"}),
        ))
        .unwrap_err();
        assert!(err.to_string().contains("EndpointName"), "{err}");
        let mut ev = endpoint_event(json!({}));
        ev["detail-type"] = json!(CONFIG_STATE);
        assert!(parse(&ev)
            .unwrap_err()
            .to_string()
            .contains("EndpointConfigName"));
        let mut ev = endpoint_event(json!({"EndpointName": "chat"}));
        ev["source"] = json!("aws.s3");
        assert!(parse(&ev)
            .unwrap_err()
            .to_string()
            .contains("aws.sagemaker"));
    }

    #[test]
    fn times_and_counts_in_every_form() {
        assert_eq!(
            epoch_millis(&json!(1_700_000_000_000_i64)).map(|t| t.timestamp()),
            Some(1_700_000_000)
        );
        assert_eq!(
            epoch_millis(&json!(1_700_000_000_000.4)).map(|t| t.timestamp_millis()),
            Some(1_700_000_000_000)
        );
        assert_eq!(
            epoch_millis(&json!("1700000000000")).map(|t| t.timestamp()),
            Some(1_700_000_000)
        );
        assert_eq!(
            epoch_millis(&json!("2026-03-14T09:00:00Z")).map(|t| t.timestamp()),
            Some(1_773_478_800)
        );
        assert_eq!(epoch_millis(&json!(true)), None);
        let e = parse(&endpoint_event(json!({
            "EndpointName": "chat", "EndpointStatus": "IN_SERVICE",
            "ProductionVariants": [{"DesiredInstanceCount": "3", "DesiredWeight": 1}]
        })))
        .unwrap();
        assert_eq!(e.variants[0].desired_instance_count, Some(3));
        let only = VariantName::parse("AllTraffic").unwrap();
        assert!(
            e.variant(&only).is_some(),
            "a lone unnamed variant stands for any name"
        );
    }

    #[test]
    fn malformed_tags_are_ignored() {
        assert!(tags(Some(&json!("nope"))).is_empty());
        assert_eq!(tags(Some(&json!([{"Key": "a"}, {"nokey": 1}]))).len(), 1);
    }
}
