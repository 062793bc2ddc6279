//! Cooldowns, of target-tracking policies (`ScaleOutCooldown`, `ScaleInCooldown`) and of step
//! policies (their one `Cooldown`). Unset means 300 s for SageMaker (aws-facts.md, "Default
//! cooldowns for SageMaker variants"); scale-in should be the slower side (e.g. 300 s out, 600 s
//! in), and a scale-out cooldown shorter than the measured lead time lets the policy decide
//! again before the capacity it asked for serves. A step policy that adds capacity is held to
//! the lead time like a tracking policy's scale-out (a wake step on a backlog alarm that stays in
//! ALARM while the first instance provisions adds another at each cooldown's end: "the
//! adjustments can continue for additional alarm breaches until the alarm state returns to OK",
//! Application Auto Scaling user guide, "How step scaling for Application Auto Scaling works";
//! and "the scaling policy won't increase the desired capacity again unless either a larger
//! scale out is triggered or the cooldown period ends", API reference,
//! StepScalingPolicyConfiguration, `Cooldown`); one that removes capacity is held to the slowest
//! scale-out cooldown among the target's policies.

use super::{Facts, Finding, Severity};
use crate::review::ScalingPolicySummary;

pub const COOLDOWNS: &str = "cooldowns";

/// AAS's default for SageMaker variants and components, both directions.
pub const DEFAULT_COOLDOWN_S: i32 = 300;

/// How a cooldown is shown: its value, or that it is unset and AAS's default applies.
fn shown(v: Option<i32>, eff: i32) -> String {
    match v {
        Some(_) => format!("{eff} s"),
        None => format!("unset ({eff} s, AAS's default)"),
    }
}

pub fn cooldowns(f: &Facts<'_>) -> Vec<Finding> {
    let mut out = tracking_cooldowns(f);
    out.extend(step_cooldowns(f));
    out
}

fn tracking_cooldowns(f: &Facts<'_>) -> Vec<Finding> {
    let mut out = Vec::new();
    for p in f.tracking() {
        let scale_out = p.scale_out_cooldown_s.unwrap_or(DEFAULT_COOLDOWN_S);
        let scale_in = p.scale_in_cooldown_s.unwrap_or(DEFAULT_COOLDOWN_S);
        if p.disable_scale_in != Some(true) && scale_in <= scale_out {
            let severity = if scale_in < scale_out {
                Severity::Warn
            } else {
                Severity::Info
            };
            out.push(f.finding(
                COOLDOWNS,
                severity,
                Some(&p.name),
                format!(
                    "ScaleInCooldown {} is not longer than ScaleOutCooldown {}: capacity leaves \
                     as fast as it comes",
                    shown(p.scale_in_cooldown_s, scale_in),
                    shown(p.scale_out_cooldown_s, scale_out)
                ),
                format!("ScaleInCooldown {scale_in} -> {}", (scale_out * 2).max(600)),
            ));
        }
        if let Some(lead) = f.lead.as_ref().filter(|l| i64::from(scale_out) < l.seconds) {
            out.push(f.finding(
                COOLDOWNS,
                Severity::Warn,
                Some(&p.name),
                format!(
                    "ScaleOutCooldown {} is shorter than the measured lead time {} s ({}): the \
                     policy decides again before the last scale-out serves",
                    shown(p.scale_out_cooldown_s, scale_out),
                    lead.seconds,
                    lead.detail
                ),
                format!("ScaleOutCooldown {scale_out} -> {}", lead.seconds),
            ));
        }
    }
    out
}

fn adds(p: &ScalingPolicySummary) -> bool {
    p.step_adjustments.iter().any(|s| s.adjustment > 0)
}

fn removes(p: &ScalingPolicySummary) -> bool {
    p.step_adjustments.iter().any(|s| s.adjustment < 0)
}

/// The step policies' `Cooldown`: an adding one against the measured lead time, a removing one
/// against the slowest scale-out cooldown of the target's policies.
fn step_cooldowns(f: &Facts<'_>) -> Vec<Finding> {
    let steps: Vec<_> = f
        .policies
        .iter()
        .filter(|p| p.policy_type == "StepScaling")
        .collect();
    let cooldown = |p: &ScalingPolicySummary| p.cooldown_s.unwrap_or(DEFAULT_COOLDOWN_S);
    // The slowest scale-out side: tracking policies' ScaleOutCooldown, adding steps' Cooldown.
    let slowest_out = f
        .tracking()
        .map(|p| p.scale_out_cooldown_s.unwrap_or(DEFAULT_COOLDOWN_S))
        .chain(steps.iter().filter(|p| adds(p)).map(|p| cooldown(p)))
        .max();
    let mut out = Vec::new();
    for p in &steps {
        let c = cooldown(p);
        if let Some(lead) = f
            .lead
            .as_ref()
            .filter(|l| adds(p) && i64::from(c) < l.seconds)
        {
            out.push(f.finding(
                COOLDOWNS,
                Severity::Warn,
                Some(&p.name),
                format!(
                    "step policy Cooldown {} is shorter than the measured lead time {} s ({}): \
                     while its alarm stays in ALARM the policy adds again before the last \
                     scale-out serves",
                    shown(p.cooldown_s, c),
                    lead.seconds,
                    lead.detail
                ),
                format!("Cooldown {c} -> {}", lead.seconds),
            ));
        }
        if let Some(scale_out) = slowest_out.filter(|o| removes(p) && c <= *o) {
            let severity = if c < scale_out {
                Severity::Warn
            } else {
                Severity::Info
            };
            out.push(f.finding(
                COOLDOWNS,
                severity,
                Some(&p.name),
                format!(
                    "step policy Cooldown {} removes capacity no slower than the target's \
                     scale-out cooldown {scale_out} s: capacity leaves as fast as it comes",
                    shown(p.cooldown_s, c)
                ),
                format!("Cooldown {c} -> {}", (scale_out * 2).max(600)),
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::test_facts::*;
    use super::*;

    fn run(g: Given) -> Vec<(String, String)> {
        g.rule(COOLDOWNS)
    }

    fn one(s: &str, c: &str) -> Vec<(String, String)> {
        vec![(s.to_owned(), c.to_owned())]
    }

    #[test]
    fn decision_table() {
        let p = |o, i| with_cooldowns(tracking(INVOCATIONS, 70.0), o, i);
        let mut no_scale_in = p(Some(300), Some(60));
        no_scale_in.disable_scale_in = Some(true);
        let cases = [
            (
                "300 out, 600 in",
                Given::variant().with_policy(p(Some(300), Some(600))),
                vec![],
            ),
            (
                "unset both ways",
                Given::variant().with_policy(p(None, None)),
                one("info", "ScaleInCooldown 300 -> 600"),
            ),
            (
                "scale-in faster",
                Given::variant().with_policy(p(Some(300), Some(60))),
                one("warn", "ScaleInCooldown 60 -> 600"),
            ),
            (
                "long scale-out",
                Given::variant().with_policy(p(Some(600), Some(600))),
                one("info", "ScaleInCooldown 600 -> 1200"),
            ),
            (
                "scale-in disabled",
                Given::variant().with_policy(no_scale_in),
                vec![],
            ),
            (
                "scale-out shorter than the lead time",
                Given::variant()
                    .with_policy(p(Some(300), Some(900)))
                    .lead(525),
                one("warn", "ScaleOutCooldown 300 -> 525"),
            ),
            (
                "scale-out longer than the lead time",
                Given::variant()
                    .with_policy(p(Some(600), Some(1200)))
                    .lead(525),
                vec![],
            ),
        ];
        for (case, given, want) in cases {
            assert_eq!(run(given), want, "{case}");
        }
    }

    #[test]
    fn step_policy_cooldowns_decision_table() {
        let with = |mut p: ScalingPolicySummary, c: Option<i32>| {
            p.cooldown_s = c;
            p
        };
        let wake = |c| with(step("wake", "backlog", 1), c);
        let shrink = |c| with(step("shrink", "idle", -1), c);
        let cases = [
            (
                "an adding step without a measured lead time",
                Given::variant().with_policy(wake(Some(60))),
                vec![],
            ),
            (
                "an adding step shorter than the lead time",
                Given::variant().with_policy(wake(Some(300))).lead(525),
                one("warn", "Cooldown 300 -> 525"),
            ),
            (
                "an unset adding step counts as 300 s",
                Given::variant().with_policy(wake(None)).lead(525),
                one("warn", "Cooldown 300 -> 525"),
            ),
            (
                "an adding step longer than the lead time",
                Given::variant().with_policy(wake(Some(600))).lead(525),
                vec![],
            ),
            (
                "a removing step faster than the tracking scale-out",
                Given::variant()
                    .with_policy(tracking(INVOCATIONS, 70.0))
                    .with_policy(shrink(Some(120))),
                one("warn", "Cooldown 120 -> 600"),
            ),
            (
                "a removing step as fast as the adding step",
                Given::variant()
                    .with_policy(wake(Some(300)))
                    .with_policy(shrink(None)),
                one("info", "Cooldown 300 -> 600"),
            ),
            (
                "a removing step slower than every scale-out",
                Given::variant()
                    .with_policy(tracking(INVOCATIONS, 70.0))
                    .with_policy(shrink(Some(900))),
                vec![],
            ),
            (
                "a removing step with nothing that adds",
                Given::variant().with_policy(shrink(Some(60))),
                vec![],
            ),
        ];
        for (case, given, want) in cases {
            assert_eq!(run(given), want, "{case}");
        }
    }

    #[test]
    fn unset_cooldowns_say_so() {
        let g =
            Given::variant().with_policy(with_cooldowns(tracking(INVOCATIONS, 70.0), None, None));
        let f = g.lint().into_iter().find(|f| f.rule == COOLDOWNS).unwrap();
        assert!(
            f.evidence.contains("unset (300 s, AAS's default)"),
            "{}",
            f.evidence
        );
    }
}
