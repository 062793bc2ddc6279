//! The lead time pre-scaling uses: measured when there are enough measurements, configured
//! otherwise. Pure; the deployment watcher records the samples.

use serde::Serialize;

use crate::duration::Span;
use crate::model::{LeadSample, ModelFingerprint};
use crate::plan::TargetPlan;

/// The lead time in force for a target, and where it came from.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LeadTime {
    pub span: Span,
    /// "configured" or "measured".
    pub source: &'static str,
    /// How many samples counted.
    pub samples: usize,
    pub detail: String,
}

/// Resolves the lead time: the plan's percentile of the samples that count, times the margin,
/// within the plan's min and max; the configured value while fewer than `min_samples` count.
/// `current_model` is the model identity in force; samples from other models count only when the
/// plan says so.
pub fn lead_time(
    target: &TargetPlan,
    samples: &[LeadSample],
    current_model: Option<&ModelFingerprint>,
) -> LeadTime {
    let policy = &target.measured_lead_time;
    let mut counted: Vec<i64> = samples
        .iter()
        .filter(|s| {
            policy.count_previous_models
                || current_model.is_none()
                || s.model.is_none()
                || s.model.as_ref() == current_model
        })
        .map(|s| s.seconds)
        .filter(|s| *s > 0)
        .collect();
    if counted.len() < policy.min_samples as usize {
        return LeadTime {
            span: target.lead_time,
            source: "configured",
            samples: counted.len(),
            detail: format!(
                "configured {}: {} of {} measurements needed",
                target.lead_time,
                counted.len(),
                policy.min_samples
            ),
        };
    }
    counted.sort_unstable();
    // Nearest-rank percentile.
    let rank = ((f64::from(policy.percentile) / 100.0) * counted.len() as f64).ceil() as usize;
    let p = counted[rank.clamp(1, counted.len()) - 1];
    let with_margin = (p as f64 * policy.margin).ceil() as i64;
    let span = Span::seconds(with_margin.clamp(policy.min.as_secs(), policy.max.as_secs()));
    LeadTime {
        span,
        source: "measured",
        samples: counted.len(),
        detail: format!(
            "p{} of {} scale-outs = {} x margin {} = {}",
            policy.percentile,
            counted.len(),
            Span::seconds(p),
            policy.margin,
            span
        ),
    }
}
