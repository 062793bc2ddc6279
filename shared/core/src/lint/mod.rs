//! Scaling-policy lint: pure rules that judge a target's Application Auto Scaling policies
//! against what its endpoint is and what it measured. Each rule is a function of [`Facts`] that
//! returns findings; `usecase::lint` gathers the facts through the ports, reviews run the same
//! rules with the old model's measurements beside the new one's.
//!
//! Variants and inference components are judged apart: each managed target is linted with its
//! own policies and its own metrics (the variant's or the component's dimensions), so an
//! aggregate never hides a saturated small variant.

mod cooldowns;
mod dimension_fit;
mod instance_scale_in;
mod metric_fit;
mod policies;
mod scale_to_zero;
mod target_value;
#[cfg(test)]
mod test_facts;

#[cfg(test)]
mod tests {
    #[test]
    fn durations_read_at_a_glance() {
        assert_eq!(super::secs(0.045), "45 ms");
        assert_eq!(super::secs(2.3), "2.30 s");
        assert_eq!(super::secs(300.0), "300 s");
    }
}

use serde::Serialize;

use crate::deploy_ports::ManagedInstanceScalingView;
use crate::metrics_port::{AlarmView, Workload};
use crate::plan::TargetPlan;
use crate::review::ScalingPolicySummary;

pub use crate::model::{Finding, Severity};

/// What serves behind the target, as far as scaling cares.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Serving {
    /// A real-time variant with its own model: cannot go below 1 instance.
    RealTime,
    /// A variant of an asynchronous endpoint: may go to 0, woken by its backlog.
    Async,
    /// A serverless variant: no instances; its provisioned concurrency is what scales.
    Serverless,
    /// An inference component's copies: may go to 0, woken by failed invocations.
    Component,
    /// Not known (the endpoint config could not be read).
    Unknown,
}

/// A lead time that was measured (not configured), with how it was computed.
#[derive(Debug, Clone, PartialEq)]
pub struct MeasuredLead {
    pub seconds: i64,
    pub detail: String,
}

/// Everything the rules judge, for one target.
#[derive(Debug, Clone)]
pub struct Facts<'a> {
    pub target: &'a TargetPlan,
    pub serving: Serving,
    pub instance_type: Option<&'a str>,
    pub policies: &'a [ScalingPolicySummary],
    /// The policies' alarms and the plan's guard and wake alarms, as CloudWatch describes them;
    /// `None` when they could not be read (rules that need them then say so).
    pub alarms: Option<&'a [AlarmView]>,
    /// The `ManagedInstanceScaling` of the variant hosting an inference component.
    pub instance_scaling: Option<&'a ManagedInstanceScalingView>,
    /// The workload now (for a review: under the new model).
    pub measured: Option<&'a Workload>,
    /// For a review: the workload under the old model.
    pub before: Option<&'a Workload>,
    pub lead: Option<MeasuredLead>,
}

impl Facts<'_> {
    pub(crate) fn finding(
        &self,
        rule: &str,
        severity: Severity,
        subject: Option<&str>,
        evidence: String,
        change: String,
    ) -> Finding {
        Finding {
            rule: rule.to_owned(),
            severity,
            target: self.target.id.to_string(),
            subject: subject.map(str::to_owned),
            evidence,
            change,
        }
    }

    pub(crate) fn tracking(&self) -> impl Iterator<Item = &ScalingPolicySummary> {
        self.policies
            .iter()
            .filter(|p| p.policy_type == "TargetTrackingScaling")
    }
}

/// Every rule, in report order.
pub fn lint(facts: &Facts<'_>) -> Vec<Finding> {
    let mut out = Vec::new();
    out.extend(dimension_fit::dimension_fit(facts));
    out.extend(policies::no_policy(facts));
    out.extend(policies::several_policies(facts));
    out.extend(target_value::target_value(facts));
    out.extend(metric_fit::invocations_for_long_requests(facts));
    out.extend(metric_fit::cpu_summed_over_cores(facts));
    out.extend(cooldowns::cooldowns(facts));
    out.extend(scale_to_zero::scale_to_zero(facts));
    out.extend(instance_scale_in::instance_scale_in(facts));
    out
}

/// The worst severity among `findings`.
pub fn worst(findings: &[Finding]) -> Option<Severity> {
    findings.iter().map(|f| f.severity).max()
}

/// Seconds, short: "45 ms", "1.10 s", "300 s".
pub fn secs(s: f64) -> String {
    if s < 1.0 {
        format!("{:.0} ms", s * 1000.0)
    } else if s < 10.0 {
        format!("{s:.2} s")
    } else {
        format!("{s:.0} s")
    }
}

/// A number as AWS would take it: integers without decimals, others to two places.
pub(crate) fn num(v: f64) -> String {
    if (v - v.round()).abs() < 1e-9 {
        format!("{v:.0}")
    } else {
        format!("{v:.2}")
    }
}
