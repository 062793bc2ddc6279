//! `headroom explain --event FILE [--plan FILE]`: prints, as JSON, what headroom would do with an
//! event, changing nothing. Alarm, tick and peak events run through the very handler the Lambda
//! runs (`headroom_alarm::handle`, `headroom_tick::handle`), against in-memory ports seeded from
//! the plan: every target registered at the plan's base bounds, no stored state, and (for alarms)
//! a desired count of the target's base minimum unless `--desired` says otherwise. SageMaker and
//! pipeline events are explained by the deployment watcher's own `explain`.

use std::path::{Path, PathBuf};

use anyhow::Context;
use chrono::{DateTime, Utc};
use headroom_core::capacity_port::MemoryCapacity;
use headroom_core::lead_time::lead_time;
use headroom_core::memory::{Calls, MemoryScalingTargets, MemoryStateStore};
use headroom_core::plan::{parse_plan, Plan};
use headroom_core::Bounds;
use headroom_events::{parse_trigger, Trigger};
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
    #[arg(long)]
    pub at: Option<DateTime<Utc>>,
    /// The desired count (instances or copies) to assume for every target when an alarm needs it
    /// [default: each target's base minimum].
    #[arg(long)]
    pub desired: Option<u32>,
}

pub async fn run(args: ExplainArgs) -> anyhow::Result<()> {
    let text = std::fs::read_to_string(&args.event)
        .with_context(|| format!("cannot read the event file {}", args.event.display()))?;
    let event: Value = serde_json::from_str(&text)
        .with_context(|| format!("{} is not valid JSON", args.event.display()))?;
    let plan_path = plan_path(args.plan.as_deref())?;
    let plan_text = std::fs::read_to_string(&plan_path)
        .with_context(|| format!("cannot read the plan {}", plan_path.display()))?;
    let out = explain(
        &event,
        &plan_text,
        &plan_path.display().to_string(),
        args.at,
        args.desired,
    )
    .await
    .with_context(|| format!("cannot explain {}", args.event.display()))?;
    outln!("{}", serde_json::to_string_pretty(&out)?)?;
    Ok(())
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
) -> anyhow::Result<Value> {
    let trigger = parse_trigger(event).context("headroom does not accept this event")?;
    let plan = parse_plan(plan_name, plan_text)?;
    let summary = event_summary(&trigger);
    match &trigger {
        Trigger::SageMaker(_) | Trigger::Pipeline(_) => Ok(json!({
            "event": trigger.kind(),
            "summary": summary,
            "plan": plan_name,
            "handled_by": "headroom-deploy",
            "explanation": headroom_deploy::explain(&trigger, &plan),
            "changes_nothing": true,
        })),
        Trigger::Alarm(_) | Trigger::Tick(_) | Trigger::Peak(_) => {
            let (at, at_source) = instant(&trigger, &plan, at);
            let world = World::seeded(&plan, plan_text, desired);
            let (handled_by, result) = match &trigger {
                Trigger::Alarm(_) => (
                    "headroom-alarm",
                    headroom_alarm::handle(&world.aas, &world.store, &world.capacity, event, at)
                        .await
                        .map(serde_json::to_value)
                        .map_err(|e| e.to_string()),
                ),
                _ => (
                    "headroom-tick",
                    headroom_tick::handle(&world.aas, &world.store, &world.capacity, event, at)
                        .await
                        .map(serde_json::to_value)
                        .map_err(|e| e.to_string()),
                ),
            };
            let result = match result {
                Ok(value) => value?,
                // The handler would refuse it (e.g. a peak for a target the plan does not manage):
                // that is the explanation.
                Err(error) => json!({ "handler_error": error }),
            };
            Ok(json!({
                "event": trigger.kind(),
                "summary": summary,
                "plan": plan_name,
                "handled_by": handled_by,
                "at": at,
                "at_source": at_source,
                "assumed": {
                    "bounds": "every target registered at its plan's base min and max, nothing stored yet",
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
                },
                "changes_nothing": true,
            }))
        }
    }
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
        _ => (Utc::now(), "now"),
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
        other => json!({ "kind": other.kind() }),
    }
}

/// The in-memory world an explanation runs in.
struct World {
    aas: MemoryScalingTargets,
    store: MemoryStateStore,
    capacity: MemoryCapacity,
}

impl World {
    fn seeded(plan: &Plan, plan_text: &str, desired: Option<u32>) -> Self {
        let mut aas = MemoryScalingTargets::default();
        let capacity = MemoryCapacity::default();
        for t in &plan.targets {
            aas = aas.with_target(t.id.clone(), t.min_capacity, t.max_capacity);
            let d = desired.unwrap_or(t.min_capacity);
            capacity.set(t.id.clone(), d, d);
        }
        Self {
            aas,
            store: MemoryStateStore::default().with_plan(plan_text),
            capacity,
        }
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
                let after = self.aas.get(&t.id).map(|o| o.bounds());
                let before = Bounds {
                    min: t.min_capacity,
                    max: t.max_capacity,
                    suspend_scale_in: false,
                };
                if records.is_empty() && state.version == 0 && after == Some(before) {
                    return None;
                }
                Some(json!({
                    "target": name,
                    "bounds_before": before,
                    "bounds_after": after,
                    "claims": state.claims,
                    "high_water": state.high_water,
                    "wake_pending_since": state.wake_pending_since,
                    "decisions": records,
                }))
            })
            .collect()
    }
}
