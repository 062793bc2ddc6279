//! A SageMaker endpoint target: instances that take a while to start, a per-instance capacity, and
//! a FIFO queue of requests. O(1) amortised per step; the queue and the pending list are allocated
//! once and reused.
//!
//! Modelling assumptions:
//! - An instance serves `capacity_per_instance` requests/s within the latency objective; the
//!   requests of a step are served first-come first-served, in 10-second steps.
//! - A request served in the step it arrives in meets the objective (capacity is defined at the
//!   objective). One that waits into a later step has waited about `whole steps x 10 s`; when that
//!   exceeds `latency_objective` it is late. Real-time objectives are usually under 10 s, so there
//!   any request carried over is late.
//! - Real-time: at most `queue_bound` requests wait; newer ones beyond it fail at once, and a
//!   waiting request fails after `request_timeout` (SageMaker's 60 s invocation timeout).
//!   Async: the queue is unbounded and nothing fails.
//! - A launched instance is billed from launch (provisioning and model loading included) and
//!   serves from `launch + provisioning`; provisioning is fixed or drawn per instance, seeded.
//! - The endpoint accepts a new desired count at any time (SageMaker serialises endpoint updates;
//!   we do not, which favours no strategy over another). Scale-in cancels instances still
//!   starting first (the latest to be ready first), then stops serving ones at once.

use std::collections::VecDeque;

use rand::rngs::SmallRng;
use rand::Rng;

use crate::trace::STEP_SECS;
use crate::world::{Mode, Provisioning, TargetWorld};

/// Request counts are fractional (intervals spread over steps); below this they are zero.
pub const EPSILON: f64 = 1e-6;

/// What one step did.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct StepOutcome {
    pub arrivals: f64,
    pub served: f64,
    /// Served after waiting past the latency objective.
    pub late: f64,
    pub failed: f64,
    /// Requests waiting at the end of the step.
    pub backlog: f64,
    /// Someone waited past the objective or failed in this step.
    pub breach: bool,
}

#[derive(Debug, Clone)]
pub struct Endpoint {
    mode: Mode,
    per_step: f64,
    queue_bound: f64,
    /// Steps a request may wait and still be on time.
    late_after: i64,
    /// Real-time: steps after which a waiting request fails.
    timeout_steps: i64,
    provisioning: Provisioning,
    in_service: u32,
    /// When each starting instance begins to serve (Unix seconds).
    pending: Vec<i64>,
    /// Waiting requests: (arrival step, count), oldest first.
    queue: VecDeque<(i64, f64)>,
    queued: f64,
    pub launches: u64,
}

impl Endpoint {
    pub fn new(t: &TargetWorld, in_service: u32) -> Self {
        Self {
            mode: t.mode,
            per_step: t.capacity_per_instance * STEP_SECS as f64,
            queue_bound: t.queue_bound,
            late_after: t.latency_objective / STEP_SECS,
            timeout_steps: t.request_timeout / STEP_SECS,
            provisioning: t.provisioning,
            in_service,
            pending: Vec::with_capacity(64),
            queue: VecDeque::with_capacity(64),
            queued: 0.0,
            launches: 0,
        }
    }

    pub fn in_service(&self) -> u32 {
        self.in_service
    }

    pub fn starting(&self) -> u32 {
        self.pending.len() as u32
    }

    /// Instances billed now: serving or starting.
    pub fn billed(&self) -> u32 {
        self.in_service + self.starting()
    }

    pub fn backlog(&self) -> f64 {
        self.queued
    }

    /// Sets the instances in service directly (the oracle's capacity is always ordered in time).
    pub fn set_in_service(&mut self, n: u32) {
        self.in_service = n;
    }

    /// Waiting requests, oldest first: (arrival step, count).
    pub fn waiting(&self) -> impl Iterator<Item = (i64, f64)> + '_ {
        self.queue.iter().copied()
    }

    /// Steps a request may wait and still be on time.
    pub fn late_after(&self) -> i64 {
        self.late_after
    }

    /// Requests one instance serves in one step.
    pub fn per_step(&self) -> f64 {
        self.per_step
    }

    /// Instances whose start completes by `now` begin serving.
    pub fn advance(&mut self, now: i64) {
        if self.pending.is_empty() {
            return;
        }
        let before = self.pending.len();
        self.pending.retain(|&ready_at| ready_at > now);
        self.in_service += (before - self.pending.len()) as u32;
    }

    /// Launches or stops instances so that serving + starting equals `desired`.
    pub fn converge(&mut self, desired: u32, now: i64, rng: &mut SmallRng) {
        let have = self.billed();
        if desired > have {
            for _ in 0..(desired - have) {
                let took = match self.provisioning {
                    Provisioning::Fixed(s) => s,
                    Provisioning::Uniform { min, max } => rng.random_range(min..=max),
                };
                self.pending.push(now + took);
                self.launches += 1;
            }
        } else if desired < have {
            let mut excess = have - desired;
            while excess > 0 && !self.pending.is_empty() {
                // Cancel the instance that would be ready last.
                let (i, _) = self
                    .pending
                    .iter()
                    .enumerate()
                    .max_by_key(|(_, &at)| at)
                    .unwrap_or((0, &0));
                self.pending.swap_remove(i);
                excess -= 1;
            }
            self.in_service -= excess.min(self.in_service);
        }
    }

    /// Serves step `step` (its index) with `arrivals` new requests.
    pub fn serve(&mut self, step: i64, arrivals: f64) -> StepOutcome {
        let mut out = StepOutcome {
            arrivals,
            ..StepOutcome::default()
        };
        if arrivals > EPSILON {
            self.queue.push_back((step, arrivals));
            self.queued += arrivals;
        }
        let mut capacity = f64::from(self.in_service) * self.per_step;
        while capacity > EPSILON {
            let Some(front) = self.queue.front_mut() else {
                break;
            };
            let take = front.1.min(capacity);
            capacity -= take;
            front.1 -= take;
            self.queued -= take;
            out.served += take;
            if step - front.0 > self.late_after {
                out.late += take;
            }
            if front.1 <= EPSILON {
                self.queue.pop_front();
            }
        }
        if self.mode == Mode::RealTime {
            // Waited too long: SageMaker's invocation timeout.
            while let Some(&(at, n)) = self.queue.front() {
                if step - at < self.timeout_steps {
                    break;
                }
                self.queue.pop_front();
                self.queued -= n;
                out.failed += n;
            }
            // No room to wait: the newest requests are refused.
            while self.queued > self.queue_bound + EPSILON {
                let Some(back) = self.queue.back_mut() else {
                    break;
                };
                let drop = (self.queued - self.queue_bound).min(back.1);
                back.1 -= drop;
                self.queued -= drop;
                out.failed += drop;
                if back.1 <= EPSILON {
                    self.queue.pop_back();
                }
            }
        }
        if self.queue.is_empty() || self.queued < EPSILON {
            self.queued = 0.0;
            self.queue.clear();
        }
        out.backlog = self.queued;
        let oldest_waits_too_long = self
            .queue
            .front()
            .is_some_and(|&(at, _)| step + 1 - at > self.late_after);
        out.breach = out.late > EPSILON || out.failed > EPSILON || oldest_waits_too_long;
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    fn world(mode: Mode) -> TargetWorld {
        crate::world::World::parse(
            "t",
            &format!(
                "[[target]]\nresource_id = \"endpoint/e/variant/v\"\nmode = \"{}\"\ncapacity_per_instance = 1.0\nprovisioning = \"6m\"\n{}",
                if mode == Mode::Async { "async" } else { "real-time" },
                if mode == Mode::RealTime { "queue_bound = 15.0\n" } else { "latency_objective = \"30s\"\n" }
            ),
        )
        .unwrap()
        .targets
        .remove(0)
    }

    #[test]
    fn serves_within_capacity_without_breach() {
        let mut e = Endpoint::new(&world(Mode::RealTime), 2);
        let out = e.serve(0, 20.0);
        assert_eq!((out.served, out.breach), (20.0, false));
    }

    #[test]
    fn real_time_overload_waits_then_fails_past_the_bound() {
        let mut e = Endpoint::new(&world(Mode::RealTime), 1);
        // 10 served, 15 may wait, 5 refused.
        let out = e.serve(0, 30.0);
        assert_eq!((out.served, out.failed, out.backlog), (10.0, 5.0, 15.0));
        assert!(out.breach);
        // The 15 waiting are served late next step (10) and the rest waits on.
        let out = e.serve(1, 0.0);
        assert_eq!((out.served, out.late, out.backlog), (10.0, 10.0, 5.0));
    }

    #[test]
    fn async_queue_is_unbounded_and_late_only_past_the_objective() {
        // 10 served per step, objective 30 s: the 50 requests of step 0 drain over 5 steps.
        let mut e = Endpoint::new(&world(Mode::Async), 1);
        let out = e.serve(0, 50.0);
        assert_eq!((out.failed, out.backlog, out.breach), (0.0, 40.0, false));
        for step in 1..=2 {
            let out = e.serve(step, 0.0);
            assert!(!out.breach, "step {step}: waited at most 30 s");
        }
        let out = e.serve(3, 0.0);
        assert!(
            out.breach && out.late == 0.0,
            "the last 10 will wait 40 s: {out:?}"
        );
        let out = e.serve(4, 0.0);
        assert!(out.late == 10.0 && out.breach, "{out:?}");
    }

    #[test]
    fn instances_serve_only_after_provisioning_and_scale_in_cancels_starting_ones_first() {
        let mut rng = SmallRng::seed_from_u64(1);
        let mut e = Endpoint::new(&world(Mode::RealTime), 1);
        e.converge(3, 0, &mut rng);
        assert_eq!((e.in_service(), e.starting(), e.launches), (1, 2, 2));
        e.advance(359);
        assert_eq!(e.in_service(), 1);
        e.advance(360);
        assert_eq!(e.in_service(), 3);
        e.converge(5, 400, &mut rng);
        e.converge(2, 410, &mut rng);
        assert_eq!((e.in_service(), e.starting()), (2, 0));
    }
}
