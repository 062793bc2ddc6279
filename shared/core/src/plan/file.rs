//! The plan file as written by operators (TOML). These structs mirror the file one to one and
//! refuse unknown fields, so a typo is an error naming the field instead of a silent default.
//! `validate.rs` turns them into the checked model in `model.rs`.

use serde::{Deserialize, Serialize};

use crate::duration::Span;

#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct PlanFile {
    /// Format version of the file; only 1 exists.
    pub version: u32,
    #[serde(default)]
    pub defaults: DefaultsFile,
    #[serde(default, rename = "target")]
    pub targets: Vec<TargetFile>,
}

#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct DefaultsFile {
    pub lead_time: Option<Span>,
    pub ramp_down: Option<RampFile>,
    pub timezone: Option<String>,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct TargetFile {
    /// AAS resource id: `endpoint/E/variant/V` or `inference-component/IC`.
    pub resource_id: String,
    pub min_capacity: u32,
    pub max_capacity: u32,
    pub lead_time: Option<Span>,
    pub ramp_down: Option<RampFile>,
    #[serde(default, rename = "peak")]
    pub peaks: Vec<PeakFile>,
    pub lead_time_measured: Option<MeasuredLeadTimeFile>,
    pub guard: Option<GuardFile>,
    pub wake: Option<WakeFile>,
    pub review: Option<ReviewFile>,
    pub forecast: Option<crate::plan::forecast::ForecastFile>,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RampFile {
    pub step: Span,
    pub keep_percent: u8,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct PeakFile {
    pub name: String,
    /// Recurring: five-field cron in `timezone`.
    pub cron: Option<String>,
    pub timezone: Option<String>,
    /// One-time: an RFC 3339 instant.
    pub at: Option<String>,
    pub duration: Span,
    pub floor: u32,
    #[serde(default)]
    pub suspend_scale_in: bool,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct MeasuredLeadTimeFile {
    pub percentile: Option<u8>,
    pub margin: Option<f64>,
    pub min: Option<Span>,
    pub max: Option<Span>,
    pub min_samples: Option<u32>,
    pub count_previous_models: Option<bool>,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct GuardFile {
    /// Alarms by name or ARN.
    #[serde(default)]
    pub alarms: Vec<String>,
    /// AWS/SageMaker metric names: an alarm on one of them whose dimensions name the target.
    #[serde(default)]
    pub metrics: Vec<String>,
    pub hold: Option<Span>,
    pub max_duration: Option<Span>,
    pub suspend_scale_in: Option<bool>,
    pub step_down: Option<RampFile>,
    /// `high_water` (default) or `current`.
    pub floor: Option<String>,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct WakeFile {
    /// Alarms by name or ARN.
    #[serde(default)]
    pub alarms: Vec<String>,
    /// AWS/SageMaker metric names: an alarm on one of them whose dimensions name the target.
    #[serde(default)]
    pub metrics: Vec<String>,
    pub capacity: Option<u32>,
    pub quiet_period: Option<Span>,
    pub max_duration: Option<Span>,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ReviewFile {
    pub enabled: Option<bool>,
    pub tag_endpoint: Option<bool>,
}
