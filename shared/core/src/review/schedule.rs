//! Schedule reviews: the verdicts of `forecast::schedule_review` (is each planned peak still tied
//! to the demand it was written for?) as records an operator lists, reads and acknowledges with
//! `headroom reviews`, like the policy reviews a model change opens.
//!
//! Bounded by construction: one review per planned peak *as written* (target, name, cron, time
//! zone, duration, floor), so there are never more open schedule reviews than planned peaks, and
//! rewriting a peak (the usual answer to a review) starts afresh. A review is written only when
//! its verdict changes, never because the hourly refresh ran again:
//!
//! | stored review          | verdict now            | action                         |
//! |------------------------|------------------------|--------------------------------|
//! | none                   | ok                     | nothing                        |
//! | none                   | wasteful/insufficient/shifted | open                    |
//! | open                   | the same, or ok        | nothing                        |
//! | open                   | another non-ok verdict | update (the old one is kept)   |
//! | acknowledged           | the verdict acked, or ok | nothing: the operator kept the peak |
//! | acknowledged           | another non-ok verdict | reopen (the ack is kept)       |

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::{new_ack, Ack, AckError, ReviewStatus};
use crate::forecast::schedule_review::{PeakReview, Verdict};
use crate::identity::fnv1a;
use crate::ids::ScalableTargetId;
use crate::model::ReviewId;
use crate::plan::{Peak, PeakWhen};

/// Schedule review ids start with this; policy reviews with `rv-`.
pub const SCHEDULE_REVIEW_PREFIX: &str = "sr-";
/// Earlier verdicts a review keeps.
pub const EARLIER_VERDICTS: usize = 10;

/// Whether `id` names a schedule review (else a policy review).
pub fn is_schedule_review_id(id: &str) -> bool {
    id.starts_with(SCHEDULE_REVIEW_PREFIX)
}

/// A verdict the review held before the current one.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EarlierVerdict {
    pub verdict: Verdict,
    pub evidence: String,
    pub since: DateTime<Utc>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScheduleReview {
    pub id: ReviewId,
    /// Optimistic-concurrency revision: 0 means never stored (like `Review.revision`).
    #[serde(default)]
    pub revision: u64,
    pub target: ScalableTargetId,
    pub peak: String,
    /// The peak as it was written when reviewed: `cron "0 9 * * MON-FRI" Europe/Paris, 2h, floor 20`.
    pub peak_definition: String,
    pub status: ReviewStatus,
    pub opened_at: DateTime<Utc>,
    pub verdict: Verdict,
    pub evidence: String,
    /// Occurrences of the peak the verdict was drawn from.
    pub occurrences: u32,
    /// When the current verdict was recorded.
    pub verdict_since: DateTime<Utc>,
    /// Earlier verdicts, oldest first, at most [`EARLIER_VERDICTS`].
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub earlier: Vec<EarlierVerdict>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ack: Option<Ack>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub earlier_acks: Vec<Ack>,
}

/// The peak as written, or `None` for a one-off peak (only recurring peaks are reviewed).
pub fn peak_definition(peak: &Peak) -> Option<String> {
    let PeakWhen::Recurring { cron, timezone } = &peak.when else {
        return None;
    };
    Some(format!(
        "cron \"{}\" {timezone}, {}, floor {}",
        cron.source(),
        peak.duration,
        peak.floor
    ))
}

/// The review id of `peak` of `target` as written: the same at every refresh until the peak is
/// rewritten.
pub fn schedule_review_id(target: &ScalableTargetId, peak: &str, definition: &str) -> ReviewId {
    let h = fnv1a(format!("{target}\n{peak}\n{definition}").as_bytes());
    ReviewId::from(format!("{SCHEDULE_REVIEW_PREFIX}{:012x}", h >> 16))
}

/// What to store for one peak's verdict, given the stored review with the same id.
#[derive(Debug, Clone, PartialEq)]
pub enum ScheduleReviewAction {
    Open(ScheduleReview),
    /// Still open, with another non-ok verdict.
    Update(ScheduleReview),
    /// Acknowledged under one verdict, now another.
    Reopen(ScheduleReview),
    Unchanged,
}

impl ScheduleReviewAction {
    /// The review to write, if any.
    pub fn review(&self) -> Option<&ScheduleReview> {
        match self {
            Self::Open(r) | Self::Update(r) | Self::Reopen(r) => Some(r),
            Self::Unchanged => None,
        }
    }

    pub fn as_str(&self) -> &'static str {
        match self {
            Self::Open(_) => "opened",
            Self::Update(_) => "updated",
            Self::Reopen(_) => "reopened",
            Self::Unchanged => "unchanged",
        }
    }
}

/// The table in the module's header.
pub fn decide_schedule_review(
    existing: Option<&ScheduleReview>,
    target: &ScalableTargetId,
    peak: &Peak,
    review: &PeakReview,
    now: DateTime<Utc>,
) -> ScheduleReviewAction {
    if review.verdict == Verdict::Ok {
        return ScheduleReviewAction::Unchanged;
    }
    let Some(definition) = peak_definition(peak) else {
        return ScheduleReviewAction::Unchanged;
    };
    let Some(stored) = existing else {
        return ScheduleReviewAction::Open(ScheduleReview {
            id: schedule_review_id(target, &peak.name, &definition),
            revision: 0,
            target: target.clone(),
            peak: peak.name.clone(),
            peak_definition: definition,
            status: ReviewStatus::Open,
            opened_at: now,
            verdict: review.verdict,
            evidence: review.evidence.clone(),
            occurrences: review.occurrences,
            verdict_since: now,
            earlier: Vec::new(),
            ack: None,
            earlier_acks: Vec::new(),
        });
    };
    if stored.verdict == review.verdict {
        return ScheduleReviewAction::Unchanged;
    }
    let mut next = stored.clone();
    next.earlier.push(EarlierVerdict {
        verdict: stored.verdict,
        evidence: stored.evidence.clone(),
        since: stored.verdict_since,
    });
    crate::newest::keep_newest(&mut next.earlier, EARLIER_VERDICTS);
    next.verdict = review.verdict;
    next.evidence = review.evidence.clone();
    next.occurrences = review.occurrences;
    next.verdict_since = now;
    match stored.status {
        // Schedule reviews are never pending, superseded nor withdrawn (those are policy
        // reviews').
        ReviewStatus::Open | ReviewStatus::Pending => ScheduleReviewAction::Update(next),
        ReviewStatus::Acked | ReviewStatus::Superseded | ReviewStatus::Withdrawn => {
            next.status = ReviewStatus::Open;
            next.earlier_acks.extend(next.ack.take());
            ScheduleReviewAction::Reopen(next)
        }
    }
}

/// Acknowledges an open schedule review (the same rules as a policy review's).
pub fn ack_schedule_review(
    review: &ScheduleReview,
    by: &str,
    note: &str,
    now: DateTime<Utc>,
) -> Result<ScheduleReview, AckError> {
    let ack = new_ack(
        &review.id,
        review.status,
        review.ack.as_ref(),
        by,
        note,
        now,
    )?;
    Ok(ScheduleReview {
        status: ReviewStatus::Acked,
        ack: Some(ack),
        ..review.clone()
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // a test that cannot unwrap has failed
mod tests {
    use super::*;
    use crate::plan::parse_plan;

    fn at(s: &str) -> DateTime<Utc> {
        s.parse().unwrap()
    }

    fn peak(floor: u32) -> (ScalableTargetId, Peak) {
        let mut plan = parse_plan(
            "t.toml",
            &format!("version = 1\n[[target]]\nresource_id = \"endpoint/shop/variant/AllTraffic\"\nmin_capacity = 1\nmax_capacity = 80\n[[target.peak]]\nname = \"morning\"\ncron = \"0 9 * * MON-FRI\"\ntimezone = \"Europe/Paris\"\nduration = \"2h\"\nfloor = {floor}\n"),
        )
        .unwrap();
        let t = plan.targets.remove(0);
        (t.id, t.peaks.into_iter().next().unwrap())
    }

    fn verdict(v: Verdict) -> PeakReview {
        PeakReview {
            peak: "morning".into(),
            verdict: v,
            occurrences: 5,
            evidence: format!("{v:?} evidence"),
        }
    }

    fn decide(existing: Option<&ScheduleReview>, v: Verdict) -> ScheduleReviewAction {
        let (id, p) = peak(20);
        decide_schedule_review(existing, &id, &p, &verdict(v), at("2026-03-09T10:00:00Z"))
    }

    fn opened(v: Verdict) -> ScheduleReview {
        match decide(None, v) {
            ScheduleReviewAction::Open(r) => r,
            other => panic!("expected open, got {other:?}"),
        }
    }

    fn acked(v: Verdict) -> ScheduleReview {
        ack_schedule_review(
            &opened(v),
            "ana",
            "kept: the launch week",
            at("2026-03-10T08:00:00Z"),
        )
        .unwrap()
    }

    #[test]
    fn the_decision_table() {
        use ScheduleReviewAction as A;
        use Verdict::*;
        let kind = |a: &A| a.as_str();
        let rows: Vec<(Option<ScheduleReview>, Verdict, &str)> = vec![
            (None, Ok, "unchanged"),
            (None, Wasteful, "opened"),
            (None, Insufficient, "opened"),
            (None, Shifted, "opened"),
            (Some(opened(Wasteful)), Wasteful, "unchanged"),
            (Some(opened(Wasteful)), Ok, "unchanged"),
            (Some(opened(Wasteful)), Insufficient, "updated"),
            (Some(acked(Wasteful)), Wasteful, "unchanged"),
            (Some(acked(Wasteful)), Ok, "unchanged"),
            (Some(acked(Wasteful)), Shifted, "reopened"),
        ];
        for (existing, v, expected) in rows {
            let got = decide(existing.as_ref(), v);
            assert_eq!(kind(&got), expected, "{existing:?} + {v:?}");
        }
    }

    #[test]
    fn an_update_keeps_the_earlier_verdict_and_a_reopening_the_ack() {
        let ScheduleReviewAction::Update(r) =
            decide(Some(&opened(Verdict::Wasteful)), Verdict::Insufficient)
        else {
            panic!("update")
        };
        assert_eq!(r.verdict, Verdict::Insufficient);
        assert_eq!(r.status, ReviewStatus::Open);
        assert_eq!(r.earlier.len(), 1);
        assert_eq!(r.earlier[0].verdict, Verdict::Wasteful);
        let ScheduleReviewAction::Reopen(r) =
            decide(Some(&acked(Verdict::Wasteful)), Verdict::Shifted)
        else {
            panic!("reopen")
        };
        assert_eq!(r.status, ReviewStatus::Open);
        assert_eq!(r.ack, None);
        assert_eq!(r.earlier_acks.len(), 1);
        assert_eq!(r.earlier_acks[0].by, "ana");
    }

    #[test]
    fn earlier_verdicts_are_bounded() {
        let mut r = opened(Verdict::Wasteful);
        let cycle = [Verdict::Insufficient, Verdict::Shifted, Verdict::Wasteful];
        for v in cycle.iter().cycle().take(3 * EARLIER_VERDICTS) {
            if let ScheduleReviewAction::Update(next) = decide(Some(&r), *v) {
                r = next;
            }
        }
        assert_eq!(r.earlier.len(), EARLIER_VERDICTS);
    }

    #[test]
    fn the_id_follows_the_peak_as_written() {
        let (id, p20) = peak(20);
        let (_, p30) = peak(30);
        let d20 = peak_definition(&p20).unwrap();
        assert_eq!(d20, "cron \"0 9 * * MON-FRI\" Europe/Paris, 2h, floor 20");
        let a = schedule_review_id(&id, "morning", &d20);
        assert_eq!(a, schedule_review_id(&id, "morning", &d20));
        assert_ne!(
            a,
            schedule_review_id(&id, "morning", &peak_definition(&p30).unwrap())
        );
        assert!(is_schedule_review_id(&a) && a.as_str().len() == 15, "{a}");
    }

    #[test]
    fn a_second_ack_is_refused() {
        let r = acked(Verdict::Wasteful);
        let again = ack_schedule_review(&r, "bo", "again", at("2026-03-11T08:00:00Z"));
        assert!(
            matches!(again, Err(AckError::AlreadyAcked { .. })),
            "{again:?}"
        );
    }
}
