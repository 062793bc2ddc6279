//! Known peaks become claims: live from `start - lead_time` to `start + duration`, then released
//! through the target's ramp. Derived from the plan at every reconcile, never stored, so a late or
//! repeated tick computes exactly the same claims.

use chrono::{DateTime, Utc};

use crate::claim::{Claim, ClaimSource};
use crate::duration::Span;
use crate::plan::{Peak, PeakWhen, TargetPlan};

/// The peak claims of `target` that matter at `now` (live, or starting within `lead_time`).
pub fn peak_claims(target: &TargetPlan, lead_time: Span, now: DateTime<Utc>) -> Vec<Claim> {
    let mut out = Vec::new();
    for peak in &target.peaks {
        if let Some(claim) = best_occurrence(target, peak, lead_time, now) {
            out.push(claim);
        }
    }
    out
}

fn claim_for(target: &TargetPlan, peak: &Peak, start: DateTime<Utc>, lead_time: Span) -> Claim {
    let end = start + peak.duration.to_chrono();
    let lead_note = format!(" (lead time {lead_time})");
    Claim::new(
        ClaimSource::Peak(peak.name.clone()),
        peak.floor,
        start - lead_time.to_chrono(),
        end,
        Some(target.ramp_down),
        format!(
            "peak {} starts {} for {}{}",
            peak.name,
            start.format("%Y-%m-%dT%H:%MZ"),
            peak.duration,
            lead_note
        ),
    )
    .suspending_scale_in(peak.suspend_scale_in)
}

/// Of all occurrences whose claim is live at `now`, the one asking the most (the later one on a
/// tie, since it holds longer).
fn best_occurrence(target: &TargetPlan, peak: &Peak, lead_time: Span, now: DateTime<Utc>) -> Option<Claim> {
    let ramp_len = target.ramp_down.length(peak.floor);
    // An occurrence at `s` is live during [s - lead, s + duration + ramp).
    let from = now - peak.duration.to_chrono() - ramp_len;
    let to = now + lead_time.to_chrono() + chrono::Duration::seconds(1);
    let starts: Vec<DateTime<Utc>> = match &peak.when {
        PeakWhen::Recurring { cron, timezone } => cron.occurrences(*timezone, from, to),
        PeakWhen::Once(at) => (*at >= from && *at < to).then_some(*at).into_iter().collect(),
    };
    starts
        .into_iter()
        .map(|s| claim_for(target, peak, s, lead_time))
        .filter_map(|c| c.at(now).map(|n| (n.floor, c)))
        .max_by(|(fa, a), (fb, b)| fa.cmp(fb).then(a.full_until.cmp(&b.full_until)))
        .map(|(_, c)| c)
}
