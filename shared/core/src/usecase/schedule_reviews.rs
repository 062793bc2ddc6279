//! Opening schedule reviews, a step of the tick after the forecast refresh: each refreshed
//! target's peak verdicts (`forecast::schedule_review`) go through the decision table of
//! `review::schedule` against the stored review of that peak, and a review is written only when
//! the table says so. One read per non-ok verdict, a write only when a verdict changes; every
//! write is a WARN log line an alarm or a Logs Insights query can pick up.

use chrono::{DateTime, Utc};
use serde::Serialize;

use crate::deploy_ports::ScheduleReviewStore;
use crate::forecast::schedule_review::{PeakReview, Verdict};
use crate::ids::ScalableTargetId;
use crate::plan::Plan;
use crate::ports::SaveOutcome;
use crate::review::schedule::{decide_schedule_review, peak_definition, schedule_review_id};

/// What the step did.
#[derive(Debug, Default, Serialize)]
pub struct ScheduleReviewReport {
    /// `(review id, "opened" | "updated" | "reopened")`.
    pub written: Vec<(String, &'static str)>,
    /// Verdicts whose review could not be read or written (the next refresh tries again).
    pub errors: Vec<String>,
}

/// Applies `verdicts` (per target, from the refresh) to the stored schedule reviews.
pub async fn open_schedule_reviews<R: ScheduleReviewStore>(
    store: &R,
    plan: &Plan,
    verdicts: &[(ScalableTargetId, Vec<PeakReview>)],
    now: DateTime<Utc>,
) -> ScheduleReviewReport {
    let mut report = ScheduleReviewReport::default();
    for (id, reviews) in verdicts {
        let Some(target) = plan.target(id) else {
            continue;
        };
        for verdict in reviews.iter().filter(|r| r.verdict != Verdict::Ok) {
            if !store.is_wired() {
                tracing::warn!(target_id = %id, peak = %verdict.peak, verdict = verdict.verdict.as_str(), evidence = %verdict.evidence, "schedule review: the planned peak does not match the demand");
                continue;
            }
            let Some(peak) = target.peaks.iter().find(|p| p.name == verdict.peak) else {
                continue;
            };
            let Some(definition) = peak_definition(peak) else {
                continue;
            };
            let review_id = schedule_review_id(id, &peak.name, &definition);
            let stored = match store.load_schedule_review(id, &review_id).await {
                Ok(stored) => stored,
                Err(e) => {
                    report
                        .errors
                        .push(format!("read schedule review {review_id} of {id}: {e}"));
                    continue;
                }
            };
            let action = decide_schedule_review(stored.as_ref(), id, peak, verdict, now);
            let Some(review) = action.review() else {
                continue;
            };
            match store.save_schedule_review(review).await {
                Ok(SaveOutcome::Saved) => {
                    tracing::warn!(
                        review_id = %review.id,
                        target_id = %id,
                        peak = %peak.name,
                        verdict = review.verdict.as_str(),
                        evidence = %review.evidence,
                        action = action.as_str(),
                        "schedule review {}: the planned peak does not match the demand; `headroom reviews show {}`",
                        action.as_str(),
                        review.id
                    );
                    report
                        .written
                        .push((review.id.to_string(), action.as_str()));
                }
                // Another refresh wrote it first; the next one re-reads and decides again.
                Ok(SaveOutcome::Conflict) => {}
                Err(e) => report
                    .errors
                    .push(format!("store schedule review {} of {id}: {e}", review.id)),
            }
        }
    }
    report
}
