//! Target-tracking cooldowns. Unset means 300 s both ways for SageMaker (aws-facts.md, "Default
//! cooldowns for SageMaker variants"); scale-in should be the slower side (e.g. 300 s out, 600 s
//! in), and a scale-out cooldown shorter than the measured lead time lets the policy decide
//! again before the capacity it asked for serves.

use super::{Facts, Finding, Severity};

pub const COOLDOWNS: &str = "cooldowns";

/// AAS's default for SageMaker variants and components, both directions.
pub const DEFAULT_COOLDOWN_S: i32 = 300;

pub fn cooldowns(f: &Facts<'_>) -> Vec<Finding> {
    let mut out = Vec::new();
    for p in f.tracking() {
        let scale_out = p.scale_out_cooldown_s.unwrap_or(DEFAULT_COOLDOWN_S);
        let scale_in = p.scale_in_cooldown_s.unwrap_or(DEFAULT_COOLDOWN_S);
        let shown = |v: Option<i32>, eff: i32| match v {
            Some(_) => format!("{eff} s"),
            None => format!("unset ({eff} s, AAS's default)"),
        };
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
