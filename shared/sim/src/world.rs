//! The world file: everything the simulator needs that headroom's plan does not say. What each
//! endpoint can serve, how long its instances take to start, whether it is real-time or async, the
//! operator's Application Auto Scaling policies (target tracking, the backlog step policy,
//! scheduled actions) and the CloudWatch alarms the plan names. TOML, unknown fields refused, every
//! problem reported with its field, like the plan.
//!
//! ```toml
//! seed = 7
//! [metrics]
//! standard_delay = "2m"          # 1-minute SageMaker metrics reach CloudWatch this late
//! high_resolution_delay = "20s"  # 10-second metrics
//!
//! [[target]]
//! resource_id = "endpoint/chat-api/variant/AllTraffic"
//! mode = "real-time"             # or "async"
//! capacity_per_instance = 10.0   # requests/s one instance serves within the latency objective
//! latency_objective = "2s"
//! service_time = "1s"            # how long a request occupies the model (concurrency metric)
//! queue_bound = 300              # real-time: requests that may wait; more fail at once
//! request_timeout = "60s"        # real-time: a waiting request fails after this
//! provisioning = "6m"            # or { min = "4m30s", max = "9m" } (uniform, seeded)
//!   [target.target_tracking]
//!   metric = "InvocationsPerInstance"  # or ConcurrentRequestsPerModel, ApproximateBacklogSizePerInstance
//!   target_value = 450.0
//!   scale_out_cooldown = "5m"
//!   scale_in_cooldown = "5m"
//!
//! [[alarm]]
//! name = "chat-api-burst"
//! target = "endpoint/chat-api/variant/AllTraffic"
//! metric = "InvocationsPerInstance"
//! comparison = "GreaterThanThreshold"
//! threshold = 540.0
//! evaluation_periods = 2
//! datapoints_to_alarm = 2
//!
//! [[announcement]]                  # a headroom.peak/v1 event your systems send (announcement.rs)
//! target = "endpoint/chat-api/variant/AllTraffic"
//! name = "spring-campaign"
//! sent = "2026-03-02T15:45:00Z"
//! starts = "2026-03-02T16:00:00Z"
//! duration = "30m"
//! floor = 20
//! ```

use std::collections::HashSet;
use std::fmt;

use chrono::{DateTime, Utc};
use chrono_tz::Tz;
use headroom_core::cron::Cron;
use headroom_core::{ScalableTargetId, Span};
use serde::Deserialize;

use crate::announcement::{self, Announcement, AnnouncementFile};

/// SageMaker's default cooldown for variants, both ways (aws-facts.md).
pub const DEFAULT_COOLDOWN: Span = Span::seconds(300);
/// "Standard SageMaker metrics come once a minute and reach CloudWatch a few minutes late."
pub const DEFAULT_STANDARD_DELAY: Span = Span::minutes(2);
/// High-resolution metrics come every 10 s; we assume they are visible 20 s after their period.
pub const DEFAULT_HIGH_RESOLUTION_DELAY: Span = Span::seconds(20);
/// Metric history kept per series; alarms may look no further back than this (see `metrics.rs`).
pub const MAX_LOOKBACK_PERIODS: i64 = 60;

// ---------------------------------------------------------------------------------------------
// The file, one to one.

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct WorldFile {
    seed: Option<u64>,
    #[serde(default)]
    metrics: MetricsFile,
    #[serde(default, rename = "target")]
    targets: Vec<TargetFile>,
    #[serde(default, rename = "alarm")]
    alarms: Vec<AlarmFile>,
    #[serde(default, rename = "announcement")]
    announcements: Vec<AnnouncementFile>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct MetricsFile {
    standard_delay: Option<Span>,
    high_resolution_delay: Option<Span>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct TargetFile {
    resource_id: String,
    mode: Option<String>,
    capacity_per_instance: f64,
    latency_objective: Option<Span>,
    service_time: Option<Span>,
    queue_bound: Option<f64>,
    request_timeout: Option<Span>,
    provisioning: ProvisioningFile,
    trace_scale: Option<f64>,
    initial_capacity: Option<u32>,
    target_tracking: Option<TrackingFile>,
    backlog_step_policy: Option<StepFile>,
    #[serde(default, rename = "scheduled_action")]
    scheduled_actions: Vec<ScheduledFile>,
}

#[derive(Debug)]
enum ProvisioningFile {
    Fixed(Span),
    Uniform { min: Span, max: Span },
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct UniformFile {
    min: Span,
    max: Span,
}

/// By hand rather than `#[serde(untagged)]`: untagged answers every mistake with "data did not
/// match any variant", where a bare number (`provisioning = 6`) should get the duration's own
/// advice (write "6m" in quotes) and a range its field names.
impl<'de> Deserialize<'de> for ProvisioningFile {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        use serde::de::value::{
            I64Deserializer, MapAccessDeserializer, StrDeserializer, U64Deserializer,
        };

        struct Either;
        impl<'de> serde::de::Visitor<'de> for Either {
            type Value = ProvisioningFile;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str(
                    r#"a duration such as "6m", or a range such as { min = "4m30s", max = "9m" }"#,
                )
            }
            fn visit_str<E: serde::de::Error>(self, text: &str) -> Result<Self::Value, E> {
                Span::deserialize(StrDeserializer::<E>::new(text)).map(ProvisioningFile::Fixed)
            }
            fn visit_i64<E: serde::de::Error>(self, n: i64) -> Result<Self::Value, E> {
                Span::deserialize(I64Deserializer::<E>::new(n)).map(ProvisioningFile::Fixed)
            }
            fn visit_u64<E: serde::de::Error>(self, n: u64) -> Result<Self::Value, E> {
                Span::deserialize(U64Deserializer::<E>::new(n)).map(ProvisioningFile::Fixed)
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                map: A,
            ) -> Result<Self::Value, A::Error> {
                let UniformFile { min, max } =
                    UniformFile::deserialize(MapAccessDeserializer::new(map))?;
                Ok(ProvisioningFile::Uniform { min, max })
            }
        }
        deserializer.deserialize_any(Either)
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct TrackingFile {
    metric: String,
    target_value: f64,
    scale_out_cooldown: Option<Span>,
    scale_in_cooldown: Option<Span>,
    #[serde(default)]
    disable_scale_in: bool,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct StepFile {
    adjustment: Option<u32>,
    cooldown: Option<Span>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ScheduledFile {
    name: String,
    cron: Option<String>,
    timezone: Option<String>,
    at: Option<String>,
    min_capacity: Option<u32>,
    max_capacity: Option<u32>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct AlarmFile {
    name: String,
    target: String,
    metric: String,
    period: Option<Span>,
    comparison: String,
    threshold: f64,
    evaluation_periods: u32,
    datapoints_to_alarm: Option<u32>,
}

// ---------------------------------------------------------------------------------------------
// The checked model.

/// The simulated world: validated, with defaults applied.
#[derive(Debug, Clone)]
pub struct World {
    pub seed: u64,
    /// How late 1-minute datapoints become visible, in seconds after their minute ends.
    pub standard_delay: i64,
    /// How late 10-second datapoints become visible.
    pub high_resolution_delay: i64,
    pub targets: Vec<TargetWorld>,
    pub alarms: Vec<AlarmDef>,
    /// Announced peaks, in the order they reach headroom (see `announcement.rs`).
    pub announcements: Vec<Announcement>,
}

/// Real-time or asynchronous inference.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Excess requests wait in a bounded queue, then fail.
    RealTime,
    /// Requests wait in an unbounded queue; MinCapacity may be 0.
    Async,
}

/// How long a new instance takes from launch to serving (provisioning plus model loading).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Provisioning {
    Fixed(i64),
    /// Uniform between the two, drawn per instance from the seeded generator.
    Uniform {
        min: i64,
        max: i64,
    },
}

impl Provisioning {
    /// The expected duration (the oracle plans with it).
    pub fn mean(&self) -> f64 {
        match *self {
            Provisioning::Fixed(s) => s as f64,
            Provisioning::Uniform { min, max } => (min + max) as f64 / 2.0,
        }
    }
}

/// The CloudWatch metrics the simulator publishes per target.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Metric {
    /// Requests sent to the variant per minute (Sum).
    Invocations,
    /// Invocations per minute divided by the instances in service.
    InvocationsPerInstance,
    /// Requests in flight (being served or waiting) per instance in service; also published every
    /// 10 s (the high-resolution metric).
    ConcurrentRequestsPerModel,
    /// Async: requests waiting (Average over the period).
    ApproximateBacklogSize,
    /// Async: the backlog divided by the instances in service (by 1 when none are).
    ApproximateBacklogSizePerInstance,
    /// Async: 1 while requests wait and no instance is in service, else 0 (Average).
    HasBacklogWithoutCapacity,
}

impl Metric {
    pub const ALL: [Metric; 6] = [
        Metric::Invocations,
        Metric::InvocationsPerInstance,
        Metric::ConcurrentRequestsPerModel,
        Metric::ApproximateBacklogSize,
        Metric::ApproximateBacklogSizePerInstance,
        Metric::HasBacklogWithoutCapacity,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Metric::Invocations => "Invocations",
            Metric::InvocationsPerInstance => "InvocationsPerInstance",
            Metric::ConcurrentRequestsPerModel => "ConcurrentRequestsPerModel",
            Metric::ApproximateBacklogSize => "ApproximateBacklogSize",
            Metric::ApproximateBacklogSizePerInstance => "ApproximateBacklogSizePerInstance",
            Metric::HasBacklogWithoutCapacity => "HasBacklogWithoutCapacity",
        }
    }

    pub fn index(self) -> usize {
        self as usize
    }

    fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|m| m.name() == name)
    }
}

/// CloudWatch's comparison operators.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Comparison {
    GreaterThan,
    GreaterOrEqual,
    LessThan,
    LessOrEqual,
}

impl Comparison {
    fn parse(name: &str) -> Option<Self> {
        match name {
            "GreaterThanThreshold" | ">" => Some(Self::GreaterThan),
            "GreaterThanOrEqualToThreshold" | ">=" => Some(Self::GreaterOrEqual),
            "LessThanThreshold" | "<" => Some(Self::LessThan),
            "LessThanOrEqualToThreshold" | "<=" => Some(Self::LessOrEqual),
            _ => None,
        }
    }

    pub fn breaches(self, value: f64, threshold: f64) -> bool {
        match self {
            Self::GreaterThan => value > threshold,
            Self::GreaterOrEqual => value >= threshold,
            Self::LessThan => value < threshold,
            Self::LessOrEqual => value <= threshold,
        }
    }
}

/// An AAS target-tracking policy.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TrackingPolicy {
    /// InvocationsPerInstance, ConcurrentRequestsPerModel (high resolution: scale-out on 10-second
    /// datapoints) or ApproximateBacklogSizePerInstance.
    pub metric: Metric,
    pub target_value: f64,
    pub scale_out_cooldown: i64,
    pub scale_in_cooldown: i64,
    pub disable_scale_in: bool,
}

/// AWS's scale-from-zero recipe: a step policy adding capacity on the HasBacklogWithoutCapacity
/// alarm (Average, period 60, 2 of 2, threshold >= 1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StepPolicy {
    pub adjustment: u32,
    pub cooldown: i64,
}

/// An AAS scheduled action: sets MinCapacity and/or MaxCapacity at its times.
#[derive(Debug, Clone)]
pub struct ScheduledAction {
    pub name: String,
    pub when: ScheduledWhen,
    pub min: Option<u32>,
    pub max: Option<u32>,
}

#[derive(Debug, Clone)]
pub enum ScheduledWhen {
    Cron { cron: Cron, timezone: Tz },
    Once(DateTime<Utc>),
}

impl ScheduledAction {
    /// Its firing times in `[from, to)`, in order.
    pub fn times(&self, from: DateTime<Utc>, to: DateTime<Utc>) -> Vec<DateTime<Utc>> {
        match &self.when {
            ScheduledWhen::Cron { cron, timezone } => cron.occurrences(*timezone, from, to),
            ScheduledWhen::Once(at) => (*at >= from && *at < to)
                .then_some(*at)
                .into_iter()
                .collect(),
        }
    }
}

/// One simulated endpoint target.
#[derive(Debug, Clone)]
pub struct TargetWorld {
    pub id: ScalableTargetId,
    pub mode: Mode,
    pub capacity_per_instance: f64,
    pub latency_objective: i64,
    pub service_time: f64,
    /// Real-time only: requests that may wait. Async queues are unbounded.
    pub queue_bound: f64,
    /// Real-time only: a waiting request fails after this many seconds.
    pub request_timeout: i64,
    pub provisioning: Provisioning,
    /// Multiplies the trace's request counts for this target.
    pub trace_scale: f64,
    /// Instances in service when the run starts (default: what the tracking policy would hold
    /// for the first interval's load).
    pub initial_capacity: Option<u32>,
    pub tracking: Option<TrackingPolicy>,
    pub backlog_step: Option<StepPolicy>,
    pub scheduled: Vec<ScheduledAction>,
}

/// Which datapoints an alarm evaluates.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Period {
    /// 1-minute datapoints.
    Minute,
    /// 10-second datapoints (ConcurrentRequestsPerModel only).
    TenSeconds,
}

impl Period {
    pub fn secs(self) -> i64 {
        match self {
            Period::Minute => 60,
            Period::TenSeconds => 10,
        }
    }
}

/// A CloudWatch metric alarm on one target's metric: ALARM when `datapoints_to_alarm` of the last
/// `evaluation_periods` datapoints breach.
#[derive(Debug, Clone)]
pub struct AlarmDef {
    pub name: String,
    /// Index into `World::targets`.
    pub target: usize,
    pub metric: Metric,
    pub period: Period,
    pub comparison: Comparison,
    pub threshold: f64,
    pub evaluation_periods: u32,
    pub datapoints_to_alarm: u32,
}

impl World {
    /// The world target on `id`'s resource (the world file names resource ids only; the plan
    /// says the dimension).
    pub fn target_index(&self, id: &ScalableTargetId) -> Option<usize> {
        self.targets.iter().position(|t| t.id.same_resource(id))
    }

    /// Checks the world against the trace's time span (scheduled actions parse lazily).
    pub fn parse(file: &str, text: &str) -> Result<Self, WorldError> {
        let raw: WorldFile = toml::from_str(text).map_err(|e| WorldError {
            file: file.to_owned(),
            issues: vec![WorldIssue {
                field: e
                    .span()
                    .map(|s| {
                        format!(
                            "line {}",
                            text[..s.start.min(text.len())].matches('\n').count() + 1
                        )
                    })
                    .unwrap_or_else(|| "file".into()),
                problem: e.message().to_owned(),
            }],
        })?;
        let mut v = Checker::default();
        let world = v.world(&raw);
        if v.issues.is_empty() {
            Ok(world)
        } else {
            Err(WorldError {
                file: file.to_owned(),
                issues: v.issues,
            })
        }
    }
}

/// One problem in a world file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorldIssue {
    pub field: String,
    pub problem: String,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct WorldError {
    pub file: String,
    pub issues: Vec<WorldIssue>,
}

impl fmt::Display for WorldError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "world {} is invalid:", self.file)?;
        for issue in &self.issues {
            write!(f, "\n  - {}: {}", issue.field, issue.problem)?;
        }
        Ok(())
    }
}

#[derive(Default)]
struct Checker {
    issues: Vec<WorldIssue>,
}

impl Checker {
    fn fail(&mut self, field: impl Into<String>, problem: impl Into<String>) {
        self.issues.push(WorldIssue {
            field: field.into(),
            problem: problem.into(),
        });
    }

    fn world(&mut self, raw: &WorldFile) -> World {
        let standard_delay = raw
            .metrics
            .standard_delay
            .unwrap_or(DEFAULT_STANDARD_DELAY)
            .as_secs();
        let high_resolution_delay = raw
            .metrics
            .high_resolution_delay
            .unwrap_or(DEFAULT_HIGH_RESOLUTION_DELAY)
            .as_secs();
        if standard_delay > 30 * 60 {
            self.fail("metrics.standard_delay", "must be at most 30m");
        }
        if high_resolution_delay > 5 * 60 {
            self.fail("metrics.high_resolution_delay", "must be at most 5m");
        }
        if raw.targets.is_empty() {
            self.fail("target", "describe at least one [[target]]");
        }
        let mut seen = HashSet::new();
        let targets: Vec<TargetWorld> = raw
            .targets
            .iter()
            .enumerate()
            .filter_map(|(i, t)| {
                let target = self.target(&format!("target[{i}]"), t, standard_delay)?;
                if !seen.insert(target.id.clone()) {
                    self.fail(
                        format!("target[{i}].resource_id"),
                        format!("{} is listed twice", target.id),
                    );
                }
                Some(target)
            })
            .collect();
        let mut names = HashSet::new();
        let alarms = raw
            .alarms
            .iter()
            .enumerate()
            .filter_map(|(i, a)| {
                let at = format!("alarm[{i}]");
                if !names.insert(a.name.clone()) {
                    self.fail(format!("{at}.name"), format!("{:?} is used twice", a.name));
                }
                self.alarm(&at, a, &targets, standard_delay, high_resolution_delay)
            })
            .collect();
        let mut announcements: Vec<Announcement> = raw
            .announcements
            .iter()
            .enumerate()
            .filter_map(|(i, a)| {
                match announcement::check(&format!("announcement[{i}]"), a, &targets) {
                    Ok(a) => Some(a),
                    Err(issues) => {
                        for (field, problem) in issues {
                            self.fail(field, problem);
                        }
                        None
                    }
                }
            })
            .collect();
        announcements.sort_by_key(|a| a.sent);
        World {
            seed: raw.seed.unwrap_or(1),
            standard_delay,
            high_resolution_delay,
            targets,
            alarms,
            announcements,
        }
    }

    fn target(&mut self, at: &str, t: &TargetFile, standard_delay: i64) -> Option<TargetWorld> {
        let id = match t.resource_id.parse::<ScalableTargetId>() {
            Ok(id) => Some(id),
            Err(e) => {
                self.fail(format!("{at}.resource_id"), e.to_string());
                None
            }
        };
        let mode = match t.mode.as_deref() {
            None | Some("real-time") => Mode::RealTime,
            Some("async") => Mode::Async,
            Some(other) => {
                self.fail(
                    format!("{at}.mode"),
                    format!("{other:?} is unknown: use \"real-time\" or \"async\""),
                );
                Mode::RealTime
            }
        };
        if !(t.capacity_per_instance > 0.0 && t.capacity_per_instance.is_finite()) {
            self.fail(
                format!("{at}.capacity_per_instance"),
                "must be a positive number of requests per second",
            );
        }
        let latency_objective = t.latency_objective.unwrap_or(match mode {
            Mode::RealTime => Span::seconds(2),
            Mode::Async => Span::minutes(5),
        });
        let service_time = t.service_time.unwrap_or(Span::seconds(1));
        if service_time.as_secs() <= 0 {
            self.fail(format!("{at}.service_time"), "must be longer than zero");
        }
        let queue_bound = t.queue_bound.unwrap_or(match mode {
            Mode::RealTime => t.capacity_per_instance * 10.0,
            Mode::Async => f64::INFINITY,
        });
        if mode == Mode::Async && t.queue_bound.is_some() {
            self.fail(
                format!("{at}.queue_bound"),
                "async queues are unbounded: remove queue_bound",
            );
        }
        if queue_bound.is_nan() || queue_bound < 0.0 {
            self.fail(format!("{at}.queue_bound"), "must be zero or more requests");
        }
        let request_timeout = t.request_timeout.unwrap_or(Span::seconds(60)).as_secs();
        if request_timeout < 10 {
            self.fail(
                format!("{at}.request_timeout"),
                "must be at least 10s (one simulator step)",
            );
        }
        let provisioning = match t.provisioning {
            ProvisioningFile::Fixed(s) => Provisioning::Fixed(s.as_secs()),
            ProvisioningFile::Uniform { min, max } => {
                if min > max {
                    self.fail(
                        format!("{at}.provisioning.min"),
                        format!("{min} is above max {max}"),
                    );
                }
                Provisioning::Uniform {
                    min: min.as_secs(),
                    max: max.as_secs(),
                }
            }
        };
        let trace_scale = t.trace_scale.unwrap_or(1.0);
        if !(trace_scale > 0.0 && trace_scale.is_finite()) {
            self.fail(format!("{at}.trace_scale"), "must be a positive number");
        }
        let tracking = t.target_tracking.as_ref().map(|p| {
            let pat = format!("{at}.target_tracking");
            let metric = match Metric::parse(&p.metric) {
                Some(
                    m @ (Metric::InvocationsPerInstance
                    | Metric::ConcurrentRequestsPerModel
                    | Metric::ApproximateBacklogSizePerInstance),
                ) => m,
                _ => {
                    self.fail(
                        format!("{pat}.metric"),
                        format!(
                            "{:?} is not modelled: use InvocationsPerInstance, ConcurrentRequestsPerModel (high resolution) or ApproximateBacklogSizePerInstance",
                            p.metric
                        ),
                    );
                    Metric::InvocationsPerInstance
                }
            };
            if metric == Metric::ApproximateBacklogSizePerInstance && mode != Mode::Async {
                self.fail(format!("{pat}.metric"), "ApproximateBacklogSizePerInstance exists for async endpoints only");
            }
            if !(p.target_value > 0.0 && p.target_value.is_finite()) {
                self.fail(format!("{pat}.target_value"), "must be a positive number");
            }
            TrackingPolicy {
                metric,
                target_value: p.target_value,
                scale_out_cooldown: p.scale_out_cooldown.unwrap_or(DEFAULT_COOLDOWN).as_secs(),
                scale_in_cooldown: p.scale_in_cooldown.unwrap_or(DEFAULT_COOLDOWN).as_secs(),
                disable_scale_in: p.disable_scale_in,
            }
        });
        // The tracking alarms look back 15 minutes plus the metric delay.
        if standard_delay / 60 + 15 > MAX_LOOKBACK_PERIODS {
            self.fail(
                format!("{at}.target_tracking"),
                "the metric delay is too long to evaluate 15 datapoints",
            );
        }
        let backlog_step = t.backlog_step_policy.as_ref().map(|s| {
            if mode != Mode::Async {
                self.fail(
                    format!("{at}.backlog_step_policy"),
                    "HasBacklogWithoutCapacity exists for async endpoints only",
                );
            }
            let adjustment = s.adjustment.unwrap_or(1);
            if adjustment == 0 {
                self.fail(
                    format!("{at}.backlog_step_policy.adjustment"),
                    "must be at least 1",
                );
            }
            StepPolicy {
                adjustment,
                cooldown: s.cooldown.unwrap_or(DEFAULT_COOLDOWN).as_secs(),
            }
        });
        let scheduled = t
            .scheduled_actions
            .iter()
            .enumerate()
            .filter_map(|(j, s)| self.scheduled(&format!("{at}.scheduled_action[{j}]"), s))
            .collect();
        Some(TargetWorld {
            id: id?,
            mode,
            capacity_per_instance: t.capacity_per_instance,
            latency_objective: latency_objective.as_secs(),
            service_time: service_time.as_secs() as f64,
            queue_bound,
            request_timeout,
            provisioning,
            trace_scale,
            initial_capacity: t.initial_capacity,
            tracking,
            backlog_step,
            scheduled,
        })
    }

    fn scheduled(&mut self, at: &str, s: &ScheduledFile) -> Option<ScheduledAction> {
        if s.min_capacity.is_none() && s.max_capacity.is_none() {
            self.fail(at, "set min_capacity, max_capacity or both");
        }
        if let (Some(lo), Some(hi)) = (s.min_capacity, s.max_capacity) {
            if lo > hi {
                self.fail(
                    format!("{at}.min_capacity"),
                    format!("{lo} is above max_capacity {hi}"),
                );
            }
        }
        let when = match (&s.cron, &s.at) {
            (Some(expr), None) => {
                let tz = match s.timezone.as_deref().unwrap_or("UTC").parse::<Tz>() {
                    Ok(tz) => tz,
                    Err(_) => {
                        self.fail(
                            format!("{at}.timezone"),
                            "is not an IANA time zone (e.g. UTC, Europe/Berlin)",
                        );
                        return None;
                    }
                };
                match Cron::parse(expr) {
                    Ok(cron) => ScheduledWhen::Cron { cron, timezone: tz },
                    Err(e) => {
                        self.fail(format!("{at}.cron"), e);
                        return None;
                    }
                }
            }
            (None, Some(text)) => match DateTime::parse_from_rfc3339(text) {
                Ok(t) => ScheduledWhen::Once(t.with_timezone(&Utc)),
                Err(e) => {
                    self.fail(
                        format!("{at}.at"),
                        format!("{text:?} is not RFC 3339 ({e})"),
                    );
                    return None;
                }
            },
            _ => {
                self.fail(at, "give exactly one of `cron` or `at`");
                return None;
            }
        };
        Some(ScheduledAction {
            name: s.name.clone(),
            when,
            min: s.min_capacity,
            max: s.max_capacity,
        })
    }

    fn alarm(
        &mut self,
        at: &str,
        a: &AlarmFile,
        targets: &[TargetWorld],
        standard_delay: i64,
        high_resolution_delay: i64,
    ) -> Option<AlarmDef> {
        let target = match a.target.parse::<ScalableTargetId>() {
            Ok(id) => match targets.iter().position(|t| t.id == id) {
                Some(i) => Some(i),
                None => {
                    self.fail(
                        format!("{at}.target"),
                        format!("{id} is not a [[target]] of this world"),
                    );
                    None
                }
            },
            Err(e) => {
                self.fail(format!("{at}.target"), e.to_string());
                None
            }
        };
        let metric = Metric::parse(&a.metric);
        if metric.is_none() {
            let known: Vec<&str> = Metric::ALL.iter().map(|m| m.name()).collect();
            self.fail(
                format!("{at}.metric"),
                format!("{:?} is unknown: use one of {}", a.metric, known.join(", ")),
            );
        }
        let period = match a.period.map(Span::as_secs) {
            None | Some(60) => Period::Minute,
            Some(10) if metric == Some(Metric::ConcurrentRequestsPerModel) => Period::TenSeconds,
            Some(other) => {
                self.fail(
                    format!("{at}.period"),
                    format!(
                        "{other} s is not modelled: use 1m (or 10s for ConcurrentRequestsPerModel)"
                    ),
                );
                Period::Minute
            }
        };
        let comparison = Comparison::parse(&a.comparison);
        if comparison.is_none() {
            self.fail(
                format!("{at}.comparison"),
                format!(
                    "{:?} is unknown: use GreaterThanThreshold, GreaterThanOrEqualToThreshold, LessThanThreshold or LessThanOrEqualToThreshold",
                    a.comparison
                ),
            );
        }
        let n = a.evaluation_periods;
        let m = a.datapoints_to_alarm.unwrap_or(n);
        let delay_periods = match period {
            Period::Minute => standard_delay / 60 + 1,
            Period::TenSeconds => high_resolution_delay / 10 + 1,
        };
        if n == 0 || i64::from(n) + delay_periods > MAX_LOOKBACK_PERIODS {
            self.fail(
                format!("{at}.evaluation_periods"),
                format!(
                    "must be between 1 and {}",
                    MAX_LOOKBACK_PERIODS - delay_periods
                ),
            );
        }
        if m == 0 || m > n {
            self.fail(
                format!("{at}.datapoints_to_alarm"),
                format!("{m} must be between 1 and evaluation_periods {n}"),
            );
        }
        Some(AlarmDef {
            name: a.name.clone(),
            target: target?,
            metric: metric?,
            period,
            comparison: comparison?,
            threshold: a.threshold,
            evaluation_periods: n,
            datapoints_to_alarm: m,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = r#"
seed = 3
[[target]]
resource_id = "endpoint/chat/variant/AllTraffic"
capacity_per_instance = 10.0
provisioning = { min = "4m30s", max = "9m" }
  [target.target_tracking]
  metric = "InvocationsPerInstance"
  target_value = 450.0
  [[target.scheduled_action]]
  name = "night"
  cron = "0 22 * * *"
  min_capacity = 1

[[alarm]]
name = "chat-burst"
target = "endpoint/chat/variant/AllTraffic"
metric = "InvocationsPerInstance"
comparison = "GreaterThanThreshold"
threshold = 540.0
evaluation_periods = 2
"#;

    #[test]
    fn a_good_world_parses_with_defaults() {
        let w = World::parse("w.toml", GOOD).unwrap();
        let t = &w.targets[0];
        assert_eq!(t.mode, Mode::RealTime);
        assert_eq!(t.provisioning, Provisioning::Uniform { min: 270, max: 540 });
        let tt = t.tracking.unwrap();
        assert_eq!((tt.scale_out_cooldown, tt.scale_in_cooldown), (300, 300));
        assert_eq!(w.standard_delay, 120);
        assert_eq!(w.alarms[0].datapoints_to_alarm, 2);
        assert_eq!(w.alarms[0].period, Period::Minute);
    }

    #[test]
    fn every_problem_names_its_field() {
        let bad = r#"
[[target]]
resource_id = "endpoint/chat"
mode = "batch"
capacity_per_instance = 0.0
provisioning = "5m"
  [target.target_tracking]
  metric = "CPUUtilization"
  target_value = 70.0
[[alarm]]
name = "a"
target = "endpoint/other/variant/v"
metric = "Latency"
period = "5m"
comparison = "above"
threshold = 1.0
evaluation_periods = 2
datapoints_to_alarm = 3
[[announcement]]
target = "endpoint/other/variant/v"
name = " "
sent = "yesterday"
starts = "2026-03-02T16:00:00"
duration = "0s"
floor = 0
"#;
        let text = World::parse("bad.toml", bad).unwrap_err().to_string();
        for needle in [
            "target[0].resource_id",
            "target[0].mode",
            "target[0].capacity_per_instance",
            "target[0].target_tracking.metric",
            "alarm[0].target",
            "alarm[0].metric",
            "alarm[0].period",
            "alarm[0].comparison",
            "alarm[0].datapoints_to_alarm",
            "announcement[0].target",
            "announcement[0].name",
            "announcement[0].sent",
            "announcement[0].starts",
            "announcement[0].duration",
            "announcement[0].floor",
        ] {
            assert!(text.contains(needle), "missing {needle:?} in:\n{text}");
        }
    }

    #[test]
    fn provisioning_is_a_duration_or_a_range_and_a_mistake_gets_advice() {
        let with = |value: &str| {
            World::parse(
                "p.toml",
                &format!("[[target]]\nresource_id = \"endpoint/a/variant/b\"\ncapacity_per_instance = 1.0\nprovisioning = {value}\n"),
            )
        };
        assert_eq!(
            with("\"6m\"").unwrap().targets[0].provisioning,
            Provisioning::Fixed(360)
        );
        assert_eq!(
            with("{ min = \"4m30s\", max = \"9m\" }").unwrap().targets[0].provisioning,
            Provisioning::Uniform { min: 270, max: 540 }
        );
        let bare = with("6").unwrap_err().to_string();
        assert!(bare.contains("\"6m\""), "{bare}");
        let typo = with("{ min = \"4m\", maximum = \"9m\" }")
            .unwrap_err()
            .to_string();
        assert!(typo.contains("maximum"), "{typo}");
        let wrong = with("true").unwrap_err().to_string();
        assert!(wrong.contains("a duration such as \"6m\""), "{wrong}");
    }

    #[test]
    fn unknown_fields_are_refused_with_their_line() {
        let err = World::parse(
            "typo.toml",
            "[[target]]\nresource_id = \"endpoint/a/variant/b\"\ncapacity_per_instance = 1.0\nprovisioning = \"1m\"\ncapacity = 3\n",
        )
        .unwrap_err();
        assert!(
            err.to_string().contains("capacity") && err.to_string().contains("line"),
            "{err}"
        );
    }
}
