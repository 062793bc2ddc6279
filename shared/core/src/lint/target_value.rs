//! The target value of an invocation-count policy is derived, not guessed. `InvocationsPerInstance`
//! (and `InvocationsPerCopy`) count requests per instance per minute, so the value one instance
//! sustains is `concurrency at the latency objective x 60 / mean inference seconds`, and the
//! target is that times a safety factor (AWS suggests 0.5 to start: SageMaker developer guide,
//! "Load testing your auto scaling configuration"). A model whose ModelLatency doubles halves
//! the right target.

use super::{num, secs, Facts, Finding, Severity};
use crate::review::ScalingPolicySummary;

pub const TARGET_VALUE: &str = "target-value";

/// A target this far above the derived value saturates instances before the policy scales out.
const TOO_HIGH: f64 = 1.5;
/// Within 10 % either way is noise in a day's mean latency.
const TOLERANCE: f64 = 1.1;
/// This far below, the policy keeps instances that serve little: a cost, not a failure.
const TOO_LOW: f64 = 0.67;

/// Whether the policy tracks requests per instance (or per copy) per minute.
pub fn counts_invocations(p: &ScalingPolicySummary) -> bool {
    p.metric.as_deref().is_some_and(|m| {
        m == "SageMakerVariantInvocationsPerInstance"
            || m == "SageMakerInferenceComponentInvocationsPerCopy"
            || m.ends_with("/InvocationsPerInstance")
            || m.ends_with("/InvocationsPerCopy")
    })
}

struct Derived {
    value: f64,
    how: String,
}

fn derive(f: &Facts<'_>, target_value: f64) -> Result<Derived, String> {
    let now = f
        .measured
        .and_then(|w| w.model_latency_mean_s.map(|l| (l, w)));
    let before = f
        .before
        .and_then(|w| w.model_latency_mean_s.map(|l| (l, w)));
    let old = before
        .map(|(l, w)| format!("; {} under the old model over {}", secs(l), w.window()))
        .unwrap_or_default();
    match (f.target.lint.concurrency_per_instance, now, before) {
        (Some(c), Some((lat, w)), _) if lat > 0.0 => {
            let k = f.target.lint.safety_factor;
            Ok(Derived {
                value: c * 60.0 / lat * k,
                how: format!(
                    "ModelLatency mean {} over {}{old}; {} concurrent per instance at the \
                     objective ([target.lint]) x 60 / {} x safety factor {} = {:.1} per minute",
                    secs(lat),
                    w.window(),
                    num(c),
                    secs(lat),
                    num(k),
                    c * 60.0 / lat * k
                ),
            })
        }
        (None, Some((lat, w)), Some((old_lat, old_w))) if lat > 0.0 => Ok(Derived {
            value: target_value * old_lat / lat,
            how: format!(
                "ModelLatency mean {} under the old model over {} -> {} over {}: an instance \
                 serves {:.2}x the requests per minute it served; set [target.lint] \
                 concurrency_per_instance to derive the value itself",
                secs(old_lat),
                old_w.window(),
                secs(lat),
                w.window(),
                old_lat / lat
            ),
        }),
        (Some(_), _, _) => Err(format!(
            "no ModelLatency datapoint{}: the target value cannot be derived yet",
            f.measured
                .map(|w| format!(" over {}", w.window()))
                .unwrap_or_default()
        )),
        (None, _, _) => Err(
            "no concurrency at the latency objective is known: set [target.lint] \
             concurrency_per_instance (from a load test) to derive the target value"
                .into(),
        ),
    }
}

pub fn target_value(f: &Facts<'_>) -> Vec<Finding> {
    let mut out = Vec::new();
    for p in f.tracking().filter(|p| counts_invocations(p)) {
        let Some(tv) = p.target_value else { continue };
        let d = match derive(f, tv) {
            Ok(d) => d,
            Err(why) => {
                out.push(f.finding(
                    TARGET_VALUE,
                    Severity::Info,
                    Some(&p.name),
                    format!("TargetValue {}; {why}", num(tv)),
                    "none yet".into(),
                ));
                continue;
            }
        };
        let ratio = tv / d.value;
        let severity = if ratio > TOO_HIGH {
            Severity::Error
        } else if ratio > TOLERANCE {
            Severity::Warn
        } else if ratio < TOO_LOW {
            Severity::Info
        } else {
            continue;
        };
        let consequence = if ratio > 1.0 {
            "instances saturate before the policy scales out"
        } else {
            "the policy keeps instances that serve little"
        };
        out.push(f.finding(
            TARGET_VALUE,
            severity,
            Some(&p.name),
            format!(
                "TargetValue {} is {:.1}x the derived {:.1} ({consequence}): {}",
                num(tv),
                ratio,
                d.value,
                d.how
            ),
            format!(
                "TargetValue {} -> {}",
                num(tv),
                num(d.value.round().max(1.0))
            ),
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::test_facts::*;
    use super::*;

    fn run(g: Given) -> Vec<(String, String)> {
        g.rule(TARGET_VALUE)
    }

    fn pair(s: &str, c: &str) -> Vec<(String, String)> {
        vec![(s.to_owned(), c.to_owned())]
    }

    #[test]
    fn derived_from_the_configured_concurrency() {
        let lint = "[target.lint]\nconcurrency_per_instance = 2";
        // 2 x 60 / 1.0 s x 0.5 = 60 per minute
        let cases = [
            (70.0, Some(1.0), pair("warn", "TargetValue 70 -> 60")),
            (60.0, Some(1.0), vec![]),
            (95.0, Some(1.0), pair("error", "TargetValue 95 -> 60")),
            (30.0, Some(1.0), pair("info", "TargetValue 30 -> 60")),
            // 2 x 60 / 2.3 x 0.5 = 26.1
            (70.0, Some(2.3), pair("error", "TargetValue 70 -> 26")),
            (70.0, None, pair("info", "none yet")),
        ];
        for (tv, latency, want) in cases {
            let g = Given::variant()
                .plan(1, lint)
                .with_policy(tracking(INVOCATIONS, tv))
                .measured(workload(latency, None, None));
            assert_eq!(run(g), want, "target {tv}, latency {latency:?}");
        }
    }

    #[test]
    fn the_safety_factor_is_the_plans() {
        let g = Given::variant()
            .plan(
                1,
                "[target.lint]\nconcurrency_per_instance = 2\nsafety_factor = 0.25",
            )
            .with_policy(tracking(INVOCATIONS, 30.0))
            .measured(workload(Some(1.0), None, None));
        assert_eq!(run(g), vec![], "2 x 60 / 1 s x 0.25 = 30");
    }

    #[test]
    fn a_review_scales_the_value_by_the_latency_change() {
        // The example: ModelLatency 1.1 s -> 2.3 s, TargetValue 70 -> 70 x 1.1 / 2.3 = 33.5
        let g = Given::variant()
            .with_policy(tracking(INVOCATIONS, 70.0))
            .before(workload(Some(1.1), None, None))
            .measured(workload(Some(2.3), None, None));
        assert_eq!(run(g), pair("error", "TargetValue 70 -> 33"));
        let unchanged = Given::component()
            .with_policy(tracking(PER_COPY, 70.0))
            .before(workload(Some(1.1), None, None))
            .measured(workload(Some(1.15), None, None));
        assert_eq!(run(unchanged), vec![]);
    }

    #[test]
    fn without_concurrency_or_latency_it_says_what_is_missing() {
        let g = Given::variant().with_policy(tracking(INVOCATIONS, 70.0));
        let f = g.lint();
        let f = f.iter().find(|f| f.rule == TARGET_VALUE).unwrap();
        assert_eq!(f.severity, Severity::Info);
        assert!(
            f.evidence.contains("concurrency_per_instance"),
            "{}",
            f.evidence
        );
    }

    #[test]
    fn other_metrics_are_not_judged_here() {
        let g = Given::variant()
            .plan(1, "[target.lint]\nconcurrency_per_instance = 2")
            .with_policy(tracking(CONCURRENCY_HIGH_RES, 70.0))
            .measured(workload(Some(1.0), None, None));
        assert_eq!(run(g), vec![]);
    }
}
