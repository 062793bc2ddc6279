//! `headroom lint`: judge each managed target's scaling policies against its endpoint and its
//! measurements. Read-only: it reads the plan and the target states (DynamoDB), the policies
//! (AAS DescribeScalingPolicies), the endpoint and its config or the inference component
//! (SageMaker), the policies' and the plan's alarms (CloudWatch DescribeAlarms) and a window of
//! workload metrics (one GetMetricData call per 100 targets), then runs the pure rules of
//! `crate::lint`. Policy reviews gather the same facts through [`gather`].

use chrono::{DateTime, Utc};
use serde::Serialize;

use crate::deploy_ports::{
    EndpointConfigView, Endpoints, ManagedInstanceScalingView, ScalingHistory,
};
use crate::duration::Span;
use crate::ids::ScalableTargetId;
use crate::lead_time::lead_time;
use crate::lint::{lint, worst, Facts, Finding, MeasuredLead, Serving, Severity};
use crate::metrics_port::{
    AlarmView, DemandHistory, Workload, ALARM_NAMES_PER_CALL, WORKLOAD_TARGETS_PER_CALL,
};
use crate::plan::TargetPlan;
use crate::ports::{PortError, StateStore};
use crate::reconcile::{load_plan, ReconcileError};
use crate::review::ScalingPolicySummary;
use crate::state::TargetState;

use super::Ports;

/// The window `headroom lint` measures by default: a day covers a daily cycle.
pub const DEFAULT_WINDOW: Span = Span::hours(24);

#[derive(Debug, thiserror::Error)]
pub enum LintError {
    #[error(transparent)]
    Plan(#[from] ReconcileError),
    #[error("{target} is not managed by the plan: `headroom plan show` lists the targets")]
    Unmanaged { target: String },
    #[error("failed to {step} for {subject}: {source}")]
    Port {
        subject: String,
        step: &'static str,
        #[source]
        source: PortError,
    },
}

impl LintError {
    /// The AWS failure behind the error, when there is one (the CLI's exit code reads it).
    pub fn port_error(&self) -> Option<&PortError> {
        match self {
            Self::Port { source, .. } => Some(source),
            Self::Plan(ReconcileError::LoadPlan(e)) => Some(e),
            _ => None,
        }
    }
}

/// What was gathered for one target: the facts the rules judge, owned.
#[derive(Debug, Clone)]
pub struct Gathered {
    pub serving: Serving,
    pub instance_type: Option<String>,
    pub policies: Vec<ScalingPolicySummary>,
    pub alarms: Option<Vec<AlarmView>>,
    pub instance_scaling: Option<ManagedInstanceScalingView>,
    pub lead: Option<MeasuredLead>,
    /// What could not be read, so a reader knows a missing finding may mean "unknown".
    pub gaps: Vec<String>,
}

impl Gathered {
    pub fn facts<'a>(
        &'a self,
        target: &'a TargetPlan,
        measured: Option<&'a Workload>,
        before: Option<&'a Workload>,
    ) -> Facts<'a> {
        Facts {
            target,
            serving: self.serving,
            instance_type: self.instance_type.as_deref(),
            policies: &self.policies,
            alarms: self.alarms.as_deref(),
            instance_scaling: self.instance_scaling.as_ref(),
            measured,
            before,
            lead: self.lead.clone(),
        }
    }
}

/// One target's lint.
#[derive(Debug, Clone, Serialize)]
pub struct TargetLint {
    pub target: String,
    pub serving: Serving,
    pub findings: Vec<Finding>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub gaps: Vec<String>,
    /// What was measured over the window (absent when no metrics port is wired).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub measured: Option<Workload>,
}

/// `headroom lint`'s answer (`kind: headroom.lint/v1` in JSON).
#[derive(Debug, Clone, Serialize)]
pub struct LintReport {
    pub kind: &'static str,
    pub from: DateTime<Utc>,
    pub to: DateTime<Utc>,
    pub targets: Vec<TargetLint>,
}

impl LintReport {
    pub fn worst(&self) -> Option<Severity> {
        self.targets.iter().filter_map(|t| worst(&t.findings)).max()
    }

    pub fn has_errors(&self) -> bool {
        self.worst() == Some(Severity::Error)
    }
}

fn port(subject: impl ToString, step: &'static str) -> impl FnOnce(PortError) -> LintError {
    let subject = subject.to_string();
    move |source| LintError::Port {
        subject,
        step,
        source,
    }
}

/// Lints every managed target, or only `only`, measuring `[now - window, now)`.
pub async fn run<T, H, C, E, S, R, D>(
    ports: Ports<'_, T, H, C, E, S, R, D>,
    only: Option<&ScalableTargetId>,
    now: DateTime<Utc>,
    window: Span,
) -> Result<LintReport, LintError>
where
    H: ScalingHistory,
    E: Endpoints,
    S: StateStore,
    D: DemandHistory,
{
    let (_, plan) = load_plan(ports.state).await?;
    let targets: Vec<&TargetPlan> = match only {
        Some(id) => vec![plan.target(id).ok_or_else(|| LintError::Unmanaged {
            target: id.to_string(),
        })?],
        None => plan.targets.iter().collect(),
    };
    let from = now - chrono::Duration::seconds(window.as_secs());
    let ids: Vec<ScalableTargetId> = targets.iter().map(|t| t.id.clone()).collect();
    let states = ports
        .state
        .load_states(&ids)
        .await
        .map_err(port("the managed targets", "read the target states"))?;
    let (workloads, metrics_gap) = workloads(ports.demand, &ids, from, now).await;
    let mut out = Vec::with_capacity(targets.len());
    for (i, target) in targets.iter().enumerate() {
        let state = states
            .iter()
            .find(|(id, _)| id == &target.id)
            .map(|(_, s)| s.clone())
            .unwrap_or_default();
        let mut gathered =
            gather(ports.history, ports.endpoints, ports.demand, target, &state).await?;
        gathered.gaps.extend(metrics_gap.clone());
        let measured = workloads.as_ref().and_then(|w| w.get(i));
        let findings = lint(&gathered.facts(target, measured, None));
        out.push(TargetLint {
            target: target.id.to_string(),
            serving: gathered.serving,
            findings,
            gaps: gathered.gaps,
            measured: measured.cloned(),
        });
    }
    Ok(LintReport {
        kind: "headroom.lint/v1",
        from,
        to: now,
        targets: out,
    })
}

/// Each target's workload in `[from, to)`, one call per [`WORKLOAD_TARGETS_PER_CALL`] targets;
/// a failure (or no metrics port) is a gap, not a failed lint: the rules that need measurements
/// then say what is missing.
pub async fn workloads<D: DemandHistory>(
    demand: &D,
    ids: &[ScalableTargetId],
    from: DateTime<Utc>,
    to: DateTime<Utc>,
) -> (Option<Vec<Workload>>, Option<String>) {
    if !demand.is_wired() {
        return (None, Some("no CloudWatch metrics read here".into()));
    }
    let mut all = Vec::with_capacity(ids.len());
    for chunk in ids.chunks(WORKLOAD_TARGETS_PER_CALL) {
        match demand.workload(chunk, from, to).await {
            Ok(w) => all.extend(w),
            Err(e) => return (None, Some(format!("workload metrics unavailable: {e}"))),
        }
    }
    (Some(all), None)
}

/// The facts of one target: its policies (a failure fails the lint: without them nothing can be
/// judged), what serves behind it, its alarms and its measured lead time (failures of these are
/// gaps).
pub async fn gather<H, E, D>(
    history: &H,
    endpoints: &E,
    demand: &D,
    target: &TargetPlan,
    state: &TargetState,
) -> Result<Gathered, LintError>
where
    H: ScalingHistory,
    E: Endpoints,
    D: DemandHistory,
{
    let id = &target.id;
    let policies = history
        .policies(id)
        .await
        .map_err(port(id, "describe the scaling policies"))?;
    let serving = serving(endpoints, id).await;
    Ok(gather_with(policies, serving, demand, target, state).await)
}

/// [`gather`] with the policies and what serves already read (a review has them, through the
/// deployment watcher's cached reads).
pub async fn gather_with<D: DemandHistory>(
    policies: Vec<ScalingPolicySummary>,
    serving: Result<ServingFacts, String>,
    demand: &D,
    target: &TargetPlan,
    state: &TargetState,
) -> Gathered {
    let mut gaps = Vec::new();
    let (serving, instance_type, instance_scaling) = match serving {
        Ok(s) => s,
        Err(e) => {
            gaps.push(format!("endpoint config unavailable: {e}"));
            (Serving::Unknown, None, None)
        }
    };
    let mut names: Vec<String> = policies.iter().flat_map(|p| p.alarms.clone()).collect();
    for configured in target
        .wake
        .iter()
        .flat_map(|w| &w.alarms)
        .chain(target.guard.iter().flat_map(|g| &g.alarms))
    {
        names.push(
            crate::plan::AlarmArn::parse(configured)
                .map_or(configured.as_str(), |a| a.name)
                .to_owned(),
        );
    }
    names.sort();
    names.dedup();
    let alarms = if !demand.is_wired() {
        None
    } else {
        let mut all = Vec::new();
        let mut failed = None;
        for chunk in names.chunks(ALARM_NAMES_PER_CALL) {
            match demand.alarms(chunk).await {
                Ok(a) => all.extend(a),
                Err(e) => {
                    failed = Some(e);
                    break;
                }
            }
        }
        match failed {
            None => Some(all),
            Some(e) => {
                gaps.push(format!("alarms unavailable: {e}"));
                None
            }
        }
    };
    let lead = lead_time(target, &state.lead_samples, state.model.as_ref());
    let lead = (lead.source == "measured").then(|| MeasuredLead {
        seconds: lead.span.as_secs(),
        detail: lead.detail,
    });
    Gathered {
        serving,
        instance_type,
        policies,
        alarms,
        instance_scaling,
        lead,
        gaps,
    }
}

/// What serves behind a target: its kind, instance type and the hosting variant's
/// ManagedInstanceScaling.
pub type ServingFacts = (Serving, Option<String>, Option<ManagedInstanceScalingView>);

/// What serves behind `id`: the variant's config (real-time, async, serverless), or for an
/// inference component the variant hosting it (its instance type and ManagedInstanceScaling).
async fn serving<E: Endpoints>(
    endpoints: &E,
    id: &ScalableTargetId,
) -> Result<ServingFacts, String> {
    let (endpoint, variant, component) = match id {
        ScalableTargetId::Variant {
            endpoint, variant, ..
        } => (endpoint.clone(), variant.as_str().to_owned(), false),
        ScalableTargetId::InferenceComponent(name) => {
            let c = endpoints
                .describe_inference_component(name)
                .await
                .map_err(|e| e.to_string())?
                .ok_or_else(|| format!("inference component {name} does not exist"))?;
            let endpoint = c
                .endpoint
                .ok_or_else(|| format!("inference component {name} names no endpoint"))?;
            let endpoint = crate::ids::EndpointName::parse(endpoint).map_err(|e| e.to_string())?;
            (endpoint, c.variant.unwrap_or_default(), true)
        }
    };
    let e = endpoints
        .describe_endpoint(&endpoint)
        .await
        .map_err(|e| e.to_string())?
        .ok_or_else(|| format!("endpoint {endpoint} does not exist"))?;
    let config_name = e
        .config_name
        .ok_or_else(|| format!("endpoint {endpoint} names no endpoint config"))?;
    let config = endpoints
        .describe_endpoint_config(&config_name)
        .await
        .map_err(|e| e.to_string())?
        .ok_or_else(|| format!("endpoint config {config_name} does not exist"))?;
    serving_in(&config, &variant, component)
}

/// What serves behind a target, from the endpoint config of its endpoint: `variant` is the
/// target's variant (or the one hosting the component, empty when the component names none).
pub fn serving_in(
    config: &EndpointConfigView,
    variant: &str,
    component: bool,
) -> Result<ServingFacts, String> {
    let v = config
        .variants
        .iter()
        .find(|v| v.name == variant)
        .or_else(|| {
            config
                .variants
                .first()
                .filter(|_| component && variant.is_empty())
        });
    let Some(v) = v else {
        return Err(format!(
            "endpoint config {} has no variant {variant}",
            config.name
        ));
    };
    let serving = if component {
        Serving::Component
    } else if v.serverless {
        Serving::Serverless
    } else if config.async_inference {
        Serving::Async
    } else {
        Serving::RealTime
    };
    Ok((
        serving,
        v.instance_type.clone(),
        v.managed_instance_scaling.clone(),
    ))
}
