//! Whether the tracked metric fits the workload. Invocation counts do not rise when requests get
//! longer, so long (generative, streaming) requests belong on the high-resolution concurrency
//! metrics (aws-facts.md: `ConcurrentRequestsPerModel` / `PerCopy`, 10-second datapoints); and
//! `CPUUtilization` is summed over the instance's cores (0-400 % on four vCPUs: SageMaker
//! developer guide, "Amazon SageMaker AI metrics in Amazon CloudWatch", endpoint instance
//! metrics), so a target of 50 on a multi-core instance is a fraction of one core.

use super::target_value::counts_invocations;
use super::{num, secs, Facts, Finding, Serving, Severity};

pub const METRIC_FIT: &str = "metric-fit";
pub const CPU_SUMMED: &str = "cpu-summed-over-cores";

/// Requests this long on average are generative or streaming in practice: their count per
/// minute says little about how busy an instance is. (A judgement, not an AWS number.)
const LONG_REQUEST_S: f64 = 2.0;

pub fn invocations_for_long_requests(f: &Facts<'_>) -> Vec<Finding> {
    let Some((lat, w)) = f
        .measured
        .and_then(|w| w.model_latency_mean_s.map(|l| (l, w)))
    else {
        return Vec::new();
    };
    if lat < LONG_REQUEST_S {
        return Vec::new();
    }
    let metric = match f.serving {
        Serving::Component => "SageMakerInferenceComponentConcurrentRequestsPerCopyHighResolution",
        _ => "SageMakerVariantConcurrentRequestsPerModelHighResolution",
    };
    f.tracking()
        .filter(|p| counts_invocations(p))
        .map(|p| {
            f.finding(
                METRIC_FIT,
                Severity::Warn,
                Some(&p.name),
                format!(
                    "ModelLatency mean {} over {}: requests this long keep an instance busy \
                     without raising {}",
                    secs(lat),
                    w.window(),
                    p.metric.as_deref().unwrap_or("the invocation count")
                ),
                format!(
                    "track {metric} (10-second datapoints) instead, with the concurrency one \
                     instance holds at its objective as the target"
                ),
            )
        })
        .collect()
}

/// vCPUs of a SageMaker instance type from its size: `large` 2, `xlarge` 4, `Nxlarge` 4N, as
/// EC2's general-purpose, compute, memory and GPU families are sized (EC2 instance types
/// documentation). `None` for sizes this rule does not know (`medium`, `metal`).
pub fn vcpus(instance_type: &str) -> Option<u32> {
    let size = instance_type.rsplit('.').next()?;
    match size {
        "large" => Some(2),
        "xlarge" => Some(4),
        s => s.strip_suffix("xlarge")?.parse::<u32>().ok().map(|n| n * 4),
    }
}

pub fn cpu_summed_over_cores(f: &Facts<'_>) -> Vec<Finding> {
    let Some(cores) = f.instance_type.and_then(vcpus).filter(|&c| c > 1) else {
        return Vec::new();
    };
    f.tracking()
        .filter(|p| {
            p.metric
                .as_deref()
                .is_some_and(|m| m.ends_with("/CPUUtilization"))
        })
        .filter_map(|p| {
            let tv = p.target_value?;
            if tv > 100.0 {
                return None;
            }
            let full = f64::from(cores) * 100.0;
            Some(f.finding(
                CPU_SUMMED,
                Severity::Warn,
                Some(&p.name),
                format!(
                    "TargetValue {} on {} ({cores} vCPUs): CPUUtilization is summed over cores \
                     (0-{} %), so the target is {:.0} % of the instance",
                    num(tv),
                    f.instance_type.unwrap_or("?"),
                    num(full),
                    tv / full * 100.0
                ),
                format!(
                    "TargetValue {} -> {} for the same share of every core",
                    num(tv),
                    num(tv * f64::from(cores))
                ),
            ))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::super::test_facts::*;
    use super::*;

    #[test]
    fn vcpus_by_size() {
        let cases = [
            ("ml.m5.large", Some(2)),
            ("ml.m5.xlarge", Some(4)),
            ("ml.g5.12xlarge", Some(48)),
            ("ml.t2.medium", None),
            ("nonsense", None),
        ];
        for (t, want) in cases {
            assert_eq!(vcpus(t), want, "{t}");
        }
    }

    #[test]
    fn long_requests_on_an_invocation_metric() {
        let cases = [
            (Some(2.5), INVOCATIONS, Serving::RealTime, 1),
            (Some(1.0), INVOCATIONS, Serving::RealTime, 0),
            (None, INVOCATIONS, Serving::RealTime, 0),
            (Some(8.0), CONCURRENCY_HIGH_RES, Serving::RealTime, 0),
            (Some(8.0), PER_COPY, Serving::Component, 1),
        ];
        for (lat, metric, serving, want) in cases {
            let g = Given::variant()
                .serving(serving)
                .with_policy(tracking(metric, 10.0))
                .measured(workload(lat, None, None));
            let got = g.rule(METRIC_FIT);
            assert_eq!(got.len(), want, "{lat:?} {metric}");
            if serving == Serving::Component && want == 1 {
                assert!(got[0].1.contains("PerCopyHighResolution"), "{got:?}");
            }
        }
    }

    #[test]
    fn cpu_targets_on_multi_core_instances() {
        let cases = [
            (
                "ml.m5.xlarge",
                50.0,
                vec![(
                    "warn".to_owned(),
                    "TargetValue 50 -> 200 for the same share of every core".to_owned(),
                )],
            ),
            ("ml.m5.xlarge", 200.0, vec![]),
            ("ml.t2.medium", 50.0, vec![]),
        ];
        for (it, tv, want) in cases {
            let g = Given::variant()
                .instance_type(it)
                .with_policy(tracking(CPU, tv));
            assert_eq!(g.rule(CPU_SUMMED), want, "{it} {tv}");
        }
    }
}
