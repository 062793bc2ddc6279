//! `headroom explain --event FILE [--plan FILE]`: prints, as JSON, what headroom would do with an
//! event, changing nothing. Every event runs through the use case its function runs
//! (`headroom_core::usecase`), against in-memory ports seeded from the plan (see `World`): what
//! is explained is what the Lambda would do in that world.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::Context;
use chrono::{DateTime, Utc};
use headroom_core::deploy_ports::{ConfigVariantView, EndpointConfigView, EndpointView, ModelView};
use headroom_core::endpoint_status::EndpointStatus;
use headroom_core::lead_time::lead_time;
use headroom_core::memory::{
    count, Calls, MemoryCapacity, MemoryDemand, MemoryEndpoints, MemoryReviewStore,
    MemoryScalingHistory, MemoryScalingTargets, MemoryStateStore,
};
use headroom_core::plan::{parse_plan, Plan};
use headroom_core::trigger::{Tick, Trigger};
use headroom_core::usecase::alarm::{on_alarm, Origin};
use headroom_core::usecase::deploy::{on_model_package, on_pipeline, on_sagemaker};
use headroom_core::usecase::peak::on_peak;
use headroom_core::usecase::tick::on_tick;
use headroom_core::usecase::Ports;
use headroom_core::{Bounds, EndpointName, ScalableTargetId, TargetState, VariantName};
use headroom_events::parse_trigger;
use headroom_sim::trace::Trace;

use crate::exit::{invalid, usage};
use serde::Serialize;
use serde_json::{json, Value};

/// The plan used when `--plan` is not given.
pub const EXAMPLE_PLAN: &str = "events/plans/example.toml";

#[derive(clap::Args, Debug)]
pub struct ExplainArgs {
    /// The event as JSON: any shape headroom accepts (see events/ for examples).
    #[arg(long)]
    pub event: PathBuf,
    /// The plan to explain against [default: events/plans/example.toml].
    #[arg(long)]
    pub plan: Option<PathBuf>,
    /// Decide at this instant (RFC 3339) [default: the event's own time; for a peak event, the
    /// instant headroom pre-scales for it; else now].
    #[arg(long, value_parser = crate::plan_cmd::parse_instant)]
    pub at: Option<DateTime<Utc>>,
    /// The desired count (instances or copies) to assume for every target when an alarm needs it
    /// [default: each target's base minimum].
    #[arg(long)]
    pub desired: Option<u32>,
    /// A demand trace (CSV `timestamp,requests`, as `headroom simulate --trace` reads) to serve
    /// as the CloudWatch history of every target with a `[target.forecast]`: a tick then
    /// refreshes their forecasts from what happened before the instant, scores the planned
    /// windows in it and opens the schedule reviews its verdicts call for. Before an alarm event,
    /// such a tick runs first, so the guard's hold reads the forecast as the deployed tick would
    /// have stored it (`hold_without_forecast`).
    #[arg(long)]
    pub demand: Option<PathBuf>,
    /// The simulator's world file whose `trace_scale` multiplies --demand's rows for each
    /// target, as `headroom simulate` reads the same trace [default: world.toml next to the
    /// plan, when there is one; else the rows are taken as written].
    #[arg(long, requires = "demand")]
    pub world: Option<PathBuf>,
}

pub async fn run(args: ExplainArgs) -> anyhow::Result<()> {
    let text = std::fs::read_to_string(&args.event)
        .with_context(|| format!("cannot read the event file {}", args.event.display()))?;
    let event: Value = serde_json::from_str(&text).map_err(|e| {
        invalid(format!(
            "{} is not valid JSON ({e}): an event is one JSON object (see events/ for examples)",
            args.event.display()
        ))
    })?;
    let plan_path = plan_path(args.plan.as_deref())?;
    let plan_text = std::fs::read_to_string(&plan_path)
        .with_context(|| format!("cannot read the plan {}", plan_path.display()))?;
    let demand = match &args.demand {
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("cannot read the demand trace {}", path.display()))?;
            let trace = headroom_sim::trace::Trace::parse(&path.display().to_string(), &text)?;
            let beside = plan_path
                .parent()
                .unwrap_or(Path::new("."))
                .join("world.toml");
            let world = args
                .world
                .clone()
                .or_else(|| beside.is_file().then_some(beside));
            Some(Demand { trace, world })
        }
        None => None,
    };
    let out = explain(
        &event,
        &plan_text,
        &plan_path.display().to_string(),
        args.at,
        args.desired,
        demand.as_ref(),
    )
    .await
    .with_context(|| format!("cannot explain {}", args.event.display()))?;
    outln!("{}", serde_json::to_string_pretty(&out)?)?;
    Ok(())
}

/// A demand trace, and the world file whose `trace_scale`s scale it (none: the rows as written).
pub struct Demand {
    pub trace: Trace,
    pub world: Option<PathBuf>,
}

/// Each plan target's demand scale, and where it came from.
enum DemandScales {
    World {
        file: String,
        scales: BTreeMap<ScalableTargetId, f64>,
    },
    AsWritten,
}

impl DemandScales {
    /// Reads the world file and pairs its targets with the plan's as `simulate` does (the plan
    /// says a serverless variant's dimension; the world only names the resource): a target on
    /// one side only is the same error as there.
    fn of_world(world: Option<&Path>, plan: &Plan) -> anyhow::Result<Self> {
        let Some(path) = world else {
            return Ok(DemandScales::AsWritten);
        };
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read the world file {}", path.display()))?;
        let file = path.display().to_string();
        let mut world = headroom_sim::world::World::parse(&file, &text)?;
        headroom_sim::scenario::match_targets(
            &format!("explain --demand (world {file})"),
            plan,
            &mut world,
        )?;
        let scales = world
            .targets
            .iter()
            .map(|t| (t.id.clone(), t.trace_scale))
            .collect();
        Ok(DemandScales::World { file, scales })
    }

    fn of(&self, id: &ScalableTargetId) -> f64 {
        match self {
            // match_targets left no plan target without its world target.
            DemandScales::World { scales, .. } => scales.get(id).copied().unwrap_or(1.0),
            DemandScales::AsWritten => 1.0,
        }
    }

    fn describe(&self) -> String {
        match self {
            DemandScales::World { file, .. } => {
                format!("each target's trace rows times its trace_scale in {file}")
            }
            DemandScales::AsWritten => "the trace rows as written: no world file gives a \
                 trace_scale (pass --world FILE, or put world.toml next to the plan)"
                .to_owned(),
        }
    }
}

fn plan_path(given: Option<&Path>) -> anyhow::Result<PathBuf> {
    if let Some(p) = given {
        return Ok(p.to_owned());
    }
    // From the repository root, or wherever the binary was built from.
    let candidates = [
        PathBuf::from(EXAMPLE_PLAN),
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("..")
            .join(EXAMPLE_PLAN),
    ];
    candidates.into_iter().find(|p| p.is_file()).ok_or_else(|| {
        crate::exit::usage(format!(
            "no --plan given and {EXAMPLE_PLAN} was not found: pass --plan FILE"
        ))
    })
}

/// What headroom would do with `event` under the plan, as JSON.
pub async fn explain(
    event: &Value,
    plan_text: &str,
    plan_name: &str,
    at: Option<DateTime<Utc>>,
    desired: Option<u32>,
    demand: Option<&Demand>,
) -> anyhow::Result<Value> {
    let trigger = parse_trigger(event).context("headroom does not accept this event")?;
    let plan = parse_plan(plan_name, plan_text)?;
    if demand.is_some() && plan.targets.iter().all(|t| t.forecast.is_none()) {
        return Err(usage(format!(
            "--demand serves as the CloudWatch history of targets with a [target.forecast], and \
             {plan_name} has none: add one to a target, or leave --demand out"
        )));
    }
    let demand = match demand {
        Some(d) => Some((d, DemandScales::of_world(d.world.as_deref(), &plan)?)),
        None => None,
    };
    let summary = event_summary(&trigger);
    let (at, at_source) = instant(&trigger, &plan, at);
    let world = World::seeded(&plan, plan_text, desired, at);
    let ports = world.ports();
    let result = match &trigger {
        Trigger::Tick(tick) => match &demand {
            Some((demand, scales)) => {
                let history = history_of(demand, scales, &plan, at);
                answer(on_tick(ports.with_demand(&history), tick, at).await)
            }
            None => answer(on_tick(ports, tick, at).await),
        },
        Trigger::Peak(request) => answer(on_peak(ports, request, at).await),
        Trigger::Alarm(t) => {
            // The guard's hold reads the stored forecast (`hold_without_forecast`): with a
            // demand trace, a tick just before stores it, as the deployed tick would have.
            if let Some((demand, scales)) = &demand {
                let history = history_of(demand, scales, &plan, at);
                let tick = Tick {
                    at: Some(at),
                    id: None,
                };
                on_tick(ports.with_demand(&history), &tick, at)
                    .await
                    .context("the tick that refreshes the forecasts before the alarm")?;
            }
            answer(on_alarm(ports, t, Origin::Anywhere, at).await)
        }
        // explain has no home account: it replays the event as the plan's own.
        Trigger::SageMaker(ev) => answer(on_sagemaker(ports, ev, Origin::Anywhere, at).await),
        Trigger::ModelPackage(ev) => {
            answer(on_model_package(ports, ev, Origin::Anywhere, at).await)
        }
        Trigger::Pipeline(hook) => answer(on_pipeline(ports, hook, at).await),
    }?;
    Ok(json!({
        "event": trigger.kind(),
        "summary": summary,
        "plan": plan_name,
        "handled_by": trigger.function().name(),
        "at": at,
        "at_source": at_source,
        "assumed": {
            "world": World::ASSUMED,
            "origin": ORIGIN_ASSUMED,
            "demand": demand.as_ref().map(|(_, scales)| scales.describe()),
            "desired_count": desired.map_or_else(
                || json!("each target's base minimum (use --desired N)"),
                |d| json!(d),
            ),
        },
        "result": result,
        "targets": world.changes(&plan),
        "would_call": {
            "register_scalable_target": Calls::get(&world.aas.calls.register),
            "state_writes": Calls::get(&world.store.calls.save_state),
            "decision_log_records": Calls::get(&world.store.calls.append_log),
            "reviews_written": world.reviews.all().len(),
            "schedule_reviews_written": world.reviews.schedule_all().len(),
            "endpoint_tags": count(&world.endpoints.tag_calls),
        },
        "changes_nothing": true,
    }))
}

/// The use case's outcome as JSON; a refusal (e.g. a peak for a target the plan does not
/// manage) is the explanation too.
fn answer<O: Serialize, E: std::fmt::Display>(result: Result<O, E>) -> anyhow::Result<Value> {
    Ok(match result {
        Ok(outcome) => serde_json::to_value(outcome)?,
        Err(error) => json!({ "handler_error": error.to_string() }),
    })
}

/// The instant to decide at, and where it came from.
fn instant(
    trigger: &Trigger,
    plan: &Plan,
    at: Option<DateTime<Utc>>,
) -> (DateTime<Utc>, &'static str) {
    if let Some(at) = at {
        return (at, "--at");
    }
    match trigger {
        Trigger::Alarm(t) => (t.at, "the alarm's state timestamp"),
        Trigger::Tick(tick) => match tick.at {
            Some(at) => (at, "the event's time"),
            None => (Utc::now(), "now (the event carries no time)"),
        },
        Trigger::Peak(p) => match plan.target(&p.target) {
            Some(target) => {
                let lead = lead_time(target, &[], None).span;
                (
                    p.starts_at - lead.to_chrono(),
                    "the peak's start minus the target's lead time",
                )
            }
            None => (Utc::now(), "now"),
        },
        Trigger::SageMaker(ev) => match ev.occurred_at() {
            Some(at) => (
                at,
                "the event's time (the endpoint's LastModifiedTime, else the envelope's)",
            ),
            None => (Utc::now(), "now (the event carries no time)"),
        },
        Trigger::ModelPackage(ev) => match ev.at {
            Some(at) => (at, "the event's time"),
            None => (Utc::now(), "now (the event carries no time)"),
        },
        Trigger::Pipeline(_) => (Utc::now(), "now (a pipeline hook carries no time)"),
    }
}

fn event_summary(trigger: &Trigger) -> Value {
    match trigger {
        Trigger::Alarm(t) => json!({
            "alarm": t.alarm_name,
            "arn": t.alarm_arn,
            "state": t.state,
            "previous": t.previous,
            "at": t.at,
            "dimensions": t.dimensions,
            "event_id": t.event_id,
            "idempotency_key": headroom_core::alarms::idempotency_key(t),
        }),
        Trigger::Tick(t) => json!({ "at": t.at, "id": t.id }),
        Trigger::Peak(p) => json!({
            "target": p.target.to_string(),
            "name": p.name,
            "floor": p.floor,
            "starts_at": p.starts_at,
            "ends_at": p.ends_at,
            "suspend_scale_in": p.suspend_scale_in,
            "idempotency_key": p.idempotency_key(),
        }),
        Trigger::SageMaker(ev) => json!({
            "detail_type": ev.kind.detail_type(),
            "id": ev.id,
            "endpoint": ev.endpoint.as_ref().map(ToString::to_string),
            "endpoint_config": ev.endpoint_config,
            "status": ev.status.as_ref().map(ToString::to_string),
            "occurred_at": ev.occurred_at(),
            "idempotency_key": ev.idempotency_key(),
        }),
        Trigger::ModelPackage(ev) => json!({
            "detail_type": headroom_core::trigger::model_package::MODEL_PACKAGE_STATE,
            "id": ev.id,
            "package": ev.arn,
            "group": ev.group,
            "version": ev.version,
            "approval": ev.approval.as_ref().map(|a| a.as_str().to_owned()),
            "idempotency_key": ev.idempotency_key(),
        }),
        Trigger::Pipeline(hook) => json!({
            "action": hook.action.as_str(),
            "endpoint": hook.endpoint.to_string(),
            "variant": hook.variant.as_ref().map(ToString::to_string),
            "inference_component": hook.inference_component.as_ref().map(ToString::to_string),
            "model_version": hook.model_version,
            "pipeline_run_id": hook.pipeline_run_id,
            "idempotency_key": hook.idempotency_key(),
        }),
    }
}

/// The demand trace as the CloudWatch history of every forecast target, each at its own scale,
/// cut at `at` (only what happened before the instant, as the refresh would read it).
fn history_of(
    demand: &Demand,
    scales: &DemandScales,
    plan: &Plan,
    at: DateTime<Utc>,
) -> MemoryDemand {
    plan.targets
        .iter()
        .filter(|t| t.forecast.is_some())
        .fold(MemoryDemand::default(), |m, t| {
            let scale = scales.of(&t.id);
            let series = headroom_sim::suggest::trace_series(&demand.trace, scale, Some(at));
            m.with(t.id.clone(), series)
        })
}

/// explain has no home account: an event is replayed as the plan's own, whatever account and
/// region it names. The deployed functions check them first, and refuse what is not theirs.
const ORIGIN_ASSUMED: &str = "the event's account and region are not checked: it is replayed as \
     if from the functions' own (deployed, the alarm and deploy functions refuse an event from \
     another account or region before anything is read)";

/// The in-memory world an explanation runs in.
struct World {
    aas: MemoryScalingTargets,
    store: MemoryStateStore,
    capacity: MemoryCapacity,
    endpoints: MemoryEndpoints,
    history: MemoryScalingHistory,
    reviews: MemoryReviewStore,
}

/// The fingerprint the world assumes was in force before the event, so that a deployment event
/// shows the path of a model change (a review) rather than only a first sighting.
const PREVIOUS_MODEL: &str = "previous-model-assumed";

impl World {
    const ASSUMED: &'static str = "every target registered at its plan's base min and max; no claims \
        stored yet; each managed endpoint in service with one config and one model per managed variant \
        (named <endpoint>-config-in-force and <endpoint>-<variant>-model), and a different model \
        recorded before it (so a SageMaker or pipeline event shows a model change); inference \
        components unknown to SageMaker; no scaling policies or activities; no reviews; no stored \
        model identity (so no target serves a model package group)";

    fn seeded(plan: &Plan, plan_text: &str, desired: Option<u32>, now: DateTime<Utc>) -> Self {
        let mut aas = MemoryScalingTargets::default();
        let capacity = MemoryCapacity::default();
        let store = MemoryStateStore::default().with_plan(plan_text);
        let endpoints = MemoryEndpoints::default();
        let mut variants: BTreeMap<&EndpointName, Vec<&VariantName>> = BTreeMap::new();
        for t in &plan.targets {
            aas = aas.with_target(t.id.clone(), t.min_capacity, t.max_capacity);
            let d = desired.unwrap_or(t.min_capacity);
            capacity.set(t.id.clone(), d, d);
            if let ScalableTargetId::Variant {
                endpoint, variant, ..
            } = &t.id
            {
                variants.entry(endpoint).or_default().push(variant);
                store.put_state(
                    &t.id,
                    TargetState {
                        model: Some(PREVIOUS_MODEL.into()),
                        ..TargetState::default()
                    },
                );
            }
        }
        for (endpoint, names) in variants {
            let config = format!("{endpoint}-config-in-force");
            endpoints.put_endpoint(EndpointView {
                name: endpoint.clone(),
                arn: Some(format!(
                    "arn:aws:sagemaker:us-east-1:123456789012:endpoint/{endpoint}"
                )),
                config_name: Some(config.clone()),
                status: EndpointStatus::InService,
                variants: Vec::new(),
                last_modified: Some(now),
            });
            endpoints.put_config(EndpointConfigView {
                name: config,
                variants: names
                    .iter()
                    .map(|v| ConfigVariantView {
                        name: v.to_string(),
                        model_name: Some(format!("{endpoint}-{v}-model")),
                        instance_type: None,
                        ..Default::default()
                    })
                    .collect(),
                ..Default::default()
            });
            for v in names {
                endpoints.put_model(ModelView {
                    name: format!("{endpoint}-{v}-model"),
                    arn: None,
                    containers: Vec::new(),
                });
            }
        }
        Self {
            aas,
            store,
            capacity,
            endpoints,
            history: MemoryScalingHistory::default(),
            reviews: MemoryReviewStore::default(),
        }
    }

    #[allow(clippy::type_complexity)]
    fn ports(
        &self,
    ) -> Ports<
        '_,
        MemoryScalingTargets,
        MemoryScalingHistory,
        MemoryCapacity,
        MemoryEndpoints,
        MemoryStateStore,
        MemoryReviewStore,
    > {
        Ports::new(&self.aas, &self.store)
            .with_history(&self.history)
            .with_capacity(&self.capacity)
            .with_endpoints(&self.endpoints)
            .with_reviews(&self.reviews)
    }

    /// Every target the event touched: bounds before and after, the claims now stored, and the
    /// decision records (with their reasons) the reconcile wrote.
    fn changes(&self, plan: &Plan) -> Vec<Value> {
        let log = self.store.log();
        plan.targets
            .iter()
            .filter_map(|t| {
                let name = t.id.to_string();
                let records: Vec<&Value> = log
                    .iter()
                    .filter(|r| r.get("target").and_then(Value::as_str) == Some(name.as_str()))
                    .collect();
                let state = self.store.state(&t.id);
                let seeded = state.version == 0;
                let after = self.aas.get(&t.id).map(|o| o.bounds());
                let before = Bounds {
                    min: t.min_capacity,
                    max: t.max_capacity,
                    suspend_scale_in: false,
                };
                if records.is_empty() && seeded && after == Some(before) {
                    return None;
                }
                Some(json!({
                    "target": name,
                    "bounds_before": before,
                    "bounds_after": after,
                    "claims": state.claims,
                    "high_water": state.high_water,
                    "wake_pending_since": state.wake_pending_since,
                    "model": state.model,
                    "forecast": state.forecast.as_ref().map(|f| json!({
                        "unavailable": f.unavailable,
                        "windows": f.windows,
                        "schedule": f.schedule,
                        "score": f.score,
                    })),
                    "schedule_reviews": self.reviews.schedule_all().into_iter().filter(|r| r.target == t.id).collect::<Vec<_>>(),
                    "decisions": records,
                }))
            })
            .collect()
    }
}
