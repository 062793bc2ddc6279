//! Builders for the rules' decision tables: `Given::variant().with_policy(tracking(..))`.
#![allow(clippy::unwrap_used)] // a test that cannot build its fixture has failed

use chrono::{DateTime, Utc};

use super::{lint, Facts, Finding, MeasuredLead, Serving};
use crate::deploy_ports::ManagedInstanceScalingView;
use crate::metrics_port::{AlarmView, Workload};
use crate::plan::{parse_plan, Plan};
use crate::review::{ScalingPolicySummary, StepAdjustment};

pub struct Given {
    plan: Plan,
    serving: Serving,
    instance_type: Option<String>,
    policies: Vec<ScalingPolicySummary>,
    alarms: Option<Vec<AlarmView>>,
    instance_scaling: Option<ManagedInstanceScalingView>,
    measured: Option<Workload>,
    before: Option<Workload>,
    lead: Option<MeasuredLead>,
}

fn target_plan(resource_id: &str, min: u32, extra: &str) -> Plan {
    parse_plan(
        "test",
        &format!(
            "version = 1\n[[target]]\nresource_id = \"{resource_id}\"\nmin_capacity = {min}\nmax_capacity = 8\n{extra}"
        ),
    )
    .unwrap()
}

impl Given {
    fn of(plan: Plan, serving: Serving) -> Self {
        Self {
            plan,
            serving,
            instance_type: Some("ml.g5.xlarge".into()),
            policies: Vec::new(),
            alarms: Some(Vec::new()),
            instance_scaling: None,
            measured: None,
            before: None,
            lead: None,
        }
    }

    /// A real-time variant, plan bounds 1..8.
    pub fn variant() -> Self {
        Self::of(
            target_plan("endpoint/chat/variant/AllTraffic", 1, ""),
            Serving::RealTime,
        )
    }

    /// An inference component, plan bounds 1..8.
    pub fn component() -> Self {
        Self::of(
            target_plan("inference-component/chat-ic", 1, ""),
            Serving::Component,
        )
    }

    /// The same kind of target with this plan minimum and these lines after `max_capacity`.
    pub fn plan(mut self, min: u32, extra: &str) -> Self {
        let id = self.plan.targets[0].id.to_string();
        self.plan = target_plan(&id, min, extra);
        self
    }

    pub fn serving(mut self, s: Serving) -> Self {
        self.serving = s;
        self
    }

    pub fn instance_type(mut self, t: &str) -> Self {
        self.instance_type = Some(t.into());
        self
    }

    pub fn with_policy(mut self, p: ScalingPolicySummary) -> Self {
        self.policies.push(p);
        self
    }

    pub fn with_alarm(mut self, name: &str, metric: &str) -> Self {
        self.alarms.get_or_insert_with(Vec::new).push(AlarmView {
            name: name.into(),
            namespace: Some("AWS/SageMaker".into()),
            metric: Some(metric.into()),
        });
        self
    }

    pub fn alarms_unreadable(mut self) -> Self {
        self.alarms = None;
        self
    }

    pub fn instance_scaling(mut self, m: ManagedInstanceScalingView) -> Self {
        self.instance_scaling = Some(m);
        self
    }

    pub fn measured(mut self, w: Workload) -> Self {
        self.measured = Some(w);
        self
    }

    pub fn before(mut self, w: Workload) -> Self {
        self.before = Some(w);
        self
    }

    pub fn lead(mut self, seconds: i64) -> Self {
        self.lead = Some(MeasuredLead {
            seconds,
            detail: format!("p90 of 3 scale-outs x margin 1.25 = {seconds}s"),
        });
        self
    }

    pub fn facts(&self) -> Facts<'_> {
        Facts {
            target: &self.plan.targets[0],
            serving: self.serving,
            instance_type: self.instance_type.as_deref(),
            policies: &self.policies,
            alarms: self.alarms.as_deref(),
            instance_scaling: self.instance_scaling.as_ref(),
            measured: self.measured.as_ref(),
            before: self.before.as_ref(),
            lead: self.lead.clone(),
        }
    }

    /// Every rule's findings.
    pub fn lint(&self) -> Vec<Finding> {
        lint(&self.facts())
    }

    /// The findings of one rule, as `(severity, change)`.
    pub fn rule(&self, rule: &str) -> Vec<(String, String)> {
        self.lint()
            .into_iter()
            .filter(|f| f.rule == rule)
            .map(|f| (f.severity.as_str().to_owned(), f.change))
            .collect()
    }
}

pub fn tracking(metric: &str, target: f64) -> ScalingPolicySummary {
    ScalingPolicySummary {
        name: format!("tt-{metric}"),
        policy_type: "TargetTrackingScaling".into(),
        metric: Some(metric.into()),
        target_value: Some(target),
        scale_in_cooldown_s: Some(600),
        scale_out_cooldown_s: Some(300),
        ..Default::default()
    }
}

pub fn with_cooldowns(
    mut p: ScalingPolicySummary,
    out: Option<i32>,
    in_: Option<i32>,
) -> ScalingPolicySummary {
    p.scale_out_cooldown_s = out;
    p.scale_in_cooldown_s = in_;
    p
}

pub fn step(name: &str, alarm: &str, adjustment: i32) -> ScalingPolicySummary {
    ScalingPolicySummary {
        name: name.into(),
        policy_type: "StepScaling".into(),
        cooldown_s: Some(300),
        step_adjustments: vec![StepAdjustment {
            lower: Some(0.0),
            upper: None,
            adjustment,
        }],
        alarms: vec![alarm.into()],
        ..Default::default()
    }
}

fn t(s: &str) -> DateTime<Utc> {
    s.parse().unwrap()
}

/// A day's measurements: mean ModelLatency, highest concurrency per instance, invocations per
/// instance per minute.
pub fn workload(latency_s: Option<f64>, concurrency: Option<f64>, ipi: Option<f64>) -> Workload {
    Workload {
        from: t("2026-03-13T09:00:00Z"),
        to: t("2026-03-14T09:00:00Z"),
        model_latency_mean_s: latency_s,
        concurrency_max: concurrency,
        invocations_per_instance_per_min: ipi,
    }
}

pub const INVOCATIONS: &str = "SageMakerVariantInvocationsPerInstance";
pub const PER_COPY: &str = "SageMakerInferenceComponentInvocationsPerCopy";
pub const CONCURRENCY_HIGH_RES: &str = "SageMakerVariantConcurrentRequestsPerModelHighResolution";
pub const CPU: &str = "/aws/sagemaker/Endpoints/CPUUtilization";
