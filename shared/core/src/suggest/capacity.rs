//! Where `plan suggest --days` (the CloudWatch form) finds the figure that turns demand into
//! floors, and which demand it is per instance of: the base plan's own `[target.forecast]`
//! `invocations_per_instance` and `demand` first (the operator said it), else the target value
//! of the target's target-tracking policy on invocations per instance (requests per minute) or
//! on the high-resolution concurrency metric (requests in flight: the suggestion then forecasts
//! `demand = "concurrency"`, as that policy steers). The offline form takes it from the
//! simulator's world instead.

use crate::plan::forecast::DemandKind;
use crate::plan::TargetPlan;
use crate::review::ScalingPolicySummary;
use crate::suggest::plan::InstanceCapacity;

/// AAS's predefined metrics that count requests per minute per instance (or per copy).
pub const INVOCATION_METRICS: &[&str] = &[
    "SageMakerVariantInvocationsPerInstance",
    "SageMakerInferenceComponentInvocationsPerCopy",
];

/// AAS's predefined metrics that count requests in flight per instance (or per copy).
pub const CONCURRENCY_METRICS: &[&str] = &[
    "SageMakerVariantConcurrentRequestsPerModelHighResolution",
    "SageMakerInferenceComponentConcurrentRequestsPerCopyHighResolution",
];

/// The figure from the base plan's `[target.forecast]` section, if it has one.
pub fn from_plan(target: &TargetPlan) -> Option<InstanceCapacity> {
    target.forecast.as_ref().map(|f| InstanceCapacity {
        invocations_per_instance: f.invocations_per_instance,
        demand: f.demand,
        source: "the base plan's [target.forecast] invocations_per_instance".into(),
    })
}

/// The figure from the target's scaling policies (DescribeScalingPolicies), or why there is none.
pub fn from_policies(policies: &[ScalingPolicySummary]) -> Result<InstanceCapacity, String> {
    policies
        .iter()
        .find_map(|p| {
            let metric = p.metric.as_deref()?;
            let value = p.target_value.filter(|v| v.is_finite() && *v > 0.0)?;
            let demand = if INVOCATION_METRICS.contains(&metric) {
                DemandKind::Invocations
            } else if CONCURRENCY_METRICS.contains(&metric) {
                DemandKind::Concurrency
            } else {
                return None;
            };
            Some(InstanceCapacity {
                invocations_per_instance: value,
                demand,
                source: format!(
                    "the target-tracking target value of {metric} (policy {})",
                    p.name
                ),
            })
        })
        .ok_or_else(|| {
            "no invocations_per_instance: the base plan has no [target.forecast] section for it \
             and AAS has no target-tracking policy on invocations or concurrent requests per \
             instance; add \
             `[target.forecast] invocations_per_instance = N` (requests per minute one instance \
             should serve) to the base plan"
                .to_owned()
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy(metric: &str, target_value: f64) -> ScalingPolicySummary {
        ScalingPolicySummary {
            name: "tt".into(),
            policy_type: "TargetTrackingScaling".into(),
            metric: Some(metric.into()),
            target_value: Some(target_value),
            scale_in_cooldown_s: None,
            scale_out_cooldown_s: None,
            disable_scale_in: None,
            cooldown_s: None,
            steps: Vec::new(),
            step_adjustments: Vec::new(),
            alarms: Vec::new(),
        }
    }

    #[test]
    fn a_tracking_policy_on_concurrency_gives_its_target_value_in_requests_in_flight() {
        for metric in CONCURRENCY_METRICS {
            let c = from_policies(&[policy(metric, 4.0)]).expect("a figure");
            assert_eq!(
                (c.invocations_per_instance, c.demand),
                (4.0, DemandKind::Concurrency),
                "{metric}"
            );
        }
        let c = from_policies(&[policy("SageMakerVariantInvocationsPerInstance", 70.0)])
            .expect("a figure");
        assert_eq!(c.demand, DemandKind::Invocations);
    }

    #[test]
    fn a_tracking_policy_on_invocations_gives_its_target_value() {
        let c = from_policies(&[
            policy("SageMakerVariantCPUUtilization", 50.0),
            policy("SageMakerVariantInvocationsPerInstance", 70.0),
        ])
        .expect("a figure");
        assert_eq!(c.invocations_per_instance, 70.0);
        assert!(
            c.source
                .contains("SageMakerVariantInvocationsPerInstance (policy tt)"),
            "{}",
            c.source
        );
    }

    #[test]
    fn a_policy_on_another_metric_gives_none_and_says_what_to_add() {
        let why = from_policies(&[policy("SageMakerVariantCPUUtilization", 50.0)]).unwrap_err();
        assert!(why.contains("invocations_per_instance = N"), "{why}");
    }
}
