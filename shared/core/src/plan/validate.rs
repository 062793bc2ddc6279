//! From the file to the checked model. Every problem is collected (not just the first) and names
//! the file, the field and what to do.

use std::collections::HashSet;
use std::fmt;

use chrono::{DateTime, Utc};
use chrono_tz::Tz;

use super::file::{PlanFile, RampFile, TargetFile};
use super::model::*;
use crate::claim::Ramp;
use crate::cron::Cron;
use crate::duration::Span;
use crate::ids::{Dimension, ScalableTargetId};
use crate::model::LEAD_SAMPLES_KEPT;
use crate::text::cut;

/// Defaults for what a plan leaves out. Documented in the README's plan section.
pub const DEFAULT_LEAD_TIME: Span = Span::minutes(15);
/// The guard's `hold` when the plan leaves it out.
pub const DEFAULT_GUARD_HOLD: Span = Span::minutes(15);
pub const DEFAULT_RAMP: Ramp = Ramp {
    step: Span::minutes(10),
    keep_percent: 50,
};
/// The longest plan text accepted: the plan is stored as one DynamoDB item (400 KB at most,
/// attribute names and the other attributes included), so a larger plan would validate and then
/// fail at the write. This leaves 25 KB for the rest of the item.
pub const MAX_PLAN_BYTES: usize = 384_000;
/// AAS takes MinCapacity and MaxCapacity as Integer.
pub const MAX_CAPACITY: u32 = i32::MAX as u32;
/// The most provisioned concurrency a serverless variant takes: `MaxConcurrency` and
/// `ProvisionedConcurrency` are both "Minimum value of 1. Maximum value of 200." (SageMaker API
/// reference, ProductionVariantServerlessConfig).
pub const PROVISIONED_CONCURRENCY_MAX: u32 = 200;
/// CloudWatch alarm names and metric names are 1-255 characters.
pub const MAX_ALARM_NAME: usize = 255;
/// A CloudWatch alarm ARN: `arn:<partition>:cloudwatch:<region>:<account>:alarm:<name>`, the
/// name at most [`MAX_ALARM_NAME`].
pub const MAX_ALARM_ARN: usize = 400;

/// No claim may hold longer than this: a lost event must never pin capacity for long.
pub const LONGEST_HOLD: Span = Span::hours(7 * 24);

/// How long a guard or wake keeps its floor after its alarm went from ALARM to
/// INSUFFICIENT_DATA, when the plan does not say (`keep_for`; shortened to `max_duration` when
/// that is shorter). Twice the default hold: an outage of the metric during a burst does not
/// start the step-down as if the burst had ended, and a metric gone for good releases within the
/// hour.
pub const DEFAULT_KEEP_FOR: Span = Span::minutes(30);

/// One problem in a plan file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlanIssue {
    pub field: String,
    pub problem: String,
}

/// A plan that cannot be used, with every problem found.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct PlanError {
    pub file: String,
    pub issues: Vec<PlanIssue>,
}

impl fmt::Display for PlanError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "plan {} is invalid:", self.file)?;
        for issue in &self.issues {
            write!(f, "\n  - {}: {}", issue.field, issue.problem)?;
        }
        Ok(())
    }
}

/// Parses and validates a plan. `file` is only used to name the plan in errors.
pub fn parse_plan(file: &str, text: &str) -> Result<Plan, PlanError> {
    // Type errors are collected with their fields (`file::read_collecting`), then the plan read
    // with stand-ins for them is validated, so one run reports every problem. What the validator
    // says about a stand-in is left out: the type error already names that field.
    let issue = |(field, problem): (String, String)| PlanIssue { field, problem };
    let (raw, type_issues) = super::file::read_collecting(text).map_err(|issues| PlanError {
        file: file.to_owned(),
        issues: issues.into_iter().map(issue).collect(),
    })?;
    let mut v = Validator::default();
    if text.len() > MAX_PLAN_BYTES {
        v.fail(
            "file",
            format!(
                "is {} bytes; a plan is stored as one DynamoDB item (400 KB at most), so it may \
                 hold at most {MAX_PLAN_BYTES} bytes: split the targets over fewer alarms and \
                 peaks, or drop comments",
                text.len()
            ),
        );
    }
    let plan = v.plan(&raw);
    let stood_in = |field: &str| {
        type_issues.iter().any(|(f, _)| {
            field == f || field.starts_with(&format!("{f}.")) || field.starts_with(&format!("{f}["))
        })
    };
    v.issues.retain(|i| !stood_in(&i.field));
    let mut issues: Vec<PlanIssue> = type_issues.iter().cloned().map(issue).collect();
    issues.append(&mut v.issues);
    if issues.is_empty() {
        Ok(plan)
    } else {
        Err(PlanError {
            file: file.to_owned(),
            issues,
        })
    }
}

#[derive(Default)]
struct Validator {
    issues: Vec<PlanIssue>,
}

impl Validator {
    fn fail(&mut self, field: impl Into<String>, problem: impl Into<String>) {
        self.issues.push(PlanIssue {
            field: field.into(),
            problem: problem.into(),
        });
    }

    fn plan(&mut self, raw: &PlanFile) -> Plan {
        if raw.version != 1 {
            self.fail(
                "version",
                format!("is {}; this headroom reads version 1", raw.version),
            );
        }
        let default_tz = raw
            .defaults
            .timezone
            .as_deref()
            .map_or(Some(chrono_tz::UTC), |tz| {
                self.timezone("defaults.timezone", tz)
            });
        let default_ramp = raw
            .defaults
            .ramp_down
            .as_ref()
            .map_or(DEFAULT_RAMP, |r| self.ramp("defaults.ramp_down", r));
        let default_lead = raw.defaults.lead_time.unwrap_or(DEFAULT_LEAD_TIME);
        self.bounded_span("defaults.lead_time", default_lead, Span::hours(24));

        let mut seen = HashSet::new();
        let mut targets = Vec::new();
        for (i, t) in raw.targets.iter().enumerate() {
            let at = format!("target[{i}]");
            if let Some(target) = self.target(
                &at,
                t,
                default_tz.unwrap_or(chrono_tz::UTC),
                default_ramp,
                default_lead,
            ) {
                // One target per resource id, whatever its dimension: a variant is instance-based
                // or serverless, and the state item is keyed by the resource id.
                if !seen.insert(target.id.resource_id()) {
                    self.fail(
                        format!("{at}.resource_id"),
                        format!("{} is listed twice; keep one entry per target", target.id),
                    );
                }
                targets.push(target);
            }
        }
        Plan { targets }
    }

    fn target(
        &mut self,
        at: &str,
        t: &TargetFile,
        default_tz: Tz,
        default_ramp: Ramp,
        default_lead: Span,
    ) -> Option<TargetPlan> {
        let id = self.target_id(at, t);
        if let Some(id) = id.as_ref().filter(|id| id.is_provisioned_concurrency()) {
            self.provisioned_concurrency_bounds(at, id, t);
        }
        if t.max_capacity == 0 {
            self.fail(format!("{at}.max_capacity"), "must be at least 1");
        }
        if t.max_capacity > MAX_CAPACITY {
            self.fail(
                format!("{at}.max_capacity"),
                format!(
                    "{} is above {MAX_CAPACITY}, the largest capacity Application Auto Scaling takes",
                    t.max_capacity
                ),
            );
        }
        if t.min_capacity > t.max_capacity {
            self.fail(
                format!("{at}.min_capacity"),
                format!(
                    "{} is above max_capacity {}",
                    t.min_capacity, t.max_capacity
                ),
            );
        }
        let lead_time = t.lead_time.unwrap_or(default_lead);
        self.bounded_span(&format!("{at}.lead_time"), lead_time, Span::hours(24));
        let ramp_down = t
            .ramp_down
            .as_ref()
            .map_or(default_ramp, |r| self.ramp(&format!("{at}.ramp_down"), r));

        let mut names = HashSet::new();
        let mut peaks = Vec::new();
        for (j, p) in t.peaks.iter().enumerate() {
            let pat = format!("{at}.peak[{j}]");
            if !valid_claim_name(&p.name) {
                self.fail(
                    format!("{pat}.name"),
                    format!(
                        "{:?} must be 1-64 letters, digits, '-' or '_'",
                        cut(&p.name)
                    ),
                );
            } else if !names.insert(p.name.clone()) {
                self.fail(
                    format!("{pat}.name"),
                    format!("{:?} is used twice in this target", p.name),
                );
            }
            if p.floor > t.max_capacity {
                self.fail(
                    format!("{pat}.floor"),
                    format!(
                        "{} is above the target's max_capacity {}",
                        p.floor, t.max_capacity
                    ),
                );
            }
            if p.duration.as_secs() <= 0 {
                self.fail(format!("{pat}.duration"), "must be longer than zero");
            }
            self.bounded_span(&format!("{pat}.duration"), p.duration, LONGEST_HOLD);
            let when = match (&p.cron, &p.at) {
                (Some(expr), None) => {
                    let tz = p.timezone.as_deref().map_or(Some(default_tz), |tz| {
                        self.timezone(&format!("{pat}.timezone"), tz)
                    });
                    match Cron::parse(expr) {
                        Ok(cron) => tz.map(|timezone| PeakWhen::Recurring { cron, timezone }),
                        Err(e) => {
                            self.fail(format!("{pat}.cron"), e);
                            None
                        }
                    }
                }
                (None, Some(at_text)) => {
                    if p.timezone.is_some() {
                        self.fail(
                            format!("{pat}.timezone"),
                            "applies to `cron` only; give `at` with its offset (RFC 3339)",
                        );
                    }
                    match DateTime::parse_from_rfc3339(at_text) {
                        Ok(t) => Some(PeakWhen::Once(t.with_timezone(&Utc))),
                        Err(e) => {
                            self.fail(
                                format!("{pat}.at"),
                                format!(
                                    "{:?} is not RFC 3339 ({e}); write e.g. 2026-12-01T18:00:00Z",
                                    cut(at_text)
                                ),
                            );
                            None
                        }
                    }
                }
                _ => {
                    self.fail(
                        &pat,
                        "give exactly one of `cron` (recurring) or `at` (one-time)",
                    );
                    None
                }
            };
            if let Some(when) = when {
                peaks.push(Peak {
                    name: p.name.clone(),
                    when,
                    duration: p.duration,
                    floor: p.floor,
                    suspend_scale_in: p.suspend_scale_in,
                });
            }
        }

        let measured_lead_time = self.measured(at, t);
        let guard = t.guard.as_ref().map(|g| {
            let gat = format!("{at}.guard");
            self.alarm_list(&gat, &g.alarms, &g.metrics);
            let hold = g.hold.unwrap_or(DEFAULT_GUARD_HOLD);
            let max_duration = g.max_duration.unwrap_or(Span::hours(6));
            self.bounded_span(&format!("{gat}.hold"), hold, LONGEST_HOLD);
            let hold_without_forecast = g.hold_without_forecast.unwrap_or(hold);
            self.bounded_span(
                &format!("{gat}.hold_without_forecast"),
                hold_without_forecast,
                LONGEST_HOLD,
            );
            self.bounded_span(&format!("{gat}.max_duration"), max_duration, LONGEST_HOLD);
            if max_duration.as_secs() <= 0 {
                self.fail(format!("{gat}.max_duration"), "must be longer than zero");
            }
            let floor = match g.floor.as_deref() {
                None | Some("high_water") => GuardFloor::HighWater,
                Some("current") => GuardFloor::Current,
                Some(other) => {
                    self.fail(
                        format!("{gat}.floor"),
                        format!("{:?} is unknown: use high_water or current", cut(other)),
                    );
                    GuardFloor::HighWater
                }
            };
            let fallback = self.fallback(
                &gat,
                g.on_insufficient_data.as_deref(),
                g.keep_for,
                max_duration,
            );
            GuardPolicy {
                alarms: g.alarms.clone(),
                metrics: g.metrics.clone(),
                hold,
                hold_without_forecast,
                max_duration,
                suspend_scale_in: g.suspend_scale_in.unwrap_or(true),
                step_down: g
                    .step_down
                    .as_ref()
                    .map_or(DEFAULT_RAMP, |r| self.ramp(&format!("{gat}.step_down"), r)),
                floor,
                fallback,
                scale_out: g.scale_out.unwrap_or(false),
            }
        });
        let wake = t.wake.as_ref().map(|w| {
            let wat = format!("{at}.wake");
            self.alarm_list(&wat, &w.alarms, &w.metrics);
            let capacity = w.capacity.unwrap_or(1);
            if capacity == 0 || capacity > t.max_capacity {
                self.fail(
                    format!("{wat}.capacity"),
                    format!(
                        "{capacity} must be between 1 and max_capacity {}",
                        t.max_capacity
                    ),
                );
            }
            let quiet_period = w.quiet_period.unwrap_or(Span::minutes(15));
            let max_duration = w.max_duration.unwrap_or(Span::hours(2));
            self.bounded_span(&format!("{wat}.quiet_period"), quiet_period, LONGEST_HOLD);
            self.bounded_span(&format!("{wat}.max_duration"), max_duration, LONGEST_HOLD);
            if max_duration.as_secs() <= 0 {
                self.fail(format!("{wat}.max_duration"), "must be longer than zero");
            }
            let fallback = self.fallback(
                &wat,
                w.on_insufficient_data.as_deref(),
                w.keep_for,
                max_duration,
            );
            WakePolicy {
                alarms: w.alarms.clone(),
                metrics: w.metrics.clone(),
                capacity,
                quiet_period,
                max_duration,
                fallback,
            }
        });
        let review = t
            .review
            .as_ref()
            .map_or_else(ReviewPolicy::default, |r| ReviewPolicy {
                enabled: r.enabled.unwrap_or(true),
                tag_endpoint: r.tag_endpoint.unwrap_or(true),
            });

        let forecast = t.forecast.as_ref().map(|f| {
            crate::plan::forecast::check_forecast(
                at,
                f,
                t.max_capacity,
                id.as_ref().map(ScalableTargetId::dimension),
                default_tz,
                &mut |field, problem| self.fail(field, problem),
            )
        });

        let lint = crate::plan::lint::check_lint(at, t.lint.as_ref(), &mut |field, problem| {
            self.fail(field, problem)
        });

        Some(TargetPlan {
            id: id?,
            min_capacity: t.min_capacity,
            max_capacity: t.max_capacity,
            lead_time,
            measured_lead_time,
            ramp_down,
            peaks,
            guard,
            wake,
            review,
            forecast,
            lint,
        })
    }

    /// The target's id: its resource id on the dimension it names (a variant's instance count
    /// when it names none).
    fn target_id(&mut self, at: &str, t: &TargetFile) -> Option<ScalableTargetId> {
        let id: ScalableTargetId = match t.resource_id.parse() {
            Ok(id) => id,
            Err(e) => {
                self.fail(format!("{at}.resource_id"), e.to_string());
                return None;
            }
        };
        let Some(name) = t.dimension.as_deref() else {
            return Some(id);
        };
        let Some(dimension) = Dimension::from_plan_name(name) else {
            self.fail(
                format!("{at}.dimension"),
                format!(
                    "{:?} is unknown: use instance_count (a variant's default), \
                     provisioned_concurrency (a serverless variant) or copy_count (an inference \
                     component)",
                    cut(name)
                ),
            );
            return None;
        };
        match id.with_dimension(dimension) {
            Ok(id) => Some(id),
            Err(e) => {
                self.fail(format!("{at}.dimension"), e.to_string());
                None
            }
        }
    }

    /// Provisioned concurrency is 1 to 200 concurrent invocations: `ProvisionedConcurrency` and
    /// `MaxConcurrency` both take 1-200, and the first at most the second (SageMaker API
    /// reference, ProductionVariantServerlessConfig). Application Auto Scaling documents no
    /// minimum of its own for this dimension; AWS's examples register MinCapacity 1. So
    /// min_capacity below 1 or max_capacity above 200 can never be set, and is refused here.
    /// The variant's own MaxConcurrency may be lower: the plan does not know it.
    fn provisioned_concurrency_bounds(&mut self, at: &str, id: &ScalableTargetId, t: &TargetFile) {
        if t.min_capacity < 1 {
            self.fail(
                format!("{at}.min_capacity"),
                format!(
                    "{id} counts provisioned concurrency, which is at least 1 (SageMaker \
                     ProductionVariantServerlessConfig): set min_capacity = 1 or more; an \
                     on-demand serverless endpoint (no provisioned concurrency) has nothing \
                     for headroom to manage"
                ),
            );
        }
        if t.max_capacity > PROVISIONED_CONCURRENCY_MAX {
            self.fail(
                format!("{at}.max_capacity"),
                format!(
                    "{} is above {PROVISIONED_CONCURRENCY_MAX}, the most provisioned concurrency \
                     a serverless variant takes (SageMaker ProductionVariantServerlessConfig: \
                     MaxConcurrency and ProvisionedConcurrency are 1-200): set it to at most \
                     the variant's MaxConcurrency",
                    t.max_capacity
                ),
            );
        }
    }

    fn measured(&mut self, at: &str, t: &TargetFile) -> MeasuredLeadTime {
        let d = MeasuredLeadTime::default();
        let Some(m) = &t.lead_time_measured else {
            return d;
        };
        let mat = format!("{at}.lead_time_measured");
        let out = MeasuredLeadTime {
            percentile: m.percentile.unwrap_or(d.percentile),
            margin: m.margin.unwrap_or(d.margin),
            min: m.min.unwrap_or(d.min),
            max: m.max.unwrap_or(d.max),
            min_samples: m.min_samples.unwrap_or(d.min_samples),
            count_previous_models: m.count_previous_models.unwrap_or(d.count_previous_models),
        };
        if !(1..=100).contains(&out.percentile) {
            self.fail(format!("{mat}.percentile"), "must be between 1 and 100");
        }
        if !(1.0..=5.0).contains(&out.margin) {
            self.fail(format!("{mat}.margin"), "must be between 1.0 and 5.0");
        }
        if out.min > out.max {
            self.fail(
                format!("{mat}.min"),
                format!("{} is above max {}", out.min, out.max),
            );
        }
        self.bounded_span(&format!("{mat}.max"), out.max, Span::hours(24));
        if out.min_samples == 0 || out.min_samples as usize > LEAD_SAMPLES_KEPT {
            self.fail(
                format!("{mat}.min_samples"),
                format!(
                    "{} must be between 1 and {LEAD_SAMPLES_KEPT} (the samples kept per target)",
                    out.min_samples
                ),
            );
        }
        out
    }

    /// A guard or wake section says which alarms matter: by name or ARN (`alarms`), by
    /// AWS/SageMaker metric (`metrics`), or both; at least one of the two.
    fn alarm_list(&mut self, at: &str, alarms: &[String], metrics: &[String]) {
        if alarms.is_empty() && metrics.is_empty() {
            self.fail(
                format!("{at}.alarms"),
                "name at least one alarm (name or ARN), or an AWS/SageMaker metric in `metrics`",
            );
        }
        if alarms.iter().any(|a| a.trim().is_empty()) {
            self.fail(format!("{at}.alarms"), "an alarm name is empty");
        }
        for a in alarms {
            let (limit, what) = if a.starts_with("arn:") {
                (MAX_ALARM_ARN, "an alarm ARN")
            } else {
                (MAX_ALARM_NAME, "a CloudWatch alarm name")
            };
            if a.chars().count() > limit {
                self.fail(
                    format!("{at}.alarms"),
                    format!(
                        "{:?} is longer than {what} can be ({limit} characters)",
                        cut(a)
                    ),
                );
            } else if a.starts_with("arn:") {
                if let Err(e) = AlarmArn::parse(a) {
                    self.fail(format!("{at}.alarms"), e);
                }
            }
        }
        for m in metrics {
            if m.chars().count() > MAX_ALARM_NAME {
                self.fail(
                    format!("{at}.metrics"),
                    format!(
                        "{:?} is longer than a CloudWatch metric name can be ({MAX_ALARM_NAME} characters)",
                        cut(m)
                    ),
                );
            }
        }
        if metrics.iter().any(|m| m.trim().is_empty()) {
            self.fail(
                format!("{at}.metrics"),
                "a metric name is empty (e.g. InvocationsPerInstance)",
            );
        }
    }

    fn ramp(&mut self, at: &str, r: &RampFile) -> Ramp {
        if r.step.as_secs() <= 0 {
            self.fail(format!("{at}.step"), "must be longer than zero");
        }
        self.bounded_span(&format!("{at}.step"), r.step, Span::hours(24));
        if r.keep_percent > 99 {
            self.fail(
                format!("{at}.keep_percent"),
                format!(
                    "{} must be between 0 and 99 (the share of the floor kept at each step)",
                    r.keep_percent
                ),
            );
        }
        Ramp {
            step: r.step,
            keep_percent: r.keep_percent,
        }
    }

    fn timezone(&mut self, at: &str, tz: &str) -> Option<Tz> {
        match tz.parse::<Tz>() {
            Ok(tz) => Some(tz),
            Err(_) => {
                self.fail(
                    at,
                    format!(
                        "{:?} is not an IANA time zone (e.g. Europe/Berlin, America/New_York, UTC)",
                        cut(tz)
                    ),
                );
                None
            }
        }
    }

    /// A guard's or wake's `on_insufficient_data` and `keep_for` (section path `at`).
    fn fallback(
        &mut self,
        at: &str,
        mode: Option<&str>,
        keep_for: Option<Span>,
        max_duration: Span,
    ) -> Fallback {
        let mode = match mode {
            None | Some("keep_current") => FallbackMode::KeepCurrent,
            Some("hold") => FallbackMode::Hold,
            Some("release") => FallbackMode::Release,
            Some(other) => {
                self.fail(
                    format!("{at}.on_insufficient_data"),
                    format!(
                        "{:?} is unknown: use keep_current, hold or release",
                        cut(other)
                    ),
                );
                FallbackMode::KeepCurrent
            }
        };
        let field = format!("{at}.keep_for");
        match keep_for {
            Some(_) if mode == FallbackMode::Release => self.fail(
                field,
                "applies only with on_insufficient_data = \"keep_current\" or \"hold\": \
                 release keeps nothing",
            ),
            Some(span) if span.as_secs() <= 0 => self.fail(field, "must be longer than zero"),
            Some(span) if span > max_duration => self.fail(
                field,
                format!(
                    "{span} is longer than max_duration {max_duration}: missing data must not \
                     hold capacity longer than ALARM does"
                ),
            ),
            _ => {}
        }
        Fallback {
            mode,
            keep_for: keep_for.unwrap_or(DEFAULT_KEEP_FOR.min(max_duration)),
        }
    }

    fn bounded_span(&mut self, at: &str, span: Span, max: Span) {
        if span > max {
            self.fail(at, format!("{span} is longer than the allowed {max}"));
        }
    }
}

/// Names of peaks and claims: short, and safe inside DynamoDB sort keys and log lines.
pub fn valid_claim_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = r#"
version = 1
[defaults]
lead_time = "25m"
timezone = "Europe/Berlin"

[[target]]
resource_id = "endpoint/chat/variant/AllTraffic"
min_capacity = 1
max_capacity = 8

  [[target.peak]]
  name = "morning"
  cron = "0 9 * * MON-FRI"
  duration = "2h"
  floor = 6

  [[target.peak]]
  name = "launch"
  at = "2026-12-01T18:00:00Z"
  duration = "3h"
  floor = 8
"#;

    #[test]
    fn a_good_plan_parses_with_defaults_applied() {
        let plan = parse_plan("good.toml", GOOD).unwrap();
        let t = &plan.targets[0];
        assert_eq!(t.lead_time, Span::minutes(25));
        assert_eq!(t.ramp_down, DEFAULT_RAMP);
        match &t.peaks[0].when {
            PeakWhen::Recurring { timezone, .. } => {
                assert_eq!(*timezone, chrono_tz::Europe::Berlin)
            }
            other => panic!("expected a recurring peak, got {other:?}"),
        }
        assert!(t.guard.is_none());
    }

    #[test]
    fn every_problem_is_named_with_its_field() {
        let bad = r#"
version = 1
[[target]]
resource_id = "endpoint/chat"
min_capacity = 5
max_capacity = 2
  [[target.peak]]
  name = "x y"
  cron = "0 25 * * *"
  timezone = "Mars/Olympus"
  duration = "2h"
  floor = 9
"#;
        let err = parse_plan("bad.toml", bad).unwrap_err();
        let text = err.to_string();
        assert!(text.starts_with("plan bad.toml is invalid:"), "{text}");
        for needle in [
            "target[0].resource_id",
            "target[0].min_capacity: 5 is above max_capacity 2",
            "target[0].peak[0].name",
            "target[0].peak[0].floor",
            "target[0].peak[0].timezone",
        ] {
            assert!(text.contains(needle), "missing {needle:?} in:\n{text}");
        }
    }

    #[test]
    fn unknown_fields_and_syntax_errors_name_the_line() {
        let err = parse_plan("typo.toml", "version = 1\n[[target]]\nresource_id = \"endpoint/a/variant/b\"\nmin_capacity = 1\nmax_capacity = 2\nmax_capcity = 3\n").unwrap_err();
        assert!(err.to_string().contains("max_capcity"), "{err}");
        assert!(err.to_string().contains("line"), "{err}");
    }

    #[test]
    fn guard_and_wake_need_alarms_or_metrics() {
        let section = |body: &str| {
            format!(
                "version = 1\n[[target]]\nresource_id = \"endpoint/a/variant/b\"\nmin_capacity = 0\nmax_capacity = 2\n{body}"
            )
        };
        let err = parse_plan("none.toml", &section("[target.guard]\nhold = \"5m\"\n"))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("target[0].guard.alarms") && err.contains("`metrics`"),
            "{err}"
        );
        let err = parse_plan(
            "none.toml",
            &section("[target.wake]\nalarms = []\nmetrics = []\n"),
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("target[0].wake.alarms"), "{err}");
        let err = parse_plan("blank.toml", &section("[target.wake]\nmetrics = [\" \"]\n"))
            .unwrap_err()
            .to_string();
        assert!(err.contains("target[0].wake.metrics"), "{err}");

        let plan = parse_plan(
            "metrics.toml",
            &section("[target.wake]\nmetrics = [\"HasBacklogWithoutCapacity\"]\n"),
        )
        .unwrap();
        let wake = plan.targets[0].wake.as_ref().unwrap();
        assert!(wake.alarms.is_empty());
        assert_eq!(wake.metrics, ["HasBacklogWithoutCapacity"]);
    }

    #[test]
    fn the_insufficient_data_fallback_defaults_to_keep_current_for_30_minutes() {
        let section = |body: &str| {
            format!(
                "version = 1\n[[target]]\nresource_id = \"endpoint/a/variant/b\"\nmin_capacity = 0\nmax_capacity = 2\n{body}"
            )
        };
        let fallback_of = |body: &str| {
            let plan = parse_plan("f.toml", &section(body)).unwrap();
            let t = &plan.targets[0];
            (
                t.guard.as_ref().map(|g| g.fallback),
                t.wake.as_ref().map(|w| w.fallback),
            )
        };
        let keep = |mode, keep_for| Fallback { mode, keep_for };
        // (section, expected guard fallback, expected wake fallback)
        let table = [
            (
                "[target.guard]\nalarms = [\"b\"]\n[target.wake]\nalarms = [\"w\"]\n",
                Some(keep(FallbackMode::KeepCurrent, Span::minutes(30))),
                Some(keep(FallbackMode::KeepCurrent, Span::minutes(30))),
            ),
            // A max_duration shorter than the default shortens the default, never fails.
            (
                "[target.wake]\nalarms = [\"w\"]\nmax_duration = \"20m\"\n",
                None,
                Some(keep(FallbackMode::KeepCurrent, Span::minutes(20))),
            ),
            (
                "[target.guard]\nalarms = [\"b\"]\non_insufficient_data = \"hold\"\nkeep_for = \"2h\"\n",
                Some(keep(FallbackMode::Hold, Span::hours(2))),
                None,
            ),
            (
                "[target.guard]\nalarms = [\"b\"]\non_insufficient_data = \"release\"\n",
                Some(keep(FallbackMode::Release, Span::minutes(30))),
                None,
            ),
        ];
        for (body, guard, wake) in table {
            assert_eq!(fallback_of(body), (guard, wake), "{body}");
        }
    }

    #[test]
    fn bad_fallbacks_are_all_named_with_their_field() {
        let text = r#"
version = 1
[[target]]
resource_id = "endpoint/a/variant/b"
min_capacity = 0
max_capacity = 2
  [target.guard]
  alarms = ["b"]
  on_insufficient_data = "ignore"
  [target.wake]
  alarms = ["w"]
  max_duration = "1h"
  keep_for = "2h"
[[target]]
resource_id = "endpoint/c/variant/d"
min_capacity = 0
max_capacity = 2
  [target.guard]
  alarms = ["b"]
  on_insufficient_data = "release"
  keep_for = "10m"
  [target.wake]
  alarms = ["w"]
  keep_for = "0s"
"#;
        let err = parse_plan("fallback.toml", text).unwrap_err().to_string();
        for needle in [
            "target[0].guard.on_insufficient_data: \"ignore\" is unknown: use keep_current, hold or release",
            "target[0].wake.keep_for: 2h is longer than max_duration 1h",
            "target[1].guard.keep_for: applies only with on_insufficient_data = \"keep_current\" or \"hold\"",
            "target[1].wake.keep_for: must be longer than zero",
        ] {
            assert!(err.contains(needle), "missing {needle:?} in:\n{err}");
        }
    }

    #[test]
    fn duplicate_targets_and_peaks_both_cron_and_at_are_refused() {
        let text = r#"
version = 1
[[target]]
resource_id = "inference-component/ic"
min_capacity = 0
max_capacity = 2
  [[target.peak]]
  name = "p"
  cron = "0 9 * * *"
  at = "2026-12-01T18:00:00Z"
  duration = "1h"
  floor = 1
[[target]]
resource_id = "inference-component/ic"
min_capacity = 0
max_capacity = 2
"#;
        let text = parse_plan("dup.toml", text).unwrap_err().to_string();
        assert!(text.contains("exactly one of `cron`"), "{text}");
        assert!(text.contains("listed twice"), "{text}");
    }

    /// Decision table: which dimension and bounds a plan may give a target. Each row: resource
    /// id, `dimension` line, min, max, and the problem expected (`None`: the plan parses).
    #[test]
    fn dimensions_and_their_bounds() {
        let rows: &[(&str, &str, u32, u32, Option<&str>)] = &[
            ("endpoint/e/variant/v", "", 0, 4, None),
            ("endpoint/e/variant/v", "dimension = \"instance_count\"", 1, 400, None),
            ("endpoint/e/variant/v", "dimension = \"provisioned_concurrency\"", 1, 200, None),
            ("endpoint/e/variant/v", "dimension = \"provisioned_concurrency\"", 5, 5, None),
            (
                "endpoint/e/variant/v",
                "dimension = \"provisioned_concurrency\"",
                0,
                10,
                Some("target[0].min_capacity: endpoint/e/variant/v counts provisioned concurrency, which is at least 1"),
            ),
            (
                "endpoint/e/variant/v",
                "dimension = \"provisioned_concurrency\"",
                1,
                201,
                Some("target[0].max_capacity: 201 is above 200"),
            ),
            ("inference-component/ic", "dimension = \"copy_count\"", 0, 4, None),
            (
                "inference-component/ic",
                "dimension = \"provisioned_concurrency\"",
                1,
                4,
                Some("target[0].dimension: scalable target inference-component/ic has no dimension \"provisioned_concurrency\""),
            ),
            (
                "endpoint/e/variant/v",
                "dimension = \"copy_count\"",
                1,
                4,
                Some("use \"instance_count\" or leave `dimension` out"),
            ),
            (
                "endpoint/e/variant/v",
                "dimension = \"DesiredProvisionedConcurrency\"",
                1,
                4,
                Some("target[0].dimension: \"DesiredProvisionedConcurrency\" is unknown"),
            ),
        ];
        for (resource, dimension, min, max, problem) in rows {
            let text = format!(
                "version = 1\n[[target]]\nresource_id = \"{resource}\"\n{dimension}\n\
                 min_capacity = {min}\nmax_capacity = {max}\n"
            );
            let got = parse_plan("dims.toml", &text);
            match (problem, got) {
                (None, Ok(plan)) => {
                    let want = if dimension.contains("provisioned") {
                        Dimension::VariantProvisionedConcurrency
                    } else if resource.starts_with("inference") {
                        Dimension::ComponentCopies
                    } else {
                        Dimension::VariantInstances
                    };
                    assert_eq!(plan.targets[0].id.dimension(), want, "{text}");
                }
                (Some(needle), Err(e)) => {
                    let e = e.to_string();
                    assert!(e.contains(needle), "missing {needle:?} in:\n{e}");
                }
                (want, got) => panic!("{text}: wanted {want:?}, got {got:?}"),
            }
        }
    }

    #[test]
    fn a_provisioned_concurrency_forecast_says_what_its_unit_serves() {
        let err = parse_plan(
            "pc.toml",
            "version = 1\n[[target]]\nresource_id = \"endpoint/e/variant/v\"\n\
             dimension = \"provisioned_concurrency\"\nmin_capacity = 1\nmax_capacity = 20\n\
             [target.forecast]\n",
        )
        .unwrap_err()
        .to_string();
        assert!(
            err.contains("one concurrent invocation of provisioned concurrency"),
            "{err}"
        );
    }

    #[test]
    fn one_variant_cannot_be_listed_on_both_dimensions() {
        // GIVEN the same variant once per dimension (a variant is instance-based or serverless)
        let text = "version = 1\n\
            [[target]]\nresource_id = \"endpoint/e/variant/v\"\nmin_capacity = 1\nmax_capacity = 2\n\
            [[target]]\nresource_id = \"endpoint/e/variant/v\"\ndimension = \"provisioned_concurrency\"\n\
            min_capacity = 1\nmax_capacity = 2\n";
        // THEN the second is refused as a duplicate
        let err = parse_plan("twice.toml", text).unwrap_err().to_string();
        assert!(err.contains("target[1].resource_id"), "{err}");
        assert!(err.contains("listed twice"), "{err}");
    }

    #[test]
    fn an_event_id_finds_the_provisioned_concurrency_target() {
        let plan = parse_plan(
            "pc.toml",
            "version = 1\n[[target]]\nresource_id = \"endpoint/e/variant/v\"\n\
             dimension = \"provisioned_concurrency\"\nmin_capacity = 1\nmax_capacity = 20\n",
        )
        .unwrap();
        // An id from an event or the CLI is read without a dimension
        let from_event: ScalableTargetId = "endpoint/e/variant/v".parse().unwrap();
        let target = plan.target(&from_event).expect("found on its resource id");
        assert!(target.id.is_provisioned_concurrency());
    }

    fn one_target(body: &str) -> String {
        format!("version = 1\n[[target]]\nresource_id = \"endpoint/a/variant/b\"\n{body}")
    }

    #[test]
    fn numbers_beyond_what_aws_accepts_are_refused() {
        // AAS takes capacities as Integer (i32): 3,000,000,000 would fail every tick at the SDK.
        let err = parse_plan(
            "big.toml",
            &one_target("min_capacity = 1\nmax_capacity = 3000000000\n"),
        )
        .unwrap_err()
        .to_string();
        assert!(
            err.contains("target[0].max_capacity") && err.contains("2147483647"),
            "{err}"
        );
        // A cron step must fit its field (this one overflowed the parser).
        let err = parse_plan(
            "step.toml",
            &one_target(
                "min_capacity = 1\nmax_capacity = 2\n[[target.peak]]\nname = \"p\"\ncron = \"30/4294967295 * * * *\"\nduration = \"1h\"\nfloor = 1\n",
            ),
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("target[0].peak[0].cron"), "{err}");
        assert!(err.contains("step"), "{err}");
        // More samples than are ever kept would never be reached.
        let err = parse_plan(
            "samples.toml",
            &one_target(
                "min_capacity = 1\nmax_capacity = 2\n[target.lead_time_measured]\nmin_samples = 4000000000\n",
            ),
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("min_samples"), "{err}");
        // CloudWatch alarm and metric names are at most 255 characters.
        let long = "a".repeat(256);
        let err = parse_plan(
            "names.toml",
            &one_target(&format!(
                "min_capacity = 1\nmax_capacity = 2\n[target.guard]\nalarms = [\"{long}\"]\nmetrics = [\"{long}\"]\n"
            )),
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("target[0].guard.alarms"), "{err}");
        assert!(err.contains("target[0].guard.metrics"), "{err}");
        assert!(
            !err.contains(&long),
            "the message must not quote it whole: {err}"
        );
    }

    #[test]
    fn the_largest_accepted_numbers_still_validate() {
        let plan = parse_plan(
            "edge.toml",
            &one_target(&format!(
                "min_capacity = 0\nmax_capacity = {}\n[[target.peak]]\nname = \"p\"\ncron = \"*/59 */23 */31 */12 */7\"\nduration = \"1h\"\nfloor = 1\n",
                i32::MAX
            )),
        );
        assert!(plan.is_ok(), "{plan:?}");
    }

    #[test]
    fn a_plan_too_large_for_one_dynamodb_item_is_refused() {
        // GIVEN a valid plan padded with comments past what one item can hold
        let mut text = one_target("min_capacity = 1\nmax_capacity = 2\n");
        while text.len() <= MAX_PLAN_BYTES {
            text.push_str(&format!("# {}\n", "x".repeat(200)));
        }
        // THEN validation refuses it, naming the limit
        let err = parse_plan("huge.toml", &text).unwrap_err().to_string();
        assert!(err.contains("400 KB"), "{err}");
        assert!(err.contains(&MAX_PLAN_BYTES.to_string()), "{err}");
    }
}
