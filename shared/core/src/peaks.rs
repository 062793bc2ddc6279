//! Known peaks become claims: live from `start - lead_time` to `start + duration`, then released
//! through the target's ramp. Derived from the plan at every reconcile, never stored, so a late or
//! repeated tick computes exactly the same claims.

use chrono::{DateTime, Utc};

use crate::claim::{Claim, ClaimSource};
use crate::duration::Span;
use crate::plan::{Peak, PeakWhen, TargetPlan};

/// The peak claims of `target` that matter at `now` (live, or starting within `lead_time`).
pub fn peak_claims(target: &TargetPlan, lead_time: Span, now: DateTime<Utc>) -> Vec<Claim> {
    let mut out = Vec::new();
    for peak in &target.peaks {
        if let Some(claim) = best_occurrence(target, peak, lead_time, now) {
            out.push(claim);
        }
    }
    out
}

fn claim_for(target: &TargetPlan, peak: &Peak, start: DateTime<Utc>, lead_time: Span) -> Claim {
    let end = start + peak.duration.to_chrono();
    Claim::new(
        ClaimSource::Peak(peak.name.clone()),
        peak.floor,
        start - lead_time.to_chrono(),
        end,
        Some(target.ramp_down),
        format!(
            "peak {} starts {} for {} (lead time {lead_time})",
            peak.name,
            crate::utc_text::Minute(start),
            peak.duration,
        ),
    )
    .suspending_scale_in(peak.suspend_scale_in)
}

/// Of all occurrences whose claim is live at `now`, the one asking the most (the later one on a
/// tie, since it holds longer).
fn best_occurrence(
    target: &TargetPlan,
    peak: &Peak,
    lead_time: Span,
    now: DateTime<Utc>,
) -> Option<Claim> {
    let ramp_len = target.ramp_down.length(peak.floor);
    // An occurrence at `s` is live during [s - lead, s + duration + ramp).
    let from = now - peak.duration.to_chrono() - ramp_len;
    let to = now + lead_time.to_chrono() + chrono::Duration::seconds(1);
    let starts: Vec<DateTime<Utc>> = match &peak.when {
        PeakWhen::Recurring { cron, timezone } => cron.occurrences(*timezone, from, to),
        PeakWhen::Once(at) => (*at >= from && *at < to)
            .then_some(*at)
            .into_iter()
            .collect(),
    };
    starts
        .into_iter()
        .map(|s| claim_for(target, peak, s, lead_time))
        .filter_map(|c| c.at(now).map(|n| (n.floor, c)))
        .max_by(|(fa, a), (fb, b)| fa.cmp(fb).then(a.full_until.cmp(&b.full_until)))
        .map(|(_, c)| c)
}

/// At most this many explicit peak windows are kept per target.
pub const MAX_EXPLICIT_PEAKS: usize = 24;

/// An explicit peak from outside the plan (a user's EventBridge Scheduler schedule): hold at least
/// `floor` on `target` from `starts_at` to `ends_at`, with the lead time added before.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PeakRequest {
    pub target: crate::ids::ScalableTargetId,
    pub name: String,
    pub floor: u32,
    pub starts_at: DateTime<Utc>,
    pub ends_at: DateTime<Utc>,
    pub suspend_scale_in: bool,
    /// The Scheduler's execution id or the caller's own, for logs.
    pub id: Option<String>,
}

impl PeakRequest {
    /// Two deliveries of the same peak have the same key, whatever their envelope ids.
    pub fn idempotency_key(&self) -> String {
        format!(
            "peak:{}:{}:{}:{}",
            self.name,
            self.starts_at.timestamp(),
            self.ends_at.timestamp(),
            self.floor
        )
    }
}

/// Turns an explicit peak into a stored claim, live from `starts_at - lead_time`. When that moment
/// has passed, the claim applies at once and the note says how late the event was; a peak that has
/// already ended is ignored. Returns notes for the decision log.
pub fn apply_peak_request(
    target: &TargetPlan,
    request: &PeakRequest,
    lead_time: Span,
    state: &mut crate::state::TargetState,
    now: DateTime<Utc>,
) -> Vec<String> {
    let mut notes = Vec::new();
    if now >= request.ends_at {
        notes.push(format!(
            "peak {} ended at {} before the event arrived: ignored",
            request.name,
            request.ends_at.to_rfc3339()
        ));
        return notes;
    }
    let floor = request.floor.min(target.max_capacity);
    if floor < request.floor {
        notes.push(format!(
            "peak {} asks for {} but max_capacity is {}: holding {}",
            request.name, request.floor, target.max_capacity, floor
        ));
    }
    let due = request.starts_at - lead_time.to_chrono();
    if now > due {
        let late = Span::seconds((now - due).num_seconds());
        notes.push(format!(
            "peak {} should have been pre-scaled at {} (start {} minus lead time {}); the event arrived {late} late: applied at once",
            request.name,
            due.to_rfc3339(),
            request.starts_at.to_rfc3339(),
            lead_time
        ));
    } else {
        notes.push(format!(
            "peak {} will be pre-scaled from {}",
            request.name,
            due.to_rfc3339()
        ));
    }
    // Each window is its own claim, keyed by name and start: two windows of one name both hold,
    // whatever their delivery order. Two deliveries of one window merge into the larger ask
    // (earliest pre-scale, latest end, larger floor, scale-in suspended if either asks), which no
    // order can change either.
    let source = ClaimSource::Peak(window_key(&request.name, request.starts_at));
    let (mut floor, mut due, mut ends_at, mut suspend) =
        (floor, due, request.ends_at, request.suspend_scale_in);
    if let Some(held) = state.claim(&source) {
        floor = floor.max(held.floor);
        due = due.min(held.starts_at);
        ends_at = ends_at.max(held.full_until);
        suspend |= held.suspend_scale_in;
    }
    let claim = Claim::new(
        source,
        floor,
        due,
        ends_at,
        Some(target.ramp_down),
        format!(
            "explicit peak {} from {} to {} (pre-scaled from {})",
            request.name,
            request.starts_at.format("%Y-%m-%dT%H:%MZ"),
            ends_at.format("%Y-%m-%dT%H:%MZ"),
            due.format("%Y-%m-%dT%H:%MZ")
        ),
    )
    .suspending_scale_in(suspend);
    state.put_claim(claim);
    if let Some(dropped) = bound_explicit_peaks(state) {
        notes.push(format!(
            "more than {MAX_EXPLICIT_PEAKS} explicit peak windows on {}: the one(s) ending last \
             are not kept ({})",
            target.id,
            dropped.join(", ")
        ));
    }
    notes
}

/// The claim key of one explicit peak window: `NAME@<start, UTC, to the second>`.
pub fn window_key(name: &str, starts_at: DateTime<Utc>) -> String {
    format!("{name}@{}", starts_at.format("%Y%m%dT%H%M%SZ"))
}

/// Keeps the [`MAX_EXPLICIT_PEAKS`] explicit windows that end soonest (a set rule: the same
/// windows stay whatever the delivery order); returns the keys dropped.
fn bound_explicit_peaks(state: &mut crate::state::TargetState) -> Option<Vec<String>> {
    let mut windows: Vec<(DateTime<Utc>, ClaimSource)> = state
        .claims
        .iter()
        .filter(|c| matches!(&c.source, ClaimSource::Peak(k) if k.contains('@')))
        .map(|c| (c.full_until, c.source.clone()))
        .collect();
    if windows.len() <= MAX_EXPLICIT_PEAKS {
        return None;
    }
    windows.sort();
    let dropped: Vec<String> = windows
        .split_off(MAX_EXPLICIT_PEAKS)
        .into_iter()
        .map(|(_, source)| {
            state.remove_claim(&source);
            source.to_string()
        })
        .collect();
    Some(dropped)
}

/// The change an explicit peak makes to its target's state: the request applied with the
/// target's lead time as measured so far (the tick Lambda and the simulator both use it).
pub fn peak_change<'a>(
    target: &'a TargetPlan,
    request: &'a PeakRequest,
    now: DateTime<Utc>,
) -> impl Fn(&mut crate::state::TargetState) -> Vec<String> + Send + Sync + 'a {
    move |state: &mut crate::state::TargetState| {
        let lead = crate::lead_time::lead_time(target, &state.lead_samples, state.model.as_ref());
        apply_peak_request(target, request, lead.span, state, now)
    }
}
