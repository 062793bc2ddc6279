//! CloudWatch in moto through the [`CborBridge`]: a client that reaches it, and a target's demand
//! history written with PutMetricData as SageMaker would publish it.

use aws_config::SdkConfig;
use aws_sdk_cloudwatch::primitives::DateTime as AwsDateTime;
use aws_sdk_cloudwatch::types::{Dimension, MetricDatum, StandardUnit};
use chrono::{DateTime, Utc};
use headroom_core::metrics_port::demand_metric;
use headroom_core::ScalableTargetId;

use crate::cbor_bridge::CborBridge;

/// Datapoints per PutMetricData call (CloudWatch takes up to 1,000).
const DATUMS_PER_CALL: usize = 500;

/// A CloudWatch client for `config` that reaches moto through `bridge`.
pub fn cloudwatch_client(config: &SdkConfig, bridge: &CborBridge) -> aws_sdk_cloudwatch::Client {
    aws_sdk_cloudwatch::Client::from_conf(
        aws_sdk_cloudwatch::config::Builder::from(config)
            .endpoint_url(bridge.url())
            .build(),
    )
}

/// Writes `points` (period start, requests in the period) as the target's `Invocations`, the
/// metric [`demand_metric`] names (namespace, dimensions), in calls of [`DATUMS_PER_CALL`].
///
/// # Panics
/// If a PutMetricData call fails: the test's setup is broken.
pub async fn put_invocations(
    client: &aws_sdk_cloudwatch::Client,
    id: &ScalableTargetId,
    points: &[(DateTime<Utc>, f64)],
) {
    let metric = demand_metric(id, headroom_core::plan::DemandKind::Invocations);
    let dimensions: Vec<Dimension> = metric
        .dimensions
        .iter()
        .map(|(k, v)| Dimension::builder().name(*k).value(v).build())
        .collect();
    for chunk in points.chunks(DATUMS_PER_CALL) {
        let data: Vec<MetricDatum> = chunk
            .iter()
            .map(|(at, requests)| {
                MetricDatum::builder()
                    .metric_name(metric.name)
                    .set_dimensions(Some(dimensions.clone()))
                    .timestamp(AwsDateTime::from_secs(at.timestamp()))
                    .value(*requests)
                    .unit(StandardUnit::Count)
                    .build()
            })
            .collect();
        client
            .put_metric_data()
            .namespace(metric.namespace)
            .set_metric_data(Some(data))
            .send()
            .await
            .unwrap_or_else(|e| {
                panic!(
                    "PutMetricData of {id}'s Invocations: {}",
                    aws_sdk_cloudwatch::error::DisplayErrorContext(e)
                )
            });
    }
}
