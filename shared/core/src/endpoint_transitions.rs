//! What the endpoint's state events tell about scale-outs: `UPDATING` (or `CREATING`) to
//! `IN_SERVICE` when the variant's desired count grew under the same model is a lead-time
//! sample. A deployment of a new model is *not* one: blue/green rollouts include baking and
//! traffic shifting, which say nothing about how fast the variant scales. The bookkeeping
//! between events ([`Transitions`]) is kept in the target state (`TargetState::deploy`); pure,
//! the deployment watcher passes what the event said.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::endpoint_status::EndpointStatus;
use crate::model::{is_plausible, LeadSample, ModelFingerprint, SampleSource};

/// What the endpoint-state events told so far, per target.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Transitions {
    /// Capacity is being provisioned since then.
    pub pending: Option<Pending>,
    /// The last time the endpoint was seen in service, with the variant's desired count.
    pub in_service: Option<InServiceMark>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Pending {
    pub since: DateTime<Utc>,
    /// The variant's count before (0 while creating; unknown if headroom never saw it in service).
    pub count_before: Option<u32>,
    pub model_before: Option<ModelFingerprint>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct InServiceMark {
    pub at: DateTime<Utc>,
    pub count: Option<u32>,
}

impl Transitions {
    pub fn is_empty(&self) -> bool {
        self.pending.is_none() && self.in_service.is_none()
    }

    /// Takes one endpoint status seen at `at` (the event's LastModifiedTime), with the variant's
    /// desired count then and the model in force now. Returns a sample when a provisioning
    /// phase ended with more capacity under the same model. Duplicates and stale events (older
    /// than what was already seen) change nothing.
    pub fn observe(
        &mut self,
        status: &EndpointStatus,
        at: DateTime<Utc>,
        desired: Option<u32>,
        model_now: Option<&ModelFingerprint>,
    ) -> Option<LeadSample> {
        let stale = self.in_service.as_ref().is_some_and(|m| at <= m.at);
        match status {
            EndpointStatus::Creating | EndpointStatus::Updating if !stale => {
                let count_before = if *status == EndpointStatus::Creating {
                    Some(0)
                } else {
                    self.in_service.as_ref().and_then(|m| m.count)
                };
                // Several events of one update: the earliest start wins.
                let keep = self.pending.as_ref().is_some_and(|p| p.since <= at);
                if !keep {
                    self.pending = Some(Pending {
                        since: at,
                        count_before,
                        model_before: model_now.cloned(),
                    });
                }
                None
            }
            EndpointStatus::InService if !stale => {
                let pending = self.pending.take();
                self.in_service = Some(InServiceMark { at, count: desired });
                let p = pending.filter(|p| is_plausible(p.since, at))?;
                let grew =
                    matches!((p.count_before, desired), (Some(before), Some(now)) if now > before);
                let same_model = p.model_before.as_ref() == model_now;
                (grew && same_model).then(|| LeadSample {
                    ended_at: at,
                    seconds: (at - p.since).num_seconds(),
                    model: model_now.cloned(),
                    source: SampleSource::EndpointState,
                })
            }
            // The change did not complete: nothing to measure.
            EndpointStatus::RollingBack
            | EndpointStatus::Failed
            | EndpointStatus::UpdateRollbackFailed
            | EndpointStatus::OutOfService
            | EndpointStatus::Deleting => {
                self.pending = None;
                None
            }
            // Maintenance (SYSTEM_UPDATING), statuses AWS adds later, and stale events.
            _ => None,
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // a test that cannot unwrap has failed
mod tests {
    use super::*;

    fn t(s: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(s).unwrap().with_timezone(&Utc)
    }

    #[test]
    fn updating_to_in_service_with_more_instances_is_a_sample() {
        let mut tr = Transitions::default();
        assert_eq!(
            tr.observe(
                &EndpointStatus::InService,
                t("2026-03-14T09:00:00Z"),
                Some(2),
                Some(&"m1-a".into())
            ),
            None
        );
        assert_eq!(
            tr.observe(
                &EndpointStatus::Updating,
                t("2026-03-14T10:00:00Z"),
                Some(4),
                Some(&"m1-a".into())
            ),
            None
        );
        // A duplicate UPDATING with a later time keeps the earlier start.
        assert_eq!(
            tr.observe(
                &EndpointStatus::Updating,
                t("2026-03-14T10:00:30Z"),
                Some(4),
                Some(&"m1-a".into())
            ),
            None
        );
        let s = tr
            .observe(
                &EndpointStatus::InService,
                t("2026-03-14T10:06:42Z"),
                Some(4),
                Some(&"m1-a".into()),
            )
            .expect("a scale-out sample");
        assert_eq!(s.seconds, 402);
        assert_eq!(s.source, SampleSource::EndpointState);
        assert_eq!(s.model.as_deref(), Some("m1-a"));
        // The second IN_SERVICE event of the same change: no second sample.
        assert_eq!(
            tr.observe(
                &EndpointStatus::InService,
                t("2026-03-14T10:06:42Z"),
                Some(4),
                Some(&"m1-a".into())
            ),
            None
        );
    }

    #[test]
    fn no_sample_for_scale_in_model_change_rollback_or_unknown_start() {
        let base = || {
            let mut tr = Transitions::default();
            tr.observe(
                &EndpointStatus::InService,
                t("2026-03-14T09:00:00Z"),
                Some(4),
                Some(&"m1-a".into()),
            );
            tr.observe(
                &EndpointStatus::Updating,
                t("2026-03-14T10:00:00Z"),
                None,
                Some(&"m1-a".into()),
            );
            tr
        };
        // Scale-in: 4 -> 2.
        assert_eq!(
            base().observe(
                &EndpointStatus::InService,
                t("2026-03-14T10:05:00Z"),
                Some(2),
                Some(&"m1-a".into())
            ),
            None
        );
        // A new model rolled out (blue/green with baking): not a scaling measurement.
        assert_eq!(
            base().observe(
                &EndpointStatus::InService,
                t("2026-03-14T10:20:00Z"),
                Some(6),
                Some(&"m1-b".into())
            ),
            None
        );
        // Rolled back: the pending start is dropped.
        let mut tr = base();
        tr.observe(
            &EndpointStatus::RollingBack,
            t("2026-03-14T10:10:00Z"),
            None,
            Some(&"m1-a".into()),
        );
        assert_eq!(
            tr.observe(
                &EndpointStatus::InService,
                t("2026-03-14T10:15:00Z"),
                Some(6),
                Some(&"m1-a".into())
            ),
            None
        );
        // First sighting mid-update: the count before is unknown.
        let mut tr = Transitions::default();
        tr.observe(
            &EndpointStatus::Updating,
            t("2026-03-14T10:00:00Z"),
            Some(6),
            Some(&"m1-a".into()),
        );
        assert_eq!(
            tr.observe(
                &EndpointStatus::InService,
                t("2026-03-14T10:05:00Z"),
                Some(6),
                Some(&"m1-a".into())
            ),
            None
        );
    }

    #[test]
    fn creating_to_in_service_measures_provisioning_from_zero() {
        let mut tr = Transitions::default();
        tr.observe(
            &EndpointStatus::Creating,
            t("2026-03-14T08:00:00Z"),
            Some(2),
            Some(&"m1-a".into()),
        );
        let s = tr.observe(
            &EndpointStatus::InService,
            t("2026-03-14T08:07:30Z"),
            Some(2),
            Some(&"m1-a".into()),
        );
        assert_eq!(s.map(|s| s.seconds), Some(450));
    }

    #[test]
    fn stale_events_change_nothing() {
        let mut tr = Transitions::default();
        tr.observe(
            &EndpointStatus::InService,
            t("2026-03-14T10:00:00Z"),
            Some(2),
            Some(&"m1-a".into()),
        );
        let before = tr.clone();
        // An UPDATING older than the last IN_SERVICE arrives late.
        tr.observe(
            &EndpointStatus::Updating,
            t("2026-03-14T09:50:00Z"),
            Some(4),
            Some(&"m1-a".into()),
        );
        assert_eq!(tr, before);
        let stored = serde_json::to_value(&tr).unwrap();
        assert_eq!(serde_json::from_value::<Transitions>(stored).unwrap(), tr);
    }
}
