//! Measuring how long new capacity really takes, as `LeadSample`s in the target state (pure: the
//! handler passes what it read). Two sources measure it:
//!
//! - **AAS scaling activities** (here): a successful scale-out's start (the decision: an alarm
//!   fired, or headroom raised MinCapacity) to its end (SageMaker reports the capacity in
//!   service).
//! - **Endpoint state transitions** (`endpoint_transitions.rs`): `UPDATING` (or `CREATING`) to
//!   `IN_SERVICE` when the variant's desired count grew under the same model.
//!
//! Both sources may see the same scale-out; a sample whose start and end fall within
//! [`SAME_SCALE_OUT`] of one already kept is the same scale-out and is not counted twice.

use crate::deploy_ports::{ActivityStatus, ScalingActivity};
use crate::identity::ModelHistory;
use crate::model::{is_plausible, LeadSample, SampleSource, LEAD_SAMPLES_KEPT};
use chrono::{DateTime, Duration, Utc};

/// Two samples whose starts and ends are this close measure the same scale-out.
pub const SAME_SCALE_OUT: Duration = Duration::seconds(120);

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
            if is_plausible(a.started_at, end) {
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
            model: models.at(end).cloned(),
            source: SampleSource::AasActivity,
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
    crate::newest::keep_newest(kept, LEAD_SAMPLES_KEPT);
    added
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
        models.record(&"m1-old".into(), t("2026-03-01T00:00:00Z"));
        models.record(&"m1-new".into(), t("2026-03-14T11:30:00Z"));
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
        assert!(samples
            .iter()
            .all(|s| s.source == SampleSource::AasActivity));
    }

    fn sample(end: &str, secs: i64, source: SampleSource) -> LeadSample {
        LeadSample {
            ended_at: t(end),
            seconds: secs,
            model: Some("m1-a".into()),
            source,
        }
    }

    #[test]
    fn merging_deduplicates_and_bounds_the_history() {
        let mut kept = vec![sample(
            "2026-03-14T10:06:00Z",
            360,
            SampleSource::AasActivity,
        )];
        // The same activity read again, and the endpoint's view of the same scale-out.
        let added = merge_samples(
            &mut kept,
            [
                sample("2026-03-14T10:06:00Z", 360, SampleSource::AasActivity),
                sample("2026-03-14T10:06:40Z", 380, SampleSource::EndpointState),
                sample("2026-03-14T12:07:00Z", 420, SampleSource::EndpointState),
            ],
        );
        assert_eq!(added, 1);
        assert_eq!(kept.len(), 2);
        let base = t("2026-03-15T00:00:00Z");
        let many = (0..80).map(|i| LeadSample {
            ended_at: base + Duration::hours(i),
            seconds: 300 + i,
            model: None,
            source: SampleSource::AasActivity,
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
        let old = sample("2026-03-01T00:00:00Z", 500, SampleSource::AasActivity);
        assert_eq!(merge_samples(&mut kept, [old]), 0);
        assert_eq!(kept.len(), LEAD_SAMPLES_KEPT);
    }
}
