//! What `headroom plan suggest --trace --world` reads from the simulator's files: each target's
//! demand history from the trace (only the rows before `--until`), and what one instance should
//! serve from the world's target-tracking policy: requests per minute, or, for a target tracked
//! on `ConcurrentRequestsPerModel`, requests in flight (the suggestion then forecasts
//! `demand = "concurrency"`, as `plan suggest --days` does from AWS).

use chrono::{DateTime, Utc};
use headroom_core::forecast::DemandSeries;
use headroom_core::plan::forecast::DemandKind;

use headroom_core::suggest::tune::DEFAULT_BUDGET;

use crate::trace::Trace;
use crate::world::{Metric, TargetWorld};

/// Share of an instance's capacity that a target without a usable tracking policy aims at.
pub const DEFAULT_UTILISATION: f64 = 0.8;

/// The target's demand as CloudWatch would have recorded it up to `until`, one value per trace
/// row, in what [`invocations_per_instance`] counts: requests per minute, or for a target
/// tracked on concurrency the requests in flight (arrivals per second times the seconds each
/// takes, Little's law: what the simulator's `ConcurrentRequestsPerModel` averages to).
pub fn demand_history(
    trace: &Trace,
    target: &TargetWorld,
    until: Option<DateTime<Utc>>,
) -> DemandSeries {
    let per_minute = trace_series(trace, target.trace_scale, until);
    match invocations_per_instance(target).1 {
        DemandKind::Concurrency => {
            let mut s = per_minute;
            let per_request = (target.service_time / 60.0) as f32;
            for v in &mut s.values {
                *v *= per_request;
            }
            s
        }
        DemandKind::Invocations | DemandKind::Backlog => per_minute,
    }
}

/// `trace` scaled by `scale` as requests per minute, one value per row, cut at `until` (only
/// the rows that ended before it).
pub fn trace_series(trace: &Trace, scale: f64, until: Option<DateTime<Utc>>) -> DemandSeries {
    let minutes = trace.interval_secs as f64 / 60.0;
    let rows = match until {
        Some(u) => ((u - trace.start).num_seconds().max(0) / trace.interval_secs) as usize,
        None => trace.counts.len(),
    };
    let values = trace
        .counts
        .iter()
        .take(rows)
        .map(|&n| (n * scale / minutes) as f32)
        .collect();
    DemandSeries::new(trace.start, trace.interval_secs, values)
}

/// What one instance should serve (requests per minute, or requests in flight), what that
/// counts, and where the figure comes from.
pub fn invocations_per_instance(target: &TargetWorld) -> (f64, DemandKind, String) {
    match target.tracking {
        Some(p) if p.metric == Metric::InvocationsPerInstance => (
            p.target_value,
            DemandKind::Invocations,
            format!(
                "the target-tracking target value of InvocationsPerInstance ({})",
                p.target_value
            ),
        ),
        Some(p) if p.metric == Metric::ConcurrentRequestsPerModel && target.service_time > 0.0 => (
            p.target_value,
            DemandKind::Concurrency,
            format!(
                "the target-tracking target value of ConcurrentRequestsPerModel ({}), requests in flight",
                p.target_value
            ),
        ),
        _ => {
            let v = target.capacity_per_instance * 60.0 * DEFAULT_UTILISATION;
            (
                v,
                DemandKind::Invocations,
                format!(
                    "{} % of capacity_per_instance ({} requests/s)",
                    DEFAULT_UTILISATION * 100.0,
                    target.capacity_per_instance
                ),
            )
        }
    }
}

pub use headroom_core::suggest::plan::SuggestError;

/// The suggested plan for `base` from `trace` as the world serves it, using only rows before
/// `until`: every plan target the world simulates gets suggested peaks and a forecast section
/// (`headroom_core::suggest::plan`, the path the CloudWatch form shares).
pub fn suggest_plan(
    base: (&str, &str),
    trace: &Trace,
    world: &crate::world::World,
    until: Option<DateTime<Utc>>,
) -> Result<String, SuggestError> {
    suggest_plan_within(base, trace, world, until, Some(DEFAULT_BUDGET))
}

/// [`suggest_plan`] tuned to `budget` times target tracking's instance-hours by a backtest over
/// the same history (`crate::tune`, rules in `headroom_core::suggest::tune`); `None`: untuned.
pub fn suggest_plan_within(
    base: (&str, &str),
    trace: &Trace,
    world: &crate::world::World,
    until: Option<DateTime<Utc>>,
    budget: Option<f64>,
) -> Result<String, SuggestError> {
    let until = until.map(|u| u.min(trace.end()));
    let world = &matched_world(base, world)?;
    match budget {
        Some(budget) => crate::tune::tuned(base, trace, world, until, budget),
        None => suggest_untuned(base, trace, world, until, &[]),
    }
}

/// `world` with its targets under the base plan's ids, or why the two disagree (as `simulate`
/// would say it): a suggestion for a plan the world does not simulate would print an untuned
/// plan with a wrong reason.
fn matched_world(
    base: (&str, &str),
    world: &crate::world::World,
) -> Result<crate::world::World, SuggestError> {
    let plan = headroom_core::parse_plan(base.0, base.1)?;
    let mut world = world.clone();
    let what = format!("plan suggest (base plan {})", base.0);
    crate::scenario::match_targets(&what, &plan, &mut world)
        .map_err(|e| SuggestError::Mismatch(e.to_string()))?;
    Ok(world)
}

/// The suggestion with the base plan as written, `extra` lines added to the evidence on top.
pub(crate) fn suggest_untuned(
    base: (&str, &str),
    trace: &Trace,
    world: &crate::world::World,
    until: Option<DateTime<Utc>>,
    extra: &[String],
) -> Result<String, SuggestError> {
    use headroom_core::suggest::plan::{instant, InstanceCapacity, TargetHistory};

    let histories: Vec<TargetHistory> = world
        .targets
        .iter()
        .map(|tw| {
            let (invocations_per_instance, demand, source) = invocations_per_instance(tw);
            TargetHistory {
                id: tw.id.clone(),
                history: demand_history(trace, tw, until),
                capacity: Ok(InstanceCapacity {
                    invocations_per_instance,
                    demand,
                    source,
                }),
            }
        })
        .collect();
    let header = vec![
        format!(
            "Suggested by `headroom plan suggest` from {} and the trace",
            base.0
        ),
        format!(
            "{}{}.",
            trace.source,
            until.map_or(String::new(), |u| format!(" (rows before {})", instant(u)))
        ),
        "Peaks: recurring windows of the history, each with a floor that nearly every day used."
            .into(),
        "The forecast learns the rest from the endpoint's own CloudWatch history once deployed."
            .into(),
    ];
    let header: Vec<String> = header.into_iter().chain(extra.iter().cloned()).collect();
    headroom_core::suggest::plan::suggest_plan(base, &header, &histories)
}
