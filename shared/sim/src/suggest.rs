//! What `headroom plan suggest --trace --world` reads from the simulator's files: each target's
//! demand history from the trace (only the rows before `--until`), and the requests per minute
//! one instance should serve from the world's target-tracking policy.

use chrono::{DateTime, Utc};
use headroom_core::forecast::DemandSeries;

use crate::trace::Trace;
use crate::world::{Metric, TargetWorld};

/// Share of an instance's capacity that a target without a usable tracking policy aims at.
pub const DEFAULT_UTILISATION: f64 = 0.8;

/// The target's demand as CloudWatch would have recorded it up to `until`: requests per minute,
/// one value per trace row.
pub fn demand_history(
    trace: &Trace,
    target: &TargetWorld,
    until: Option<DateTime<Utc>>,
) -> DemandSeries {
    let minutes = trace.interval_secs as f64 / 60.0;
    let rows = match until {
        Some(u) => ((u - trace.start).num_seconds().max(0) / trace.interval_secs) as usize,
        None => trace.counts.len(),
    };
    let values = trace
        .counts
        .iter()
        .take(rows)
        .map(|&n| (n as f64 * target.trace_scale / minutes) as f32)
        .collect();
    DemandSeries::new(trace.start, trace.interval_secs, values)
}

/// Requests per minute one instance should serve, and where that figure comes from.
pub fn invocations_per_instance(target: &TargetWorld) -> (f64, String) {
    match target.tracking {
        Some(p) if p.metric == Metric::InvocationsPerInstance => (
            p.target_value,
            format!(
                "the target-tracking target value of InvocationsPerInstance ({})",
                p.target_value
            ),
        ),
        Some(p) if p.metric == Metric::ConcurrentRequestsPerModel && target.service_time > 0.0 => {
            let v = p.target_value * 60.0 / target.service_time;
            (
                v,
                format!(
                    "ConcurrentRequestsPerModel target {} x 60 s / {} s per request",
                    p.target_value, target.service_time
                ),
            )
        }
        _ => {
            let v = target.capacity_per_instance * 60.0 * DEFAULT_UTILISATION;
            (
                v,
                format!(
                    "{} % of capacity_per_instance ({} requests/s)",
                    DEFAULT_UTILISATION * 100.0,
                    target.capacity_per_instance
                ),
            )
        }
    }
}

/// A failure of [`suggest_plan`], naming the file.
#[derive(Debug, thiserror::Error)]
pub enum SuggestError {
    #[error(transparent)]
    Plan(#[from] headroom_core::PlanError),
    #[error("{file}: {problem}")]
    Base { file: String, problem: String },
    #[error(transparent)]
    Render(#[from] headroom_core::suggest::render::RenderError),
}

/// The suggested plan for `base` from `trace` as the world serves it, using only rows before
/// `until`: every plan target the world simulates gets suggested peaks and a forecast section.
pub fn suggest_plan(
    (base_name, base_text): (&str, &str),
    trace: &Trace,
    world: &crate::world::World,
    until: Option<DateTime<Utc>>,
) -> Result<String, SuggestError> {
    use headroom_core::suggest::render::{render_plan, TargetChange};
    use headroom_core::suggest::suggest_peaks;

    let plan = headroom_core::parse_plan(base_name, base_text)?;
    let base = |problem: String| SuggestError::Base {
        file: base_name.to_owned(),
        problem,
    };
    let file: headroom_core::plan::PlanFile =
        toml::from_str(base_text).map_err(|e| base(e.message().to_owned()))?;
    let tz: chrono_tz::Tz = match file.defaults.timezone.as_deref() {
        None => chrono_tz::UTC,
        Some(name) => name.parse().map_err(|_| {
            base(format!(
                "defaults.timezone {name:?} is not an IANA time zone"
            ))
        })?,
    };
    let until = until.map(|u| u.min(trace.end()));
    let mut changes = Vec::new();
    for target in &plan.targets {
        let Some(tw) = world.targets.iter().find(|t| t.id == target.id) else {
            continue;
        };
        let history = demand_history(trace, tw, until);
        let (ipi, why) = invocations_per_instance(tw);
        let suggestion = suggest_peaks(&history, tz, ipi, target.min_capacity);
        let evidence = vec![
            format!(
                "history: {} day(s) ({} weekdays, {} weekend days) from {} to {}, in {}",
                suggestion.days,
                suggestion.weekdays,
                suggestion.weekend_days,
                history.start.format("%Y-%m-%dT%H:%MZ"),
                history.end().format("%Y-%m-%dT%H:%MZ"),
                tz.name()
            ),
            format!("invocations_per_instance {ipi:.2}: {why}"),
        ];
        changes.push(TargetChange {
            resource_id: target.id.to_string(),
            suggestion,
            invocations_per_instance: (ipi * 100.0).round() / 100.0,
            evidence,
        });
    }
    let header = vec![
        format!("Suggested by `headroom plan suggest` from {base_name} and the trace"),
        format!(
            "{}{}.",
            trace.source,
            until.map_or(String::new(), |u| format!(
                " (rows before {})",
                u.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
            ))
        ),
        "Peaks: recurring windows of the history, each with a floor that nearly every day used."
            .into(),
        "The forecast learns the rest from the endpoint's own CloudWatch history once deployed."
            .into(),
    ];
    Ok(render_plan(base_name, base_text, &header, &changes)?)
}
