//! A scenario: headroom's plan, the world file and a trace, checked against each other. The
//! shipped default scenario is embedded so `headroom simulate` runs with no files at all.

use chrono::{DateTime, Utc};
use headroom_core::plan::PeakWhen;
use headroom_core::{parse_plan, Plan};

use crate::trace::Trace;
use crate::world::World;

/// The default scenario's files (from `events/scenarios/daily-peak-bursts/`).
pub const DEFAULT_NAME: &str = "daily-peak-bursts";
pub const DEFAULT_PLAN: &str =
    include_str!("../../../events/scenarios/daily-peak-bursts/plan.toml");
pub const DEFAULT_WORLD: &str =
    include_str!("../../../events/scenarios/daily-peak-bursts/world.toml");
pub const DEFAULT_TRACE: &str =
    include_str!("../../../events/traces/synthetic-daily-peak-bursts-1m.csv");

#[derive(Debug, thiserror::Error)]
pub enum ScenarioError {
    #[error(transparent)]
    Plan(#[from] headroom_core::PlanError),
    #[error(transparent)]
    World(#[from] crate::world::WorldError),
    #[error(transparent)]
    Trace(#[from] crate::trace::TraceError),
    #[error("{0}")]
    Mismatch(String),
}

/// Everything one simulation needs.
#[derive(Debug, Clone)]
pub struct Scenario {
    pub name: String,
    pub plan: Plan,
    pub world: World,
    pub trace: Trace,
}

impl Scenario {
    /// Parses and cross-checks the three files. Names are used in messages only.
    pub fn parse(
        name: &str,
        (plan_name, plan_text): (&str, &str),
        (world_name, world_text): (&str, &str),
        (trace_name, trace_text): (&str, &str),
    ) -> Result<Self, ScenarioError> {
        let plan = parse_plan(plan_name, plan_text)?;
        let world = World::parse(world_name, world_text)?;
        let trace = Trace::parse(trace_name, trace_text)?;
        Self::new(name, plan, world, trace)
    }

    pub fn new(
        name: &str,
        plan: Plan,
        mut world: World,
        trace: Trace,
    ) -> Result<Self, ScenarioError> {
        match_targets(&format!("scenario {name}"), &plan, &mut world)?;
        Ok(Self {
            name: name.to_owned(),
            plan,
            world,
            trace,
        })
    }

    /// What the simulation can run but probably not as meant: see [`warnings`].
    pub fn warnings(&self) -> Vec<String> {
        warnings(&self.plan, &self.world)
    }

    /// The embedded default scenario.
    pub fn default_scenario() -> Result<Self, ScenarioError> {
        Self::parse(
            DEFAULT_NAME,
            ("events/scenarios/daily-peak-bursts/plan.toml", DEFAULT_PLAN),
            (
                "events/scenarios/daily-peak-bursts/world.toml",
                DEFAULT_WORLD,
            ),
            (
                "events/traces/synthetic-daily-peak-bursts-1m.csv",
                DEFAULT_TRACE,
            ),
        )
    }

    /// The planned peak windows `[start, end)` of world target `index` within the trace, in
    /// Unix seconds, sorted.
    pub fn peak_windows(&self, index: usize) -> Vec<(i64, i64)> {
        let Some(target) = self.plan.target(&self.world.targets[index].id) else {
            return Vec::new();
        };
        let (from, to) = (self.trace.start, self.trace.end());
        let mut out = Vec::new();
        for peak in &target.peaks {
            let starts: Vec<DateTime<Utc>> = match &peak.when {
                PeakWhen::Recurring { cron, timezone } => {
                    cron.occurrences(*timezone, from - peak.duration.to_chrono(), to)
                }
                PeakWhen::Once(at) => vec![*at],
            };
            for s in starts {
                let end = s + peak.duration.to_chrono();
                if end > from && s < to {
                    out.push((s.timestamp(), end.timestamp()));
                }
            }
        }
        out.sort_unstable();
        out
    }
}

/// What the simulation can run but probably not as meant: a guard or wake alarm that no
/// `[[alarm]]` of the world defines (it never fires here; an ARN counts by its name, as the
/// engine matches it), a target with no scaling policy in the world (the target-tracking
/// baseline never scales). For stderr; it needs no trace, so `plan suggest` asks it too.
pub fn warnings(plan: &Plan, world: &World) -> Vec<String> {
    let mut out = Vec::new();
    for t in &plan.targets {
        let named = [("guard", t.guard.as_ref().map(|g| &g.alarms))]
            .into_iter()
            .chain([("wake", t.wake.as_ref().map(|w| &w.alarms))]);
        for (role, alarms) in named {
            for alarm in alarms.into_iter().flatten() {
                let name = headroom_core::plan::AlarmArn::name_in(alarm);
                if !world.alarms.iter().any(|a| a.name == name) {
                    out.push(format!(
                        "target {}: {role} alarm {name:?} is not an [[alarm]] of the world: it never fires in this simulation",
                        t.id
                    ));
                }
            }
        }
    }
    for t in &world.targets {
        if t.tracking.is_none() && t.backlog_step.is_none() && t.scheduled.is_empty() {
            out.push(format!(
                "target {}: the world gives it no scaling policy ([target.target_tracking], [target.backlog_step_policy] or [[target.scheduled_action]]): the target-tracking baseline never scales it, and ratios against it mean little",
                t.id
            ));
        }
    }
    out
}

/// Checks that `plan` and `world` name the same targets (`what` names the run in the error), and gives the world's targets the
/// plan's ids: the world file names the resource, the plan says its dimension (a serverless
/// variant's provisioned concurrency), and the simulated AAS keys by both. What `simulate`
/// refuses, `plan suggest` refuses too, before any backtest.
pub fn match_targets(what: &str, plan: &Plan, world: &mut World) -> Result<(), ScenarioError> {
    let mut problems = Vec::new();
    for t in &mut world.targets {
        match plan.target(&t.id) {
            Some(p) => t.id = p.id.clone(),
            None => problems.push(format!(
                "world target {} is not in the plan: the simulator takes its MinCapacity and MaxCapacity from the plan's [[target]]",
                t.id
            )),
        }
    }
    for t in &plan.targets {
        if world.target_index(&t.id).is_none() {
            problems.push(format!(
                "plan target {} has no [[target]] in the world file: say what it serves (capacity_per_instance, provisioning, ...)",
                t.id
            ));
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(ScenarioError::Mismatch(format!(
            "{what}: the plan and the world disagree:\n  - {}",
            problems.join("\n  - ")
        )))
    }
}
