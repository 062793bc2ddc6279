//! How many policies decide: none (AAS never moves between the bounds) or several (the largest
//! capacity wins, for scale-out and for scale-in: aws-facts.md, "With several policies").

use super::{Facts, Finding, Severity};
use crate::review::ScalingPolicySummary;

pub const NO_POLICY: &str = "no-policy";
pub const SEVERAL_POLICIES: &str = "several-policies";

pub fn no_policy(f: &Facts<'_>) -> Option<Finding> {
    if !f.policies.is_empty() {
        return None;
    }
    Some(f.finding(
        NO_POLICY,
        Severity::Warn,
        None,
        "DescribeScalingPolicies lists no policy for this target".into(),
        format!(
            "attach a target-tracking policy: without one the count stays at the minimum headroom \
             sets ({}..{} in the plan) whatever the load",
            f.target.min_capacity, f.target.max_capacity
        ),
    ))
}

/// Whether the policy takes part in scale-in: a target-tracking policy unless it disables
/// scale-in, a step policy with a negative step.
fn scales_in(p: &ScalingPolicySummary) -> bool {
    match p.policy_type.as_str() {
        "TargetTrackingScaling" => p.disable_scale_in != Some(true),
        "StepScaling" => p.step_adjustments.iter().any(|s| s.adjustment < 0),
        _ => false,
    }
}

pub fn several_policies(f: &Facts<'_>) -> Option<Finding> {
    let deciding: Vec<&ScalingPolicySummary> = f.policies.iter().filter(|p| scales_in(p)).collect();
    if deciding.len() < 2 {
        return None;
    }
    let names: Vec<String> = deciding
        .iter()
        .map(|p| match (&p.metric, p.target_value) {
            (Some(m), Some(v)) => format!("{} ({m} at {})", p.name, super::num(v)),
            _ => format!("{} ({})", p.name, p.policy_type),
        })
        .collect();
    Some(
        f.finding(
            SEVERAL_POLICIES,
            Severity::Warn,
            None,
            format!(
            "{} policies take part in scale-in: {}; AAS applies the largest capacity any of them \
             asks, for scale-out and for scale-in",
            deciding.len(),
            names.join(", ")
        ),
            "keep one policy that decides scale-in; set DisableScaleIn = true on the safety-net \
         policies so they only add capacity"
                .into(),
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::super::test_facts::*;
    use super::*;

    /// (case, given, expected (rule, severity) findings)
    type Case = (&'static str, Given, Vec<(&'static str, &'static str)>);

    #[test]
    fn decision_table() {
        let mut out_only = tracking(CONCURRENCY_HIGH_RES, 4.0);
        out_only.disable_scale_in = Some(true);
        let cases: Vec<Case> = vec![
            ("no policy", Given::variant(), vec![(NO_POLICY, "warn")]),
            (
                "one tracking policy",
                Given::variant().with_policy(tracking(INVOCATIONS, 70.0)),
                vec![],
            ),
            (
                "two tracking policies both scale in",
                Given::variant()
                    .with_policy(tracking(INVOCATIONS, 70.0))
                    .with_policy(tracking(CONCURRENCY_HIGH_RES, 4.0)),
                vec![(SEVERAL_POLICIES, "warn")],
            ),
            (
                "the safety net disables scale-in",
                Given::variant()
                    .with_policy(tracking(INVOCATIONS, 70.0))
                    .with_policy(out_only),
                vec![],
            ),
            (
                "a wake step policy only adds",
                Given::variant()
                    .with_policy(tracking(INVOCATIONS, 70.0))
                    .with_policy(step("wake", "no-capacity", 1)),
                vec![],
            ),
            (
                "a step policy that removes counts",
                Given::variant()
                    .with_policy(tracking(INVOCATIONS, 70.0))
                    .with_policy(step("shrink", "idle", -1)),
                vec![(SEVERAL_POLICIES, "warn")],
            ),
        ];
        for (case, given, want) in cases {
            let got: Vec<(String, String)> = given
                .lint()
                .into_iter()
                .filter(|f| f.rule == NO_POLICY || f.rule == SEVERAL_POLICIES)
                .map(|f| (f.rule, f.severity.as_str().to_owned()))
                .collect();
            let want: Vec<(String, String)> = want
                .into_iter()
                .map(|(r, s)| (r.to_owned(), s.to_owned()))
                .collect();
            assert_eq!(got, want, "{case}");
        }
    }
}
