//! Nothing stored is lost on upgrade (issue 10, item 5). `fixtures/state-v-before.json` is a
//! target state exactly as d96561e serialized it for the DynamoDB item's `body`, with every
//! feature's data present: the deployment watcher's model history and endpoint transition and
//! the alarm automation's last-ALARM instants and routed metrics in the old `notes` map, alarm
//! mark states and lead-sample sources as strings, and a notes key no build of today knows.

mod common;

use chrono::{DateTime, Duration, Utc};
use common::t;
use headroom_core::alarms::{derive_claim, AlarmRole};
use headroom_core::claim::ClaimSource;
use headroom_core::endpoint_status::EndpointStatus;
use headroom_core::forecast::schedule_review::Verdict;
use headroom_core::model::{AlarmState, ModelFingerprint, SampleSource};
use headroom_core::plan::{parse_plan, TargetPlan};
use headroom_core::state::{AlarmFacts, TargetState};
use serde_json::{json, Value};

const BEFORE: &str = include_str!("fixtures/state-v-before.json");

fn old_state() -> TargetState {
    serde_json::from_str(BEFORE).expect("a state stored by d96561e loads")
}

fn fp(s: &str) -> ModelFingerprint {
    ModelFingerprint::from(s)
}

/// The fixture's target, with a guard that listens to `InvocationsPerInstance` by metric only:
/// the alarm `unnamed-burst` counts for it only through the metric recorded with its mark.
fn metric_guard() -> TargetPlan {
    parse_plan(
        "upgrade.toml",
        r#"
version = 1
[[target]]
resource_id = "endpoint/chat/variant/AllTraffic"
min_capacity = 1
max_capacity = 12
  [target.guard]
  metrics = ["InvocationsPerInstance"]
  hold = "20m"
  max_duration = "6h"
"#,
    )
    .expect("valid plan")
    .targets
    .remove(0)
}

#[test]
fn a_state_stored_before_the_typed_sub_states_loads_with_every_fact() {
    // GIVEN the state as d96561e stored it; WHEN it loads
    let s = old_state();

    // THEN the fields that were always typed hold what they held
    assert_eq!(s.version, 41);
    let claims: Vec<(String, u32)> = s
        .claims
        .iter()
        .map(|c| (c.source.to_string(), c.floor))
        .collect();
    assert_eq!(
        claims,
        [
            ("peak:launch@20260314T100000Z".to_owned(), 4),
            ("guard".to_owned(), 6),
            ("wake".to_owned(), 2),
            ("manual".to_owned(), 3)
        ]
    );
    assert_eq!(
        s.pause.as_ref().map(|p| p.reason.as_str()),
        Some("maintenance")
    );
    assert_eq!(s.last_applied.map(|b| (b.min, b.max)), Some((2, 12)));
    assert_eq!(s.earlier_applied.len(), 1);
    assert_eq!(s.drift.as_ref().map(|d| d.observed.min), Some(5));
    let at_nine = t("2026-03-14T09:00:00Z");
    assert!(s.has_seen("peak:launch:1773482400:1773486000:4", at_nine));
    assert!(s.has_seen(
        "alarm:arn:aws:cloudwatch:us-east-1:123456789012:alarm:burst:ALARM:1773478800000",
        at_nine
    ));
    assert_eq!(s.high_water, Some(6));
    assert_eq!(s.wake_pending_since, Some(t("2026-03-14T09:05:00Z")));
    assert_eq!(s.wake_latencies.first().map(|w| w.seconds), Some(420));
    assert_eq!(s.model, Some(fp("m1-00000000000000b8")));
    let forecast = s.forecast.as_ref().expect("the forecast");
    assert_eq!(forecast.slots.first().map(|x| x.floor), Some(3));
    assert_eq!(forecast.score.under_minutes, 7);
    assert_eq!(
        forecast.schedule.first().map(|r| r.verdict),
        Some(Verdict::Shifted)
    );
    assert_eq!(
        s.pending_log.first().map(|e| e.body["trigger"].clone()),
        Some(json!("tick"))
    );
    assert_eq!(
        s.last_error.as_ref().and_then(|e| e.code.as_deref()),
        Some("ThrottlingException")
    );

    // AND the formerly stringly fields are typed
    let marks: Vec<(&str, AlarmState, DateTime<Utc>)> = s
        .alarm_marks
        .iter()
        .map(|(name, m)| (name.as_str(), m.state, m.at))
        .collect();
    assert_eq!(
        marks,
        [
            ("backlog", AlarmState::Alarm, t("2026-03-14T09:05:00Z")),
            ("burst", AlarmState::Alarm, t("2026-03-14T09:00:00Z")),
            (
                "unnamed-burst",
                AlarmState::Ok,
                t("2026-03-14T09:20:00.250Z")
            ),
        ]
    );
    let samples: Vec<(i64, Option<&str>, SampleSource)> = s
        .lead_samples
        .iter()
        .map(|x| (x.seconds, x.model.as_deref(), x.source))
        .collect();
    assert_eq!(
        samples,
        [
            (360, Some("m1-00000000000000a7"), SampleSource::AasActivity),
            (
                402,
                Some("m1-00000000000000b8"),
                SampleSource::EndpointState
            ),
            (300, None, SampleSource::AasActivity),
        ]
    );

    // AND what the notes map held is in the typed sub-states
    let last: Vec<(&str, DateTime<Utc>)> = s
        .alarm_facts
        .last_in_alarm
        .iter()
        .map(|(name, at)| (name.as_str(), *at))
        .collect();
    assert_eq!(
        last,
        [
            ("backlog", t("2026-03-14T09:05:00Z")),
            ("burst", t("2026-03-14T09:00:00Z")),
            ("unnamed-burst", t("2026-03-14T09:20:00.250Z")),
        ]
    );
    assert_eq!(
        s.alarm_facts.metric("unnamed-burst"),
        Some("InvocationsPerInstance")
    );
    assert_eq!(s.alarm_facts.metric.len(), 1);
    let eras: Vec<(&str, DateTime<Utc>)> = s
        .deploy
        .models
        .entries
        .iter()
        .map(|e| (e.fingerprint.as_str(), e.since))
        .collect();
    assert_eq!(
        eras,
        [
            ("m1-00000000000000a7", t("2026-03-01T00:00:00Z")),
            ("m1-00000000000000b8", t("2026-03-12T08:00:00Z")),
        ]
    );
    let pending = s
        .deploy
        .transition
        .pending
        .as_ref()
        .expect("a pending phase");
    assert_eq!(
        (
            pending.since,
            pending.count_before,
            pending.model_before.as_deref()
        ),
        (
            t("2026-03-14T08:00:00Z"),
            Some(2),
            Some("m1-00000000000000b8")
        )
    );
    let in_service = s.deploy.transition.in_service.as_ref().expect("in service");
    assert_eq!(
        (in_service.at, in_service.count),
        (t("2026-03-14T07:00:00Z"), Some(2))
    );

    // AND the key no feature knows is kept as found, alone
    assert_eq!(
        s.unrecognised_notes.keys().collect::<Vec<_>>(),
        ["x.future"]
    );
    assert_eq!(s.unrecognised_notes["x.future"], json!({"kept": [1, 2]}));
}

#[test]
fn the_lifted_facts_still_drive_the_rules() {
    // GIVEN the old state loaded
    let s = old_state();

    // THEN the guard still recognises the metric-routed alarm by the metric recorded with its
    // mark, and holds from its last ALARM instant: cleared at 09:20:00.250, held for 20 minutes
    let guard = derive_claim(&metric_guard(), AlarmRole::Guard, &s).expect("a guard claim");
    assert_eq!(guard.source, ClaimSource::Guard);
    assert_eq!(guard.floor, 6, "the high-water mark");
    assert_eq!(
        guard.full_until,
        t("2026-03-14T09:20:00.250Z") + Duration::minutes(20)
    );
    // (without those facts the alarm would not count at all)
    let forgotten = TargetState {
        alarm_facts: AlarmFacts::default(),
        ..s.clone()
    };
    assert_eq!(
        derive_claim(&metric_guard(), AlarmRole::Guard, &forgotten),
        None
    );

    // AND the model history attributes instants to the model then in force
    assert_eq!(
        s.deploy.models.at(t("2026-03-05T00:00:00Z")),
        Some(&fp("m1-00000000000000a7"))
    );
    assert_eq!(
        s.deploy.models.at(t("2026-03-13T00:00:00Z")),
        Some(&fp("m1-00000000000000b8"))
    );

    // AND the update pending since 08:00 (2 instances) ends in a sample when 4 are in service
    let mut transition = s.deploy.transition.clone();
    let sample = transition
        .observe(
            &EndpointStatus::InService,
            t("2026-03-14T08:06:42Z"),
            Some(4),
            s.model.as_ref(),
        )
        .expect("a scale-out sample");
    assert_eq!(
        (sample.seconds, sample.source),
        (402, SampleSource::EndpointState)
    );
}

#[test]
fn the_fields_that_kept_their_shape_are_stored_exactly_as_before() {
    // GIVEN the old state loaded; WHEN this version stores it again
    let before: Value = serde_json::from_str(BEFORE).expect("JSON");
    let after = serde_json::to_value(old_state()).expect("serializes");

    // THEN every field but the notes map has the very same JSON (alarm mark states, sample
    // sources and fingerprints included), so an older reader still understands them
    let Value::Object(before) = before else {
        panic!("the fixture is an object")
    };
    for (key, value) in &before {
        if key != "notes" {
            assert_eq!(&after[key], value, "{key}");
        }
    }
    // AND the notes map holds only what no feature knows; the rest has its own fields
    assert_eq!(after["notes"], json!({"x.future": {"kept": [1, 2]}}));
    assert_eq!(
        after["deploy"]["models"], before["notes"]["deploy.models"],
        "the model history keeps its shape"
    );
    assert_eq!(
        after["deploy"]["transition"],
        before["notes"]["deploy.transition"]
    );
    assert_eq!(
        after["alarm_facts"]["metric"],
        before["notes"]["alarm_metric"]
    );
}

#[test]
fn a_state_written_by_this_version_round_trips() {
    // GIVEN the old state loaded and stored again by this version
    let upgraded = old_state();
    let text = serde_json::to_string(&upgraded).expect("serializes");

    // WHEN that is loaded
    let again: TargetState = serde_json::from_str(&text).expect("loads");

    // THEN it is the same state, and storing it again writes the same bytes
    assert_eq!(again, upgraded);
    assert_eq!(serde_json::to_string(&again).expect("serializes"), text);
}

#[test]
fn an_old_note_that_does_not_parse_is_kept_as_found() {
    // GIVEN notes of today's keys, one model history that is not one, and one alarm whose
    // last ALARM instant is not a time beside one whose is
    let stored = json!({
        "version": 2,
        "notes": {
            "deploy.models": "not a history",
            "alarm_last_in_alarm": {
                "burst": "2026-03-14T09:00:00.000Z",
                "garbled": "yesterday"
            }
        }
    });

    // WHEN it loads
    let s: TargetState = serde_json::from_value(stored).expect("loads");

    // THEN what parses is lifted, and what does not stays in the map as it was
    assert_eq!(
        s.alarm_facts.last_in_alarm("burst"),
        Some(t("2026-03-14T09:00:00Z"))
    );
    assert_eq!(s.alarm_facts.last_in_alarm("garbled"), None);
    assert!(s.deploy.models.is_empty());
    assert_eq!(
        serde_json::to_value(&s.unrecognised_notes).expect("serializes"),
        json!({
            "deploy.models": "not a history",
            "alarm_last_in_alarm": {"garbled": "yesterday"}
        })
    );
}

#[test]
fn a_typed_fact_stands_over_an_old_note_of_the_same_kind() {
    // GIVEN a state that has both (a downgrade wrote notes, an upgrade kept the typed fields):
    // a typed model history and an old one, and two last-ALARM instants of one alarm
    let stored = json!({
        "deploy": {"models": {"entries": [{"fingerprint": "m1-new", "since": "2026-03-12T00:00:00Z"}]}},
        "alarm_facts": {"last_in_alarm": {"burst": "2026-03-14T09:00:00Z"}},
        "notes": {
            "deploy.models": {"entries": [{"fingerprint": "m1-old", "since": "2026-03-01T00:00:00Z"}]},
            "alarm_last_in_alarm": {"burst": "2026-03-14T10:00:00.000Z"}
        }
    });

    // WHEN it loads
    let s: TargetState = serde_json::from_value(stored).expect("loads");

    // THEN the typed history stands, and the last ALARM instant is the later one (it only
    // ever moves forward)
    assert_eq!(
        s.deploy.models.at(t("2026-03-14T00:00:00Z")),
        Some(&fp("m1-new"))
    );
    assert_eq!(s.deploy.models.entries.len(), 1);
    assert_eq!(
        s.alarm_facts.last_in_alarm("burst"),
        Some(t("2026-03-14T10:00:00Z"))
    );
    assert!(s.unrecognised_notes.is_empty());
}

#[test]
fn a_state_stored_before_the_insufficient_data_fallback_loads_and_keeps_its_own_floor() {
    // GIVEN a state as e1adda6 stored it: the burst alarm went from ALARM to INSUFFICIENT_DATA
    // at 09:30, with no desired count recorded beside it (the field did not exist)
    let old = r#"{
        "version": 3,
        "claims": [],
        "alarm_marks": {"burst": {"state": "INSUFFICIENT_DATA", "at": "2026-03-14T09:30:00Z"}},
        "alarm_facts": {"last_in_alarm": {"burst": "2026-03-14T09:30:00Z"}},
        "high_water": 6
    }"#;
    // WHEN it loads
    let s: TargetState = serde_json::from_str(old).expect("an item from before the fallback loads");
    // THEN there is no count, and the default fallback keeps the high-water mark for
    // keep_for (30m), then the hold (20m)
    assert!(s.alarm_facts.no_data_count.is_empty());
    let target = parse_plan(
        "named.toml",
        "version = 1\n[[target]]\nresource_id = \"endpoint/chat/variant/AllTraffic\"\n\
         min_capacity = 1\nmax_capacity = 12\n[target.guard]\nalarms = [\"burst\"]\nhold = \"20m\"\n",
    )
    .expect("valid plan")
    .targets
    .remove(0);
    let guard = derive_claim(&target, AlarmRole::Guard, &s).expect("a guard claim");
    assert_eq!(
        (guard.floor, guard.full_until),
        (6, t("2026-03-14T10:20:00Z"))
    );
    // AND an item without the count is stored without the field, as before
    let text = serde_json::to_string(&s).expect("serializes");
    assert!(!text.contains("no_data_count"), "{text}");
    // AND one with a count round-trips
    let mut with = s.clone();
    with.alarm_facts
        .record_no_data_count(&"burst".into(), t("2026-03-14T09:30:00Z"), 9);
    let text = serde_json::to_string(&with).expect("serializes");
    let again: TargetState = serde_json::from_str(&text).expect("loads");
    assert_eq!(again, with);
    assert_eq!(
        derive_claim(&target, AlarmRole::Guard, &again).map(|c| c.floor),
        Some(9)
    );
}

/// A policy review as stored before pending reviews existed (no `package`, `pending_review` nor
/// `superseded_by`), acknowledged: it loads as it was, is no approval review, and a rollout
/// supersedes nothing of it.
#[test]
fn a_review_stored_before_pending_reviews_loads_and_is_left_alone_by_a_rollout() {
    use headroom_core::review::package::supersede;
    use headroom_core::review::{Review, ReviewStatus};
    let stored = json!({
        "id": "rv-0a1b2c3d4e5f",
        "revision": 2,
        "target": "endpoint/chat/variant/AllTraffic",
        "status": "acked",
        "opened_at": "2026-03-14T09:12:00Z",
        "trigger": "sagemaker:SageMaker Endpoint State Change:IN_SERVICE",
        "endpoint": "chat",
        "tagged": true,
        "previous_fingerprint": "m1-00000000000000a7",
        "fingerprint": "m1-00000000000000a8",
        "current": {
            "endpoint": "chat",
            "model_name": "chat-v8",
            "containers": [{"image": "img", "model_package": "arn:aws:sagemaker:us-east-1:123456789012:model-package/chat/8"}],
            "observed_at": "2026-03-14T09:12:00Z"
        },
        "policies": [],
        "bounds": {"plan_min": 1, "plan_max": 12, "observed": null},
        "recent_decisions": [],
        "warmup": {"samples": 0, "p50_s": null, "p90_s": null, "max_s": null, "lead_time_s": 900,
                   "lead_time_source": "configured", "lead_time_detail": "plan lead_time 15m"},
        "ack": {"at": "2026-03-14T10:00:00Z", "by": "ana", "note": "fits"},
        "occurrences": 1
    });
    let review: Review = serde_json::from_value(stored.clone()).expect("an old review loads");
    assert_eq!(review.status, ReviewStatus::Acked);
    assert_eq!(
        (
            &review.package,
            &review.pending_review,
            &review.superseded_by
        ),
        (&None, &None, &None)
    );
    assert!(!review.is_approval());
    assert!(supersede(std::slice::from_ref(&review), &"rv-ffffffffffff".into()).is_empty());
    // Written again, it gains no field it did not have.
    let back = serde_json::to_value(&review).expect("serializes");
    for field in ["package", "pending_review", "superseded_by"] {
        assert!(back.get(field).is_none(), "{field}");
    }
}
