//! What headroom remembers per target between invocations (stored in DynamoDB, or in memory in
//! the simulator). Later features add fields with `#[serde(default)]`, so older items still load;
//! each feature's facts have their own typed field (`alarm_facts.rs`, `deploy_facts.rs`), and
//! what earlier versions kept in a loose `notes` map is lifted into them as the state loads
//! (`upgrade.rs`).

mod alarm_facts;
mod deploy_facts;
mod upgrade;

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::claim::{Claim, ClaimSource};
use crate::ids::ScalableTargetId;
use crate::model::{AlarmName, Bounds, LeadSample, LogEntry, ModelFingerprint};

pub use alarm_facts::{AlarmFacts, AlarmMark, NoDataCount, ScaleOut};
pub use deploy_facts::DeployFacts;

/// How long an event's idempotency key is remembered. Duplicates arrive within minutes; a day
/// covers EventBridge's and Lambda's retry windows with room to spare.
pub const SEEN_EVENT_TTL_HOURS: i64 = 24;
/// At most this many keys are kept per target; the oldest go first.
pub const SEEN_EVENTS_KEPT: usize = 200;
/// How many earlier applied bounds are remembered (`TargetState::earlier_applied`).
pub const EARLIER_APPLIED_KEPT: usize = 4;

/// Serialized as derived; deserialized as derived and then upgraded (`upgrade::lift_notes`):
/// `remote = "Self"` makes the derives inherent functions, which the trait impls below call.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self")]
pub struct TargetState {
    /// Optimistic-concurrency version: 0 means never stored. Every save expects the version it
    /// read and stores version + 1.
    #[serde(default)]
    pub version: u64,
    #[serde(default)]
    pub claims: Vec<Claim>,
    #[serde(default)]
    pub pause: Option<Pause>,
    /// The bounds headroom last applied, to tell a hand edit (drift) from our own change.
    #[serde(default)]
    pub last_applied: Option<Bounds>,
    #[serde(default)]
    pub drift: Option<Drift>,
    /// Idempotency keys of events already applied to this target. Shared and copied on write:
    /// a target's state is cloned at every read and decision, and up to [`SEEN_EVENTS_KEPT`]
    /// keys change only when an event is applied or one expires.
    #[serde(default)]
    pub seen_events: std::sync::Arc<Vec<SeenEvent>>,
    /// Last transition applied per alarm name, to ignore stale and duplicate transitions.
    #[serde(default)]
    pub alarm_marks: BTreeMap<AlarmName, AlarmMark>,
    /// What the alarm automation keeps beside each mark (last ALARM instant, routed metric).
    #[serde(default, skip_serializing_if = "AlarmFacts::is_empty")]
    pub alarm_facts: AlarmFacts,
    /// Highest desired count seen while a guard alarm is in ALARM.
    #[serde(default)]
    pub high_water: Option<u32>,
    /// The floor the guard's newest scale-out asked for, while its alarm fires.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scale_out: Option<ScaleOut>,
    /// Wake latency bookkeeping: when the backlog alarm woke the target, and how long capacity
    /// took to be in service, most recent last.
    #[serde(default)]
    pub wake_pending_since: Option<DateTime<Utc>>,
    #[serde(default)]
    pub wake_latencies: Vec<WakeLatency>,
    /// Measured scale-out durations (the deployment watcher fills these).
    #[serde(default)]
    pub lead_samples: Vec<LeadSample>,
    /// Fingerprint of the model identity in force (the deployment watcher keeps it current).
    #[serde(default)]
    pub model: Option<ModelFingerprint>,
    /// The deployment watcher's bookkeeping: model history and endpoint transitions.
    #[serde(default, skip_serializing_if = "DeployFacts::is_empty")]
    pub deploy: DeployFacts,
    /// The demand forecast's upcoming slots and score (`forecast/`), refreshed hourly.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub forecast: Option<std::sync::Arc<crate::forecast::ForecastState>>,
    /// Bounds headroom stored before `last_applied`, and those AAS held when headroom changed
    /// them, newest last (at most [`EARLIER_APPLIED_KEPT`]). The state is written before AAS is
    /// called, so AAS may still show one of them (a register that failed, or a slow one that
    /// landed late): that is headroom's own doing, re-applied, never reported as drift. (A hand
    /// edit to exactly one of them is restored all the same, only without a drift record.)
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub earlier_applied: Vec<Bounds>,
    /// Decision-log records stored with the state write that applied their decision, until
    /// they are appended to the log: a run that finds one here (an append that failed) appends
    /// it (the same entry again is the same record) and clears it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pending_log: Vec<LogEntry>,
    /// The entries of the `notes` map earlier versions kept feature facts in that this version
    /// does not know, as found. Nothing writes here: a known entry is moved into its typed field
    /// as the state loads (`upgrade.rs`); an unknown one (from a newer build, or one that does
    /// not parse) is kept and stored again, so no stored fact is lost.
    #[serde(default, rename = "notes", skip_serializing_if = "BTreeMap::is_empty")]
    pub unrecognised_notes: BTreeMap<String, serde_json::Value>,
    /// The tick's last failure on this target, until a reconcile succeeds again (`decide` clears
    /// it): `headroom status` shows it instead of "will change at the next reconcile" forever.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_error: Option<LastError>,
}

impl Serialize for TargetState {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        TargetState::serialize(self, serializer)
    }
}

impl<'de> Deserialize<'de> for TargetState {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let mut state = TargetState::deserialize(deserializer)?;
        upgrade::lift_notes(&mut state);
        Ok(state)
    }
}

/// A failure that keeps a target from converging, and since when it has failed that way.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LastError {
    /// The first failure with this message; a different message starts again.
    pub since: DateTime<Utc>,
    /// The one-line error (what failed, AWS's code and message, what to do).
    pub message: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
    pub retryable: bool,
}

impl TargetState {
    /// Records a failure at `now`, keeping `since` when the message is the same as before.
    /// Returns whether anything changed (a repeat of the same failure is not worth a write).
    pub fn record_error(
        &mut self,
        message: &str,
        code: Option<&str>,
        retryable: bool,
        now: DateTime<Utc>,
    ) -> bool {
        if self
            .last_error
            .as_ref()
            .is_some_and(|e| e.message == message)
        {
            return false;
        }
        self.last_error = Some(LastError {
            since: now,
            message: message.to_owned(),
            code: code.map(str::to_owned),
            retryable,
        });
        true
    }
}

/// Takes `id`'s state out of a `StateStore::load_states` answer, or the default state when the
/// answer holds none. It moves the state out rather than copying it, leaving a default behind:
/// every target of a page is looked up once.
pub fn take_state(
    states: &mut [(ScalableTargetId, TargetState)],
    id: &ScalableTargetId,
) -> TargetState {
    states
        .iter_mut()
        .find(|(stored, _)| stored == id)
        .map(|(_, state)| std::mem::take(state))
        .unwrap_or_default()
}

/// Where the answer about the `asked`-th id of a page is in `answers`: a port answers in the
/// order asked as a rule (so a tick walking its page finds each at once), but need not, and
/// may leave ids out.
pub fn answer_at<T>(answers: &[T], asked: usize, is_it: impl Fn(&T) -> bool) -> Option<usize> {
    match answers.get(asked) {
        Some(a) if is_it(a) => Some(asked),
        _ => answers.iter().position(is_it),
    }
}

/// [`take_state`] for the `i`-th id asked, looked up with [`answer_at`].
pub fn take_state_at(
    states: &mut [(ScalableTargetId, TargetState)],
    i: usize,
    id: &ScalableTargetId,
) -> TargetState {
    answer_at(states, i, |(stored, _)| stored == id)
        .map(|k| std::mem::take(&mut states[k].1))
        .unwrap_or_default()
}

/// Idempotency keys up to this length are stored as they are (event ids, peak keys); a longer
/// one (an alarm ARN with its state and time) is stored as a hash, so that the
/// [`SEEN_EVENTS_KEPT`] keys of a target stay a few kilobytes.
const KEY_KEPT_WHOLE: usize = 64;

fn compact_key(key: &str) -> std::borrow::Cow<'_, str> {
    if key.len() <= KEY_KEPT_WHOLE {
        return std::borrow::Cow::Borrowed(key);
    }
    // Two FNV-1a 64-bit hashes with different offsets (stable across builds): 128 bits, so two
    // different keys do not collide in practice. Keys stored before this change stay as they
    // were and simply age out.
    let fnv = |seed: u64| {
        key.bytes().fold(seed, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
        })
    };
    std::borrow::Cow::Owned(format!(
        "h:{:016x}{:016x}:{}",
        fnv(0xcbf2_9ce4_8422_2325),
        fnv(0x6c62_272e_07bb_0142),
        key.len()
    ))
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Pause {
    pub until: DateTime<Utc>,
    pub reason: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Drift {
    pub detected_at: DateTime<Utc>,
    pub observed: Bounds,
    pub expected: Bounds,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SeenEvent {
    /// Shared, not owned: a target's state is cloned at every read and decision, and with up to
    /// [`SEEN_EVENTS_KEPT`] keys a clone of owned strings was most of a simulated tick's time.
    pub key: std::sync::Arc<str>,
    pub until: DateTime<Utc>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WakeLatency {
    pub alarm_at: DateTime<Utc>,
    pub in_service_at: DateTime<Utc>,
    pub seconds: i64,
}

impl TargetState {
    pub fn claim(&self, source: &ClaimSource) -> Option<&Claim> {
        self.claims.iter().find(|c| &c.source == source)
    }

    /// Adds a claim, replacing any claim from the same source.
    pub fn put_claim(&mut self, claim: Claim) {
        self.claims.retain(|c| c.source != claim.source);
        self.claims.push(claim);
        self.claims.sort_by(|a, b| a.source.cmp(&b.source));
    }

    pub fn remove_claim(&mut self, source: &ClaimSource) -> Option<Claim> {
        let i = self.claims.iter().position(|c| &c.source == source)?;
        Some(self.claims.remove(i))
    }

    pub fn has_seen(&self, key: &str, now: DateTime<Utc>) -> bool {
        let key = compact_key(key);
        self.seen_events
            .iter()
            .any(|e| *e.key == *key && e.until > now)
    }

    pub fn mark_seen(&mut self, key: &str, now: DateTime<Utc>) {
        let key = compact_key(key);
        let seen = std::sync::Arc::make_mut(&mut self.seen_events);
        seen.retain(|e| *e.key != *key);
        seen.push(SeenEvent {
            key: key.as_ref().into(),
            until: now + chrono::Duration::hours(SEEN_EVENT_TTL_HOURS),
        });
        crate::newest::keep_newest(seen, SEEN_EVENTS_KEPT);
    }

    /// Drops what has expired: claims, pause, idempotency keys. Readers ignore expired items
    /// themselves anyway; this keeps the stored item small.
    pub fn prune(&mut self, now: DateTime<Utc>) {
        self.claims.retain(|c| !c.is_expired(now));
        if self.pause.as_ref().is_some_and(|p| p.until <= now) {
            self.pause = None;
        }
        // Copied only when a key has expired: most prunes change nothing here.
        if self.seen_events.iter().any(|e| e.until <= now) {
            std::sync::Arc::make_mut(&mut self.seen_events).retain(|e| e.until > now);
        }
    }

    pub fn paused_at(&self, now: DateTime<Utc>) -> Option<&Pause> {
        self.pause.as_ref().filter(|p| p.until > now)
    }

    /// Equal in everything but the version. Every reconcile asks this of every target, so it
    /// compares in place rather than copying a state; the exhaustive destructuring makes a new
    /// field a compile error here until it is compared.
    pub fn same_content(&self, other: &TargetState) -> bool {
        let TargetState {
            version: _,
            claims,
            pause,
            last_applied,
            drift,
            seen_events,
            alarm_marks,
            alarm_facts,
            high_water,
            scale_out,
            wake_pending_since,
            wake_latencies,
            lead_samples,
            model,
            deploy,
            forecast,
            earlier_applied,
            pending_log,
            unrecognised_notes,
            last_error,
        } = self;
        *claims == other.claims
            && *pause == other.pause
            && *last_applied == other.last_applied
            && *drift == other.drift
            && (std::sync::Arc::ptr_eq(seen_events, &other.seen_events)
                || *seen_events == other.seen_events)
            && *alarm_marks == other.alarm_marks
            && *alarm_facts == other.alarm_facts
            && *high_water == other.high_water
            && *scale_out == other.scale_out
            && *wake_pending_since == other.wake_pending_since
            && *wake_latencies == other.wake_latencies
            && *lead_samples == other.lead_samples
            && *model == other.model
            && *deploy == other.deploy
            && same_forecast(forecast, &other.forecast)
            && *earlier_applied == other.earlier_applied
            && *pending_log == other.pending_log
            && *unrecognised_notes == other.unrecognised_notes
            && *last_error == other.last_error
    }
}

/// Equal forecasts. A reconcile's state shares its forecast with the state it was read as (the
/// refresh alone replaces it), so the pointers decide without comparing every slot: `Arc`'s
/// own `==` cannot shortcut for a type holding floats. (Unlike that `==`, a shared forecast
/// holding a NaN equals itself; the forecast stores only finite figures.)
fn same_forecast(
    a: &Option<std::sync::Arc<crate::forecast::ForecastState>>,
    b: &Option<std::sync::Arc<crate::forecast::ForecastState>>,
) -> bool {
    match (a, b) {
        (Some(a), Some(b)) => std::sync::Arc::ptr_eq(a, b) || a == b,
        (None, None) => true,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: &str) -> DateTime<Utc> {
        s.parse().expect("valid time")
    }

    #[test]
    fn copies_share_their_idempotency_keys_until_one_of_them_changes() {
        let now = t("2026-03-14T09:00:00Z");
        let mut a = TargetState::default();
        a.mark_seen("alarm:burst@1", now);
        let mut b = a.clone();
        assert!(std::sync::Arc::ptr_eq(&a.seen_events, &b.seen_events));
        // A prune with nothing expired keeps sharing.
        b.prune(now + chrono::Duration::hours(1));
        assert!(std::sync::Arc::ptr_eq(&a.seen_events, &b.seen_events));
        assert!(a.same_content(&b));
        // A change to one copy is that copy's alone.
        b.mark_seen("alarm:burst@2", now);
        assert!(b.has_seen("alarm:burst@2", now) && !a.has_seen("alarm:burst@2", now));
        assert!(!a.same_content(&b));
        // So is an expiry.
        b.prune(now + chrono::Duration::hours(SEEN_EVENT_TTL_HOURS + 1));
        assert!(b.seen_events.is_empty());
        assert!(a.has_seen("alarm:burst@1", now));
    }

    /// A state with every field set.
    fn full() -> TargetState {
        let bounds = Bounds {
            min: 2,
            max: 8,
            suspend_scale_in: false,
        };
        TargetState {
            version: 7,
            claims: vec![Claim::new(
                ClaimSource::Guard,
                4,
                t("2026-03-14T09:00:00Z"),
                t("2026-03-14T10:00:00Z"),
                None,
                "burst",
            )],
            pause: Some(Pause {
                until: t("2026-03-14T12:00:00Z"),
                reason: "maintenance".into(),
            }),
            last_applied: Some(bounds),
            drift: Some(Drift {
                detected_at: t("2026-03-14T09:30:00Z"),
                observed: Bounds { min: 5, ..bounds },
                expected: bounds,
            }),
            seen_events: std::sync::Arc::new(vec![SeenEvent {
                key: "peak:launch".into(),
                until: t("2026-03-15T09:00:00Z"),
            }]),
            alarm_marks: BTreeMap::from([(
                "burst".into(),
                AlarmMark {
                    state: crate::model::AlarmState::Alarm,
                    at: t("2026-03-14T09:00:00Z"),
                },
            )]),
            alarm_facts: AlarmFacts {
                last_in_alarm: BTreeMap::from([("burst".into(), t("2026-03-14T09:00:00Z"))]),
                metric: BTreeMap::new(),
                no_data_count: BTreeMap::new(),
            },
            high_water: Some(6),
            scale_out: Some(ScaleOut {
                alarm: "burst".into(),
                at: t("2026-03-14T09:00:00Z"),
                floor: 9,
            }),
            wake_pending_since: Some(t("2026-03-14T06:03:00Z")),
            wake_latencies: vec![WakeLatency {
                alarm_at: t("2026-03-14T05:00:00Z"),
                in_service_at: t("2026-03-14T05:07:00Z"),
                seconds: 420,
            }],
            lead_samples: vec![LeadSample {
                ended_at: t("2026-03-13T10:06:00Z"),
                seconds: 360,
                model: Some("fp-1".into()),
                source: crate::model::SampleSource::AasActivity,
            }],
            model: Some("fp-1".into()),
            deploy: DeployFacts {
                models: crate::identity::ModelHistory::default(),
                transition: crate::endpoint_transitions::Transitions {
                    pending: None,
                    in_service: Some(crate::endpoint_transitions::InServiceMark {
                        at: t("2026-03-14T08:00:00Z"),
                        count: Some(2),
                    }),
                },
            },
            forecast: Some(std::sync::Arc::new(crate::forecast::ForecastState {
                computed_at: DateTime::UNIX_EPOCH,
                slot_secs: 600,
                slots: Vec::new(),
                unscored: Vec::new(),
                margin: 1.0,
                level: 1.0,
                history_days: 3,
                same_kind: true,
                unavailable: None,
                score: Default::default(),
                schedule: Vec::new(),
                windows: Vec::new(),
                windows_scored_until: None,
                refresh_failed: Some(crate::forecast::RefreshFailed {
                    at: t("2026-03-14T09:00:00Z"),
                    error: "failed to read the demand history: AccessDeniedException".into(),
                    code: Some("AccessDeniedException".into()),
                }),
            })),
            earlier_applied: vec![Bounds { min: 1, ..bounds }],
            pending_log: vec![LogEntry {
                target: "endpoint/chat/variant/AllTraffic"
                    .parse()
                    .expect("valid id"),
                at: t("2026-03-14T09:00:00Z"),
                body: serde_json::json!({"trigger": "tick"}),
            }],
            unrecognised_notes: BTreeMap::from([("k".to_owned(), serde_json::json!(1))]),
            last_error: Some(LastError {
                since: t("2026-03-14T09:40:00Z"),
                message: "failed to register the scalable target: AccessDeniedException: no".into(),
                code: Some("AccessDeniedException".into()),
                retryable: false,
            }),
        }
    }

    #[test]
    fn a_repeated_failure_keeps_its_since_and_a_new_one_starts_again() {
        let mut s = TargetState::default();
        assert!(s.record_error("boom", None, true, t("2026-03-14T09:00:00Z")));
        assert!(
            !s.record_error("boom", None, true, t("2026-03-14T09:01:00Z")),
            "the same failure again is no change (no write)"
        );
        assert_eq!(
            s.last_error.as_ref().map(|e| e.since),
            Some(t("2026-03-14T09:00:00Z"))
        );
        assert!(s.record_error(
            "other",
            Some("ThrottlingException"),
            true,
            t("2026-03-14T09:02:00Z")
        ));
        assert_eq!(
            s.last_error.as_ref().map(|e| e.since),
            Some(t("2026-03-14T09:02:00Z"))
        );
    }

    #[test]
    fn a_state_stored_before_last_error_existed_still_loads() {
        let old = r#"{"version":3,"claims":[],"model":"fp-1"}"#;
        let s: TargetState = serde_json::from_str(old).expect("an old item loads");
        assert_eq!(s.version, 3);
        assert!(s.last_error.is_none());
        let text = serde_json::to_string(&TargetState::default()).expect("serializes");
        assert!(!text.contains("last_error"), "absent when none: {text}");
    }

    #[test]
    fn same_content_ignores_the_version_and_nothing_else() {
        let a = full();
        let mut other_version = a.clone();
        other_version.version += 1;
        assert!(a.same_content(&other_version));
        assert!(a.same_content(&a));

        // One change per field: each makes the content differ, both ways round.
        type Change = (&'static str, fn(&mut TargetState));
        let changes: [Change; 19] = [
            ("claims", |s| s.claims.clear()),
            ("pause", |s| s.pause = None),
            ("last_applied", |s| s.last_applied = None),
            ("drift", |s| s.drift = None),
            ("seen_events", |s| s.seen_events = Default::default()),
            ("alarm_marks", |s| s.alarm_marks.clear()),
            ("alarm_facts", |s| s.alarm_facts = AlarmFacts::default()),
            ("high_water", |s| s.high_water = Some(7)),
            ("scale_out", |s| s.scale_out = None),
            ("wake_pending_since", |s| s.wake_pending_since = None),
            ("wake_latencies", |s| s.wake_latencies.clear()),
            ("lead_samples", |s| s.lead_samples.clear()),
            ("model", |s| s.model = Some("fp-2".into())),
            ("deploy", |s| s.deploy = DeployFacts::default()),
            ("forecast", |s| s.forecast = None),
            ("earlier_applied", |s| s.earlier_applied.clear()),
            ("pending_log", |s| s.pending_log.clear()),
            ("unrecognised_notes", |s| s.unrecognised_notes.clear()),
            ("last_error", |s| s.last_error = None),
        ];
        for (field, change) in changes {
            let mut b = a.clone();
            change(&mut b);
            assert!(!a.same_content(&b), "{field}");
            assert!(!b.same_content(&a), "{field}");
        }
    }

    #[test]
    fn take_state_at_finds_a_state_wherever_the_answer_put_it() {
        let id = |n: &str| -> ScalableTargetId {
            format!("endpoint/{n}/variant/AllTraffic")
                .parse()
                .expect("id")
        };
        let state = |v: u64| TargetState {
            version: v,
            ..TargetState::default()
        };
        // The answer holds b before a, and no c.
        let mut answer = vec![(id("b"), state(2)), (id("a"), state(1))];
        assert_eq!(take_state_at(&mut answer, 0, &id("a")).version, 1);
        assert_eq!(take_state_at(&mut answer, 0, &id("b")).version, 2);
        assert_eq!(
            take_state_at(&mut answer, 2, &id("c")),
            TargetState::default()
        );
    }

    #[test]
    fn forecasts_are_compared_by_content_when_they_are_not_shared() {
        let a = full();
        let forecast = a
            .forecast
            .as_deref()
            .expect("full() has a forecast")
            .clone();
        // An equal copy in its own allocation is the same content.
        let mut copy = a.clone();
        copy.forecast = Some(std::sync::Arc::new(forecast.clone()));
        assert!(a.same_content(&copy) && copy.same_content(&a));
        // A copy that differs in one figure is not.
        let mut moved = forecast;
        moved.margin += 0.1;
        let mut other = a.clone();
        other.forecast = Some(std::sync::Arc::new(moved));
        assert!(!a.same_content(&other) && !other.same_content(&a));
    }
}
