//! The suggested plan as TOML: the base plan, each suggested target's peaks replaced where the
//! history could show them (`kept.rs`) and its `[target.forecast]` set, and the evidence as
//! comments on top. The output is checked by the same validation as `plan validate` before it is
//! returned, so it is always a plan headroom accepts.

use std::fmt::Write as _;

use crate::plan::file::{PeakFile, PlanFile};
use crate::plan::forecast::DemandKind;
use crate::plan::{parse_plan, PlanError};
use crate::suggest::kept::kept_because;
use crate::suggest::TargetSuggestion;

/// What to write for one target of the base plan.
#[derive(Debug, Clone)]
pub struct TargetChange {
    /// The target's resource id, as in the plan.
    pub resource_id: String,
    pub suggestion: TargetSuggestion,
    pub invocations_per_instance: f64,
    /// What `invocations_per_instance` is per instance of (the history's demand).
    pub demand: DemandKind,
    /// Lines of evidence, written as comments (without the leading `#`).
    pub evidence: Vec<String>,
}

#[derive(Debug, thiserror::Error)]
pub enum RenderError {
    #[error(transparent)]
    BasePlan(#[from] PlanError),
    #[error("failed to read the base plan {file} as TOML: {message}")]
    BaseToml { file: String, message: String },
    #[error("failed to write the suggested plan as TOML: {0}")]
    Write(String),
    #[error("the suggested plan does not validate (a headroom bug, please report it): {0}")]
    Invalid(PlanError),
}

/// The base plan `base_text` with `changes` applied, as TOML with the evidence on top.
pub fn render_plan(
    base_name: &str,
    base_text: &str,
    header: &[String],
    changes: &[TargetChange],
) -> Result<String, RenderError> {
    parse_plan(base_name, base_text)?;
    let mut file: PlanFile = toml::from_str(base_text).map_err(|e| RenderError::BaseToml {
        file: base_name.to_owned(),
        message: e.message().to_owned(),
    })?;
    // Per target: what the suggestion did to what the base plan wrote, for the evidence.
    let mut written: Vec<(String, Vec<String>)> = Vec::new();
    for t in &mut file.targets {
        let Some(change) = changes.iter().find(|c| c.resource_id == t.resource_id) else {
            continue;
        };
        let mut lines = Vec::new();
        let kept: Vec<bool> = t
            .peaks
            .iter()
            .map(|p| {
                let why = kept_because(p, &change.suggestion);
                if !change.suggestion.too_little_history() {
                    lines.push(match &why {
                        Some(why) => format!("written peak {} kept: {why}", p.name),
                        None => {
                            format!("written peak {} replaced by what the history shows", p.name)
                        }
                    });
                }
                why.is_some()
            })
            .collect();
        let mut verdicts = kept.iter();
        t.peaks.retain(|_| verdicts.next().copied().unwrap_or(true));
        for p in &change.suggestion.peaks {
            // A suggested name is unlikely to match a kept one, but names must be unique.
            let mut name = p.name.clone();
            while t.peaks.iter().any(|k| k.name == name) {
                name.push_str("-suggested");
            }
            t.peaks.push(PeakFile {
                name,
                cron: Some(p.cron()),
                timezone: None,
                at: None,
                duration: p.duration,
                floor: p.floor,
                suspend_scale_in: false,
            });
        }
        let mut forecast = t.forecast.clone().unwrap_or_default();
        // The figure is per instance of what the history measured, so the two are written
        // together: a base plan's `demand` beside a figure for another demand would forecast in
        // one unit and divide by another.
        let written_demand = forecast
            .demand
            .clone()
            .unwrap_or_else(|| DemandKind::Invocations.as_str().to_owned());
        let same_demand = written_demand == change.demand.as_str();
        let written_figure = forecast.invocations_per_instance;
        // Said only where the base plan wrote a figure or a demand that the suggestion changes.
        let wrote = t
            .forecast
            .as_ref()
            .is_some_and(|f| f.demand.is_some() || f.invocations_per_instance.is_some());
        if wrote
            && (!same_demand
                || written_figure.is_some_and(|v| v != change.invocations_per_instance))
        {
            lines.push(format!(
                "the base plan's forecast figure ({} per instance of {written_demand}) is \
                 replaced by the one above: {} per instance of {}",
                written_figure.map_or("none".to_owned(), |v| v.to_string()),
                change.invocations_per_instance,
                change.demand.as_str()
            ));
        }
        if !same_demand {
            forecast.demand = (change.demand != DemandKind::Invocations)
                .then(|| change.demand.as_str().to_owned());
        }
        forecast.invocations_per_instance = Some(change.invocations_per_instance);
        if forecast.mode.is_none() {
            forecast.mode = Some("active".into());
        }
        if forecast.min_history.is_none() {
            forecast.min_history = Some(super::SUGGESTED_MIN_HISTORY);
        }
        t.forecast = Some(forecast);
        written.push((t.resource_id.clone(), lines));
    }
    let body = toml::to_string(&file).map_err(|e| RenderError::Write(e.to_string()))?;
    let mut out = String::new();
    for line in header {
        let _ = writeln!(out, "# {line}");
    }
    for c in changes {
        let _ = writeln!(out, "#\n# {}:", c.resource_id);
        for line in &c.evidence {
            let _ = writeln!(out, "#   {line}");
        }
        for p in &c.suggestion.peaks {
            let _ = writeln!(
                out,
                "#   peak {}: {} for {}, floor {} (quiet-day demand {:.1}{unit}, typical up to {:.1}{unit}, day median {:.1}{unit})",
                p.name,
                p.cron(),
                p.duration,
                p.floor,
                p.quiet,
                p.typical,
                p.day_median,
                unit = c.demand.unit()
            );
        }
        for n in &c.suggestion.notes {
            let _ = writeln!(out, "#   {n}");
        }
        if c.suggestion.too_little_history() {
            let _ = writeln!(
                out,
                "#   too little history to suggest peaks: this target's peaks are kept as in {base_name}"
            );
        }
        for (_, lines) in written.iter().filter(|(id, _)| *id == c.resource_id) {
            for line in lines {
                let _ = writeln!(out, "#   {line}");
            }
        }
    }
    let _ = writeln!(out);
    out.push_str(&body);
    parse_plan("the suggested plan", &out).map_err(RenderError::Invalid)?;
    Ok(out)
}
