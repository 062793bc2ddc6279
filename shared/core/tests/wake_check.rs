//! The tick's capacity observation (`usecase::tick::tick_plan_observing`) against memory ports: it
//! reads SageMaker only for targets that need it, records wake latencies and high-water marks,
//! reports failures with their retry class, and redoes its write when another invocation wrote
//! first.

use std::sync::atomic::{AtomicBool, Ordering};

mod common;

use chrono::{DateTime, Utc};
use common::{at, target_id};
use headroom_core::alarms::{apply_transition, AlarmRole, AlarmTransition};
use headroom_core::capacity_port::CurrentCapacity;
use headroom_core::memory::MemoryCapacity;
use headroom_core::memory::{block_on, Calls, MemoryScalingTargets, MemoryStateStore};
use headroom_core::model::AlarmState;
use headroom_core::model::LogEntry;
use headroom_core::plan::{parse_plan, Plan};
use headroom_core::ports::{ErrorClass, PortError, SaveOutcome, StateStore, StoredPlan};
use headroom_core::state::TargetState;
use headroom_core::usecase::tick::{tick_plan_observing, TickReport};
use headroom_core::{ClaimSource, ScalableTargetId};

const PLAN: &str = r#"
version = 1
[[target]]
resource_id = "endpoint/batch/variant/AllTraffic"
min_capacity = 0
max_capacity = 4
  [target.wake]
  alarms = ["backlog"]
[[target]]
resource_id = "endpoint/chat/variant/AllTraffic"
min_capacity = 1
max_capacity = 12
  [target.guard]
  alarms = ["burst"]
[[target]]
resource_id = "endpoint/idle/variant/AllTraffic"
min_capacity = 1
max_capacity = 2
"#;

fn plan() -> Plan {
    parse_plan("wake.toml", PLAN).expect("valid plan")
}

fn batch() -> ScalableTargetId {
    target_id("endpoint/batch/variant/AllTraffic")
}

fn chat() -> ScalableTargetId {
    target_id("endpoint/chat/variant/AllTraffic")
}

fn idle() -> ScalableTargetId {
    target_id("endpoint/idle/variant/AllTraffic")
}

/// AAS as the alarm handler leaves it: the wake's minimum of 1 on batch, chat's minimum at
/// `chat_min` (the guard's floor when the burst alarm fired, else the plan's 1).
fn aas(chat_min: u32) -> MemoryScalingTargets {
    MemoryScalingTargets::default()
        .with_target(batch(), 1, 4)
        .with_target(chat(), chat_min, 12)
        .with_target(idle(), 1, 2)
}

/// One tick over the plan with SageMaker's counts from `capacity`.
fn tick<C: CurrentCapacity, S: StateStore>(
    aas: &MemoryScalingTargets,
    store: &S,
    capacity: &C,
    now: DateTime<Utc>,
) -> TickReport {
    block_on(tick_plan_observing(
        aas,
        store,
        Some(capacity),
        &plan(),
        1,
        now,
    ))
}

/// The report's observation line for `target`, if any.
fn observed<'r>(report: &'r TickReport, target: &ScalableTargetId) -> Option<&'r str> {
    let prefix = format!("{target}: ");
    report
        .observed
        .iter()
        .find_map(|line| line.strip_prefix(&prefix))
}

/// Stores the state a transition leaves on a target.
fn fired(
    store: &MemoryStateStore,
    target: &ScalableTargetId,
    role: AlarmRole,
    alarm: &str,
    desired: u32,
) {
    let plan = plan();
    let t = plan.target(target).expect("planned");
    let mut state = TargetState::default();
    let transition =
        AlarmTransition::new(alarm, AlarmState::Alarm, at("06:00")).with_previous(AlarmState::Ok);
    apply_transition(t, role, &transition, Some(desired), &mut state);
    store.put_state(target, state);
}

#[test]
fn only_targets_with_a_pending_wake_or_a_firing_guard_are_read() {
    let store = MemoryStateStore::default();
    fired(&store, &batch(), AlarmRole::Wake, "backlog", 0);
    fired(&store, &chat(), AlarmRole::Guard, "burst", 5);
    let capacity = MemoryCapacity::default()
        .with(batch(), 1, 1)
        .with(chat(), 9, 7)
        .with(idle(), 1, 1);
    let aas = aas(5);

    let report = tick(&aas, &store, &capacity, at("06:07"));

    assert_eq!(capacity.call_count(), 2, "the idle target is not read");
    assert!(report.errors.is_empty(), "{:?}", report.errors);
    assert_eq!(report.observed.len(), 2, "{:?}", report.observed);
    assert!(
        observed(&report, &batch()).is_some_and(|n| n.contains("woke")),
        "{:?}",
        report.observed
    );
    assert_eq!(report.state_writes, 2);
    let b = store.state(&batch());
    assert_eq!((b.wake_pending_since, b.wake_latencies.len()), (None, 1));
    assert_eq!(b.wake_latencies[0].seconds, 420);
    let c = store.state(&chat());
    assert_eq!(c.high_water, Some(9));
    assert_eq!(c.claim(&ClaimSource::Guard).map(|g| g.floor), Some(9));
    assert_eq!(
        aas.get(&chat()).map(|o| o.min),
        Some(9),
        "the raised floor is applied in the same pass"
    );

    // Nothing changed since: the next tick writes nothing.
    let again = tick(&aas, &store, &capacity, at("06:08"));
    assert_eq!(again.state_writes, 0);
    assert!(again.observed.is_empty(), "{:?}", again.observed);
    // Two logged decisions, each written with its log record pending, then cleared.
    assert_eq!(Calls::get(&store.calls.save_state), 4);
}

/// SageMaker failing for every target.
struct Failing(ErrorClass);

impl CurrentCapacity for Failing {
    async fn desired_and_current(
        &self,
        id: &ScalableTargetId,
    ) -> Result<Option<headroom_core::capacity_port::Counts>, PortError> {
        Err(PortError::new(
            format!("describe {id}"),
            self.0,
            "throttled by the test",
        ))
    }
}

#[test]
fn failures_are_reported_per_target_with_their_class_and_change_nothing() {
    for class in [ErrorClass::Retryable, ErrorClass::Permanent] {
        let store = MemoryStateStore::default();
        fired(&store, &batch(), AlarmRole::Wake, "backlog", 0);
        let before = store.state(&batch());
        let report = tick(&aas(1), &store, &Failing(class), at("06:05"));
        assert_eq!(report.errors.len(), 1, "{:?}", report.errors);
        assert_eq!(report.errors[0].target, batch().to_string());
        assert_eq!(report.errors[0].retryable, class == ErrorClass::Retryable);
        assert_eq!(store.state(&batch()), before);
    }
}

/// A store where another invocation writes the target once, right before our first write.
struct Racing {
    inner: MemoryStateStore,
    raced: AtomicBool,
}

impl StateStore for Racing {
    async fn load_plan(&self) -> Result<Option<StoredPlan>, PortError> {
        self.inner.load_plan().await
    }
    async fn save_plan(&self, plan: &StoredPlan, expected: u64) -> Result<SaveOutcome, PortError> {
        self.inner.save_plan(plan, expected).await
    }
    async fn load_states(
        &self,
        ids: &[ScalableTargetId],
    ) -> Result<Vec<(ScalableTargetId, TargetState)>, PortError> {
        self.inner.load_states(ids).await
    }
    async fn save_state(
        &self,
        id: &ScalableTargetId,
        state: &TargetState,
        token: &str,
    ) -> Result<SaveOutcome, PortError> {
        if !self.raced.swap(true, Ordering::SeqCst) {
            // The other invocation adds a note of its own and bumps the version.
            let mut theirs = self.inner.state(id);
            theirs.model = Some("written-by-the-other-invocation".into());
            theirs.version += 1;
            self.inner.put_state(id, theirs);
        }
        self.inner.save_state(id, state, token).await
    }
    async fn append_log_entry(&self, entry: &LogEntry) -> Result<(), PortError> {
        self.inner.append_log_entry(entry).await
    }
    async fn recent_log(
        &self,
        id: &ScalableTargetId,
        limit: usize,
    ) -> Result<Vec<headroom_core::model::LogEntry>, PortError> {
        self.inner.recent_log(id, limit).await
    }
}

#[test]
fn a_lost_write_race_is_redone_on_fresh_state_keeping_both_changes() {
    let store = Racing {
        inner: MemoryStateStore::default(),
        raced: AtomicBool::new(false),
    };
    fired(&store.inner, &batch(), AlarmRole::Wake, "backlog", 0);
    let capacity = MemoryCapacity::default().with(batch(), 1, 1);
    let report = tick(&aas(1), &store, &capacity, at("06:05"));
    assert!(report.errors.is_empty(), "{:?}", report.errors);
    assert!(
        observed(&report, &batch()).is_some_and(|n| n.contains("woke")),
        "{:?}",
        report.observed
    );
    assert_eq!(
        capacity.call_count(),
        1,
        "SageMaker is read once; the observation is redone on the fresh state"
    );
    let s = store.inner.state(&batch());
    assert_eq!(
        s.model.as_deref(),
        Some("written-by-the-other-invocation"),
        "their write survives"
    );
    assert_eq!(s.wake_latencies.len(), 1, "ours too");
    assert_eq!(s.wake_latencies[0].seconds, 300);
    assert_eq!(
        Calls::get(&store.inner.calls.save_state),
        3,
        "one conflict, one success, and the write clearing the pending log record"
    );
}
