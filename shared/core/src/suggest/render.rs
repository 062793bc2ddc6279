//! The suggested plan as TOML: the base plan, each suggested target's peaks replaced and its
//! `[target.forecast]` set, and the evidence as comments on top. The output is checked by the
//! same validation as `plan validate` before it is returned, so it is always a plan headroom
//! accepts.

use std::fmt::Write as _;

use crate::plan::file::{PeakFile, PlanFile};
use crate::plan::forecast::DemandKind;
use crate::plan::{parse_plan, PlanError};
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
    for t in &mut file.targets {
        let Some(change) = changes.iter().find(|c| c.resource_id == t.resource_id) else {
            continue;
        };
        if change.suggestion.too_little_history() {
            // Nothing to replace them with: the forecast section alone is added, and it waits
            // for enough history too.
        } else {
            t.peaks = change
                .suggestion
                .peaks
                .iter()
                .map(|p| PeakFile {
                    name: p.name.clone(),
                    cron: Some(p.cron()),
                    timezone: None,
                    at: None,
                    duration: p.duration,
                    floor: p.floor,
                    suspend_scale_in: false,
                })
                .collect();
        }
        let mut forecast = t.forecast.clone().unwrap_or_default();
        forecast.invocations_per_instance = Some(change.invocations_per_instance);
        // The figure is per instance of what the history measured: say so when that is not
        // the default (requests).
        if change.demand != DemandKind::Invocations {
            forecast.demand = Some(change.demand.as_str().to_owned());
        }
        if forecast.mode.is_none() {
            forecast.mode = Some("active".into());
        }
        if forecast.min_history.is_none() {
            forecast.min_history = Some(super::SUGGESTED_MIN_HISTORY);
        }
        t.forecast = Some(forecast);
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
                "#   peak {}: {} for {}, floor {} (quiet-day demand {:.1}/min, typical up to {:.1}/min, day median {:.1}/min)",
                p.name,
                p.cron(),
                p.duration,
                p.floor,
                p.quiet,
                p.typical,
                p.day_median
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
    }
    let _ = writeln!(out);
    out.push_str(&body);
    parse_plan("the suggested plan", &out).map_err(RenderError::Invalid)?;
    Ok(out)
}
