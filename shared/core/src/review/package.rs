//! Pending reviews: a model package version approved in a group a managed target serves, before
//! it rolls out. The approval (`SageMaker Model Package State Change` to `Approved`) is the
//! earliest sign that the model behind the target will change, and so that the policies tuned
//! for the serving model may not fit the next one.
//!
//! The rules:
//! - **Serving.** A target serves group G when its stored model identity (the `MODEL` item the
//!   watcher keeps) has a container whose model package is a versioned ARN of G: the same
//!   partition, region, account and group name as the approved package's ARN (a same-named
//!   group of another account does not match). A target whose model was not deployed from a
//!   package, or that no deployment event has shown headroom yet, serves no group.
//! - **Pending.** An approval of another version than the one serving opens one pending review
//!   per (target, package version): its id is a hash of both, so a duplicate event finds it.
//!   A stored one is never rewritten by an approval, whatever its status, but for a withdrawn
//!   one (below).
//! - **Superseded.** When the model-change path opens a rollout's review, every pending review
//!   of that target (acknowledged or not) is closed as superseded by it: the one of the package
//!   now serving hands its package over (the rollout's review names it in `pending_review`),
//!   the others were overtaken by the rollout (if their package rolls out later, that rollout
//!   opens its own review).
//!
//! - **Withdrawn.** When the approved version stops being approved before it rolls out
//!   (`Rejected`, or back to `PendingManualApproval`), its pending review (acknowledged or not)
//!   is closed as withdrawn: nothing will roll out to judge. A later approval of the same
//!   version makes it pending again, as a fresh review of that approval.
//! - **Order.** EventBridge delivers late and out of order, so the event times decide: a
//!   rejection older than the approval its review records withdraws nothing, and an approval
//!   not newer than the withdrawal (a redelivered one) renews nothing.
//!
//! A pending review does not tag the endpoint (the tag says a review is open) and is not
//! `open`: a pipeline's `check` answers `pending` for it.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::identity::{fnv1a, ModelIdentity};
use crate::ids::ScalableTargetId;
use crate::model::ReviewId;
use crate::trigger::model_package::PackageArn;

use super::{Review, ReviewStatus};

/// The approved package a pending review is about.
///
/// A pending review's `current` identity is what the package declares (its containers, each
/// naming the package), and its `fingerprint` that identity's: the rollout's own fingerprint may
/// differ (DescribeModel may name only the package), so a rollout is matched to its pending
/// review by the package ARN, never by the fingerprint.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PackageApproval {
    /// The versioned ARN approved.
    pub arn: String,
    pub group: String,
    pub version: u32,
    /// The event's time (else when it was handled).
    pub approved_at: DateTime<Utc>,
    /// The package of the same group serving when the approval was seen.
    pub serving: String,
}

impl PackageApproval {
    /// `chat-models/9`, for tables.
    pub fn label(&self) -> String {
        format!("{}/{}", self.group, self.version)
    }
}

/// The pending review id of `package` (a versioned ARN) for `target`: `rv-` and 12 hex digits,
/// like a rollout's, and never equal to one (another text is hashed).
pub fn pending_review_id(target: &ScalableTargetId, package: &str) -> ReviewId {
    let h = fnv1a(format!("{target}\npackage\n{package}").as_bytes());
    ReviewId::from(format!("rv-{:012x}", h >> 16))
}

/// What an approved package is to a target, judged from its stored identity.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PackageFit {
    /// Another version of the approved package's group serves: a pending review is due.
    OtherVersion { serving: String },
    /// The approved version serves already (the approval came after the rollout).
    AlreadyServing,
    /// No container names a package of that group, or nothing is stored yet.
    NotServed,
}

pub fn package_fit(stored: Option<&ModelIdentity>, approved: &PackageArn<'_>) -> PackageFit {
    let Some(identity) = stored else {
        return PackageFit::NotServed;
    };
    let of_group: Vec<(&str, u32)> = identity
        .containers
        .iter()
        .filter_map(|c| c.model_package.as_deref())
        .filter_map(|arn| {
            let p = PackageArn::parse(arn)?;
            (p.group_arn == approved.group_arn).then_some((arn, p.version))
        })
        .collect();
    if of_group.iter().any(|(_, v)| *v == approved.version) {
        return PackageFit::AlreadyServing;
    }
    match of_group.first() {
        Some((arn, _)) => PackageFit::OtherVersion {
            serving: (*arn).to_owned(),
        },
        None => PackageFit::NotServed,
    }
}

/// Turns a review built for the approved package (`build_review` with the package's declared
/// identity as `current`) into its pending review.
pub fn pending_review(review: Review, approval: PackageApproval) -> Review {
    Review {
        id: pending_review_id(&review.target, &approval.arn),
        status: ReviewStatus::Pending,
        tagged: false,
        package: Some(approval),
        ..review
    }
}

/// Why and when a pending review was withdrawn.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Withdrawal {
    /// The approval status the package version moved to (`Rejected`).
    pub status: String,
    /// The event's time (else when it was handled).
    pub at: DateTime<Utc>,
}

/// What to do with a freshly built pending review given the stored one with its id.
#[derive(Debug, Clone, PartialEq)]
pub enum PendingDecision {
    /// First approval event of this version for this target: store it.
    Create(Review),
    /// The version was approved again after its review was withdrawn: the fresh review
    /// replaces the withdrawn one (conditional on the revision read).
    Renew(Review),
    /// Already stored (a duplicate event, or an approval redelivered after the review was
    /// acknowledged or superseded): nothing to do.
    Exists(Review),
}

pub fn decide_pending(existing: Option<Review>, fresh: Review) -> PendingDecision {
    match existing {
        None => PendingDecision::Create(fresh),
        Some(e) if e.status == ReviewStatus::Withdrawn && approved_after_withdrawal(&e, &fresh) => {
            let mut earlier_acks = e.earlier_acks;
            earlier_acks.extend(e.ack);
            PendingDecision::Renew(Review {
                revision: e.revision,
                occurrences: e.occurrences + 1,
                earlier_acks,
                ..fresh
            })
        }
        Some(e) => PendingDecision::Exists(e),
    }
}

/// Whether `fresh`'s approval came after `withdrawn` was withdrawn (not a redelivery of the
/// approval the withdrawal overtook).
fn approved_after_withdrawal(withdrawn: &Review, fresh: &Review) -> bool {
    match (&withdrawn.withdrawn, &fresh.package) {
        (Some(w), Some(p)) => p.approved_at > w.at,
        _ => false,
    }
}

/// The stored review of an approval, closed as withdrawn because its package version moved to
/// `status` at `at`; `None` when there is nothing to close: it rolled out, was superseded or
/// withdrawn already (a duplicate or late event changes nothing), or its approval is newer
/// than `at` (the rejection arrived after the approval that overtook it).
pub fn withdraw(stored: &Review, status: &str, at: DateTime<Utc>) -> Option<Review> {
    let newer = stored.package.as_ref().is_none_or(|p| at >= p.approved_at);
    (stored.awaits_rollout() && newer).then(|| Review {
        status: ReviewStatus::Withdrawn,
        withdrawn: Some(Withdrawal {
            status: status.to_owned(),
            at,
        }),
        ..stored.clone()
    })
}

impl Review {
    /// A review opened by an approval (pending, or since acknowledged, superseded or withdrawn),
    /// not by a rollout.
    pub fn is_approval(&self) -> bool {
        self.package.is_some() && self.pending_review.is_none()
    }

    /// Still waiting for its rollout: pending or acknowledged, not superseded.
    pub(crate) fn awaits_rollout(&self) -> bool {
        self.is_approval()
            && self.superseded_by.is_none()
            && matches!(self.status, ReviewStatus::Pending | ReviewStatus::Acked)
    }
}

/// Links a rollout's fresh review to the pending review of the package now serving, if any of
/// `stored` (the target's reviews) is one: the rollout's review takes over its package.
pub fn link_rollout(fresh: &mut Review, stored: &[Review]) {
    let serving: Vec<&str> = fresh
        .current
        .containers
        .iter()
        .filter_map(|c| c.model_package.as_deref())
        .collect();
    if let Some(pending) = stored.iter().find(|r| {
        r.awaits_rollout()
            && r.package
                .as_ref()
                .is_some_and(|p| serving.contains(&p.arn.as_str()))
    }) {
        fresh.package = pending.package.clone();
        fresh.pending_review = Some(pending.id.clone());
    }
}

/// The target's reviews a rollout's review `rollout` closes: every one still awaiting a
/// rollout, as superseded by it (conditional on the revision read; acknowledgements kept).
pub fn supersede(stored: &[Review], rollout: &ReviewId) -> Vec<Review> {
    stored
        .iter()
        .filter(|r| r.awaits_rollout() && &r.id != rollout)
        .map(|r| Review {
            status: ReviewStatus::Superseded,
            superseded_by: Some(rollout.clone()),
            ..r.clone()
        })
        .collect()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // a test that cannot unwrap has failed
mod tests {
    use super::*;
    use crate::identity::ContainerIdentity;
    use crate::review::{ack, review_id};

    const GROUP: &str = "arn:aws:sagemaker:us-east-1:123456789012:model-package/chat-models";

    fn t(s: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(s).unwrap().with_timezone(&Utc)
    }

    fn serving(packages: &[&str]) -> ModelIdentity {
        ModelIdentity {
            endpoint: Some("chat-prod".into()),
            endpoint_config: Some("cfg".into()),
            inference_component: None,
            model_name: Some("chat-v8".into()),
            model_arn: None,
            containers: packages
                .iter()
                .map(|p| ContainerIdentity {
                    image: Some("img".into()),
                    model_data: None,
                    model_package: Some((*p).into()),
                })
                .collect(),
            instance_type: None,
            version_label: None,
            observed_at: t("2026-03-14T09:00:00Z"),
        }
    }

    fn arn(version: u32) -> String {
        format!("{GROUP}/{version}")
    }

    #[test]
    fn a_target_serves_a_group_by_its_full_arn_only() {
        let v9 = arn(9);
        let approved = PackageArn::parse(&v9).unwrap();
        let cases: Vec<(&str, Option<ModelIdentity>, PackageFit)> = vec![
            ("nothing stored", None, PackageFit::NotServed),
            (
                "another version of the group",
                Some(serving(&[&arn(8)])),
                PackageFit::OtherVersion { serving: arn(8) },
            ),
            (
                "the approved version",
                Some(serving(&[&arn(9)])),
                PackageFit::AlreadyServing,
            ),
            (
                "a newer version (an older one approved again)",
                Some(serving(&[&arn(10)])),
                PackageFit::OtherVersion { serving: arn(10) },
            ),
            (
                "the same group name in another account",
                Some(serving(&[
                    "arn:aws:sagemaker:us-east-1:999999999999:model-package/chat-models/8",
                ])),
                PackageFit::NotServed,
            ),
            (
                "the same group name in another region",
                Some(serving(&[
                    "arn:aws:sagemaker:eu-west-1:123456789012:model-package/chat-models/8",
                ])),
                PackageFit::NotServed,
            ),
            (
                "a group whose name starts with the approved one's",
                Some(serving(&[&format!("{GROUP}-canary/8")])),
                PackageFit::NotServed,
            ),
            (
                "an unversioned package",
                Some(serving(&[
                    "arn:aws:sagemaker:us-east-1:123456789012:model-package/chat-models",
                ])),
                PackageFit::NotServed,
            ),
            (
                "a model not deployed from a package",
                Some(serving(&[])),
                PackageFit::NotServed,
            ),
            (
                "a pipeline model with one container of the group",
                Some(serving(&[
                    "arn:aws:sagemaker:us-east-1:123456789012:model-package/tokenizer/2",
                    &arn(8),
                ])),
                PackageFit::OtherVersion { serving: arn(8) },
            ),
        ];
        for (case, stored, want) in cases {
            assert_eq!(package_fit(stored.as_ref(), &approved), want, "{case}");
        }
    }

    fn review(target: &ScalableTargetId, current: ModelIdentity) -> Review {
        let plan = crate::plan::parse_plan(
            "t",
            &format!(
                "version = 1\n[[target]]\nresource_id = \"{target}\"\nmin_capacity = 1\nmax_capacity = 4\n"
            ),
        )
        .unwrap();
        let old = serving(&[&arn(8)]);
        super::super::build_review(super::super::ReviewInput {
            target: &plan.targets[0],
            at: t("2026-03-14T10:00:00Z"),
            trigger: "test".into(),
            endpoint_arn: None,
            tagged: false,
            previous_fingerprint: old.fingerprint(),
            previous: Some(old),
            current,
            policies: vec![],
            observed: None,
            decisions: vec![],
            samples: &[],
            gaps: vec![],
            lint: None,
        })
    }

    fn pending(target: &ScalableTargetId, version: u32) -> Review {
        pending_review(
            review(target, serving(&[&arn(version)])),
            PackageApproval {
                arn: arn(version),
                group: "chat-models".into(),
                version,
                approved_at: t("2026-03-14T10:00:00Z"),
                serving: arn(8),
            },
        )
    }

    fn target() -> ScalableTargetId {
        "endpoint/chat-prod/variant/AllTraffic".parse().unwrap()
    }

    #[test]
    fn one_pending_review_per_target_and_version_distinct_from_rollout_ids() {
        let (a, b) = (
            target(),
            "endpoint/chat-prod/variant/Canary".parse().unwrap(),
        );
        let id = pending_review_id(&a, &arn(9));
        assert_eq!(id, pending_review_id(&a, &arn(9)));
        assert_ne!(id, pending_review_id(&a, &arn(10)));
        assert_ne!(id, pending_review_id(&b, &arn(9)));
        assert!(id.starts_with("rv-") && id.len() == 15, "{id}");
        let r = pending(&a, 9);
        assert_eq!((r.id.clone(), r.status), (id, ReviewStatus::Pending));
        assert_ne!(r.id, review_id(&a, &r.fingerprint));
        assert!(r.is_approval() && !r.tagged);
    }

    #[test]
    fn a_stored_pending_review_is_never_rewritten_by_an_approval() {
        let fresh = pending(&target(), 9);
        assert!(matches!(
            decide_pending(None, fresh.clone()),
            PendingDecision::Create(_)
        ));
        for status in [
            ReviewStatus::Pending,
            ReviewStatus::Acked,
            ReviewStatus::Superseded,
        ] {
            let stored = Review {
                revision: 1,
                status,
                ..fresh.clone()
            };
            assert_eq!(
                decide_pending(Some(stored.clone()), fresh.clone()),
                PendingDecision::Exists(stored),
                "{status:?}"
            );
        }
    }

    #[test]
    fn only_a_review_awaiting_its_rollout_is_withdrawn() {
        let id = target();
        let at = t("2026-03-14T12:00:00Z");
        let fresh = Review {
            revision: 1,
            ..pending(&id, 9)
        };
        let acked = Review {
            revision: 2,
            ..ack(&fresh, "ana", "fits", t("2026-03-14T11:00:00Z")).unwrap()
        };
        for open in [fresh.clone(), acked] {
            let closed = withdraw(&open, "Rejected", at).expect("withdrawn");
            assert_eq!(closed.status, ReviewStatus::Withdrawn);
            assert_eq!(
                closed.withdrawn,
                Some(Withdrawal {
                    status: "Rejected".into(),
                    at
                })
            );
            assert_eq!(
                closed.revision, open.revision,
                "conditional on the revision read"
            );
            assert_eq!(closed.ack, open.ack, "the acknowledgement is kept");
        }
        let superseded = Review {
            status: ReviewStatus::Superseded,
            superseded_by: Some("rv-000000000001".into()),
            ..fresh.clone()
        };
        let withdrawn = withdraw(&fresh, "Rejected", at).unwrap();
        let rollout = review(&id, serving(&[&arn(9)]));
        for (case, stored) in [
            ("superseded by its rollout", superseded),
            ("withdrawn already", withdrawn),
            ("a rollout's review", rollout),
        ] {
            assert_eq!(withdraw(&stored, "Rejected", at), None, "{case}");
        }
    }

    /// `review` with its approval at `at`.
    fn approved_at(review: Review, at: &str) -> Review {
        let mut r = review;
        if let Some(p) = r.package.as_mut() {
            p.approved_at = t(at);
        }
        r
    }

    #[test]
    fn events_are_judged_by_their_times_not_their_arrival() {
        // GIVEN a pending review of an approval at 10:00
        let stored = pending(&target(), 9);
        // A rejection from before that approval (delivered late) withdraws nothing.
        assert_eq!(
            withdraw(&stored, "Rejected", t("2026-03-14T09:59:00Z")),
            None
        );
        assert!(withdraw(&stored, "Rejected", t("2026-03-14T10:00:00Z")).is_some());
        // GIVEN it was withdrawn at 12:00
        let withdrawn = withdraw(&stored, "Rejected", t("2026-03-14T12:00:00Z")).unwrap();
        // The 10:00 approval redelivered, or one at the same instant, renews nothing.
        for at in ["2026-03-14T10:00:00Z", "2026-03-14T12:00:00Z"] {
            let again = approved_at(pending(&target(), 9), at);
            assert_eq!(
                decide_pending(Some(withdrawn.clone()), again),
                PendingDecision::Exists(withdrawn.clone()),
                "{at}"
            );
        }
        let later = approved_at(pending(&target(), 9), "2026-03-14T12:00:01Z");
        assert!(matches!(
            decide_pending(Some(withdrawn), later),
            PendingDecision::Renew(_)
        ));
    }

    #[test]
    fn an_approval_after_a_withdrawal_renews_the_review() {
        let fresh = approved_at(pending(&target(), 9), "2026-03-14T13:00:00Z");
        let acked = ack(
            &pending(&target(), 9),
            "ana",
            "fits",
            t("2026-03-14T11:00:00Z"),
        )
        .unwrap();
        let withdrawn = Review {
            revision: 3,
            ..withdraw(&acked, "Rejected", t("2026-03-14T12:00:00Z")).unwrap()
        };
        let PendingDecision::Renew(renewed) = decide_pending(Some(withdrawn), fresh.clone()) else {
            panic!("renewed");
        };
        assert_eq!(
            (renewed.status, renewed.revision, renewed.occurrences),
            (ReviewStatus::Pending, 3, 2)
        );
        assert!(renewed.withdrawn.is_none() && renewed.ack.is_none());
        assert_eq!(
            renewed.earlier_acks.len(),
            1,
            "the old acknowledgement is kept"
        );
    }

    #[test]
    fn a_rollout_takes_over_its_package_and_supersedes_every_pending_review() {
        let id = target();
        let v9 = pending(&id, 9);
        let v10 = Review {
            revision: 2,
            ..ack(&pending(&id, 10), "ana", "fits", t("2026-03-14T11:00:00Z")).unwrap()
        };
        let closed = Review {
            status: ReviewStatus::Superseded,
            superseded_by: Some("rv-000000000001".into()),
            ..pending(&id, 7)
        };
        let stored = vec![v9.clone(), v10.clone(), closed];
        // GIVEN v9 rolls out
        let mut rollout = review(&id, serving(&[&arn(9)]));
        link_rollout(&mut rollout, &stored);
        assert_eq!(rollout.pending_review, Some(v9.id.clone()));
        assert_eq!(rollout.package, v9.package);
        assert_eq!(
            rollout.status,
            ReviewStatus::Open,
            "the rollout's review opens"
        );
        assert!(!rollout.is_approval());
        let done = supersede(&stored, &rollout.id);
        let ids: Vec<(&ReviewId, ReviewStatus, Option<&ReviewId>)> = done
            .iter()
            .map(|r| (&r.id, r.status, r.superseded_by.as_ref()))
            .collect();
        assert_eq!(
            ids,
            vec![
                (&v9.id, ReviewStatus::Superseded, Some(&rollout.id)),
                (&v10.id, ReviewStatus::Superseded, Some(&rollout.id)),
            ],
            "the already superseded one is left alone"
        );
        assert_eq!(done[1].revision, 2, "conditional on the revision read");
        assert!(done[1].ack.is_some(), "the acknowledgement is kept");
        // The rollout's own review is never superseded, nor linked again.
        let again = supersede(&[rollout.clone()], &rollout.id);
        assert!(again.is_empty());
    }

    #[test]
    fn a_rollout_of_a_model_without_a_package_links_nothing() {
        let id = target();
        let stored = vec![pending(&id, 9)];
        let mut rollout = review(&id, serving(&[]));
        link_rollout(&mut rollout, &stored);
        assert_eq!((rollout.package, rollout.pending_review), (None, None));
        assert_eq!(supersede(&stored, &rollout.id).len(), 1);
    }

    #[test]
    fn a_superseded_review_cannot_be_acknowledged() {
        let r = Review {
            status: ReviewStatus::Superseded,
            ..pending(&target(), 9)
        };
        let err = ack(&r, "ana", "ok", t("2026-03-14T11:00:00Z")).unwrap_err();
        assert!(err.to_string().contains("superseded"), "{err}");
    }
}
