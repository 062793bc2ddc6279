//! Measuring how long new capacity really takes, from two sources, as `LeadSample`s in the
//! target state (pure: the handler passes what it read).
//!
//! - **AAS scaling activities**: a successful scale-out's start (the decision: an alarm fired, or
//!   headroom raised MinCapacity) to its end (SageMaker reports the capacity in service).
//! - **Endpoint state transitions**: `UPDATING` (or `CREATING`) to `IN_SERVICE` when the
//!   variant's desired count grew under the same model. A deployment of a new model is *not* a
//!   sample: blue/green rollouts include baking and traffic shifting, which say nothing about how
//!   fast the variant scales.
//!
//! Both sources may see the same scale-out; a sample whose start and end fall within
//! [`SAME_SCALE_OUT`] of one already kept is the same scale-out and is not counted twice.

use crate::deploy_ports::{ActivityStatus, ScalingActivity};
use crate::endpoint_status::EndpointStatus;
use crate::identity::ModelHistory;
use crate::state::LeadSample;
use chrono::{DateTime, Duration, Utc};
use serde::{Deserialize, Serialize};

/// Samples kept per target, newest by end time.
pub const LEAD_SAMPLES_KEPT: usize = 50;
pub const SOURCE_ACTIVITY: &str = "aas-activity";
pub const SOURCE_ENDPOINT: &str = "endpoint-state";
/// Longer than this is an endpoint stuck or a lost event, not a measurement.
pub const LONGEST_SAMPLE: Duration = Duration::hours(6);
/// Two samples whose starts and ends are this close measure the same scale-out.
pub const SAME_SCALE_OUT: Duration = Duration::seconds(120);
/// The notes key of the transition bookkeeping in `TargetState.notes`.
pub const TRANSITION_NOTE: &str = "deploy.transition";

/// The desired count an activity set: "Setting desired instance count to 6." -> 6 (also "copy
/// count" for inference components).
pub fn desired_count(description: &str) -> Option<u32> {
    let (_, tail) = description.rsplit_once(" to ")?;
    let digits: String = tail
        .trim()
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    digits.parse().ok()
}

/// Whether an activity's cause says it adds capacity, for the oldest activity in view (whose
/// predecessor is unknown).
fn cause_adds_capacity(cause: &str) -> bool {
    let c = cause.to_ascii_lowercase();
    c.contains("alarmhigh")
        || c.contains("minimum capacity was set")
        || c.contains("scale out")
        || c.contains("scale-out")
}

fn plausible(started: DateTime<Utc>, ended: DateTime<Utc>) -> bool {
    ended > started && ended - started <= LONGEST_SAMPLE
}

/// The successful scale-outs among `activities` (any order), as (start, end), oldest first. An
/// activity is a scale-out when it set a larger count than the previous successful one.
pub fn scale_outs(activities: &[ScalingActivity]) -> Vec<(DateTime<Utc>, DateTime<Utc>)> {
    let mut sorted: Vec<&ScalingActivity> = activities.iter().collect();
    sorted.sort_by_key(|a| a.started_at);
    let mut previous: Option<u32> = None;
    let mut out = Vec::new();
    for a in sorted {
        if a.status != ActivityStatus::Successful {
            continue;
        }
        let count = desired_count(&a.description);
        let grows = match (previous, count) {
            (Some(p), Some(n)) => n > p,
            _ => cause_adds_capacity(&a.cause),
        };
        if let (true, Some(end)) = (grows, a.ended_at) {
            if plausible(a.started_at, end) {
                out.push((a.started_at, end));
            }
        }
        if count.is_some() {
            previous = count;
        }
    }
    out
}

/// Samples from AAS activities, each attributed to the model in force when it ended.
pub fn activity_samples(activities: &[ScalingActivity], models: &ModelHistory) -> Vec<LeadSample> {
    scale_outs(activities)
        .into_iter()
        .map(|(start, end)| LeadSample {
            ended_at: end,
            seconds: (end - start).num_seconds(),
            model: models.at(end).map(str::to_owned),
            source: SOURCE_ACTIVITY.to_owned(),
        })
        .collect()
}

fn same_scale_out(a: &LeadSample, b: &LeadSample) -> bool {
    if a.source == b.source {
        return a.ended_at == b.ended_at;
    }
    let start = |s: &LeadSample| s.ended_at - Duration::seconds(s.seconds);
    (a.ended_at - b.ended_at).abs() <= SAME_SCALE_OUT
        && (start(a) - start(b)).abs() <= SAME_SCALE_OUT
}

/// Adds the samples not already kept; keeps the newest [`LEAD_SAMPLES_KEPT`], oldest first.
/// Returns how many were added.
pub fn merge_samples(
    kept: &mut Vec<LeadSample>,
    new: impl IntoIterator<Item = LeadSample>,
) -> usize {
    kept.sort_by_key(|s| s.ended_at);
    let mut added = 0;
    for sample in new {
        if sample.seconds <= 0 || kept.iter().any(|k| same_scale_out(k, &sample)) {
            continue;
        }
        // A full history does not take back what it already let go (AAS lists six weeks).
        if kept.len() >= LEAD_SAMPLES_KEPT
            && kept
                .first()
                .is_some_and(|oldest| sample.ended_at < oldest.ended_at)
        {
            continue;
        }
        kept.push(sample);
        added += 1;
    }
    kept.sort_by_key(|s| s.ended_at);
    if kept.len() > LEAD_SAMPLES_KEPT {
        let excess = kept.len() - LEAD_SAMPLES_KEPT;
        kept.drain(..excess);
    }
    added
}

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
    pub model_before: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct InServiceMark {
    pub at: DateTime<Utc>,
    pub count: Option<u32>,
}

impl Transitions {
    pub fn from_notes(notes: &std::collections::BTreeMap<String, serde_json::Value>) -> Self {
        notes
            .get(TRANSITION_NOTE)
            .and_then(|v| serde_json::from_value(v.clone()).ok())
            .unwrap_or_default()
    }

    pub fn store(&self, notes: &mut std::collections::BTreeMap<String, serde_json::Value>) {
        if let Ok(v) = serde_json::to_value(self) {
            notes.insert(TRANSITION_NOTE.to_owned(), v);
        }
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
        model_now: Option<&str>,
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
                        model_before: model_now.map(str::to_owned),
                    });
                }
                None
            }
            EndpointStatus::InService if !stale => {
                let pending = self.pending.take();
                self.in_service = Some(InServiceMark { at, count: desired });
                let p = pending.filter(|p| plausible(p.since, at))?;
                let grew =
                    matches!((p.count_before, desired), (Some(before), Some(now)) if now > before);
                let same_model = p.model_before.as_deref() == model_now;
                (grew && same_model).then(|| LeadSample {
                    ended_at: at,
                    seconds: (at - p.since).num_seconds(),
                    model: model_now.map(str::to_owned),
                    source: SOURCE_ENDPOINT.to_owned(),
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

    fn activity(
        id: &str,
        start: &str,
        secs: i64,
        to: u32,
        cause: &str,
        status: ActivityStatus,
    ) -> ScalingActivity {
        ScalingActivity {
            id: id.into(),
            started_at: t(start),
            ended_at: Some(t(start) + Duration::seconds(secs)),
            status,
            description: format!("Setting desired instance count to {to}."),
            cause: cause.into(),
            message: None,
        }
    }

    const HIGH: &str = "monitor alarm TargetTracking-endpoint/chat-prod/variant/AllTraffic-AlarmHigh-1a2b in state ALARM triggered policy inv";
    const LOW: &str = "monitor alarm TargetTracking-endpoint/chat-prod/variant/AllTraffic-AlarmLow-3c4d in state ALARM triggered policy inv";

    #[test]
    fn reads_the_desired_count_from_descriptions() {
        assert_eq!(
            desired_count("Setting desired instance count to 6."),
            Some(6)
        );
        assert_eq!(desired_count("Setting desired copy count to 12."), Some(12));
        assert_eq!(
            desired_count("Setting desired instance count to six."),
            None
        );
        assert_eq!(desired_count("no number here"), None);
    }

    #[test]
    fn only_successful_scale_outs_count() {
        let acts = vec![
            // Newest first, as AAS returns them.
            activity(
                "a5",
                "2026-03-14T12:40:00Z",
                60,
                3,
                LOW,
                ActivityStatus::Successful,
            ),
            activity(
                "a4",
                "2026-03-14T12:20:00Z",
                330,
                4,
                HIGH,
                ActivityStatus::Failed,
            ),
            activity(
                "a3",
                "2026-03-14T12:00:00Z",
                420,
                4,
                "minimum capacity was set to 4",
                ActivityStatus::Successful,
            ),
            activity(
                "a2",
                "2026-03-14T11:00:00Z",
                90,
                2,
                LOW,
                ActivityStatus::Successful,
            ),
            activity(
                "a1",
                "2026-03-14T10:00:00Z",
                360,
                3,
                HIGH,
                ActivityStatus::Successful,
            ),
        ];
        let outs = scale_outs(&acts);
        let secs: Vec<i64> = outs.iter().map(|(s, e)| (*e - *s).num_seconds()).collect();
        // a1: the oldest in view, its cause says AlarmHigh; a2: 3 -> 2 is a scale-in; a3: 2 -> 4;
        // a4 failed; a5: 4 -> 3 is a scale-in.
        assert_eq!(secs, [360, 420]);
    }

    #[test]
    fn the_oldest_activity_is_judged_by_its_cause() {
        let acts = vec![activity(
            "a1",
            "2026-03-14T10:00:00Z",
            300,
            3,
            LOW,
            ActivityStatus::Successful,
        )];
        assert!(scale_outs(&acts).is_empty());
        let acts = vec![activity(
            "a1",
            "2026-03-14T10:00:00Z",
            300,
            3,
            HIGH,
            ActivityStatus::Successful,
        )];
        assert_eq!(scale_outs(&acts).len(), 1);
    }

    #[test]
    fn in_progress_and_implausible_activities_are_skipped() {
        let mut running = activity(
            "a1",
            "2026-03-14T10:00:00Z",
            300,
            3,
            HIGH,
            ActivityStatus::InProgress,
        );
        running.ended_at = None;
        let stuck = activity(
            "a2",
            "2026-03-14T11:00:00Z",
            7 * 3600,
            5,
            HIGH,
            ActivityStatus::Successful,
        );
        assert!(scale_outs(&[running, stuck]).is_empty());
    }

    #[test]
    fn activity_samples_belong_to_the_model_in_force_when_they_ended() {
        let mut models = ModelHistory::default();
        models.record("m1-old", t("2026-03-01T00:00:00Z"));
        models.record("m1-new", t("2026-03-14T11:30:00Z"));
        let acts = vec![
            activity(
                "a2",
                "2026-03-14T12:00:00Z",
                420,
                5,
                HIGH,
                ActivityStatus::Successful,
            ),
            activity(
                "a1",
                "2026-03-14T10:00:00Z",
                360,
                3,
                HIGH,
                ActivityStatus::Successful,
            ),
        ];
        let samples = activity_samples(&acts, &models);
        let got: Vec<(i64, Option<&str>)> = samples
            .iter()
            .map(|s| (s.seconds, s.model.as_deref()))
            .collect();
        assert_eq!(got, [(360, Some("m1-old")), (420, Some("m1-new"))]);
        assert!(samples.iter().all(|s| s.source == SOURCE_ACTIVITY));
    }

    fn sample(end: &str, secs: i64, source: &str) -> LeadSample {
        LeadSample {
            ended_at: t(end),
            seconds: secs,
            model: Some("m1-a".into()),
            source: source.into(),
        }
    }

    #[test]
    fn merging_deduplicates_and_bounds_the_history() {
        let mut kept = vec![sample("2026-03-14T10:06:00Z", 360, SOURCE_ACTIVITY)];
        // The same activity read again, and the endpoint's view of the same scale-out.
        let added = merge_samples(
            &mut kept,
            [
                sample("2026-03-14T10:06:00Z", 360, SOURCE_ACTIVITY),
                sample("2026-03-14T10:06:40Z", 380, SOURCE_ENDPOINT),
                sample("2026-03-14T12:07:00Z", 420, SOURCE_ENDPOINT),
            ],
        );
        assert_eq!(added, 1);
        assert_eq!(kept.len(), 2);
        let base = t("2026-03-15T00:00:00Z");
        let many = (0..80).map(|i| LeadSample {
            ended_at: base + Duration::hours(i),
            seconds: 300 + i,
            model: None,
            source: SOURCE_ACTIVITY.into(),
        });
        merge_samples(&mut kept, many);
        assert_eq!(kept.len(), LEAD_SAMPLES_KEPT);
        assert_eq!(
            kept.last().map(|s| s.seconds),
            Some(379),
            "the newest are kept"
        );
        assert!(kept.windows(2).all(|w| w[0].ended_at <= w[1].ended_at));
        // Older than everything kept in a full history: not taken back.
        let old = sample("2026-03-01T00:00:00Z", 500, SOURCE_ACTIVITY);
        assert_eq!(merge_samples(&mut kept, [old]), 0);
        assert_eq!(kept.len(), LEAD_SAMPLES_KEPT);
    }

    #[test]
    fn updating_to_in_service_with_more_instances_is_a_sample() {
        let mut tr = Transitions::default();
        assert_eq!(
            tr.observe(
                &EndpointStatus::InService,
                t("2026-03-14T09:00:00Z"),
                Some(2),
                Some("m1-a")
            ),
            None
        );
        assert_eq!(
            tr.observe(
                &EndpointStatus::Updating,
                t("2026-03-14T10:00:00Z"),
                Some(4),
                Some("m1-a")
            ),
            None
        );
        // A duplicate UPDATING with a later time keeps the earlier start.
        assert_eq!(
            tr.observe(
                &EndpointStatus::Updating,
                t("2026-03-14T10:00:30Z"),
                Some(4),
                Some("m1-a")
            ),
            None
        );
        let s = tr
            .observe(
                &EndpointStatus::InService,
                t("2026-03-14T10:06:42Z"),
                Some(4),
                Some("m1-a"),
            )
            .expect("a scale-out sample");
        assert_eq!(s.seconds, 402);
        assert_eq!(s.source, SOURCE_ENDPOINT);
        assert_eq!(s.model.as_deref(), Some("m1-a"));
        // The second IN_SERVICE event of the same change: no second sample.
        assert_eq!(
            tr.observe(
                &EndpointStatus::InService,
                t("2026-03-14T10:06:42Z"),
                Some(4),
                Some("m1-a")
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
                Some("m1-a"),
            );
            tr.observe(
                &EndpointStatus::Updating,
                t("2026-03-14T10:00:00Z"),
                None,
                Some("m1-a"),
            );
            tr
        };
        // Scale-in: 4 -> 2.
        assert_eq!(
            base().observe(
                &EndpointStatus::InService,
                t("2026-03-14T10:05:00Z"),
                Some(2),
                Some("m1-a")
            ),
            None
        );
        // A new model rolled out (blue/green with baking): not a scaling measurement.
        assert_eq!(
            base().observe(
                &EndpointStatus::InService,
                t("2026-03-14T10:20:00Z"),
                Some(6),
                Some("m1-b")
            ),
            None
        );
        // Rolled back: the pending start is dropped.
        let mut tr = base();
        tr.observe(
            &EndpointStatus::RollingBack,
            t("2026-03-14T10:10:00Z"),
            None,
            Some("m1-a"),
        );
        assert_eq!(
            tr.observe(
                &EndpointStatus::InService,
                t("2026-03-14T10:15:00Z"),
                Some(6),
                Some("m1-a")
            ),
            None
        );
        // First sighting mid-update: the count before is unknown.
        let mut tr = Transitions::default();
        tr.observe(
            &EndpointStatus::Updating,
            t("2026-03-14T10:00:00Z"),
            Some(6),
            Some("m1-a"),
        );
        assert_eq!(
            tr.observe(
                &EndpointStatus::InService,
                t("2026-03-14T10:05:00Z"),
                Some(6),
                Some("m1-a")
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
            Some("m1-a"),
        );
        let s = tr.observe(
            &EndpointStatus::InService,
            t("2026-03-14T08:07:30Z"),
            Some(2),
            Some("m1-a"),
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
            Some("m1-a"),
        );
        let before = tr.clone();
        // An UPDATING older than the last IN_SERVICE arrives late.
        tr.observe(
            &EndpointStatus::Updating,
            t("2026-03-14T09:50:00Z"),
            Some(4),
            Some("m1-a"),
        );
        assert_eq!(tr, before);
        let mut notes = std::collections::BTreeMap::new();
        tr.store(&mut notes);
        assert_eq!(Transitions::from_notes(&notes), tr);
    }
}
