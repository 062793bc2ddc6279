//! The one place where headroom decides what a target's bounds should be. Pure: no I/O, no clock,
//! no AWS types. Everything it needs comes in as arguments, everything it wants done goes out in
//! the `Decision`, which the reconcile step applies.

use chrono::{DateTime, Utc};
use serde::Serialize;

use crate::claim::{Claim, ClaimNow, ClaimSource};
use crate::duration::Span;
use crate::forecast::claims::forecast_claim;
use crate::ids::ScalableTargetId;
use crate::model::{Bounds, Observed, Suspended};
use crate::peaks::peak_claims;
use crate::plan::TargetPlan;
use crate::state::{Drift, TargetState, EARLIER_APPLIED_KEPT};

/// What the reconcile step must do to AAS.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Action {
    /// Nothing differs: no AWS call.
    None,
    /// RegisterScalableTarget with these values.
    Register {
        min: u32,
        max: u32,
        suspended: Suspended,
    },
    /// The operator paused headroom on this target: leave it alone.
    Paused { until: DateTime<Utc> },
}

/// The decision for one target at one instant, with everything the log needs to explain it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Decision {
    pub target: ScalableTargetId,
    pub at: DateTime<Utc>,
    pub action: Action,
    pub desired: Bounds,
    pub observed: Option<Bounds>,
    /// The claim that sets the floor, if any claim is above the base minimum.
    pub winner: Option<ClaimSource>,
    /// Every live claim and what it asks now.
    pub claims: Vec<ClaimNow>,
    pub lead_time: Span,
    /// Set when someone changed the target's bounds outside headroom.
    pub drift: Option<Drift>,
    pub reasons: Vec<String>,
    /// The state to store (expired claims pruned, last applied bounds recorded).
    #[serde(skip)]
    pub next_state: TargetState,
}

impl Decision {
    /// Whether the stored state must be written.
    pub fn state_changed(&self, before: &TargetState) -> bool {
        !self.next_state.same_content(before)
    }

    /// Whether this decision is worth a decision-log record: it changes AWS, or it found drift.
    pub fn worth_logging(&self) -> bool {
        matches!(self.action, Action::Register { .. }) || self.drift.is_some()
    }
}

/// Effective bounds from the base plan and the live claims: MinCapacity is the largest live floor,
/// never below the base minimum and never above MaxCapacity; scale-in is suspended while any live
/// claim asks for it. Claim order does not matter.
pub fn arbitrate(target: &TargetPlan, claims: &[ClaimNow]) -> (Bounds, Option<ClaimSource>) {
    let top = claims
        .iter()
        .filter(|c| c.floor > target.min_capacity)
        .max_by(|a, b| a.floor.cmp(&b.floor).then_with(|| b.source.cmp(&a.source)));
    let floor = top.map_or(target.min_capacity, |c| c.floor);
    let bounds = Bounds {
        min: floor.clamp(target.min_capacity, target.max_capacity),
        max: target.max_capacity,
        suspend_scale_in: claims.iter().any(|c| c.suspend_scale_in),
    };
    (bounds, top.map(|c| c.source.clone()))
}

/// Every claim live at `now`: the stored ones and those derived from the plan's peaks. A stored
/// claim and a derived one from the same source both count (an explicit peak event may name a
/// plan peak); arbitration takes the larger.
pub fn live_claims(
    target: &TargetPlan,
    stored: &[Claim],
    lead_time: Span,
    now: DateTime<Utc>,
) -> Vec<ClaimNow> {
    collect_live(stored, &peak_claims(target, lead_time, now), now)
}

/// [`live_claims`] plus the forecast's claim, which is derived from the stored forecast.
pub fn live_claims_of(
    target: &TargetPlan,
    state: &TargetState,
    lead_time: Span,
    now: DateTime<Utc>,
) -> Vec<ClaimNow> {
    let mut derived = peak_claims(target, lead_time, now);
    if let Some(policy) = &target.forecast {
        derived.extend(forecast_claim(
            policy,
            state.forecast.as_deref(),
            lead_time,
            now,
        ));
    }
    collect_live(&state.claims, &derived, now)
}

fn collect_live(stored: &[Claim], derived: &[Claim], now: DateTime<Utc>) -> Vec<ClaimNow> {
    let mut live: Vec<ClaimNow> = stored
        .iter()
        .chain(derived.iter())
        .filter_map(|c| c.at(now))
        .collect();
    live.sort_by(|a, b| b.floor.cmp(&a.floor).then_with(|| a.source.cmp(&b.source)));
    live
}

/// Decides one target. `observed` is `None` when AAS has no such scalable target yet.
pub fn decide(
    target: &TargetPlan,
    observed: Option<&Observed>,
    state: &TargetState,
    lead_time: Span,
    now: DateTime<Utc>,
) -> Decision {
    decide_from(target, observed, state.clone(), lead_time, now)
}

/// [`decide`], taking the state it starts from: the reconcile has no further use for it, and
/// a target-minute of the simulator is cheaper by one copy of the state.
pub fn decide_from(
    target: &TargetPlan,
    observed: Option<&Observed>,
    state: TargetState,
    lead_time: Span,
    now: DateTime<Utc>,
) -> Decision {
    let mut next = state;
    next.prune(now);
    crate::alarm_prune::prune_alarm_facts(target, &mut next, now);
    let claims = live_claims_of(target, &next, lead_time, now);
    let (desired, winner) = arbitrate(target, &claims);
    let mut reasons = Vec::new();
    match &winner {
        Some(source) => {
            let c = claims.iter().find(|c| &c.source == source);
            // A claim past its full hold says so: its reason still names the window it served.
            let phase = match c {
                Some(c) if c.phase == crate::claim::RAMPING_DOWN => {
                    // A guard's steps may end between minutes: then the seconds are written.
                    let until = if chrono::Timelike::second(&c.until) == 0 {
                        crate::utc_text::Minute(c.until).to_string()
                    } else {
                        c.until.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
                    };
                    format!(" ({}, this step until {until})", c.phase)
                }
                _ => String::new(),
            };
            reasons.push(format!(
                "min {} from {source}{phase}: {}",
                desired.min,
                c.map_or("", |c| c.reason.as_str())
            ));
        }
        None => reasons.push(format!("min {} is the plan's base minimum", desired.min)),
    }
    if desired.suspend_scale_in {
        let by: Vec<String> = claims
            .iter()
            .filter(|c| c.suspend_scale_in)
            .map(|c| c.source.to_string())
            .collect();
        reasons.push(format!("scale-in suspended by {}", by.join(", ")));
    }

    let observed_bounds = observed.map(Observed::bounds);
    // Drift: AAS holds bounds that headroom neither wants now nor stored itself. The state is
    // written before AAS is called, so AAS may still show bounds headroom stored earlier (a
    // register that failed, or a slow one that landed late): those are restored, not drift.
    let own = |b: Bounds| next.last_applied == Some(b) || next.earlier_applied.contains(&b);
    let drift = match (observed_bounds, next.last_applied) {
        (Some(seen), Some(applied)) if !own(seen) && seen != desired => Some(Drift {
            detected_at: now,
            observed: seen,
            expected: applied,
        }),
        _ => None,
    };

    let action = if let Some(pause) = next.paused_at(now) {
        reasons.push(format!(
            "paused until {}: {}",
            pause.until.to_rfc3339(),
            pause.reason
        ));
        let action = Action::Paused { until: pause.until };
        next.drift = drift.clone().or(next.drift.take());
        action
    } else {
        converge(observed, desired, drift.as_ref(), &mut next, &mut reasons)
    };
    // The state is written before AAS is called, so a register still to come may fail: a
    // recorded failure ends only when a reconcile finds AAS in step (or the target paused).
    if !matches!(action, Action::Register { .. }) {
        next.last_error = None;
    }
    Decision {
        target: target.id.clone(),
        at: now,
        action,
        desired,
        observed: observed_bounds,
        winner,
        claims,
        lead_time,
        drift,
        reasons,
        next_state: next,
    }
}

/// What an active (not paused) target needs: a register call when AAS does not know it or holds
/// other bounds than `desired`. Records the drift found (or clears it once AAS is in step) and
/// the bounds applied in `next`.
fn converge(
    observed: Option<&Observed>,
    desired: Bounds,
    drift: Option<&Drift>,
    next: &mut TargetState,
    reasons: &mut Vec<String>,
) -> Action {
    let action = match observed {
        None => {
            reasons.push(
                "the target is not registered with Application Auto Scaling: registering it".into(),
            );
            Action::Register {
                min: desired.min,
                max: desired.max,
                suspended: Suspended {
                    dynamic_in: desired.suspend_scale_in,
                    ..Suspended::default()
                },
            }
        }
        Some(o) if o.bounds() != desired => Action::Register {
            min: desired.min,
            max: desired.max,
            suspended: Suspended {
                dynamic_in: desired.suspend_scale_in,
                ..o.suspended
            },
        },
        Some(_) => Action::None,
    };
    if let Some(d) = drift {
        reasons.push(format!(
            "drift: AAS has min {} max {} but headroom last set min {} max {}; restoring",
            d.observed.min, d.observed.max, d.expected.min, d.expected.max
        ));
        next.drift = Some(d.clone());
    } else if observed.map(Observed::bounds) == Some(desired)
        || matches!(action, Action::Register { .. })
    {
        next.drift = None;
    }
    // Remember what we applied, to tell later hand edits from our own changes. A target that
    // already sits at the desired bounds needs no write until headroom first changes it.
    if matches!(action, Action::Register { .. }) || next.last_applied.is_some() {
        // What AAS may go on showing until this change lands (or if its register fails): the
        // bounds stored before, and, unless they were a hand edit, the bounds AAS holds now.
        let held = observed
            .map(Observed::bounds)
            .filter(|_| drift.is_none() && matches!(action, Action::Register { .. }));
        for earlier in [next.last_applied, held].into_iter().flatten() {
            if earlier != desired {
                remember_earlier(next, earlier);
            }
        }
        next.last_applied = Some(desired);
    }
    action
}

/// Remembers bounds headroom stored or found before its latest change (newest last, bounded).
fn remember_earlier(next: &mut TargetState, earlier: Bounds) {
    next.earlier_applied.retain(|b| *b != earlier);
    next.earlier_applied.push(earlier);
    crate::newest::keep_newest(&mut next.earlier_applied, EARLIER_APPLIED_KEPT);
}
