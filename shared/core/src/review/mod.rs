//! Scaling-policy reviews: when the model behind a managed target changes, the policies tuned for
//! the old model may no longer fit (AWS leaves "ensure the change doesn't significantly affect
//! performance and scaling behavior" to the user). headroom records what an operator needs to
//! judge that, makes it visible, and lets them acknowledge it.
//!
//! One review per (target, new fingerprint): the several events SageMaker sends for one change
//! all compute the same review id, and an open review is never opened twice. A model that comes
//! back after its review was acknowledged (a rollback, then the same rollout again) reopens it,
//! keeping the earlier acknowledgement.
//!
//! A review can also open before the change: when a model package version is approved in a
//! group a target serves, a *pending* review (`package.rs`) says what is coming; the rollout's
//! own review supersedes it.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

pub mod package;
pub mod schedule;

use crate::identity::{fnv1a, ModelIdentity};
use crate::ids::ScalableTargetId;
use crate::lead_time::lead_time;
use crate::metrics_port::Workload;
use crate::model::{Bounds, Finding, LeadSample, ModelFingerprint, ReviewId};
use crate::plan::TargetPlan;

/// The endpoint tag that shows a review is open (and flips to `acked` when acknowledged).
pub const REVIEW_TAG: &str = "headroom:policy-review";
pub const TAG_OPEN: &str = "open";
pub const TAG_ACKED: &str = "acked";
/// How many decision-log records under the old model a review carries.
pub const REVIEW_DECISIONS: usize = 20;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReviewStatus {
    Open,
    Acked,
    /// A model package version was approved in a group the target serves, and does not serve
    /// yet (policy reviews only: `package.rs`).
    Pending,
    /// Closed by a rollout: the pending review's package (or another model) serves now, and the
    /// review in `superseded_by` is the one to judge (policy reviews only).
    Superseded,
    /// Closed before its rollout: the package version it is about is no longer approved
    /// (rejected, or set back to manual approval; see `withdrawn`). A new approval of the
    /// version makes it pending again (policy reviews only).
    Withdrawn,
}

impl ReviewStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Open => "open",
            Self::Acked => "acked",
            Self::Pending => "pending",
            Self::Superseded => "superseded",
            Self::Withdrawn => "withdrawn",
        }
    }
}

/// A scaling policy as attached when the model changed (DescribeScalingPolicies).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ScalingPolicySummary {
    pub name: String,
    /// `TargetTrackingScaling` or `StepScaling` (or what AAS adds later).
    pub policy_type: String,
    /// Target tracking: the predefined metric type, or `namespace/metric` of a customised one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metric: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_value: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scale_in_cooldown_s: Option<i32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scale_out_cooldown_s: Option<i32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disable_scale_in: Option<bool>,
    /// Step scaling: the cooldown and the steps as `[lower, upper) -> adjustment`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cooldown_s: Option<i32>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub steps: Vec<String>,
    /// Step scaling: the steps as numbers, for the lint's rules (`steps` is their text).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub step_adjustments: Vec<StepAdjustment>,
    /// The CloudWatch alarms AAS attached to the policy.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub alarms: Vec<String>,
}

/// One step of a step-scaling policy: `[lower, upper)` relative to the alarm threshold, and the
/// change in capacity (in the policy's adjustment type).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StepAdjustment {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lower: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub upper: Option<f64>,
    pub adjustment: i32,
}

/// The bounds the plan sets and AAS reported when the change was seen.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReviewBounds {
    pub plan_min: u32,
    pub plan_max: u32,
    pub observed: Option<Bounds>,
}

/// How long capacity took under the old model, and the lead time that was in force.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Warmup {
    /// Measurements under the old model.
    pub samples: usize,
    pub p50_s: Option<i64>,
    pub p90_s: Option<i64>,
    pub max_s: Option<i64>,
    pub lead_time_s: i64,
    /// "measured" or "configured".
    pub lead_time_source: String,
    pub lead_time_detail: String,
}

/// The lint run when the review opened: the same rules as `headroom lint`, fed with the old
/// model's measurements and whatever the new model had measured by then.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ReviewLint {
    #[serde(default)]
    pub findings: Vec<Finding>,
    /// The day before the change (ending at the endpoint's LastModifiedTime, or when the
    /// change was seen).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub old_model: Option<Workload>,
    /// From the change to the review's opening, when that was long enough to measure.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub new_model: Option<Workload>,
}

/// An operator's acknowledgement.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Ack {
    pub at: DateTime<Utc>,
    pub by: String,
    pub note: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Review {
    pub id: ReviewId,
    /// Optimistic-concurrency revision: 0 means never stored (like `TargetState.version`).
    #[serde(default)]
    pub revision: u64,
    pub target: ScalableTargetId,
    pub status: ReviewStatus,
    pub opened_at: DateTime<Utc>,
    /// What revealed the change ("sagemaker:<event id>", "pipeline:<run id>:deployed").
    pub trigger: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub endpoint: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub endpoint_arn: Option<String>,
    /// Whether headroom tagged the endpoint for this review (the plan's `review.tag_endpoint`).
    #[serde(default)]
    pub tagged: bool,
    pub previous_fingerprint: ModelFingerprint,
    /// The full previous identity, when headroom had stored it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub previous: Option<ModelIdentity>,
    pub fingerprint: ModelFingerprint,
    pub current: ModelIdentity,
    pub policies: Vec<ScalingPolicySummary>,
    pub bounds: ReviewBounds,
    /// headroom's newest decision-log records under the old model, newest first.
    pub recent_decisions: Vec<serde_json::Value>,
    pub warmup: Warmup,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ack: Option<Ack>,
    /// Acknowledgements of earlier occurrences (the same model came back after an ack).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub earlier_acks: Vec<Ack>,
    #[serde(default = "one")]
    pub occurrences: u32,
    /// What could not be gathered (a permission missing, a call refused), so a reader knows
    /// an empty list means "unknown" rather than "none".
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub gaps: Vec<String>,
    /// The lint's findings at open time (absent in reviews stored before the lint existed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lint: Option<ReviewLint>,
    /// The approved model package: what a pending review is about, or, in a rollout's review,
    /// the package whose pending review it superseded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub package: Option<package::PackageApproval>,
    /// A rollout's review: the pending review of the same package it superseded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pending_review: Option<ReviewId>,
    /// A superseded pending review: the rollout's review that replaced it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub superseded_by: Option<ReviewId>,
    /// A withdrawn pending review: the approval status that closed it, and when.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub withdrawn: Option<package::Withdrawal>,
}

fn one() -> u32 {
    1
}

/// The review id for a change of `target` to `fingerprint`: the same for every event of one
/// change, short enough to type (`rv-` and 12 hex digits).
pub fn review_id(target: &ScalableTargetId, fingerprint: &ModelFingerprint) -> ReviewId {
    let h = fnv1a(format!("{target}\n{fingerprint}").as_bytes());
    ReviewId::from(format!("rv-{:012x}", h >> 16))
}

/// What the watcher gathered when it saw the change.
#[derive(Debug, Clone)]
pub struct ReviewInput<'a> {
    pub target: &'a TargetPlan,
    pub at: DateTime<Utc>,
    pub trigger: String,
    pub endpoint_arn: Option<String>,
    pub tagged: bool,
    pub previous_fingerprint: ModelFingerprint,
    pub previous: Option<ModelIdentity>,
    pub current: ModelIdentity,
    pub policies: Vec<ScalingPolicySummary>,
    pub observed: Option<Bounds>,
    /// Newest first, any model: filtered here to the old model's.
    pub decisions: Vec<serde_json::Value>,
    pub samples: &'a [LeadSample],
    pub gaps: Vec<String>,
    pub lint: Option<ReviewLint>,
}

/// Builds the review record for a change (not yet stored: revision 0).
pub fn build_review(input: ReviewInput<'_>) -> Review {
    let fingerprint = input.current.fingerprint();
    let recent_decisions = decisions_under(input.decisions, &input.previous_fingerprint);
    let warmup = warmup(input.target, input.samples, &input.previous_fingerprint);
    Review {
        id: review_id(&input.target.id, &fingerprint),
        revision: 0,
        target: input.target.id.clone(),
        status: ReviewStatus::Open,
        opened_at: input.at,
        trigger: input.trigger,
        endpoint: input.current.endpoint.clone(),
        endpoint_arn: input.endpoint_arn,
        tagged: input.tagged,
        previous_fingerprint: input.previous_fingerprint,
        previous: input.previous,
        fingerprint,
        current: input.current,
        policies: input.policies,
        bounds: ReviewBounds {
            plan_min: input.target.min_capacity,
            plan_max: input.target.max_capacity,
            observed: input.observed,
        },
        recent_decisions,
        warmup,
        ack: None,
        earlier_acks: Vec::new(),
        occurrences: 1,
        gaps: input.gaps,
        lint: input.lint,
        package: None,
        pending_review: None,
        superseded_by: None,
        withdrawn: None,
    }
}

/// Decision-log records made under `fingerprint`, newest first, at most [`REVIEW_DECISIONS`].
pub fn decisions_under(
    records: Vec<serde_json::Value>,
    fingerprint: &ModelFingerprint,
) -> Vec<serde_json::Value> {
    records
        .into_iter()
        .filter(|r| r.get("model").and_then(|m| m.as_str()) == Some(fingerprint.as_str()))
        .take(REVIEW_DECISIONS)
        .collect()
}

/// Nearest-rank percentile of sorted values.
fn percentile(sorted: &[i64], p: f64) -> Option<i64> {
    if sorted.is_empty() {
        return None;
    }
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    Some(sorted[rank.clamp(1, sorted.len()) - 1])
}

/// Warm-up measured under the old model and the lead time that was in force with it.
pub fn warmup(
    target: &TargetPlan,
    samples: &[LeadSample],
    old_fingerprint: &ModelFingerprint,
) -> Warmup {
    let mut old: Vec<i64> = samples
        .iter()
        .filter(|s| s.model.as_ref() == Some(old_fingerprint) && s.seconds > 0)
        .map(|s| s.seconds)
        .collect();
    old.sort_unstable();
    let lead = lead_time(target, samples, Some(old_fingerprint));
    Warmup {
        samples: old.len(),
        p50_s: percentile(&old, 50.0),
        p90_s: percentile(&old, 90.0),
        max_s: old.last().copied(),
        lead_time_s: lead.span.as_secs(),
        lead_time_source: lead.source.to_owned(),
        lead_time_detail: lead.detail,
    }
}

/// What to do with a freshly built review given the stored one with the same id.
#[derive(Debug, Clone, PartialEq)]
pub enum OpenDecision {
    /// First time this change is seen: store it.
    Create(Review),
    /// The model came back after its review was acknowledged: open it again.
    Reopen(Review),
    /// Another event of the same change already opened it: nothing to do.
    AlreadyOpen(Review),
}

pub fn decide_open(existing: Option<Review>, fresh: Review) -> OpenDecision {
    match existing {
        None => OpenDecision::Create(fresh),
        Some(e) if e.status == ReviewStatus::Open => OpenDecision::AlreadyOpen(e),
        Some(e) => {
            let mut earlier = e.earlier_acks;
            earlier.extend(e.ack);
            OpenDecision::Reopen(Review {
                revision: e.revision,
                earlier_acks: earlier,
                occurrences: e.occurrences.saturating_add(1),
                ..fresh
            })
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AckError {
    #[error("review {id} was already acknowledged by {by} at {at}: nothing to do")]
    AlreadyAcked {
        id: ReviewId,
        by: String,
        at: DateTime<Utc>,
    },
    #[error("an acknowledgement needs a note saying what was checked (--note \"...\")")]
    EmptyNote,
    #[error("an acknowledgement needs the name of who acknowledges (--by or $USER)")]
    NoActor,
    #[error("review {id} was superseded by a rollout: acknowledge the review `headroom reviews show {id}` names in superseded_by")]
    Superseded { id: ReviewId },
    #[error("review {id} was withdrawn: its model package version is no longer approved, so nothing will roll out to judge (`headroom reviews show {id}` says when and why)")]
    Withdrawn { id: ReviewId },
}

/// Acknowledges an open review.
pub fn ack(review: &Review, by: &str, note: &str, now: DateTime<Utc>) -> Result<Review, AckError> {
    let ack = new_ack(
        &review.id,
        review.status,
        review.ack.as_ref(),
        by,
        note,
        now,
    )?;
    Ok(Review {
        status: ReviewStatus::Acked,
        ack: Some(ack),
        ..review.clone()
    })
}

/// The acknowledgement of a review in `status`, checked: not twice, with a note and a name.
pub(crate) fn new_ack(
    id: &ReviewId,
    status: ReviewStatus,
    existing: Option<&Ack>,
    by: &str,
    note: &str,
    now: DateTime<Utc>,
) -> Result<Ack, AckError> {
    match status {
        ReviewStatus::Superseded => return Err(AckError::Superseded { id: id.clone() }),
        ReviewStatus::Withdrawn => return Err(AckError::Withdrawn { id: id.clone() }),
        ReviewStatus::Open | ReviewStatus::Acked | ReviewStatus::Pending => {}
    }
    if let (ReviewStatus::Acked, Some(a)) = (status, existing) {
        return Err(AckError::AlreadyAcked {
            id: id.clone(),
            by: a.by.clone(),
            at: a.at,
        });
    }
    let note = note.trim();
    if note.is_empty() {
        return Err(AckError::EmptyNote);
    }
    let by = by.trim();
    if by.is_empty() {
        return Err(AckError::NoActor);
    }
    Ok(Ack {
        at: now,
        by: by.to_owned(),
        note: note.to_owned(),
    })
}

/// The endpoint tag value once `acked` is acknowledged, given every review of the endpoint's
/// targets: still `open` while any other is open.
pub fn tag_after_ack(acked: &Review, all: &[Review]) -> &'static str {
    let other_open = all.iter().any(|r| {
        r.id != acked.id && r.status == ReviewStatus::Open && r.endpoint == acked.endpoint
    });
    if other_open {
        TAG_OPEN
    } else {
        TAG_ACKED
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // a test that cannot unwrap has failed
mod tests {
    use super::*;
    use crate::identity::ContainerIdentity;
    use crate::plan::parse_plan;
    use serde_json::json;

    fn t(s: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(s).unwrap().with_timezone(&Utc)
    }

    fn plan() -> crate::Plan {
        parse_plan(
            "test",
            r#"
version = 1
[[target]]
resource_id = "endpoint/chat-prod/variant/AllTraffic"
min_capacity = 2
max_capacity = 8
lead_time = "15m"
"#,
        )
        .unwrap()
    }

    fn identity(data: &str) -> ModelIdentity {
        ModelIdentity {
            endpoint: Some("chat-prod".into()),
            endpoint_config: Some("cfg".into()),
            inference_component: None,
            model_name: Some("m".into()),
            model_arn: None,
            containers: vec![ContainerIdentity {
                image: Some("img".into()),
                model_data: Some(data.into()),
                model_package: None,
            }],
            instance_type: None,
            version_label: None,
            observed_at: t("2026-03-14T09:00:00Z"),
        }
    }

    fn sample(seconds: i64, model: &str) -> LeadSample {
        LeadSample {
            ended_at: t("2026-03-10T00:00:00Z") + chrono::Duration::seconds(seconds),
            seconds,
            model: Some(model.into()),
            source: crate::model::SampleSource::AasActivity,
        }
    }

    fn review(
        plan: &crate::Plan,
        samples: &[LeadSample],
        decisions: Vec<serde_json::Value>,
    ) -> Review {
        let old = identity("s3://v7");
        build_review(ReviewInput {
            target: &plan.targets[0],
            at: t("2026-03-14T09:12:00Z"),
            trigger: "sagemaker:e-1".into(),
            endpoint_arn: Some("arn:aws:sagemaker:us-east-1:1:endpoint/chat-prod".into()),
            tagged: true,
            previous_fingerprint: old.fingerprint(),
            previous: Some(old),
            current: identity("s3://v8"),
            policies: vec![],
            observed: None,
            decisions,
            samples,
            gaps: vec![],
            lint: None,
        })
    }

    #[test]
    fn one_review_id_per_target_and_new_model() {
        let p = plan();
        let id = &p.targets[0].id;
        let (one, two) = ("m1-0000000000000001".into(), "m1-0000000000000002".into());
        let a = review_id(id, &one);
        assert_eq!(a, review_id(id, &one));
        assert_ne!(a, review_id(id, &two));
        let other: ScalableTargetId = "endpoint/chat-prod/variant/Canary".parse().unwrap();
        assert_ne!(a, review_id(&other, &one));
        assert!(a.starts_with("rv-") && a.len() == 15, "{a}");
    }

    #[test]
    fn review_carries_old_model_decisions_and_warmup_only() {
        let p = plan();
        let old = identity("s3://v7").fingerprint();
        let samples = vec![
            sample(300, &old),
            sample(420, &old),
            sample(360, &old),
            sample(900, "m1-other"),
        ];
        let decisions = vec![
            json!({"trigger": "tick", "model": old}),
            json!({"trigger": "alarm", "model": "m1-other"}),
            json!({"trigger": "tick"}),
        ];
        let r = review(&p, &samples, decisions);
        assert_eq!(r.status, ReviewStatus::Open);
        assert_eq!(
            r.recent_decisions.len(),
            1,
            "only records made under the old model"
        );
        assert_eq!(r.warmup.samples, 3);
        assert_eq!(r.warmup.p50_s, Some(360));
        assert_eq!(r.warmup.max_s, Some(420));
        // p90 of [300, 360, 420] = 420, x 1.25 = 525 s: measured, within the default 2m..45m.
        assert_eq!(r.warmup.lead_time_source, "measured");
        assert_eq!(r.warmup.lead_time_s, 525);
        assert_eq!((r.bounds.plan_min, r.bounds.plan_max), (2, 8));
        assert_eq!(r.fingerprint, identity("s3://v8").fingerprint());
    }

    #[test]
    fn several_events_for_one_change_make_one_review() {
        let p = plan();
        let first = review(&p, &[], vec![]);
        let created = match decide_open(None, first.clone()) {
            OpenDecision::Create(r) => r,
            other => panic!("{other:?}"),
        };
        let stored = Review {
            revision: 1,
            ..created
        };
        // The second event of the same change builds the same id and finds it open.
        let second = review(&p, &[], vec![]);
        assert_eq!(second.id, stored.id);
        assert!(matches!(
            decide_open(Some(stored), second),
            OpenDecision::AlreadyOpen(_)
        ));
    }

    #[test]
    fn a_model_that_comes_back_after_an_ack_reopens_its_review() {
        let p = plan();
        let stored = Review {
            revision: 2,
            ..ack(
                &review(&p, &[], vec![]),
                "ana",
                "checked target value",
                t("2026-03-14T10:00:00Z"),
            )
            .unwrap()
        };
        let again = review(&p, &[], vec![]);
        match decide_open(Some(stored), again) {
            OpenDecision::Reopen(r) => {
                assert_eq!(r.status, ReviewStatus::Open);
                assert_eq!(r.revision, 2, "conditional on the stored revision");
                assert_eq!(r.earlier_acks.len(), 1);
                assert_eq!(r.occurrences, 2);
                assert!(r.ack.is_none());
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn ack_needs_a_note_and_happens_once() {
        let p = plan();
        let r = review(&p, &[], vec![]);
        let now = t("2026-03-14T10:00:00Z");
        assert_eq!(ack(&r, "ana", "  ", now), Err(AckError::EmptyNote));
        assert_eq!(ack(&r, "", "ok", now), Err(AckError::NoActor));
        let acked = ack(
            &r,
            "ana",
            "target value still fits: p90 latency unchanged",
            now,
        )
        .unwrap();
        assert_eq!(acked.status, ReviewStatus::Acked);
        assert_eq!(acked.ack.as_ref().map(|a| a.by.as_str()), Some("ana"));
        assert!(matches!(
            ack(&acked, "bo", "again", now),
            Err(AckError::AlreadyAcked { .. })
        ));
    }

    #[test]
    fn the_tag_stays_open_while_another_review_of_the_endpoint_is_open() {
        let p = plan();
        let a = review(&p, &[], vec![]);
        let mut b = a.clone();
        b.id = "rv-other".into();
        let acked = ack(&a, "ana", "ok", t("2026-03-14T10:00:00Z")).unwrap();
        assert_eq!(tag_after_ack(&acked, &[acked.clone(), b.clone()]), TAG_OPEN);
        b.status = ReviewStatus::Acked;
        assert_eq!(tag_after_ack(&acked, &[acked.clone(), b]), TAG_ACKED);
    }

    #[test]
    fn a_review_stored_before_the_lint_loads_without_one() {
        let p = plan();
        let mut old = serde_json::to_value(review(&p, &[], vec![])).unwrap();
        old.as_object_mut().unwrap().remove("lint");
        let back: Review = serde_json::from_value(old).unwrap();
        assert_eq!(back.lint, None);
    }

    #[test]
    fn reviews_round_trip_through_json() {
        let p = plan();
        let r = review(&p, &[], vec![json!({"x": 1})]);
        let back: Review = serde_json::from_str(&serde_json::to_string(&r).unwrap()).unwrap();
        assert_eq!(back, r);
    }
}
