//! Closing the loop on reviews: listing them and acknowledging one (`headroom reviews list`,
//! `headroom reviews ack ID --note ...`), for policy reviews (`rv-`, opened by a model change)
//! and schedule reviews (`sr-`, opened by the forecast refresh's peak verdicts). Shared with the
//! CLI so that it and the Lambda apply the same rules.

use crate::deploy_ports::{Endpoints, ReviewStore, ScheduleReviewStore};
use crate::plan::{Plan, TargetPlan};
use crate::ports::SaveOutcome;
use crate::review::schedule::{ack_schedule_review, peak_definition, ScheduleReview};
use crate::review::{ack, tag_after_ack, Review, ReviewStatus, REVIEW_TAG};
use chrono::{DateTime, Utc};

use super::deploy::{port, DeployError};

/// Every review of the plan's targets, newest first: open and pending ones, or with `all` also
/// acknowledged, superseded and withdrawn ones. Reviews of targets the plan no longer manages are not
/// listed.
pub async fn list_reviews<R: ReviewStore>(
    reviews: &R,
    plan: &Plan,
    all: bool,
) -> Result<Vec<Review>, DeployError> {
    let mut out = Vec::new();
    for t in &plan.targets {
        let list = reviews
            .reviews(&t.id)
            .await
            .map_err(port(&t.id, "list the reviews"))?;
        out.extend(
            list.into_iter()
                .filter(|r| all || matches!(r.status, ReviewStatus::Open | ReviewStatus::Pending)),
        );
    }
    out.sort_by(|a, b| b.opened_at.cmp(&a.opened_at).then_with(|| a.id.cmp(&b.id)));
    Ok(out)
}

/// What an acknowledgement did.
#[derive(Debug, Clone)]
pub struct Acked {
    pub review: Review,
    /// The endpoint tag value set, when the review had tagged the endpoint.
    pub tag: Option<&'static str>,
}

/// Acknowledges review `id`: stores the acknowledgement (conditional on the revision read),
/// then flips the endpoint tag to `acked` unless another review of the endpoint is still open.
pub async fn ack_review<R: ReviewStore, E: Endpoints>(
    reviews: &R,
    endpoints: &E,
    plan: &Plan,
    id: &str,
    by: &str,
    note: &str,
    now: DateTime<Utc>,
) -> Result<Acked, DeployError> {
    let everything = list_reviews(reviews, plan, true).await?;
    let review = everything
        .iter()
        .find(|r| r.id == id)
        .cloned()
        .ok_or_else(|| DeployError::ReviewNotFound { id: id.to_owned() })?;
    let acked = ack(&review, by, note, now)?;
    match reviews
        .save_review(&acked)
        .await
        .map_err(port(&review.target, "store the acknowledgement"))?
    {
        SaveOutcome::Saved => {}
        SaveOutcome::Conflict => return Err(DeployError::ReviewConflict { id: id.to_owned() }),
    }
    let mut tag = None;
    if let (true, Some(arn)) = (review.tagged, &review.endpoint_arn) {
        let others: Vec<Review> = everything
            .into_iter()
            .filter(|r| r.id != acked.id)
            .chain([acked.clone()])
            .collect();
        let value = tag_after_ack(&acked, &others);
        endpoints
            .tag_endpoint(arn, REVIEW_TAG, value)
            .await
            .map_err(port(arn, "flip the review tag on the endpoint"))?;
        tag = Some(value);
    }
    tracing::info!(review_id = id, target_id = %acked.target, by, tag = tag.unwrap_or_default(), "review acknowledged");
    Ok(Acked { review: acked, tag })
}

/// Whether the plan still holds the peak `review` judged, as it was written then. A review of a
/// peak since rewritten or removed is outdated: the rewrite was the answer.
pub fn is_current(review: &ScheduleReview, target: &TargetPlan) -> bool {
    target.peaks.iter().any(|p| {
        p.name == review.peak && peak_definition(p).as_deref() == Some(&review.peak_definition)
    })
}

/// Every schedule review of the plan's targets, newest first: open ones of peaks the plan still
/// holds as reviewed, or with `all` every one (acknowledged and outdated too).
pub async fn list_schedule_reviews<R: ScheduleReviewStore>(
    reviews: &R,
    plan: &Plan,
    all: bool,
) -> Result<Vec<ScheduleReview>, DeployError> {
    let mut out = Vec::new();
    for t in &plan.targets {
        if t.peaks.is_empty() && !all {
            continue;
        }
        let list = reviews
            .schedule_reviews(&t.id)
            .await
            .map_err(port(&t.id, "list the schedule reviews"))?;
        out.extend(
            list.into_iter()
                .filter(|r| all || (r.status == ReviewStatus::Open && is_current(r, t))),
        );
    }
    out.sort_by(|a, b| b.opened_at.cmp(&a.opened_at).then_with(|| a.id.cmp(&b.id)));
    Ok(out)
}

/// Acknowledges schedule review `id` (conditional on the revision read). An acknowledged review
/// stays closed while its verdict holds; another verdict for the same peak reopens it.
pub async fn ack_schedule(
    reviews: &impl ScheduleReviewStore,
    plan: &Plan,
    id: &str,
    by: &str,
    note: &str,
    now: DateTime<Utc>,
) -> Result<ScheduleReview, DeployError> {
    let review = list_schedule_reviews(reviews, plan, true)
        .await?
        .into_iter()
        .find(|r| r.id == id)
        .ok_or_else(|| DeployError::ReviewNotFound { id: id.to_owned() })?;
    let acked = ack_schedule_review(&review, by, note, now)?;
    match reviews
        .save_schedule_review(&acked)
        .await
        .map_err(port(&review.target, "store the acknowledgement"))?
    {
        SaveOutcome::Saved => {}
        SaveOutcome::Conflict => return Err(DeployError::ReviewConflict { id: id.to_owned() }),
    }
    tracing::info!(review_id = id, target_id = %acked.target, peak = %acked.peak, verdict = acked.verdict.as_str(), by, "schedule review acknowledged");
    Ok(acked)
}
