//! Application Auto Scaling for one scalable target, as it behaves for SageMaker variants.
//!
//! Modelling assumptions (numbers and rules from `aws-facts.md` and the AAS user guide):
//! - Target tracking owns two alarms: scale-out when the metric is above the target for 3 of 3
//!   datapoints, scale-in when it is below 90 % of the target for 15 of 15. Both are 1-minute
//!   alarms, except that with the high-resolution `ConcurrentRequestsPerModel` the scale-out alarm
//!   uses 10-second datapoints ("they speed up scale-out only"). AAS re-invokes the policy at every
//!   evaluation while an alarm stays in ALARM.
//! - The new capacity is `ceil(current x metric / target)`, with the newest visible datapoint.
//!   "Current" is the number of instances in service, the count the per-instance metrics are
//!   divided by, so that `current x metric` is the load actually measured (at least 1, matching
//!   the backlog-per-instance metric, which divides by 1 when nothing serves).
//! - Scale-out cooldown (default 300 s) runs from the end of the scale-out activity (every new
//!   instance in service). Until then "the capacity added by the previous scale-out is calculated
//!   as part of the desired capacity for the next": we compute the proposal on the capacity before
//!   that activity and act only when it exceeds the current desired count, so late datapoints that
//!   still reflect the old count do not add the same capacity twice.
//! - Scale-in cooldown (default 300 s) blocks the next scale-in; a scale-out during it acts at
//!   once. Scale-in never goes below MinCapacity; scale-out never above MaxCapacity.
//! - With several policies, the largest proposed capacity wins.
//! - The backlog step policy (AWS's scale-from-zero recipe) adds `adjustment` to the instances in
//!   service when HasBacklogWithoutCapacity is in ALARM (Average, 60 s, 2 of 2, >= 1), at most once
//!   per cooldown.
//! - RegisterScalableTarget updates min, max and the suspension flags at once: raising MinCapacity
//!   above the desired count scales out to it, lowering MaxCapacity below it scales in. These are
//!   not policy activities and start no cooldown.
//! - SuspendedState: `dynamic_in` / `dynamic_out` stop the policies' scale-in / scale-out,
//!   `scheduled` stops scheduled actions.

use headroom_core::Suspended;

use crate::cloudwatch::{evaluate, AlarmState, Rule};
use crate::metrics::{newest_visible, Meter};
use crate::world::{Comparison, Metric, StepPolicy, TrackingPolicy};

/// Target tracking's scale-out alarm: 3 of 3 above the target.
pub const SCALE_OUT_DATAPOINTS: u32 = 3;
/// Target tracking's scale-in alarm: 15 of 15 below 90 % of the target.
pub const SCALE_IN_DATAPOINTS: u32 = 15;
pub const SCALE_IN_RATIO: f64 = 0.9;
/// AWS's HasBacklogWithoutCapacity alarm: 2 of 2 one-minute averages >= 1.
pub const BACKLOG_DATAPOINTS: u32 = 2;

/// Which policy proposed a scale-out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Cause {
    Tracking,
    BacklogStep,
}

/// Counters of what AAS did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AasCounters {
    pub scale_outs: u64,
    pub scale_ins: u64,
    pub step_scale_outs: u64,
    pub registers: u64,
    pub scheduled: u64,
}

/// A scheduled action resolved to one firing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Firing {
    pub at: i64,
    pub min: Option<u32>,
    pub max: Option<u32>,
}

#[derive(Debug, Clone)]
pub struct Aas {
    pub min: u32,
    pub max: u32,
    pub suspended: Suspended,
    /// DesiredInstanceCount.
    pub desired: u32,
    tracking: Option<TrackingPolicy>,
    step: Option<StepPolicy>,
    standard_delay: i64,
    high_resolution_delay: i64,
    /// A scale-out activity not yet complete: the capacity in service before it.
    out_activity: Option<u32>,
    /// Base capacity and end of the scale-out cooldown once the activity completed.
    out_cooldown: Option<(u32, i64)>,
    in_cooldown_until: i64,
    step_cooldown_until: i64,
    schedule: Vec<Firing>,
    next_firing: usize,
    pub high: AlarmState,
    pub low: AlarmState,
    pub backlog: AlarmState,
    pub counters: AasCounters,
}

impl Aas {
    pub fn new(
        min: u32,
        max: u32,
        desired: u32,
        tracking: Option<TrackingPolicy>,
        step: Option<StepPolicy>,
        delays: (i64, i64),
    ) -> Self {
        Self {
            min,
            max,
            suspended: Suspended::default(),
            desired: desired.clamp(min, max),
            tracking,
            step,
            standard_delay: delays.0,
            high_resolution_delay: delays.1,
            out_activity: None,
            out_cooldown: None,
            in_cooldown_until: i64::MIN,
            step_cooldown_until: i64::MIN,
            schedule: Vec::new(),
            next_firing: 0,
            high: AlarmState::InsufficientData,
            low: AlarmState::InsufficientData,
            backlog: AlarmState::InsufficientData,
            counters: AasCounters::default(),
        }
    }

    /// Scheduled actions, in firing order.
    pub fn with_schedule(mut self, mut firings: Vec<Firing>) -> Self {
        firings.sort_by_key(|f| f.at);
        self.schedule = firings;
        self
    }

    /// RegisterScalableTarget.
    pub fn register(&mut self, min: u32, max: u32, suspended: Suspended) {
        self.counters.registers += 1;
        self.min = min;
        self.max = max;
        self.suspended = suspended;
        self.clamp();
    }

    fn clamp(&mut self) {
        self.desired = self.desired.clamp(self.min, self.max.max(self.min));
    }

    /// Fires the scheduled actions due by `now`.
    pub fn run_schedule(&mut self, now: i64) {
        while let Some(f) = self.schedule.get(self.next_firing).copied() {
            if f.at > now {
                break;
            }
            self.next_firing += 1;
            if self.suspended.scheduled {
                continue;
            }
            self.counters.scheduled += 1;
            if let Some(min) = f.min {
                self.min = min;
            }
            if let Some(max) = f.max {
                self.max = max;
            }
            self.clamp();
        }
    }

    /// The scale-out cooldown in force at `now`: the capacity the next proposal is computed on.
    fn out_base(&mut self, now: i64, in_service: u32) -> Option<u32> {
        if let Some(base) = self.out_activity {
            if in_service >= self.desired {
                // The activity completed: every instance it asked for serves.
                self.out_activity = None;
                if let Some(t) = self.tracking {
                    self.out_cooldown = Some((base, now + t.scale_out_cooldown));
                }
            } else {
                return Some(base);
            }
        }
        match self.out_cooldown {
            Some((base, until)) if now < until => Some(base),
            _ => {
                self.out_cooldown = None;
                None
            }
        }
    }

    /// Runs the policies at `now` (every step; each alarm evaluates when its period ends).
    pub fn evaluate(&mut self, now: i64, in_service: u32, meter: &Meter) {
        let out_base = self.out_base(now, in_service);
        let current = in_service.max(1);
        let mut out_proposal: Option<(u32, Cause)> = None;
        let mut in_proposal: Option<u32> = None;
        let minute = now.rem_euclid(60) == 0;

        if let Some(t) = self.tracking {
            let high_res = t.metric == Metric::ConcurrentRequestsPerModel;
            let (out_series, out_len, out_delay) = if high_res {
                (&meter.ten_second, 10, self.high_resolution_delay)
            } else {
                (meter.series(t.metric), 60, self.standard_delay)
            };
            if now.rem_euclid(out_len) == 0 {
                let newest = newest_visible(now, out_len, out_delay);
                self.high = evaluate(
                    out_series,
                    newest,
                    Rule {
                        comparison: Comparison::GreaterThan,
                        threshold: t.target_value,
                        n: SCALE_OUT_DATAPOINTS,
                        m: SCALE_OUT_DATAPOINTS,
                    },
                );
                let v = out_series.get(newest);
                if self.high == AlarmState::Alarm && !v.is_nan() {
                    let base = out_base.unwrap_or(current).max(1);
                    out_proposal = Some((proportional(base, v, t.target_value), Cause::Tracking));
                }
            }
            if minute {
                let series = meter.series(t.metric);
                let newest = newest_visible(now, 60, self.standard_delay);
                self.low = evaluate(
                    series,
                    newest,
                    Rule {
                        comparison: Comparison::LessThan,
                        threshold: t.target_value * SCALE_IN_RATIO,
                        n: SCALE_IN_DATAPOINTS,
                        m: SCALE_IN_DATAPOINTS,
                    },
                );
                let v = series.get(newest);
                if self.low == AlarmState::Alarm && !v.is_nan() && !t.disable_scale_in {
                    in_proposal = Some(proportional(current, v, t.target_value));
                }
            }
        }

        if let (Some(step), true) = (self.step, minute) {
            let newest = newest_visible(now, 60, self.standard_delay);
            self.backlog = evaluate(
                meter.series(Metric::HasBacklogWithoutCapacity),
                newest,
                Rule {
                    comparison: Comparison::GreaterOrEqual,
                    threshold: 1.0,
                    n: BACKLOG_DATAPOINTS,
                    m: BACKLOG_DATAPOINTS,
                },
            );
            if self.backlog == AlarmState::Alarm && now >= self.step_cooldown_until {
                let p = in_service + step.adjustment;
                if out_proposal.is_none_or(|(o, _)| p > o) {
                    out_proposal = Some((p, Cause::BacklogStep));
                }
            }
        }

        if let Some((proposal, cause)) = out_proposal {
            let proposal = proposal.min(self.max);
            if proposal > self.desired && !self.suspended.dynamic_out {
                match cause {
                    Cause::BacklogStep => {
                        self.counters.step_scale_outs += 1;
                        if let Some(step) = self.step {
                            self.step_cooldown_until = now + step.cooldown;
                        }
                    }
                    _ => {
                        self.counters.scale_outs += 1;
                        // A scale-out during an activity or cooldown keeps the original base.
                        self.out_activity = Some(out_base.unwrap_or(current));
                        self.out_cooldown = None;
                    }
                }
                self.desired = proposal;
                return;
            }
        }
        if let Some(proposal) = in_proposal {
            let proposal = proposal.max(self.min);
            if proposal < self.desired
                && !self.suspended.dynamic_in
                && now >= self.in_cooldown_until
            {
                self.counters.scale_ins += 1;
                self.desired = proposal;
                if let Some(t) = self.tracking {
                    self.in_cooldown_until = now + t.scale_in_cooldown;
                }
            }
        }
    }
}

/// `ceil(current x metric / target)`, tolerant of floating-point noise.
pub fn proportional(current: u32, metric: f64, target: f64) -> u32 {
    let x = f64::from(current) * metric / target;
    (x - 1e-9).ceil().max(0.0) as u32
}
