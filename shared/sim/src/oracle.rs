//! The oracle: perfect foresight. At every step it has in service the least whole number of
//! instances that serves every request within the latency objective, each one ordered early
//! enough to be in service when needed. Its instance-hours are the yardstick the other strategies
//! are measured against.
//!
//! - Real-time (the objective is under one step): a step needs `ceil(requests / per-instance
//!   capacity per step)` instances, at least the plan's MinCapacity (an availability choice, not a
//!   scaling one), at most its MaxCapacity. This is the exact minimum at the simulator's
//!   resolution.
//! - When requests may wait (`latency_objective` of a step or more, async endpoints): the least
//!   constant speed that meets every known deadline, recomputed each step ("optimal available"
//!   speed scaling), and for real-time enough to keep the queue within its bound. Later arrivals
//!   have later deadlines, so this never misses one; it is within a small factor of the offline
//!   optimum, not a strict lower bound.
//! - Cost: each instance is billed from its launch, one mean provisioning time before it serves,
//!   until it stops. An instance idle for a gap no longer than a provisioning time is kept rather
//!   than relaunched (that is cheaper), so short dips cost what they should.

use crate::endpoint::Endpoint;
use crate::engine::{ChartPoint, RunOptions, Strategy, StrategyResult, TargetResult};
use crate::scenario::Scenario;
use crate::stats::{BreachSpan, Stats, Summary};
use crate::trace::STEP_SECS;

/// Runs the oracle for every target of the scenario.
pub fn run(scenario: &Scenario, options: &mut RunOptions<'_>) -> StrategyResult {
    let mut total = Summary::default();
    let mut per_target = Vec::new();
    let mut chart = Vec::new();
    let n = scenario.world.targets.len();
    for i in 0..n {
        let (summary, breach_spans, points) = run_target(scenario, i, options.chart);
        total.add(&summary);
        per_target.push(TargetResult {
            target: scenario.world.targets[i].id.to_string(),
            summary,
            aas: Default::default(),
            breach_spans,
            quarters: Vec::new(),
        });
        chart.push(points);
        if let Some(p) = options.progress.as_mut() {
            p(Strategy::Oracle, (i + 1) as f64 / n as f64);
        }
    }
    StrategyResult {
        strategy: Strategy::Oracle,
        total,
        per_target,
        headroom: None,
        alarm_transitions: 0,
        chart,
    }
}

fn run_target(
    scenario: &Scenario,
    index: usize,
    chart: bool,
) -> (Summary, Vec<BreachSpan>, Vec<ChartPoint>) {
    let t = &scenario.world.targets[index];
    let (min, max) = scenario
        .plan
        .target(&t.id)
        .map_or((0, u32::MAX), |p| (p.min_capacity, p.max_capacity));
    let trace = &scenario.trace;
    let per = (trace.interval_secs / STEP_SECS) as usize;
    let scale = t.trace_scale / per as f64;
    let start = trace.start.timestamp();
    let mut endpoint = Endpoint::new(t, 0);
    let mut stats = Stats::new(scenario.peak_windows(index), start, trace.end().timestamp());
    let late_after = endpoint.late_after();
    let queue_bound = t.queue_bound;
    let capacity = endpoint.per_step();
    let provisioning_steps = t.provisioning.mean() / STEP_SECS as f64;

    let mut billed_steps = 0.0;
    let mut launches = 0u64;
    let mut last_end: Vec<i64> = Vec::new();
    let mut previous: Option<u32> = None;
    let mut points = Vec::new();
    let mut minute_demand = 0.0f32;
    let mut minute_breach = false;

    for k in 0..trace.steps() {
        let step = k as i64;
        let now = start + step * STEP_SECS;
        let arrivals = trace.counts[k / per] * scale;
        // The speed (requests per step) that meets every deadline known now.
        let mut due = 0.0;
        let mut speed = 0.0f64;
        for (at, count) in endpoint.waiting().chain(std::iter::once((step, arrivals))) {
            due += count;
            let steps_left = (at + late_after - step).max(0) + 1;
            speed = speed.max(due / steps_left as f64);
        }
        // A real-time queue holds at most `queue_bound`: serve enough that nothing is refused.
        speed = speed.max(due - queue_bound);
        let level = ((speed / capacity - 1e-9).ceil().max(0.0) as u32).clamp(min, max);

        match previous {
            None => last_end.resize(level as usize, i64::MIN),
            Some(prev) if level > prev => {
                if last_end.len() < level as usize {
                    last_end.resize(level as usize, i64::MIN);
                }
                for slot in prev..level {
                    let ended = last_end[slot as usize];
                    let gap = if ended == i64::MIN {
                        i64::MAX
                    } else {
                        step - ended
                    };
                    if gap as f64 <= provisioning_steps {
                        billed_steps += gap as f64; // kept idle through the dip
                    } else {
                        launches += 1;
                        billed_steps += provisioning_steps;
                    }
                }
            }
            Some(prev) => {
                for slot in level..prev {
                    last_end[slot as usize] = step;
                }
            }
        }
        previous = Some(level);
        billed_steps += f64::from(level);

        endpoint.set_in_service(level);
        let out = endpoint.serve(step, arrivals);
        stats.record(now, &out, level);
        if chart {
            minute_demand = minute_demand.max((arrivals / capacity) as f32);
            minute_breach |= out.breach;
            if (now + STEP_SECS).rem_euclid(60) == 0 {
                points.push(ChartPoint {
                    at: now - now.rem_euclid(60),
                    demand: minute_demand,
                    in_service: level,
                    min_capacity: min,
                    breach: minute_breach,
                });
                minute_demand = 0.0;
                minute_breach = false;
            }
        }
    }
    stats.set_instance_seconds(billed_steps * STEP_SECS as f64);
    (stats.summary(launches), stats.spans().to_vec(), points)
}
