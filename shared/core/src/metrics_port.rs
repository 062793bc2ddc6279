//! CloudWatch, as the forecast reads it: each managed target's demand history. Which metric
//! measures a target's demand is a headroom rule and lives here, not in the adapter.

use std::future::Future;

use chrono::{DateTime, Utc};

use crate::duration::Span;
use crate::forecast::DemandSeries;
use crate::ids::ScalableTargetId;
use crate::plan::DemandKind;
use crate::ports::{ErrorClass, PortError};
use serde::{Deserialize, Serialize};

/// A CloudWatch metric in headroom's terms: namespace, name, statistic and dimensions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MetricRef {
    pub namespace: &'static str,
    pub name: &'static str,
    pub statistic: &'static str,
    pub dimensions: Vec<(&'static str, String)>,
}

/// One target's demand history to read, and what measures it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DemandQuery {
    pub target: ScalableTargetId,
    pub kind: DemandKind,
}

impl DemandQuery {
    /// Requests (`Invocations`), the default.
    pub fn invocations(target: ScalableTargetId) -> Self {
        Self {
            target,
            kind: DemandKind::Invocations,
        }
    }
}

/// Whether a metric's datapoints are counts per period (a Sum: the port turns them into a rate
/// per minute) or levels (kept as they are).
pub fn is_count(m: &MetricRef) -> bool {
    m.statistic == "Sum"
}

/// How a target's demand is read from CloudWatch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DemandSource {
    /// One metric, as it is (a Sum becomes a rate per minute: [`is_count`]).
    Metric(MetricRef),
    /// The requests in flight on the whole target, as one metric-math expression over three
    /// metrics of the same period: `per_model` (the high-resolution `ConcurrentRequestsPerModel`
    /// or `ConcurrentRequestsPerCopy`, Average: requests in flight per instance or copy) times
    /// the instances serving, which is `invocations / per_instance`: every request adds 1 to
    /// `Invocations` and `1 / instances` to `InvocationsPerInstance` (SageMaker API reference,
    /// `ScalingPolicyMetric`), so the ratio of their Sums is the instance count the period's
    /// requests saw. CloudWatch publishes no instance count of its own for a variant.
    InFlight {
        per_model: MetricRef,
        invocations: MetricRef,
        per_instance: MetricRef,
    },
}

impl DemandSource {
    /// The metrics the source reads, in the order [`DemandSource::expression`] names them.
    pub fn inputs(&self) -> Vec<&MetricRef> {
        match self {
            Self::Metric(m) => vec![m],
            Self::InFlight {
                per_model,
                invocations,
                per_instance,
            } => vec![per_model, invocations, per_instance],
        }
    }

    /// GetMetricData queries one target takes: its inputs, plus the expression when there is one.
    pub fn queries(&self) -> usize {
        match self {
            Self::Metric(_) => 1,
            Self::InFlight { .. } => 4,
        }
    }

    /// Whether the datapoints are counts per period (turned into a rate per minute).
    pub fn is_count(&self) -> bool {
        match self {
            Self::Metric(m) => is_count(m),
            Self::InFlight { .. } => false,
        }
    }

    /// The metric-math expression over the inputs, named by `ids` (in [`DemandSource::inputs`]
    /// order); `None` for a single metric. A period without requests has no instance count to
    /// divide by and nothing in flight: it reads 0, not a division by zero.
    pub fn expression(&self, ids: &[String]) -> Option<String> {
        match (self, ids) {
            (Self::InFlight { .. }, [c, n, p]) => Some(format!("IF({p} > 0, {c} * {n} / {p}, 0)")),
            _ => None,
        }
    }
}

/// What measures a target's demand in CloudWatch (see [`demand_metric`] for the single
/// metrics): for `concurrency`, the requests in flight of [`DemandSource::InFlight`].
pub fn demand_source(id: &ScalableTargetId, kind: DemandKind) -> DemandSource {
    if kind != DemandKind::Concurrency {
        return DemandSource::Metric(demand_metric(id, kind));
    }
    let [_, per_model, per_instance] = workload_metrics(id);
    DemandSource::InFlight {
        per_model: MetricRef {
            statistic: "Average",
            ..per_model
        },
        invocations: demand_metric(id, DemandKind::Invocations),
        per_instance,
    }
}

/// The metric that measures a target's demand: `Invocations` (Sum) of the variant, or of the
/// inference component (SageMaker publishes it per component with the `InferenceComponentName`
/// dimension); for an asynchronous endpoint's backlog, `ApproximateBacklogSize` (Average, per
/// endpoint: SageMaker developer guide, "Monitor asynchronous endpoints", endpoint metrics). A
/// serverless variant publishes `Invocations` too ("Common endpoint metrics" in the SageMaker
/// developer guide, "Alarms and logs for tracking metrics from serverless endpoints"), so its
/// provisioned concurrency is forecast from the same metric. `concurrency` is read through
/// [`demand_source`]; here it names its `Invocations`.
pub fn demand_metric(id: &ScalableTargetId, kind: DemandKind) -> MetricRef {
    match (id, kind) {
        (ScalableTargetId::Variant { endpoint, .. }, DemandKind::Backlog) => MetricRef {
            namespace: "AWS/SageMaker",
            name: "ApproximateBacklogSize",
            statistic: "Average",
            dimensions: vec![("EndpointName", endpoint.as_str().to_owned())],
        },
        (
            ScalableTargetId::Variant {
                endpoint, variant, ..
            },
            DemandKind::Invocations | DemandKind::Concurrency,
        ) => MetricRef {
            namespace: "AWS/SageMaker",
            name: "Invocations",
            statistic: "Sum",
            dimensions: vec![
                ("EndpointName", endpoint.as_str().to_owned()),
                ("VariantName", variant.as_str().to_owned()),
            ],
        },
        // Validation refuses a backlog forecast on a component (`plan::forecast`).
        (ScalableTargetId::InferenceComponent(name), _) => MetricRef {
            namespace: "AWS/SageMaker",
            name: "Invocations",
            statistic: "Sum",
            dimensions: vec![("InferenceComponentName", name.as_str().to_owned())],
        },
    }
}

/// How long after a minute ends its datapoint may still be missing. SageMaker publishes its
/// invocation metrics every 60 s (SageMaker API reference, `MetricsConfig`,
/// `MetricPublishFrequencyInSeconds`: invocation metrics stay at the default 60-second interval),
/// and CloudWatch takes a little longer to make them readable. A period that ended less than this
/// ago may still be filling: read, it is low, and the forecast's level with it.
pub const PUBLISH_DELAY: Span = Span::minutes(3);

/// The end of the newest whole `period` (counted from the epoch, as CloudWatch counts them)
/// whose datapoints have all been published by `now`: history is read up to here, never later.
pub fn settled_end(now: DateTime<Utc>, period: Span) -> DateTime<Utc> {
    period_start(now - PUBLISH_DELAY.to_chrono(), period)
}

/// The start of the `period` (counted from the epoch) that holds `t`.
pub fn period_start(t: DateTime<Utc>, period: Span) -> DateTime<Utc> {
    let p = period.as_secs().max(1);
    DateTime::from_timestamp(t.timestamp().div_euclid(p) * p, 0).unwrap_or(t)
}

/// CloudWatch's GetMetricData limits: queries and datapoints per call.
pub const QUERIES_PER_CALL: usize = 500;
pub const DATAPOINTS_PER_CALL: usize = 100_800;

/// How many targets' histories fit one GetMetricData call, one query per target.
pub fn targets_per_call(from: DateTime<Utc>, to: DateTime<Utc>, period: Span) -> usize {
    targets_per_call_of(from, to, period, 1)
}

/// How many targets fit one call when each takes `queries` queries ([`DemandSource::queries`]).
/// Every query's datapoints are counted against the call's 100,800, the inputs of an expression
/// too: the limit is written for the call, and counting them can only make calls smaller.
pub fn targets_per_call_of(
    from: DateTime<Utc>,
    to: DateTime<Utc>,
    period: Span,
    queries: usize,
) -> usize {
    let q = queries.max(1);
    let points = ((to - from).num_seconds() / period.as_secs().max(1)).max(1) as usize;
    (DATAPOINTS_PER_CALL / (points * q)).clamp(1, QUERIES_PER_CALL / q)
}

/// What one target's workload measured over a window. `None` where CloudWatch had no datapoint
/// (no traffic, the metric is not published, or the window is too young).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Workload {
    pub from: DateTime<Utc>,
    pub to: DateTime<Utc>,
    /// `ModelLatency` Average, in seconds (CloudWatch publishes it in microseconds: SageMaker
    /// developer guide, "Amazon SageMaker AI metrics in Amazon CloudWatch", endpoint invocation
    /// metrics, "Units: Microseconds").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_latency_mean_s: Option<f64>,
    /// The highest `ConcurrentRequestsPerModel` (variant) or `ConcurrentRequestsPerCopy`
    /// (component) datapoint: concurrent requests per instance or copy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub concurrency_max: Option<f64>,
    /// `InvocationsPerInstance` (variant) or `InvocationsPerCopy` (component) Sum over the
    /// window, per minute: what the target-tracking metric averaged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub invocations_per_instance_per_min: Option<f64>,
}

impl Workload {
    pub fn empty(from: DateTime<Utc>, to: DateTime<Utc>) -> Self {
        Self {
            from,
            to,
            ..Self::default()
        }
    }

    /// "2026-03-14T08:00Z..2026-03-14T09:00Z", for evidence.
    pub fn window(&self) -> String {
        format!(
            "{}..{}",
            self.from.format("%Y-%m-%dT%H:%MZ"),
            self.to.format("%Y-%m-%dT%H:%MZ")
        )
    }
}

/// A CloudWatch alarm and the metric it watches (DescribeAlarms). Metric-math alarms have no
/// single metric: `metric` is then `None`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AlarmView {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metric: Option<String>,
}

/// Three queries per target (latency, concurrency, invocations per instance): 100 targets make
/// 300 queries, within GetMetricData's 500.
pub const WORKLOAD_TARGETS_PER_CALL: usize = 100;
/// DescribeAlarms takes at most 100 alarm names per call (CloudWatch API reference,
/// DescribeAlarms `AlarmNames`, "Maximum number of 100 items").
pub const ALARM_NAMES_PER_CALL: usize = 100;

fn unwired(operation: &str) -> PortError {
    PortError::new(
        operation,
        ErrorClass::Permanent,
        "no CloudWatch port is wired here",
    )
}

/// The workload metrics of a target: (name, statistic, dimensions) for latency, concurrency and
/// invocations per instance. SageMaker publishes the component's under `InferenceComponentName`
/// and the variant's under `EndpointName` + `VariantName` (SageMaker developer guide, "Amazon
/// SageMaker AI metrics in Amazon CloudWatch"; the concurrency names as in aws-facts.md).
/// A serverless variant publishes neither `ConcurrentRequestsPerModel` nor
/// `InvocationsPerInstance` (the serverless metrics page lists every metric it publishes); its
/// provisioned-concurrency target reads them all the same and gets `None` for both, so a lint
/// rule that needs them says the data is missing rather than judging instances it has not.
pub fn workload_metrics(id: &ScalableTargetId) -> [MetricRef; 3] {
    let (dimensions, concurrency, per_instance) = match id {
        ScalableTargetId::Variant {
            endpoint, variant, ..
        } => (
            vec![
                ("EndpointName", endpoint.as_str().to_owned()),
                ("VariantName", variant.as_str().to_owned()),
            ],
            "ConcurrentRequestsPerModel",
            "InvocationsPerInstance",
        ),
        ScalableTargetId::InferenceComponent(name) => (
            vec![("InferenceComponentName", name.as_str().to_owned())],
            "ConcurrentRequestsPerCopy",
            "InvocationsPerCopy",
        ),
    };
    let metric = |name, statistic| MetricRef {
        namespace: "AWS/SageMaker",
        name,
        statistic,
        dimensions: dimensions.clone(),
    };
    [
        metric("ModelLatency", "Average"),
        metric(concurrency, "Maximum"),
        metric(per_instance, "Sum"),
    ]
}

/// CloudWatch metrics, as the forecast reads them.
pub trait DemandHistory: Send + Sync {
    /// Each target's demand in `[from, to)` at `period`, in the order of `targets`: requests
    /// per minute per period, or the backlog's level for a backlog query (`NaN` where
    /// CloudWatch has no datapoint).
    fn demand(
        &self,
        targets: &[DemandQuery],
        from: DateTime<Utc>,
        to: DateTime<Utc>,
        period: Span,
    ) -> impl Future<Output = Result<Vec<DemandSeries>, PortError>> + Send;

    /// What each target's workload measured in `[from, to)` (ModelLatency, concurrency,
    /// invocations per instance), in the order of `targets`: one GetMetricData call for up to
    /// [`WORKLOAD_TARGETS_PER_CALL`] targets, one datapoint per query (the whole window).
    fn workload(
        &self,
        targets: &[ScalableTargetId],
        from: DateTime<Utc>,
        to: DateTime<Utc>,
    ) -> impl Future<Output = Result<Vec<Workload>, PortError>> + Send {
        let _ = (targets, from, to);
        async { Err(unwired("read the workload metrics")) }
    }

    /// The metric each named CloudWatch alarm watches (DescribeAlarms); alarms that do not exist
    /// are left out.
    fn alarms(
        &self,
        names: &[String],
    ) -> impl Future<Output = Result<Vec<AlarmView>, PortError>> + Send {
        let _ = names;
        async {
            Err(PortError::new(
                "describe the alarms",
                ErrorClass::Permanent,
                "this metrics port reads metrics only (no cloudwatch:DescribeAlarms here)",
            ))
        }
    }

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
        targets: &[DemandQuery],
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

#[cfg(test)]
mod tests {
    use super::*;

    fn names(s: &DemandSource) -> Vec<(&str, &str)> {
        s.inputs().iter().map(|m| (m.name, m.statistic)).collect()
    }

    #[test]
    fn concurrency_multiplies_the_per_model_level_by_the_instances_serving() {
        let variant = ScalableTargetId::variant("chat", "AllTraffic").expect("id");
        let s = demand_source(&variant, DemandKind::Concurrency);
        assert_eq!(
            names(&s),
            [
                ("ConcurrentRequestsPerModel", "Average"),
                ("Invocations", "Sum"),
                ("InvocationsPerInstance", "Sum"),
            ]
        );
        assert!(!s.is_count());
        assert_eq!(s.queries(), 4);
        let ids = ["c".to_owned(), "n".to_owned(), "p".to_owned()];
        assert_eq!(
            s.expression(&ids).as_deref(),
            Some("IF(p > 0, c * n / p, 0)")
        );
        // A component's copies: the per-copy metrics, under its own dimension.
        let ic = ScalableTargetId::component("chat-ic").expect("id");
        let s = demand_source(&ic, DemandKind::Concurrency);
        assert_eq!(
            names(&s),
            [
                ("ConcurrentRequestsPerCopy", "Average"),
                ("Invocations", "Sum"),
                ("InvocationsPerCopy", "Sum"),
            ]
        );
        assert!(s
            .inputs()
            .iter()
            .all(|m| m.dimensions == [("InferenceComponentName", "chat-ic".to_owned())]));
    }

    #[test]
    fn a_single_metric_is_one_query_without_an_expression() {
        let variant = ScalableTargetId::variant("chat", "AllTraffic").expect("id");
        let s = demand_source(&variant, DemandKind::Invocations);
        assert_eq!((s.queries(), s.is_count()), (1, true));
        assert_eq!(s.expression(&["t0".to_owned()]), None);
        let s = demand_source(&variant, DemandKind::Backlog);
        assert_eq!((s.queries(), s.is_count()), (1, false));
    }

    #[test]
    fn calls_shrink_with_the_queries_each_target_takes() {
        let from: DateTime<Utc> = "2026-03-01T00:00:00Z".parse().expect("t");
        let to = from + chrono::Duration::days(14);
        assert_eq!(targets_per_call(from, to, Span::minutes(5)), 25);
        assert_eq!(targets_per_call_of(from, to, Span::minutes(5), 4), 6);
        // A short window is bound by the 500 queries instead.
        let hour = from + chrono::Duration::hours(1);
        assert_eq!(targets_per_call_of(from, hour, Span::minutes(5), 4), 125);
    }
}
