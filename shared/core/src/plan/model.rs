//! The checked plan: what headroom manages and how. Every value here has passed validation, so
//! the decision code never re-checks a bound or re-parses a name.

use chrono::{DateTime, Utc};
use chrono_tz::Tz;
use serde::Serialize;

use crate::claim::Ramp;
use crate::cron::Cron;
use crate::duration::Span;
use crate::ids::ScalableTargetId;

#[derive(Debug, Clone, Default)]
pub struct Plan {
    pub targets: Vec<TargetPlan>,
}

impl Plan {
    /// The target on `id`'s resource. It matches on the resource id alone: validation keeps one
    /// target per resource id, and an id from an event, a stored record or the CLI does not say
    /// its dimension (see [`ScalableTargetId`]). Use the returned target's `id` from then on.
    pub fn target(&self, id: &ScalableTargetId) -> Option<&TargetPlan> {
        self.targets.iter().find(|t| t.id.same_resource(id))
    }
}

#[derive(Debug, Clone)]
pub struct TargetPlan {
    pub id: ScalableTargetId,
    pub min_capacity: u32,
    pub max_capacity: u32,
    /// The configured lead time: used as is until measurements exist (see `lead_time.rs`).
    pub lead_time: Span,
    pub measured_lead_time: MeasuredLeadTime,
    /// How peak claims let go after the peak ends.
    pub ramp_down: Ramp,
    pub peaks: Vec<Peak>,
    pub guard: Option<GuardPolicy>,
    pub wake: Option<WakePolicy>,
    pub review: ReviewPolicy,
    /// Pre-scaling from the endpoint's own demand history (`[target.forecast]`).
    pub forecast: Option<crate::plan::forecast::ForecastPolicy>,
    /// What `headroom lint` needs that AWS does not say (`[target.lint]`).
    pub lint: crate::plan::lint::LintPolicy,
}

#[derive(Debug, Clone)]
pub struct Peak {
    pub name: String,
    pub when: PeakWhen,
    pub duration: Span,
    pub floor: u32,
    pub suspend_scale_in: bool,
}

#[derive(Debug, Clone)]
pub enum PeakWhen {
    Recurring { cron: Cron, timezone: Tz },
    Once(DateTime<Utc>),
}

/// How a measured lead time replaces the configured one (the deployment watcher measures).
#[derive(Debug, Clone, Serialize)]
pub struct MeasuredLeadTime {
    pub percentile: u8,
    pub margin: f64,
    pub min: Span,
    pub max: Span,
    pub min_samples: u32,
    /// Whether scale-outs measured under an earlier model identity still count.
    pub count_previous_models: bool,
}

impl Default for MeasuredLeadTime {
    fn default() -> Self {
        Self {
            percentile: 90,
            margin: 1.25,
            min: Span::minutes(2),
            max: Span::minutes(45),
            min_samples: 3,
            count_previous_models: false,
        }
    }
}

/// Which capacity a burst guard holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum GuardFloor {
    /// The highest desired count seen while the alarm is in ALARM.
    HighWater,
    /// The desired count when the alarm fired.
    Current,
}

#[derive(Debug, Clone)]
pub struct GuardPolicy {
    /// Alarms by name or ARN.
    pub alarms: Vec<String>,
    /// AWS/SageMaker metric names: an alarm on one of these metrics whose dimensions name the
    /// target matters too, whatever its name.
    pub metrics: Vec<String>,
    pub hold: Span,
    /// The hold after an alarm that clears while no active forecast covers the moment
    /// (`alarms::RoleTiming::after_clear_at`).
    pub hold_without_forecast: Span,
    pub max_duration: Span,
    pub suspend_scale_in: bool,
    pub step_down: Ramp,
    pub floor: GuardFloor,
    /// What INSUFFICIENT_DATA straight out of ALARM does to the claim.
    pub fallback: Fallback,
    /// Raise the floor at once when a per-instance alarm fires (`surge.rs`).
    pub scale_out: bool,
}

impl GuardPolicy {
    /// The longer of the two holds (how long an alarm's mark may still matter).
    pub fn longest_hold(&self) -> Span {
        self.hold.max(self.hold_without_forecast)
    }
}

#[derive(Debug, Clone)]
pub struct WakePolicy {
    /// Alarms by name or ARN.
    pub alarms: Vec<String>,
    /// AWS/SageMaker metric names, as for the guard.
    pub metrics: Vec<String>,
    pub capacity: u32,
    pub quiet_period: Span,
    pub max_duration: Span,
    /// What INSUFFICIENT_DATA straight out of ALARM does to the claim.
    pub fallback: Fallback,
}

/// What a guard or wake does when one of its alarms goes from ALARM to INSUFFICIENT_DATA: the
/// metric stopped, and nobody knows whether the burst or backlog goes on (`on_insufficient_data`
/// and `keep_for` in the plan). headroom's counterpart of KEDA's `fallback` (a fixed replica
/// count once a scaler's metric source has failed `failureThreshold` times; KEDA ScaledObject
/// spec, "fallback").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Fallback {
    pub mode: FallbackMode,
    /// How long `KeepCurrent` and `Hold` keep their floor before the alarm counts as cleared
    /// (never longer than the section's `max_duration`). Unused by `Release`.
    pub keep_for: Span,
}

/// The choices of `on_insufficient_data`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FallbackMode {
    /// Keep the target's desired count when the data stopped (at least the claim's own floor) for
    /// `keep_for`, then release as after OK. The default: a burst guard that loses its metric
    /// neither throws its warm capacity away at once nor holds it for the whole `max_duration`.
    KeepCurrent,
    /// Keep the claim's own floor (the high-water mark, the wake capacity) for `keep_for`, then
    /// release as after OK.
    Hold,
    /// Count INSUFFICIENT_DATA as OK at once: the hold (guard) or quiet period (wake) starts.
    Release,
}

impl FallbackMode {
    /// The plan's spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            FallbackMode::KeepCurrent => "keep_current",
            FallbackMode::Hold => "hold",
            FallbackMode::Release => "release",
        }
    }
}

impl std::fmt::Display for FallbackMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[derive(Debug, Clone)]
pub struct ReviewPolicy {
    pub enabled: bool,
    pub tag_endpoint: bool,
}

impl Default for ReviewPolicy {
    fn default() -> Self {
        Self {
            enabled: true,
            tag_endpoint: true,
        }
    }
}

/// A CloudWatch alarm ARN, split: `arn:<partition>:cloudwatch:<region>:<account>:alarm:<name>`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AlarmArn<'a> {
    pub partition: &'a str,
    pub region: &'a str,
    pub account: &'a str,
    pub name: &'a str,
}

impl<'a> AlarmArn<'a> {
    /// The alarm name a plan entry gives: the entry itself, or the name part of an ARN. A plain
    /// name is told apart without building [`parse`](Self::parse)'s error, since reconciles ask
    /// this of every alarm entry.
    pub fn name_in(entry: &'a str) -> &'a str {
        if !entry.starts_with("arn:") {
            return entry;
        }
        Self::parse(entry).map_or(entry, |arn| arn.name)
    }

    pub fn parse(arn: &'a str) -> Result<Self, String> {
        let bad = |why: &str| {
            format!(
                "{:?} is not a CloudWatch alarm ARN ({why}): write \
                 arn:aws:cloudwatch:REGION:ACCOUNT:alarm:NAME",
                crate::text::cut(arn)
            )
        };
        let parts: Vec<&str> = arn.splitn(7, ':').collect();
        let [arn_lit, partition, service, region, account, kind, name] = parts[..] else {
            return Err(bad("it has fewer than 7 parts"));
        };
        if arn_lit != "arn" || service != "cloudwatch" || kind != "alarm" {
            return Err(bad("expected `arn:…:cloudwatch:…:…:alarm:…`"));
        }
        if partition.is_empty() || region.is_empty() {
            return Err(bad("the partition or region is empty"));
        }
        if account.len() != 12 || !account.bytes().all(|b| b.is_ascii_digit()) {
            return Err(bad("the account is not 12 digits"));
        }
        if name.is_empty() {
            return Err(bad("the alarm name is empty"));
        }
        Ok(Self {
            partition,
            region,
            account,
            name,
        })
    }
}

/// Alarms in a plan are given by name or by ARN. A name matches the alarm of that name; an ARN
/// matches only the alarm with exactly that ARN (never a same-named alarm in another account or
/// region, nor an event that carries no ARN).
pub fn alarm_matches(configured: &str, alarm_name: &str, alarm_arn: Option<&str>) -> bool {
    if configured.starts_with("arn:") {
        alarm_arn == Some(configured)
    } else {
        configured == alarm_name
    }
}

#[cfg(test)]
mod tests {
    use super::AlarmArn;

    #[test]
    fn an_entrys_alarm_name_is_the_entry_or_its_arns_last_part() {
        assert_eq!(AlarmArn::name_in("shop-burst"), "shop-burst");
        assert_eq!(
            AlarmArn::name_in("arn:aws:cloudwatch:eu-west-1:123456789012:alarm:shop-burst"),
            "shop-burst"
        );
        // A name with colons is kept whole; so is an ARN that does not parse.
        assert_eq!(
            AlarmArn::name_in("arn:aws:cloudwatch:eu-west-1:123456789012:alarm:a:b"),
            "a:b"
        );
        assert_eq!(AlarmArn::name_in("arn:aws:sns:x"), "arn:aws:sns:x");
        assert_eq!(AlarmArn::name_in("team:burst"), "team:burst");
    }
}
