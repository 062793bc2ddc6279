//! The order in which a reconcile applies its decision (issue 11, items 1 and 3): the conditional
//! state write comes first, so a decision that lost the version race never reaches AAS; a register
//! that failed after the write is re-applied by the next run without being taken for drift; and a
//! decision-log record whose append failed is written by the retry, exactly once.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

mod common;

use common::{at, id};
use headroom_core::claim::{Claim, ClaimSource};
use headroom_core::memory::{block_on, MemoryScalingTargets, MemoryStateStore};
use headroom_core::model::{Bounds, LogEntry, Observed, Suspended};
use headroom_core::plan::{parse_plan, Plan};
use headroom_core::ports::{
    ErrorClass, PortError, SaveOutcome, ScalingTargets, StateStore, StoredPlan,
};
use headroom_core::reconcile::{reconcile_target, EventChange};
use headroom_core::state::TargetState;
use headroom_core::usecase::tick::{tick_plan_observing, TickReport};
use headroom_core::ScalableTargetId;

const PLAN: &str = r#"
version = 1
[[target]]
resource_id = "endpoint/chat/variant/AllTraffic"
min_capacity = 2
max_capacity = 12
"#;

fn plan() -> Plan {
    parse_plan("apply-order.toml", PLAN).expect("valid plan")
}

/// AAS and the table in memory, shared by the two ports below, with the faults these tests
/// inject: another invocation acting right before our first AAS or state write, failing
/// registers, failing decision-log appends.
#[derive(Default)]
struct World {
    aas: MemoryScalingTargets,
    store: MemoryStateStore,
    registers: Mutex<Vec<(u32, bool)>>,
    interleave: Mutex<Option<Interleaving>>,
    fail_registers: AtomicUsize,
    fail_appends: AtomicUsize,
}

type Interleaving = Box<dyn FnOnce(&World) + Send>;

fn take_one(counter: &AtomicUsize) -> bool {
    counter
        .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
        .is_ok()
}

impl World {
    fn at(min: u32, max: u32) -> Self {
        Self {
            aas: MemoryScalingTargets::default().with_target(id(), min, max),
            ..Self::default()
        }
    }
    fn with_claim(self, claim: Claim) -> Self {
        let mut state = TargetState::default();
        state.put_claim(claim);
        self.store.put_state(&id(), state);
        self
    }
    /// Runs the other invocation, once, before whichever of our writes comes first.
    fn interleave(&self) {
        let other = self.interleave.lock().expect("lock").take();
        if let Some(other) = other {
            other(self);
        }
    }
    fn registers(&self) -> Vec<(u32, bool)> {
        self.registers.lock().expect("lock").clone()
    }
    fn bounds(&self) -> (u32, bool) {
        let o = self.aas.get(&id()).expect("registered");
        (o.min, o.suspended.dynamic_in)
    }
    fn ports(&self) -> (Aas<'_>, Store<'_>) {
        (Aas(self), Store(self))
    }
}

struct Aas<'a>(&'a World);
struct Store<'a>(&'a World);

impl ScalingTargets for Aas<'_> {
    async fn describe(&self, ids: &[ScalableTargetId]) -> Result<Vec<Observed>, PortError> {
        self.0.aas.describe(ids).await
    }
    async fn register(
        &self,
        id: &ScalableTargetId,
        min: u32,
        max: u32,
        suspended: Suspended,
    ) -> Result<(), PortError> {
        self.0.interleave();
        if take_one(&self.0.fail_registers) {
            return Err(PortError::new(
                "register the scalable target",
                ErrorClass::Retryable,
                "throttled",
            ));
        }
        self.0
            .registers
            .lock()
            .expect("lock")
            .push((min, suspended.dynamic_in));
        self.0.aas.register(id, min, max, suspended).await
    }
}

impl StateStore for Store<'_> {
    async fn load_plan(&self) -> Result<Option<StoredPlan>, PortError> {
        self.0.store.load_plan().await
    }
    async fn save_plan(&self, plan: &StoredPlan, expected: u64) -> Result<SaveOutcome, PortError> {
        self.0.store.save_plan(plan, expected).await
    }
    async fn load_states(
        &self,
        ids: &[ScalableTargetId],
    ) -> Result<Vec<(ScalableTargetId, TargetState)>, PortError> {
        self.0.store.load_states(ids).await
    }
    async fn save_state(
        &self,
        id: &ScalableTargetId,
        state: &TargetState,
        token: &str,
    ) -> Result<SaveOutcome, PortError> {
        self.0.interleave();
        self.0.store.save_state(id, state, token).await
    }
    async fn append_log_entry(&self, entry: &LogEntry) -> Result<(), PortError> {
        if take_one(&self.0.fail_appends) {
            return Err(PortError::new(
                "append a decision-log record",
                ErrorClass::Retryable,
                "throttled",
            ));
        }
        self.0.store.append_log_entry(entry).await
    }
    async fn recent_log(
        &self,
        id: &ScalableTargetId,
        limit: usize,
    ) -> Result<Vec<headroom_core::model::LogEntry>, PortError> {
        self.0.store.recent_log(id, limit).await
    }
}

fn peak_claim(floor: u32) -> Claim {
    Claim::new(
        ClaimSource::Peak("launch".into()),
        floor,
        at("09:00"),
        at("12:00"),
        None,
        "launch",
    )
}

fn guard_claim(floor: u32) -> Claim {
    Claim::new(
        ClaimSource::Guard,
        floor,
        at("09:00"),
        at("12:00"),
        None,
        "burst",
    )
    .suspending_scale_in(true)
}

fn tick(w: &World, minute: &str) -> TickReport {
    let (aas, store) = w.ports();
    block_on(tick_plan_observing(
        &aas,
        &store,
        None::<&()>,
        &plan(),
        1,
        at(minute),
    ))
}

#[test]
fn a_decision_that_lost_the_version_race_never_reaches_aas_and_is_not_reported_as_drift() {
    // GIVEN a stored peak claim of 6 that AAS (min 2) does not hold yet
    let w = World::at(2, 12).with_claim(peak_claim(6));
    // AND an alarm invocation that, after the tick read the page and before the tick's first
    // write, stores a guard (min 7, scale-in suspended) and registers it
    let other: Interleaving = Box::new(|w: &World| {
        let mut theirs = w.store.state(&id());
        theirs.put_claim(guard_claim(7));
        theirs.last_applied = Some(Bounds {
            min: 7,
            max: 12,
            suspend_scale_in: true,
        });
        theirs.version += 1;
        w.store.put_state(&id(), theirs);
        w.aas.set(Observed {
            id: id(),
            min: 7,
            max: 12,
            suspended: Suspended {
                dynamic_in: true,
                ..Suspended::default()
            },
        });
    });
    *w.interleave.lock().expect("lock") = Some(other);

    // WHEN the tick reconciles
    let report = tick(&w, "10:00");

    // THEN the tick never registered its stale bounds (min 6, not suspended)
    assert!(report.errors.is_empty(), "{:?}", report.errors);
    assert!(
        !w.registers().contains(&(6, false)),
        "the losing decision reached AAS: {:?}",
        w.registers()
    );
    // AND AAS holds the newest stored decision, and headroom reports no drift of its own making
    assert_eq!(w.bounds(), (7, true));
    assert!(report.drifted.is_empty(), "{:?}", report.drifted);
    assert_eq!(w.store.state(&id()).drift, None);
}

#[test]
fn a_register_that_failed_after_the_state_write_is_reapplied_by_the_next_tick_without_drift() {
    // GIVEN a stored peak claim of 6, AAS at min 2, and a register that fails once
    let w = World::at(2, 12).with_claim(peak_claim(6));
    w.fail_registers.store(1, Ordering::SeqCst);

    // WHEN a tick fails at the register, and the next tick runs
    let failed = tick(&w, "10:00");
    assert!(failed.errors.iter().any(|e| e.retryable), "{failed:?}");
    let next = tick(&w, "10:01");

    // THEN the next tick applies the stored bounds and does not call its own change drift
    assert!(next.errors.is_empty(), "{:?}", next.errors);
    assert_eq!(w.bounds(), (6, false));
    assert!(next.drifted.is_empty(), "{:?}", next.drifted);
    assert_eq!(w.store.state(&id()).drift, None);
}

#[test]
fn a_stale_register_that_lands_late_is_corrected_without_drift() {
    // GIVEN headroom stored and applied min 6, then min 7 (the guard)
    let w = World::at(2, 12).with_claim(peak_claim(6));
    tick(&w, "10:00");
    let mut state = w.store.state(&id());
    state.put_claim(guard_claim(7));
    w.store.put_state(&id(), state);
    tick(&w, "10:01");
    assert_eq!(w.bounds(), (7, true));
    // WHEN a slow invocation's register of the earlier min 6 lands only now
    w.aas.set(Observed {
        id: id(),
        min: 6,
        max: 12,
        suspended: Suspended::default(),
    });
    let report = tick(&w, "10:02");
    // THEN the next tick restores the newest stored bounds and reports no drift
    assert_eq!(w.bounds(), (7, true));
    assert!(report.drifted.is_empty(), "{:?}", report.drifted);
}

#[test]
fn a_hand_edit_is_still_drift() {
    // GIVEN headroom applied min 6
    let w = World::at(2, 12).with_claim(peak_claim(6));
    tick(&w, "10:00");
    assert_eq!(w.bounds(), (6, false));
    // WHEN an operator sets min 4 by hand
    w.aas.set(Observed {
        id: id(),
        min: 4,
        max: 12,
        suspended: Suspended::default(),
    });
    let report = tick(&w, "10:01");
    // THEN it is drift, and restored
    assert_eq!(report.drifted.len(), 1, "{report:?}");
    assert_eq!(w.bounds(), (6, false));
}

#[test]
fn a_failed_log_append_after_the_state_write_is_written_by_the_retry_exactly_once() {
    // GIVEN an event that raises the floor, and a decision-log append that fails once
    let w = World::at(2, 12);
    w.fail_appends.store(1, Ordering::SeqCst);
    let (aas, store) = w.ports();
    let p = plan();
    let target = &p.targets[0];
    let apply = |s: &mut TargetState| {
        s.put_claim(peak_claim(6));
        vec!["explicit peak launch stored".to_owned()]
    };
    let change = EventChange {
        key: "peak-event:e-1".into(),
        apply: &apply,
    };
    let run = |minute: &str| {
        block_on(reconcile_target(
            &aas,
            &store,
            target,
            at(minute),
            "peak-event:e-1",
            Some(&change),
        ))
    };

    // WHEN the event fails at the append, Lambda retries it twice, and a tick follows
    assert!(run("10:00").is_err_and(|e| e.is_retryable()));
    run("10:01").expect("the retry succeeds");
    run("10:02").expect("a second retry succeeds");
    let report = tick(&w, "10:03");
    assert!(report.errors.is_empty(), "{:?}", report.errors);

    // THEN the applied decision has exactly one log record, and the state holds nothing pending
    assert_eq!(w.store.log().len(), 1, "{:#?}", w.store.log());
    assert_eq!(w.bounds(), (6, false));
    assert!(w.store.state(&id()).pending_log.is_empty());
}

#[test]
fn a_redelivery_that_still_registers_logs_a_plain_reconcile_not_a_second_effect() {
    // GIVEN an event that raises the floor, and a register that fails once after the state write
    let w = World::at(2, 12);
    w.fail_registers.store(1, Ordering::SeqCst);
    let (aas, store) = w.ports();
    let p = plan();
    let target = &p.targets[0];
    let apply = |s: &mut TargetState| {
        s.put_claim(peak_claim(6));
        vec!["explicit peak launch stored".to_owned()]
    };
    let change = EventChange {
        key: "peak-event:e-2".into(),
        apply: &apply,
    };
    let run = |minute: &str| {
        block_on(reconcile_target(
            &aas,
            &store,
            target,
            at(minute),
            "peak-event:e-2",
            Some(&change),
        ))
    };

    // WHEN the event fails at the register and Lambda redelivers it
    assert!(run("10:00").is_err_and(|e| e.is_retryable()));
    let again = run("10:01").expect("the redelivery succeeds");

    // THEN the redelivery is a duplicate that registers the stored bounds, and its record says
    // it was a redelivery: the event's own effect has exactly one record
    assert!(again.duplicate);
    assert_eq!(w.bounds(), (6, false));
    let triggers: Vec<String> = w
        .store
        .log()
        .iter()
        .filter_map(|r| r["trigger"].as_str().map(str::to_owned))
        .collect();
    assert_eq!(
        triggers.iter().filter(|t| *t == "peak-event:e-2").count(),
        1,
        "{triggers:?}"
    );
    assert!(
        triggers
            .iter()
            .all(|t| t == "peak-event:e-2" || t == "peak-event:e-2 (redelivered)"),
        "{triggers:?}"
    );
}

#[test]
fn a_successful_apply_leaves_one_record_and_nothing_pending() {
    let w = World::at(2, 12).with_claim(peak_claim(6));
    tick(&w, "10:00");
    let again = tick(&w, "10:01");
    assert_eq!(w.store.log().len(), 1);
    assert_eq!(again.state_writes, 0, "the second tick changes nothing");
    assert!(w.store.state(&id()).pending_log.is_empty());
}
