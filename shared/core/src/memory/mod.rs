//! In-memory ports: the world of the simulator, `headroom explain` and the tests. They count
//! every call so tests can assert how many AWS calls a use case would make, and some can be told
//! to fail as AWS does. Compiled only with the `memory` feature (and in this crate's tests): the
//! Lambda binaries do not carry them.

mod capacity;
mod demand;
mod deploy;

pub use capacity::MemoryCapacity;
pub use demand::MemoryDemand;
pub use deploy::*;

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::task::{Context, Poll, Waker};

use crate::ids::ScalableTargetId;
use crate::model::{LogEntry, Observed, Suspended};
use crate::ports::{PortError, SaveOutcome, ScalingTargets, StateStore, StoredPlan, DESCRIBE_PAGE};
use crate::state::TargetState;

/// Calls made through a memory port.
#[derive(Debug, Default)]
pub struct Calls {
    pub describe: AtomicUsize,
    pub register: AtomicUsize,
    pub load_plan: AtomicUsize,
    pub load_states: AtomicUsize,
    pub save_state: AtomicUsize,
    pub append_log: AtomicUsize,
}

impl Calls {
    pub fn get(counter: &AtomicUsize) -> usize {
        counter.load(Ordering::SeqCst)
    }
    fn bump(counter: &AtomicUsize) {
        counter.fetch_add(1, Ordering::SeqCst);
    }
    /// Calls that would change AWS or the table.
    pub fn mutations(&self) -> usize {
        Self::get(&self.register) + Self::get(&self.save_state) + Self::get(&self.append_log)
    }
}

/// Application Auto Scaling in memory.
#[derive(Debug, Default)]
pub struct MemoryScalingTargets {
    targets: Mutex<BTreeMap<ScalableTargetId, Observed>>,
    pub calls: Calls,
}

impl MemoryScalingTargets {
    pub fn with_target(self, id: ScalableTargetId, min: u32, max: u32) -> Self {
        self.set(Observed {
            id,
            min,
            max,
            suspended: Suspended::default(),
        });
        self
    }

    /// Changes a target behind headroom's back (as an operator's console edit would).
    pub fn set(&self, observed: Observed) {
        lock(&self.targets).insert(observed.id.clone(), observed);
    }

    pub fn get(&self, id: &ScalableTargetId) -> Option<Observed> {
        lock(&self.targets).get(id).cloned()
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl ScalingTargets for MemoryScalingTargets {
    async fn describe(&self, ids: &[ScalableTargetId]) -> Result<Vec<Observed>, PortError> {
        assert!(
            ids.len() <= DESCRIBE_PAGE,
            "DescribeScalableTargets takes at most 50 ids"
        );
        Calls::bump(&self.calls.describe);
        let targets = lock(&self.targets);
        Ok(ids
            .iter()
            .filter_map(|id| targets.get(id).cloned())
            .collect())
    }

    async fn register(
        &self,
        id: &ScalableTargetId,
        min: u32,
        max: u32,
        suspended: Suspended,
    ) -> Result<(), PortError> {
        Calls::bump(&self.calls.register);
        self.set(Observed {
            id: id.clone(),
            min,
            max,
            suspended,
        });
        Ok(())
    }
}

/// headroom's table in memory, with the same conditional-write rules as the DynamoDB adapter.
#[derive(Debug, Default)]
pub struct MemoryStateStore {
    plan: Mutex<Option<StoredPlan>>,
    states: Mutex<BTreeMap<ScalableTargetId, TargetState>>,
    log: Mutex<Vec<serde_json::Value>>,
    /// The log's records by a hash of their text, so that appending again finds its twin without
    /// comparing every record (a simulated month writes tens of thousands).
    log_index: Mutex<std::collections::HashMap<u64, Vec<usize>>>,
    pub calls: Calls,
}

impl MemoryStateStore {
    pub fn with_plan(self, text: &str) -> Self {
        *lock(&self.plan) = Some(StoredPlan {
            version: 1,
            text: text.to_owned(),
            source_name: "memory".into(),
            applied_at: chrono::DateTime::UNIX_EPOCH,
        });
        self
    }

    pub fn state(&self, id: &ScalableTargetId) -> TargetState {
        lock(&self.states).get(id).cloned().unwrap_or_default()
    }

    /// Overwrites a state, bypassing the version check (for test setup).
    pub fn put_state(&self, id: &ScalableTargetId, state: TargetState) {
        lock(&self.states).insert(id.clone(), state);
    }

    pub fn log(&self) -> Vec<serde_json::Value> {
        lock(&self.log).clone()
    }
}

impl StateStore for MemoryStateStore {
    async fn load_plan(&self) -> Result<Option<StoredPlan>, PortError> {
        Calls::bump(&self.calls.load_plan);
        Ok(lock(&self.plan).clone())
    }

    async fn save_plan(
        &self,
        plan: &StoredPlan,
        expected_version: u64,
    ) -> Result<SaveOutcome, PortError> {
        let mut current = lock(&self.plan);
        let version = current.as_ref().map_or(0, |p| p.version);
        if version != expected_version {
            return Ok(SaveOutcome::Conflict);
        }
        *current = Some(StoredPlan {
            version: expected_version + 1,
            ..plan.clone()
        });
        Ok(SaveOutcome::Saved)
    }

    async fn load_states(
        &self,
        ids: &[ScalableTargetId],
    ) -> Result<Vec<(ScalableTargetId, TargetState)>, PortError> {
        Calls::bump(&self.calls.load_states);
        let states = lock(&self.states);
        Ok(ids
            .iter()
            .map(|id| (id.clone(), states.get(id).cloned().unwrap_or_default()))
            .collect())
    }

    async fn save_state(
        &self,
        id: &ScalableTargetId,
        state: &TargetState,
        _token: &str,
    ) -> Result<SaveOutcome, PortError> {
        Calls::bump(&self.calls.save_state);
        let mut states = lock(&self.states);
        let stored = states.get(id).map_or(0, |s| s.version);
        if stored != state.version {
            return Ok(SaveOutcome::Conflict);
        }
        let mut next = state.clone();
        next.version += 1;
        states.insert(id.clone(), next);
        Ok(SaveOutcome::Saved)
    }

    async fn append_log_entry(&self, entry: &LogEntry) -> Result<(), PortError> {
        Calls::bump(&self.calls.append_log);
        // Keyed like the DynamoDB adapter's items: the same entry appended again replaces itself.
        let mut log = lock(&self.log);
        let mut index = lock(&self.log_index);
        let key = crate::identity::fnv1a(entry.body.to_string().as_bytes());
        let twins = index.entry(key).or_default();
        if !twins.iter().any(|&i| log[i] == entry.body) {
            twins.push(log.len());
            log.push(entry.body.clone());
        }
        Ok(())
    }

    async fn recent_log(
        &self,
        id: &ScalableTargetId,
        limit: usize,
    ) -> Result<Vec<LogEntry>, PortError> {
        let name = id.to_string();
        Ok(lock(&self.log)
            .iter()
            .rev()
            .filter(|r| r.get("target").and_then(|t| t.as_str()) == Some(name.as_str()))
            .take(limit)
            .map(|body| LogEntry {
                target: id.clone(),
                at: body
                    .get("at")
                    .and_then(|a| serde_json::from_value(a.clone()).ok())
                    .unwrap_or(chrono::DateTime::UNIX_EPOCH),
                body: body.clone(),
            })
            .collect())
    }
}

/// Runs a future whose every await is immediately ready, as with the memory ports. The
/// simulator drives the same async reconcile code as the Lambdas through this, without a runtime.
///
/// # Panics
/// If the future is still pending after many polls (it waits on real I/O).
pub fn block_on<F: Future>(future: F) -> F::Output {
    let mut future = std::pin::pin!(future);
    let mut cx = Context::from_waker(Waker::noop());
    for _ in 0..1_000 {
        if let Poll::Ready(value) = future.as_mut().poll(&mut cx) {
            return value;
        }
    }
    panic!("block_on: the future waits on real I/O; use an async runtime instead");
}
