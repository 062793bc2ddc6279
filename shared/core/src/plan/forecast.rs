//! `[target.forecast]`: pre-scaling from the endpoint's own demand history (see `forecast/`).
//! The file section, its checked form and its validation, kept together so that a new knob is
//! one edit in one file.

use chrono_tz::Tz;
use serde::{Deserialize, Serialize};

use crate::duration::Span;
use crate::ids::Dimension;

/// The section as written.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ForecastFile {
    /// `active` (default) or `forecast_only`.
    pub mode: Option<String>,
    /// Requests per minute one instance (or copy) should serve: the target-tracking target value
    /// of `InvocationsPerInstance` (or `SageMakerInferenceComponentInvocationsPerCopy`). On a
    /// provisioned-concurrency target, one unit is one concurrent invocation kept warm: the
    /// requests per minute it should serve (the name is kept so one plan field means "per unit of
    /// the target's capacity" for every kind; the README says so).
    pub invocations_per_instance: Option<f64>,
    /// How far back the forecast reads (default 14d, at most 63d: CloudWatch keeps 5-minute
    /// datapoints for 63 days).
    pub history: Option<Span>,
    /// Less history than this (of the same kind of day, or of any day) gives no forecast.
    pub min_history: Option<Span>,
    /// Length of a forecast slot (default 10m; 5m to 1h, dividing a day).
    pub slot: Option<Span>,
    /// CloudWatch period read: 1m or 5m (default 5m).
    pub resolution: Option<Span>,
    /// Quantile of the earlier days' slot peaks (default 0.5).
    pub quantile: Option<f64>,
    /// Quantile of the forecast's own past errors that sets the margin (default 0.6).
    pub margin_quantile: Option<f64>,
    /// The margin never exceeds this (default 1.2).
    pub max_margin: Option<f64>,
    /// The forecast claim never asks more than this (default max_capacity).
    pub max_floor: Option<u32>,
    /// Time zone of the daily and weekly cycle (default: the plan's default time zone).
    pub timezone: Option<String>,
    /// What measures demand: `invocations` (default); `concurrency`, the requests in flight
    /// (for a target whose target tracking follows the high-resolution
    /// `ConcurrentRequestsPerModel` or `ConcurrentRequestsPerCopy`); or, for an asynchronous
    /// endpoint, `backlog` (its `ApproximateBacklogSize`).
    pub demand: Option<String>,
}

impl ForecastFile {
    /// Whether the section as written claims capacity: `mode` unset or `active`. (An unknown
    /// mode fails validation, and reads as not active here.)
    pub fn is_active(&self) -> bool {
        matches!(self.mode.as_deref(), None | Some("active"))
    }
}

/// What a forecast target's demand history measures (`metrics_port::demand_metric` names the
/// CloudWatch metric of each).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DemandKind {
    /// Requests: `Invocations` Sum, as requests per minute; `invocations_per_instance` is the
    /// requests per minute one instance should serve.
    #[default]
    Invocations,
    /// An asynchronous endpoint's queue: `ApproximateBacklogSize` Average, in requests waiting;
    /// `invocations_per_instance` is then the backlog one instance should hold (the target value
    /// of `ApproximateBacklogSizePerInstance`).
    Backlog,
    /// Requests in flight on the whole target: the high-resolution `ConcurrentRequestsPerModel`
    /// (per copy: `ConcurrentRequestsPerCopy`) times the instances (copies) serving, read as one
    /// CloudWatch metric-math expression (`metrics_port::DemandSource`);
    /// `invocations_per_instance` is then the concurrent requests one instance should hold (the
    /// target value of that metric's target-tracking policy).
    Concurrency,
}

impl DemandKind {
    /// The plan's spelling (`demand = "..."`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Invocations => "invocations",
            Self::Backlog => "backlog",
            Self::Concurrency => "concurrency",
        }
    }

    /// How a level of this demand is written after its figure (`612/min`, `40 in flight`,
    /// `300 queued`): claim reasons and the suggestion's evidence say it the same way.
    pub fn unit(self) -> &'static str {
        match self {
            Self::Invocations => "/min",
            Self::Concurrency => " in flight",
            Self::Backlog => " queued",
        }
    }
}

/// Whether the forecast acts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ForecastMode {
    /// The forecast claim takes part in arbitration.
    Active,
    /// The forecast and what it would set are recorded; nothing changes (as AWS's predictive
    /// scaling's forecast-only mode).
    ForecastOnly,
}

/// The checked section.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ForecastPolicy {
    pub mode: ForecastMode,
    pub invocations_per_instance: f64,
    pub history: Span,
    pub min_history: Span,
    pub slot: Span,
    pub resolution: Span,
    pub quantile: f64,
    pub margin_quantile: f64,
    pub max_margin: f64,
    pub max_floor: u32,
    #[serde(serialize_with = "tz_name")]
    pub timezone: Tz,
    pub demand: DemandKind,
}

fn tz_name<S: serde::Serializer>(tz: &Tz, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(tz.name())
}

pub const DEFAULT_HISTORY: Span = Span::hours(14 * 24);
/// CloudWatch keeps 5-minute datapoints for 63 days (aws-facts.md, CloudWatch retention).
pub const LONGEST_HISTORY: Span = Span::hours(63 * 24);
pub const DEFAULT_MIN_HISTORY: Span = Span::hours(3 * 24);
pub const DEFAULT_SLOT: Span = Span::minutes(10);
pub const DEFAULT_RESOLUTION: Span = Span::minutes(5);
/// CloudWatch keeps 1-minute datapoints for 15 days; older minutes are only in 5-minute ones,
/// so a 1-minute read reaches back at most this far.
pub const LONGEST_ONE_MINUTE_HISTORY: Span = Span::hours(15 * 24);
pub const DEFAULT_QUANTILE: f64 = 0.5;
pub const DEFAULT_MARGIN_QUANTILE: f64 = 0.6;
pub const DEFAULT_MAX_MARGIN: f64 = 1.2;

/// Checks the section of target `at`; every problem goes to `fail(field, problem)`.
pub fn check_forecast(
    at: &str,
    raw: &ForecastFile,
    max_capacity: u32,
    dimension: Option<Dimension>,
    default_tz: Tz,
    fail: &mut dyn FnMut(String, String),
) -> ForecastPolicy {
    let fat = format!("{at}.forecast");
    let field = |name: &str| format!("{fat}.{name}");
    let demand = match raw.demand.as_deref() {
        None | Some("invocations") => DemandKind::Invocations,
        // ApproximateBacklogSize is published per endpoint (dimension EndpointName), for
        // asynchronous endpoints only: an inference component has no backlog of its own.
        Some("backlog") if dimension == Some(Dimension::ComponentCopies) => {
            fail(
                field("demand"),
                "backlog is an asynchronous endpoint's (ApproximateBacklogSize, per endpoint): an inference component's demand is its invocations".into(),
            );
            DemandKind::Invocations
        }
        Some("backlog") if dimension == Some(Dimension::VariantProvisionedConcurrency) => {
            fail(
                field("demand"),
                "backlog is an asynchronous endpoint's: a serverless endpoint has no asynchronous queue, forecast its invocations".into(),
            );
            DemandKind::Invocations
        }
        Some("backlog") => DemandKind::Backlog,
        // A serverless variant publishes no ConcurrentRequestsPerModel (the serverless metrics
        // page lists every metric it publishes; `metrics_port::workload_metrics`).
        Some("concurrency") if dimension == Some(Dimension::VariantProvisionedConcurrency) => {
            fail(
                field("demand"),
                "concurrency reads ConcurrentRequestsPerModel, which a serverless endpoint does not publish: forecast its invocations".into(),
            );
            DemandKind::Invocations
        }
        Some("concurrency") => DemandKind::Concurrency,
        Some(other) => {
            fail(
                field("demand"),
                format!("{other:?} is unknown: use invocations, concurrency or backlog"),
            );
            DemandKind::Invocations
        }
    };
    let mode = match raw.mode.as_deref() {
        None | Some("active") => ForecastMode::Active,
        Some("forecast_only") => ForecastMode::ForecastOnly,
        Some(other) => {
            fail(
                field("mode"),
                format!("{other:?} is unknown: use active or forecast_only"),
            );
            ForecastMode::ForecastOnly
        }
    };
    let ipi = match raw.invocations_per_instance {
        Some(v) if v.is_finite() && v > 0.0 && v <= 1.0e9 => v,
        Some(v) => {
            fail(
                field("invocations_per_instance"),
                format!("{v} must be a positive number of requests per minute"),
            );
            1.0
        }
        None => {
            let what = if dimension == Some(Dimension::VariantProvisionedConcurrency) {
                "is required: the requests per minute one concurrent invocation of provisioned \
                 concurrency should serve (about 60 / ModelLatency in seconds, times the \
                 utilisation you aim for)"
            } else {
                "is required: the requests per minute one instance should serve (your \
                 target-tracking target value for InvocationsPerInstance)"
            };
            fail(field("invocations_per_instance"), what.into());
            1.0
        }
    };
    let history = raw.history.unwrap_or(DEFAULT_HISTORY);
    if history > LONGEST_HISTORY || history < Span::hours(24) {
        fail(
            field("history"),
            format!("{history} must be between 1d and {LONGEST_HISTORY} (CloudWatch keeps 5-minute data 63 days)"),
        );
    }
    let min_history = raw.min_history.unwrap_or(DEFAULT_MIN_HISTORY);
    if min_history > history || min_history < Span::hours(24) {
        fail(
            field("min_history"),
            format!(
                "{min_history}{} must be at least 1d and at most the history ({history})",
                if raw.min_history.is_none() {
                    " (the default: set min_history to at most the history)"
                } else {
                    ""
                }
            ),
        );
    }
    let slot = raw.slot.unwrap_or(DEFAULT_SLOT);
    let s = slot.as_secs();
    if !(300..=3600).contains(&s) || 86_400 % s != 0 {
        fail(
            field("slot"),
            format!(
                "{slot} must be between 5m and 1h and divide a day (5m, 10m, 15m, 20m, 30m, 1h)"
            ),
        );
    }
    let resolution = raw.resolution.unwrap_or(DEFAULT_RESOLUTION);
    if resolution != Span::minutes(1) && resolution != Span::minutes(5) {
        fail(
            field("resolution"),
            format!("{resolution} must be 1m or 5m"),
        );
    } else if s > 0 && s % resolution.as_secs() != 0 {
        fail(
            field("resolution"),
            format!("{resolution} must divide the slot ({slot})"),
        );
    } else if resolution == Span::minutes(1) && history > LONGEST_ONE_MINUTE_HISTORY {
        // Asked anyway, CloudWatch would answer the older days with no datapoints, and the
        // forecast would learn from the last 15 days while the plan says more.
        fail(
            field("resolution"),
            format!(
                "1m reads at most {LONGEST_ONE_MINUTE_HISTORY} of history (CloudWatch keeps 1-minute data 15 days), and history is {history}: shorten history or read 5m"
            ),
        );
    }
    let mut unit = |name: &str, v: Option<f64>, default: f64| match v {
        Some(q) if (0.0..=1.0).contains(&q) => q,
        Some(q) => {
            fail(field(name), format!("{q} must be between 0 and 1"));
            default
        }
        None => default,
    };
    let quantile = unit("quantile", raw.quantile, DEFAULT_QUANTILE);
    let margin_quantile = unit(
        "margin_quantile",
        raw.margin_quantile,
        DEFAULT_MARGIN_QUANTILE,
    );
    let max_margin = match raw.max_margin {
        Some(m) if m.is_finite() && (1.0..=4.0).contains(&m) => m,
        Some(m) => {
            fail(field("max_margin"), format!("{m} must be between 1 and 4"));
            DEFAULT_MAX_MARGIN
        }
        None => DEFAULT_MAX_MARGIN,
    };
    let max_floor = raw.max_floor.unwrap_or(max_capacity);
    if max_floor > max_capacity {
        fail(
            field("max_floor"),
            format!("{max_floor} is above max_capacity {max_capacity}"),
        );
    }
    let timezone = match raw.timezone.as_deref() {
        None => default_tz,
        Some(name) => name.parse::<Tz>().unwrap_or_else(|_| {
            fail(
                field("timezone"),
                format!(
                    "{name:?} is not an IANA time zone (e.g. Europe/Berlin, America/New_York, UTC)"
                ),
            );
            default_tz
        }),
    };
    ForecastPolicy {
        mode,
        invocations_per_instance: ipi,
        history,
        min_history,
        slot,
        resolution,
        quantile,
        margin_quantile,
        max_margin,
        max_floor: max_floor.min(max_capacity),
        timezone,
        demand,
    }
}

impl ForecastPolicy {
    /// Days of history below which there is no forecast.
    pub fn min_days(&self) -> usize {
        (self.min_history.as_secs() / 86_400).max(1) as usize
    }
}
