//! CloudWatch, as the forecast reads it: each managed target's demand history. Which metric
//! measures a target's demand is a headroom rule and lives here, not in the adapter.

use std::future::Future;

use chrono::{DateTime, Utc};

use crate::duration::Span;
use crate::forecast::DemandSeries;
use crate::ids::ScalableTargetId;
use crate::ports::PortError;

/// A CloudWatch metric in headroom's terms: namespace, name, statistic and dimensions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MetricRef {
    pub namespace: &'static str,
    pub name: &'static str,
    pub statistic: &'static str,
    pub dimensions: Vec<(&'static str, String)>,
}

/// The metric that counts a target's requests: `Invocations` (Sum) of the variant, or of the
/// inference component (SageMaker publishes it per component with the `InferenceComponentName`
/// dimension).
pub fn demand_metric(id: &ScalableTargetId) -> MetricRef {
    match id {
        ScalableTargetId::Variant { endpoint, variant } => MetricRef {
            namespace: "AWS/SageMaker",
            name: "Invocations",
            statistic: "Sum",
            dimensions: vec![
                ("EndpointName", endpoint.as_str().to_owned()),
                ("VariantName", variant.as_str().to_owned()),
            ],
        },
        ScalableTargetId::InferenceComponent(name) => MetricRef {
            namespace: "AWS/SageMaker",
            name: "Invocations",
            statistic: "Sum",
            dimensions: vec![("InferenceComponentName", name.as_str().to_owned())],
        },
    }
}

/// CloudWatch's GetMetricData limits: queries and datapoints per call.
pub const QUERIES_PER_CALL: usize = 500;
pub const DATAPOINTS_PER_CALL: usize = 100_800;

/// How many targets' histories fit one GetMetricData call.
pub fn targets_per_call(from: DateTime<Utc>, to: DateTime<Utc>, period: Span) -> usize {
    let points = ((to - from).num_seconds() / period.as_secs().max(1)).max(1) as usize;
    (DATAPOINTS_PER_CALL / points).clamp(1, QUERIES_PER_CALL)
}

/// CloudWatch metrics, as the forecast reads them.
pub trait DemandHistory: Send + Sync {
    /// Each target's demand in `[from, to)` at `period`, as requests per minute per period
    /// (`NaN` where CloudWatch has no datapoint), in the order of `targets`.
    fn demand(
        &self,
        targets: &[ScalableTargetId],
        from: DateTime<Utc>,
        to: DateTime<Utc>,
        period: Span,
    ) -> impl Future<Output = Result<Vec<DemandSeries>, PortError>> + Send;

    /// Whether there is a metrics source behind the port at all (`()` is none: the tick then
    /// leaves due forecasts for a function that reads CloudWatch, rather than recording "no
    /// history" for them).
    fn is_wired(&self) -> bool {
        true
    }
}

/// No metrics port: the function does not read CloudWatch, so forecasts are not refreshed.
impl DemandHistory for () {
    fn is_wired(&self) -> bool {
        false
    }

    async fn demand(
        &self,
        targets: &[ScalableTargetId],
        from: DateTime<Utc>,
        _to: DateTime<Utc>,
        period: Span,
    ) -> Result<Vec<DemandSeries>, PortError> {
        Ok(targets
            .iter()
            .map(|_| DemandSeries::empty(from, period.as_secs()))
            .collect())
    }
}

/// The part of `s` in `[from, to)`.
pub fn window(s: &DemandSeries, from: DateTime<Utc>, to: DateTime<Utc>) -> DemandSeries {
    let p = s.period_secs;
    let skip = ((from - s.start).num_seconds().max(0) + p - 1) / p;
    let end = ((to - s.start).num_seconds().max(0) / p).min(s.values.len() as i64);
    let skip = (skip as usize).min(end as usize);
    DemandSeries::new(s.at(skip), p, s.values[skip..end as usize].to_vec())
}
