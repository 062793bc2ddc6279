//! The suggested plan from each target's demand history, whichever source the history came
//! from: the one path that `plan suggest --trace --world` (offline) and `plan suggest --days`
//! (CloudWatch) share. The caller reads the histories and says where each target's
//! `invocations_per_instance` comes from; this module cuts nothing and reads nothing.

use chrono::SecondsFormat;
use chrono_tz::Tz;

use crate::forecast::DemandSeries;
use crate::ids::ScalableTargetId;
use crate::plan::forecast::DemandKind;
use crate::plan::{parse_plan, PlanError, PlanFile};
use crate::suggest::render::{render_plan, RenderError, TargetChange};
use crate::suggest::suggest_peaks;

/// Requests per minute one instance should serve, and where that figure comes from (written as
/// evidence).
#[derive(Debug, Clone, PartialEq)]
pub struct InstanceCapacity {
    pub invocations_per_instance: f64,
    /// What the figure is per instance of, and so which demand history to read and forecast.
    pub demand: crate::plan::forecast::DemandKind,
    pub source: String,
}

/// One target's history, as its source recorded it.
#[derive(Debug, Clone)]
pub struct TargetHistory {
    pub id: ScalableTargetId,
    pub history: DemandSeries,
    /// `Err(why)`: no figure is known, so nothing is suggested and the target stays as in BASE.
    pub capacity: Result<InstanceCapacity, String>,
}

/// A failure of [`suggest_plan`], naming the base plan.
#[derive(Debug, thiserror::Error)]
pub enum SuggestError {
    #[error(transparent)]
    Plan(#[from] PlanError),
    #[error("{file}: {problem}")]
    Base { file: String, problem: String },
    /// The base plan and the world name different targets (the message names the plan file and
    /// says, per target, which of the two lacks it: either may be the one at fault).
    #[error("{0}")]
    Mismatch(String),
    #[error(transparent)]
    Render(#[from] RenderError),
}

/// The base plan's default time zone, in which recurring windows are found.
pub fn plan_timezone(base_name: &str, base_text: &str) -> Result<Tz, SuggestError> {
    let base = |problem: String| SuggestError::Base {
        file: base_name.to_owned(),
        problem,
    };
    let file: PlanFile = toml::from_str(base_text).map_err(|e| base(e.message().to_owned()))?;
    match file.defaults.timezone.as_deref() {
        None => Ok(chrono_tz::UTC),
        Some(name) => name.parse().map_err(|_| {
            base(format!(
                "defaults.timezone {name:?} is not an IANA time zone"
            ))
        }),
    }
}

/// The suggested plan: `base` with each target of `histories` that has a capacity figure given
/// suggested peaks and a `[target.forecast]` section, `header` on top (the source, in the
/// caller's words), the evidence of every target below it.
pub fn suggest_plan(
    (base_name, base_text): (&str, &str),
    header: &[String],
    histories: &[TargetHistory],
) -> Result<String, SuggestError> {
    let plan = parse_plan(base_name, base_text)?;
    let tz = plan_timezone(base_name, base_text)?;
    let mut header = header.to_vec();
    let mut changes = Vec::new();
    for target in &plan.targets {
        let Some(h) = histories.iter().find(|h| h.id == target.id) else {
            continue;
        };
        let capacity = match &h.capacity {
            Ok(c) => c,
            Err(why) => {
                header.push(format!("{}: left as in {base_name}: {why}", target.id));
                continue;
            }
        };
        let ipi = capacity.invocations_per_instance;
        let mut suggestion =
            suggest_peaks(&h.history, tz, ipi, capacity.demand, target.min_capacity);
        // A plan's floors stay within its bounds: a history that needed more than max_capacity
        // gets peaks at it, and the evidence says what they would have been.
        let capped: Vec<String> = suggestion
            .peaks
            .iter_mut()
            .filter(|p| p.floor > target.max_capacity)
            .map(|p| {
                let wanted = p.floor;
                p.floor = target.max_capacity;
                format!("{} (needed {wanted})", p.name)
            })
            .collect();
        let mut evidence = vec![
            format!(
                "history: {} local date(s) with data ({} whole weekday(s), {} whole weekend day(s)) between {} and {}, in {}",
                suggestion.days,
                suggestion.weekdays,
                suggestion.weekend_days,
                h.history.start.format("%Y-%m-%dT%H:%MZ"),
                h.history.end().format("%Y-%m-%dT%H:%MZ"),
                tz.name()
            ),
            format!("invocations_per_instance {ipi:.2}: {}", capacity.source),
        ];
        if !capped.is_empty() {
            evidence.push(format!(
                "floors capped at max_capacity {}: {}; raise max_capacity if the endpoint should follow its history",
                target.max_capacity,
                capped.join(", ")
            ));
        }
        match capacity.demand {
            DemandKind::Invocations => {}
            DemandKind::Backlog => evidence.push(
                "demand \"backlog\": ApproximateBacklogSize (Average), requests waiting; the figure above is the backlog one instance should hold".into(),
            ),
            DemandKind::Concurrency => evidence.push(
                "demand \"concurrency\": the requests in flight (ConcurrentRequestsPerModel, or PerCopy, times the instances serving); the figure above is the concurrent requests one instance should hold".into(),
            ),
        }
        changes.push(TargetChange {
            resource_id: target.id.to_string(),
            suggestion,
            invocations_per_instance: (ipi * 100.0).round() / 100.0,
            demand: capacity.demand,
            evidence,
        });
    }
    Ok(render_plan(base_name, base_text, &header, &changes)?)
}

/// An instant as the headers write it: RFC 3339, whole seconds, `Z`.
pub fn instant(t: chrono::DateTime<chrono::Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::Secs, true)
}
