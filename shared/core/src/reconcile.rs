//! Observe, decide, apply. Every trigger ends here as "reconcile target X" (or all of them, for
//! the tick). Applying is idempotent: AAS is called only when the decision differs from what AAS
//! reports, state is written only when it changed, and a second run right after the first does
//! nothing.

use chrono::{DateTime, Utc};
use serde::Serialize;

use crate::decide::{decide_from, Action, Decision};
use crate::ids::ScalableTargetId;
use crate::lead_time::lead_time;
use crate::log::DecisionRecord;
use crate::model::{LogEntry, Observed};
use crate::plan::{parse_plan, Plan, PlanError, TargetPlan};
use crate::ports::{ErrorClass, PortError, SaveOutcome, ScalingTargets, StateStore};
use crate::state::{take_state, TargetState};

/// How often a conditional write may lose a race before the reconcile gives up (and the trigger
/// retries later).
const MAX_ATTEMPTS: usize = 5;

#[derive(Debug, thiserror::Error)]
pub enum ReconcileError {
    #[error("failed to load the plan: {0}")]
    LoadPlan(#[source] PortError),
    #[error("no plan is stored: run `headroom plan apply FILE` first")]
    NoPlan,
    #[error("the stored plan (version {version}) no longer validates: {source}")]
    BadStoredPlan {
        version: u64,
        #[source]
        source: PlanError,
    },
    #[error("{target} is not managed by the plan: headroom leaves it alone")]
    Unmanaged { target: String },
    #[error("failed to {step} for {target}: {source}")]
    Port {
        target: String,
        step: &'static str,
        #[source]
        source: PortError,
    },
    #[error("gave up on {target} after {MAX_ATTEMPTS} conflicting writes; the next trigger will try again")]
    TooManyConflicts { target: String },
}

impl ReconcileError {
    /// Whether the trigger should be retried (Lambda's retry, then its dead-letter destination).
    pub fn is_retryable(&self) -> bool {
        match self {
            Self::LoadPlan(e) | Self::Port { source: e, .. } => e.is_retryable(),
            Self::TooManyConflicts { .. } => true,
            Self::NoPlan | Self::BadStoredPlan { .. } | Self::Unmanaged { .. } => false,
        }
    }

    /// AWS's error code behind the failure, when AWS answered.
    pub fn aws_code(&self) -> Option<&str> {
        match self {
            Self::LoadPlan(e) | Self::Port { source: e, .. } => e.code(),
            _ => None,
        }
    }
}

/// A pure change an event makes to a target's state before the decision, identified by the
/// event's idempotency key so that a duplicate has no second effect.
pub struct EventChange<'a> {
    pub key: String,
    /// Applies the event; returns notes for the decision log (empty when it changed nothing).
    pub apply: &'a (dyn Fn(&mut TargetState) -> Vec<String> + Send + Sync),
}

/// What one reconcile of one target did.
#[derive(Debug, Clone, Serialize)]
pub struct TargetOutcome {
    pub decision: Decision,
    /// The event was a duplicate and changed nothing.
    pub duplicate: bool,
    pub state_written: bool,
    pub notes: Vec<String>,
}

/// Loads and validates the stored plan.
pub async fn load_plan<S: StateStore>(store: &S) -> Result<(u64, Plan), ReconcileError> {
    let stored = store
        .load_plan()
        .await
        .map_err(ReconcileError::LoadPlan)?
        .ok_or(ReconcileError::NoPlan)?;
    let plan = parse_plan(
        &format!("version {} ({})", stored.version, stored.source_name),
        &stored.text,
    )
    .map_err(|source| ReconcileError::BadStoredPlan {
        version: stored.version,
        source,
    })?;
    Ok((stored.version, plan))
}

fn port<'a>(
    target: &'a ScalableTargetId,
    step: &'static str,
) -> impl FnOnce(PortError) -> ReconcileError + 'a {
    move |source| ReconcileError::Port {
        target: target.to_string(),
        step,
        source,
    }
}

/// Decides with the lead time in force for this target.
fn decide_now(
    target: &TargetPlan,
    observed: Option<&Observed>,
    state: TargetState,
    now: DateTime<Utc>,
) -> Decision {
    let lead = lead_time(target, &state.lead_samples, state.model.as_ref());
    decide_from(target, observed, state, lead.span, now)
}

/// Applies a decision: the state first (conditional), then AAS (idempotent), then the log.
///
/// The conditional write decides the race: a decision that loses it is never sent to AAS, and
/// the one that wins is stored, with the bounds it intends (`last_applied`), before AAS hears of
/// it. A register that fails after the write is retried by the next run, which finds AAS short of
/// the stored bounds and registers them again (AAS showing bounds headroom stored itself is never
/// drift, see `decide`). The ambiguous write (it landed, its answer was lost) counts as saved
/// through the token, so it proceeds to AAS like any won write.
///
/// The decision-log record travels in the same write, as pending (`TargetState::pending_log`);
/// once it is appended, a second conditional write clears it. When the append (or the clearing)
/// fails, the next run finds it pending, appends it again (the same entry is the same record) and
/// clears it in its own write: every applied decision has exactly one record, however often the
/// trigger is retried.
///
/// The state is written from `decision.next_state` itself, not from a copy of it: afterwards it
/// is what the last write sent (its `version` and `pending_log` were that write's inputs, not
/// the stored item's), so callers read nothing from it but what the decision made.
async fn apply<A: ScalingTargets, S: StateStore>(
    aas: &A,
    store: &S,
    decision: &mut Decision,
    before: &TargetState,
    trigger: &str,
    notes: &[String],
    force_write: bool,
) -> Result<(SaveOutcome, bool), ReconcileError> {
    let id = &decision.target;
    let at = decision.at;
    let register = match decision.action {
        Action::Register {
            min,
            max,
            suspended,
        } => Some((min, max, suspended)),
        _ => None,
    };
    // Records an earlier run stored but may not have appended.
    for entry in &before.pending_log {
        store
            .append_log_entry(entry)
            .await
            .map_err(port(id, "append a pending decision-log record"))?;
    }
    let record = (decision.worth_logging() || !notes.is_empty()).then(|| DecisionRecord {
        trigger: trigger.to_owned(),
        decision: decision.clone(),
        model: decision.next_state.model.clone(),
        notes: notes.to_vec(),
    });
    let entry =
        record
            .as_ref()
            .map(LogEntry::of)
            .transpose()
            .map_err(|e| ReconcileError::Port {
                target: id.to_string(),
                step: "encode the decision-log record",
                source: PortError::new("encode a decision-log record", ErrorClass::Permanent, e),
            })?;
    let next = &mut decision.next_state;
    next.version = before.version;
    next.pending_log = entry.iter().cloned().collect();
    // Every register is preceded by a write, even one that changes nothing else: only the won
    // condition proves the decision was made on the newest state.
    let mut written = false;
    if force_write || register.is_some() || !next.same_content(before) {
        let token = write_token(trigger, at);
        match store
            .save_state(id, next, &token)
            .await
            .map_err(port(id, "save the target state"))?
        {
            SaveOutcome::Saved => written = true,
            SaveOutcome::Conflict => return Ok((SaveOutcome::Conflict, false)),
        }
    }
    if let Some((min, max, suspended)) = register {
        aas.register(id, min, max, suspended)
            .await
            .map_err(port(id, "register the scalable target"))?;
    }
    if let (Some(record), Some(entry)) = (&record, &entry) {
        log_decision(record);
        store
            .append_log_entry(entry)
            .await
            .map_err(port(id, "append the decision log"))?;
        if written {
            next.version = before.version + 1;
            next.pending_log.clear();
            let token = write_token(trigger, at);
            // A conflict here means another run wrote after ours: it read the pending record and
            // appends it itself, so nothing is lost.
            store
                .save_state(id, next, &token)
                .await
                .map_err(port(id, "clear the pending decision-log record"))?;
        }
    }
    Ok((SaveOutcome::Saved, written))
}

/// A token unique to this write, so that "the stored item holds my token" proves that this very
/// write landed (the ambiguous-write check), even for two invocations with the same trigger in
/// the same millisecond.
fn write_token(trigger: &str, at: DateTime<Utc>) -> String {
    use std::hash::{BuildHasher, Hasher};
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::sync::OnceLock;
    // RandomState is seeded randomly once per process; the counter separates writes within it.
    static SEED: OnceLock<std::collections::hash_map::RandomState> = OnceLock::new();
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let mut hasher = SEED.get_or_init(Default::default).build_hasher();
    hasher.write_u64(COUNTER.fetch_add(1, Ordering::Relaxed));
    format!(
        "{trigger}@{}#{:016x}",
        at.timestamp_millis(),
        hasher.finish()
    )
}

/// The structured log line every change leaves (`DecisionRecord::emit`: flat fields, no debug
/// strings).
fn log_decision(record: &DecisionRecord) {
    record.emit();
}

/// Reconciles one managed target, optionally applying an event's change to its state first.
/// Re-reads and decides again when another invocation wrote in between.
pub async fn reconcile_target<A: ScalingTargets, S: StateStore>(
    aas: &A,
    store: &S,
    target: &TargetPlan,
    now: DateTime<Utc>,
    trigger: &str,
    change: Option<&EventChange<'_>>,
) -> Result<TargetOutcome, ReconcileError> {
    let steps = Steps {
        observe: None,
        change,
    };
    reconcile_from(aas, store, target, now, trigger, &steps, None)
        .await
        .map(|(outcome, _)| outcome)
}

/// A pure observation folded into the state before the decision (the tick's capacity check):
/// returns notes for the decision log.
pub type Observation<'a> = &'a (dyn Fn(&mut TargetState) -> Vec<String> + Send + Sync);

/// The pure changes one reconcile makes to the state it read, before deciding; redone on the
/// fresh state when a write loses a race, so none of them is lost.
struct Steps<'a> {
    observe: Option<Observation<'a>>,
    change: Option<&'a EventChange<'a>>,
}

/// Reconciles `target` after folding `observe` into its state, starting from reads already made
/// (`page`: AAS's view and the stored state, as the tick has them); every attempt after a lost
/// race re-reads and observes again. Returns the outcome and the observation's notes.
pub async fn reconcile_observed<A: ScalingTargets, S: StateStore>(
    aas: &A,
    store: &S,
    target: &TargetPlan,
    now: DateTime<Utc>,
    trigger: &str,
    observe: Option<Observation<'_>>,
    page: (Option<&Observed>, TargetState),
) -> Result<(TargetOutcome, Vec<String>), ReconcileError> {
    let steps = Steps {
        observe,
        change: None,
    };
    reconcile_from(aas, store, target, now, trigger, &steps, Some(page)).await
}

/// Reconciles `target`, starting from reads already made or from fresh ones; every attempt after
/// a lost race re-reads.
async fn reconcile_from<A: ScalingTargets, S: StateStore>(
    aas: &A,
    store: &S,
    target: &TargetPlan,
    now: DateTime<Utc>,
    trigger: &str,
    steps: &Steps<'_>,
    mut page: Option<(Option<&Observed>, TargetState)>,
) -> Result<(TargetOutcome, Vec<String>), ReconcileError> {
    let id = &target.id;
    for _ in 0..MAX_ATTEMPTS {
        let fresh: Vec<Observed>;
        let (observed, before) = match page.take() {
            Some(reads) => reads,
            None => {
                let ids = std::slice::from_ref(id);
                fresh = aas
                    .describe(ids)
                    .await
                    .map_err(port(id, "describe the scalable target"))?;
                let mut states = store
                    .load_states(ids)
                    .await
                    .map_err(port(id, "load the target state"))?;
                (
                    fresh.iter().find(|o| &o.id == id),
                    take_state(&mut states, id),
                )
            }
        };
        let mut state = before.clone();
        let observed_notes = steps.observe.map(|o| o(&mut state)).unwrap_or_default();
        let mut notes = observed_notes.clone();
        let mut duplicate = false;
        if let Some(change) = steps.change {
            if state.has_seen(&change.key, now) {
                duplicate = true;
                notes.push(format!(
                    "event {} was already applied: no second effect",
                    change.key
                ));
            } else {
                notes.extend((change.apply)(&mut state));
                state.mark_seen(&change.key, now);
            }
        }
        let mut decision = decide_now(target, observed, state, now);
        let force = steps.change.is_some() && !duplicate;
        // A duplicate event's note explains the outcome; it is not worth a log record. Whatever
        // a redelivery still changes (a register an earlier attempt stored but could not make,
        // other claims that landed since) is a plain reconcile, and its record says so: the
        // event's own effect has its one record already.
        let log_notes = if duplicate { &observed_notes } else { &notes };
        let redelivered;
        let logged_trigger = if duplicate {
            redelivered = format!("{trigger} (redelivered)");
            redelivered.as_str()
        } else {
            trigger
        };
        match apply(
            aas,
            store,
            &mut decision,
            &before,
            logged_trigger,
            log_notes,
            force,
        )
        .await?
        {
            (SaveOutcome::Saved, written) => {
                let outcome = TargetOutcome {
                    decision,
                    duplicate,
                    state_written: written,
                    notes,
                };
                return Ok((outcome, observed_notes));
            }
            (SaveOutcome::Conflict, _) => continue,
        }
    }
    Err(ReconcileError::TooManyConflicts {
        target: id.to_string(),
    })
}

/// Reconciles one target named by an event, refusing any target the plan does not manage.
pub async fn reconcile_named<A: ScalingTargets, S: StateStore>(
    aas: &A,
    store: &S,
    plan: &Plan,
    id: &ScalableTargetId,
    now: DateTime<Utc>,
    trigger: &str,
    change: Option<&EventChange<'_>>,
) -> Result<TargetOutcome, ReconcileError> {
    let target = plan.target(id).ok_or_else(|| ReconcileError::Unmanaged {
        target: id.to_string(),
    })?;
    reconcile_target(aas, store, target, now, trigger, change).await
}
