//! The simulation loop: every 10-second step, for every target, instances come into service,
//! Application Auto Scaling evaluates its policies, the plan's CloudWatch alarms evaluate, headroom
//! (in the `headroom` strategy) hears the alarm transitions and ticks once a minute, then the
//! endpoint converges on the desired count and serves the step's requests.
//!
//! headroom runs exactly as in the Lambdas: the functions' use cases (`headroom_core::usecase`,
//! called from `invoke.rs`) over the ports, with [`SimAas`] standing in for Application Auto
//! Scaling, SageMaker and CloudWatch and `MemoryStateStore` for DynamoDB, driven by
//! `memory::block_on` (every port call is ready at once).

use std::collections::HashMap;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};

use chrono::{DateTime, Utc};
use headroom_core::capacity_port::{Counts, CurrentCapacity};
use headroom_core::forecast::{DemandSeries, ForecastScore};
use headroom_core::memory::MemoryStateStore;
use headroom_core::metrics_port::{window, DemandHistory, DemandQuery};
use headroom_core::model::Observed;
use headroom_core::plan::DemandKind;
use headroom_core::ports::{PortError, ScalingTargets};
use headroom_core::Span;
use headroom_core::{ScalableTargetId, Suspended};
use rand::rngs::SmallRng;
use rand::SeedableRng;
use serde::Serialize;

use crate::aas::{proportional, Aas, AasCounters, Firing};
use crate::cloudwatch::{LiveAlarm, Transition};
use crate::endpoint::{Endpoint, StepOutcome};
use crate::metrics::{Meter, StepSample};
use crate::scenario::Scenario;
use crate::stats::{BreachSpan, Quarter, Stats, Summary};
use crate::trace::STEP_SECS;
use crate::world::{Metric, Period, TargetWorld};

/// The three strategies compared.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Strategy {
    /// The plan's bounds and the world's AAS policies alone.
    TargetTracking,
    /// The same, with headroom steering the bounds.
    Headroom,
    /// Perfect foresight (see `oracle.rs`).
    Oracle,
}

impl Strategy {
    pub const ALL: [Strategy; 3] = [
        Strategy::TargetTracking,
        Strategy::Headroom,
        Strategy::Oracle,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Strategy::TargetTracking => "target_tracking",
            Strategy::Headroom => "headroom",
            Strategy::Oracle => "oracle",
        }
    }
}

/// One point per minute per target, for the chart.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ChartPoint {
    /// Unix seconds of the minute's start.
    pub at: i64,
    /// Instances the minute's busiest step needed (requests / per-instance capacity).
    pub demand: f32,
    /// Fewest instances in service during the minute.
    pub in_service: u32,
    /// MinCapacity in force at the end of the minute.
    pub min_capacity: u32,
    /// Some request waited past the objective or failed during the minute.
    pub breach: bool,
}

/// What headroom did in a run.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct HeadroomActivity {
    pub ticks: u64,
    /// RegisterScalableTarget calls made by headroom.
    pub registers: u64,
    pub alarm_events: u64,
    /// Announced peaks (`headroom.peak/v1`) delivered.
    pub peak_events: u64,
    pub errors: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first_error: Option<String>,
    /// Forecasts refreshed (hourly per target with `[target.forecast]`).
    pub forecast_refreshes: u64,
    /// How the forecasts compared with the demand that came, summed over targets.
    pub forecast_score: ForecastScore,
    /// The schedule review's last verdicts: `target: peak VERDICT: evidence`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub schedule_reviews: Vec<String>,
    /// The planned windows' scores the state keeps (the last 20 per target), summed up:
    /// `target: N windows: ...`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub window_scores: Vec<String>,
}

/// The outcome of one strategy.
#[derive(Debug, Clone, Serialize)]
pub struct StrategyResult {
    pub strategy: Strategy,
    #[serde(flatten)]
    pub total: Summary,
    pub per_target: Vec<TargetResult>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub headroom: Option<HeadroomActivity>,
    /// Alarm transitions of the plan's alarms (every strategy evaluates them).
    pub alarm_transitions: u64,
    #[serde(skip)]
    pub chart: Vec<Vec<ChartPoint>>,
}

#[derive(Debug, Clone, Serialize)]
pub struct TargetResult {
    pub target: String,
    #[serde(flatten)]
    pub summary: Summary,
    pub aas: AasSummary,
    /// Where the strategy fell short, in time order.
    pub breach_spans: Vec<BreachSpan>,
    /// Each clock quarter hour's figures, from the one holding the trace's start (for the
    /// tuning backtest); empty for the oracle, which pays for its instances its own way.
    #[serde(skip)]
    pub quarters: Vec<Quarter>,
}

/// What AAS did for a target.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct AasSummary {
    pub tracking_scale_outs: u64,
    pub tracking_scale_ins: u64,
    pub step_scale_outs: u64,
    pub scheduled_actions: u64,
}

impl From<AasCounters> for AasSummary {
    fn from(c: AasCounters) -> Self {
        Self {
            tracking_scale_outs: c.scale_outs,
            tracking_scale_ins: c.scale_ins,
            step_scale_outs: c.step_scale_outs,
            scheduled_actions: c.scheduled,
        }
    }
}

/// Options of a run.
#[derive(Default)]
pub struct RunOptions<'a> {
    /// Keep one point per minute per target for `--chart`.
    pub chart: bool,
    /// Called now and then with the strategy and the share of its steps done.
    pub progress: Option<&'a mut dyn FnMut(Strategy, f64)>,
}

/// Everything the loop keeps for one target.
#[derive(Debug)]
pub struct TargetRun {
    pub endpoint: Endpoint,
    pub aas: Aas,
    pub meter: Meter,
    pub rng: SmallRng,
    pub stats: Stats,
    scale_per_step: f64,
    capacity_per_step: f64,
    chart: Option<Vec<ChartPoint>>,
    minute_demand: f32,
    minute_in_service: u32,
    minute_breach: bool,
    /// Requests per clock minute since the run started: the CloudWatch `Invocations` history the
    /// forecast reads (each minute visible `standard_delay` after it ends).
    pub history: Vec<f32>,
    minute_arrivals: f64,
    /// Requests in flight on the whole target (served and waiting), the mean of each clock
    /// minute: what the `concurrency` demand's metric-math expression reads from CloudWatch
    /// (`ConcurrentRequestsPerModel` times the instances serving).
    pub in_flight_history: Vec<f32>,
    minute_in_flight: f64,
    service_time: f64,
}

impl TargetRun {
    fn new(scenario: &Scenario, index: usize, chart: bool) -> Self {
        let world = &scenario.world;
        let t = &world.targets[index];
        let plan = scenario
            .plan
            .target(&t.id)
            .map_or((0, u32::MAX), |p| (p.min_capacity, p.max_capacity));
        let trace = &scenario.trace;
        let first_rate = trace
            .counts
            .first()
            .map_or(0.0, |&n| n * t.trace_scale / trace.interval_secs as f64);
        let initial = t
            .initial_capacity
            .unwrap_or_else(|| initial_capacity(t, first_rate));
        let start = trace.start;
        let end = trace.end();
        let firings = t
            .scheduled
            .iter()
            .flat_map(|s| {
                s.times(start, end).into_iter().map(move |at| Firing {
                    at: at.timestamp(),
                    min: s.min,
                    max: s.max,
                })
            })
            .collect();
        let aas = Aas::new(
            plan.0,
            plan.1,
            initial,
            t.tracking,
            t.backlog_step,
            (world.standard_delay, world.high_resolution_delay),
        )
        .with_schedule(firings);
        let per = (trace.interval_secs / STEP_SECS) as f64;
        Self {
            endpoint: Endpoint::new(t, aas.desired),
            meter: Meter::new(t.service_time),
            rng: SmallRng::seed_from_u64(
                world.seed ^ (index as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15),
            ),
            stats: Stats::new(
                scenario.peak_windows(index),
                start.timestamp(),
                end.timestamp(),
            ),
            aas,
            scale_per_step: t.trace_scale / per,
            capacity_per_step: t.capacity_per_instance * STEP_SECS as f64,
            chart: chart.then(Vec::new),
            minute_demand: 0.0,
            minute_in_service: u32::MAX,
            minute_breach: false,
            history: Vec::new(),
            minute_arrivals: 0.0,
            in_flight_history: Vec::new(),
            minute_in_flight: 0.0,
            service_time: t.service_time,
        }
    }

    /// Bookkeeping after the step at `now` was served.
    fn after_step(&mut self, now: i64, out: &StepOutcome) {
        self.meter.record(
            now,
            StepSample {
                arrivals: out.arrivals,
                served: out.served,
                backlog: out.backlog,
                in_service: self.endpoint.in_service(),
            },
        );
        self.stats.record(now, out, self.endpoint.billed());
        self.minute_arrivals += out.arrivals;
        self.minute_in_flight += out.served / STEP_SECS as f64 * self.service_time + out.backlog;
        if (now + STEP_SECS).rem_euclid(60) == 0 {
            self.history.push(self.minute_arrivals as f32);
            self.minute_arrivals = 0.0;
            let steps = (60 / STEP_SECS) as f64;
            self.in_flight_history
                .push((self.minute_in_flight / steps) as f32);
            self.minute_in_flight = 0.0;
        }
        if let Some(points) = self.chart.as_mut() {
            self.minute_demand = self
                .minute_demand
                .max((out.arrivals / self.capacity_per_step) as f32);
            self.minute_in_service = self.minute_in_service.min(self.endpoint.in_service());
            self.minute_breach |= out.breach;
            if (now + STEP_SECS).rem_euclid(60) == 0 {
                points.push(ChartPoint {
                    at: now - now.rem_euclid(60),
                    demand: self.minute_demand,
                    in_service: self.minute_in_service,
                    min_capacity: self.aas.min,
                    breach: self.minute_breach,
                });
                self.minute_demand = 0.0;
                self.minute_in_service = u32::MAX;
                self.minute_breach = false;
            }
        }
    }
}

/// What the tracking policy holds for `rate` requests/s: the steady state a run starts from.
fn initial_capacity(t: &TargetWorld, rate: f64) -> u32 {
    match t.tracking {
        Some(p) => match p.metric {
            Metric::InvocationsPerInstance => proportional(1, rate * 60.0, p.target_value),
            Metric::ConcurrentRequestsPerModel => {
                proportional(1, rate * t.service_time, p.target_value)
            }
            _ => 0,
        },
        None => 0,
    }
}

/// Application Auto Scaling as headroom sees it: the simulated targets behind the
/// `ScalingTargets` port. Registering changes the simulated target at once, with AAS's effects.
pub struct SimAas {
    runs: Mutex<Vec<TargetRun>>,
    index: HashMap<ScalableTargetId, usize>,
    ids: Vec<ScalableTargetId>,
    /// The first minute of every target's `history`, and how late a minute becomes visible.
    history_start: i64,
    metric_delay: i64,
    /// The simulated clock (Unix seconds), set by the engine before each invocation: what
    /// CloudWatch has published depends on when it is asked, not on the window asked for.
    clock: AtomicI64,
}

impl SimAas {
    pub fn new(scenario: &Scenario, chart: bool) -> Self {
        let ids: Vec<ScalableTargetId> = scenario
            .world
            .targets
            .iter()
            .map(|t| t.id.clone())
            .collect();
        Self {
            runs: Mutex::new(
                (0..ids.len())
                    .map(|i| TargetRun::new(scenario, i, chart))
                    .collect(),
            ),
            index: ids
                .iter()
                .cloned()
                .enumerate()
                .map(|(i, id)| (id, i))
                .collect(),
            ids,
            history_start: {
                let s = scenario.trace.start.timestamp();
                s - s.rem_euclid(60)
            },
            metric_delay: scenario.world.standard_delay,
            clock: AtomicI64::new(scenario.trace.start.timestamp()),
        }
    }

    /// Moves the simulated clock to `now` (Unix seconds).
    pub fn set_clock(&self, now: i64) {
        self.clock.store(now, Ordering::Relaxed);
    }

    pub fn runs(&self) -> MutexGuard<'_, Vec<TargetRun>> {
        self.runs.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub fn into_runs(self) -> Vec<TargetRun> {
        self.runs
            .into_inner()
            .unwrap_or_else(PoisonError::into_inner)
    }

    pub fn index_of(&self, id: &ScalableTargetId) -> Option<usize> {
        self.index.get(id).copied()
    }

    pub fn id(&self, index: usize) -> &ScalableTargetId {
        &self.ids[index]
    }

    /// SageMaker's desired and in-service counts of a simulated target.
    pub fn counts(&self, id: &ScalableTargetId) -> Option<(u32, u32)> {
        let i = self.index_of(id)?;
        let runs = self.runs();
        Some((runs[i].aas.desired, runs[i].endpoint.in_service()))
    }
}

/// SageMaker's counts, as the alarm automation reads them.
impl CurrentCapacity for SimAas {
    async fn desired_and_current(
        &self,
        id: &ScalableTargetId,
    ) -> Result<Option<Counts>, PortError> {
        Ok(self
            .counts(id)
            .map(|(desired, current)| Counts { desired, current }))
    }
}

/// CloudWatch's `Invocations` of the simulated targets, as the forecast refresh reads them:
/// only minutes that have ended and whose datapoint has arrived by the time of the call (the
/// simulated clock), so the forecast never sees the future.
impl DemandHistory for SimAas {
    async fn demand(
        &self,
        targets: &[DemandQuery],
        from: DateTime<Utc>,
        to: DateTime<Utc>,
        period: Span,
    ) -> Result<Vec<DemandSeries>, PortError> {
        // Concurrency is the requests in flight; the simulator serves the other kinds as the
        // requests that arrived: its async targets' forecasts learn the arrivals, which the
        // backlog follows.
        let runs = self.runs();
        let visible_until = self.clock.load(Ordering::Relaxed) - self.metric_delay;
        Ok(targets
            .iter()
            .map(|q| {
                let Some(r) = self.index_of(&q.target).map(|i| &runs[i]) else {
                    return DemandSeries::empty(from, period.as_secs());
                };
                // Copy only the minutes asked for (the run's history grows by a minute a minute).
                let minute_of = |t: i64| ((t - self.history_start).div_euclid(60)).max(0) as usize;
                let minutes = match q.kind {
                    DemandKind::Concurrency => &r.in_flight_history,
                    DemandKind::Invocations | DemandKind::Backlog => &r.history,
                };
                let end = minute_of(visible_until).min(minutes.len());
                let skip = minute_of(from.timestamp()).min(end);
                let seen = DemandSeries::new(
                    instant(self.history_start + skip as i64 * 60),
                    60,
                    minutes[skip..end].to_vec(),
                );
                window(&seen.coarsen(period.as_secs()), from, to)
            })
            .collect())
    }
}

/// A target the world does not simulate: AWS would answer with a validation error.
#[derive(Debug, thiserror::Error)]
#[error("{0} is not a simulated scalable target")]
struct UnknownTarget(String);

impl ScalingTargets for SimAas {
    async fn describe(&self, ids: &[ScalableTargetId]) -> Result<Vec<Observed>, PortError> {
        let runs = self.runs();
        Ok(ids
            .iter()
            .filter_map(|id| {
                let r = &runs[self.index_of(id)?];
                Some(Observed {
                    id: id.clone(),
                    min: r.aas.min,
                    max: r.aas.max,
                    suspended: r.aas.suspended,
                })
            })
            .collect())
    }

    async fn register(
        &self,
        id: &ScalableTargetId,
        min: u32,
        max: u32,
        suspended: Suspended,
    ) -> Result<(), PortError> {
        let i = self.index_of(id).ok_or_else(|| {
            PortError::new(
                "register the scalable target",
                headroom_core::ports::ErrorClass::Permanent,
                UnknownTarget(id.to_string()),
            )
        })?;
        self.runs()[i].aas.register(min, max, suspended);
        Ok(())
    }
}

pub(crate) fn instant(unix: i64) -> DateTime<Utc> {
    DateTime::from_timestamp(unix, 0).unwrap_or(DateTime::UNIX_EPOCH)
}

/// Runs one of the reactive strategies (target tracking, with or without headroom).
pub fn run_reactive(
    scenario: &Scenario,
    strategy: Strategy,
    options: &mut RunOptions<'_>,
) -> StrategyResult {
    let headroom = strategy == Strategy::Headroom;
    let sim = SimAas::new(scenario, options.chart);
    let store = MemoryStateStore::default();
    let world = &scenario.world;
    let mut alarms: Vec<LiveAlarm> = world.alarms.iter().cloned().map(LiveAlarm::new).collect();
    let mut transitions: Vec<Transition> = Vec::with_capacity(alarms.len());
    let mut activity = HeadroomActivity::default();
    let mut alarm_transitions = 0;
    let mut next_announcement = 0;
    let trace = &scenario.trace;
    let per = (trace.interval_secs / STEP_SECS) as usize;
    let start = trace.start.timestamp();
    let steps = trace.steps();
    let report_every = (steps / 100).max(1);

    for k in 0..steps {
        let now = start + k as i64 * STEP_SECS;
        sim.set_clock(now);
        let count = trace.counts[k / per];
        {
            let mut runs = sim.runs();
            for r in runs.iter_mut() {
                r.endpoint.advance(now);
                r.aas.run_schedule(now);
                r.aas.evaluate(now, r.endpoint.in_service(), &r.meter);
            }
            for alarm in &mut alarms {
                let r = &runs[alarm.def.target];
                let (series, delay) = match alarm.period() {
                    Period::Minute => (r.meter.series(alarm.def.metric), world.standard_delay),
                    Period::TenSeconds => (&r.meter.ten_second, world.high_resolution_delay),
                };
                if let Some(t) = alarm.evaluate(now, series, delay) {
                    transitions.push(t);
                }
            }
        }
        alarm_transitions += transitions.len() as u64;
        if headroom {
            for t in transitions.drain(..) {
                crate::invoke::alarm(&sim, &store, &scenario.plan, &t, &mut activity);
            }
            while let Some(a) = world
                .announcements
                .get(next_announcement)
                .filter(|a| a.sent <= now)
            {
                crate::invoke::peak(&sim, &store, &scenario.plan, &a.request, now, &mut activity);
                next_announcement += 1;
            }
            if now.rem_euclid(60) == 0 {
                crate::invoke::tick(&sim, &store, &scenario.plan, now, &mut activity);
            }
        } else {
            transitions.clear();
        }
        let mut runs = sim.runs();
        for r in runs.iter_mut() {
            let desired = r.aas.desired;
            r.endpoint.converge(desired, now, &mut r.rng);
            let out = r.endpoint.serve(k as i64, count * r.scale_per_step);
            r.after_step(now, &out);
        }
        drop(runs);
        if k % report_every == 0 {
            if let Some(p) = options.progress.as_mut() {
                p(strategy, k as f64 / steps as f64);
            }
        }
    }

    if headroom {
        for id in &sim.ids {
            if let Some(f) = store.state(id).forecast {
                let total = &mut activity.forecast_score;
                total.slots += f.score.slots;
                total.under_minutes += f.score.under_minutes;
                total.over_instance_hours += f.score.over_instance_hours;
                for r in &f.schedule {
                    activity.schedule_reviews.push(format!(
                        "{id}: peak {} {:?}: {}",
                        r.peak, r.verdict, r.evidence
                    ));
                }
                if let Some(line) = window_summary(&f.windows) {
                    activity.window_scores.push(format!("{id}: {line}"));
                }
            }
        }
    }
    let runs = sim.into_runs();
    let mut total = Summary::default();
    let mut per_target = Vec::with_capacity(runs.len());
    let mut chart = Vec::new();
    for (i, r) in runs.into_iter().enumerate() {
        let summary = r.stats.summary(r.endpoint.launches);
        total.add(&summary);
        per_target.push(TargetResult {
            target: world.targets[i].id.to_string(),
            summary,
            aas: r.aas.counters.into(),
            breach_spans: r.stats.spans().to_vec(),
            quarters: r.stats.quarters().to_vec(),
        });
        chart.push(r.chart.unwrap_or_default());
    }
    StrategyResult {
        strategy,
        total,
        per_target,
        headroom: headroom.then_some(activity),
        alarm_transitions,
        chart,
    }
}

/// Runs the three strategies on the same traffic.
pub fn run_all(scenario: &Scenario, options: &mut RunOptions<'_>) -> Vec<StrategyResult> {
    Strategy::ALL
        .into_iter()
        .map(|s| match s {
            Strategy::Oracle => crate::oracle::run(scenario, options),
            _ => run_reactive(scenario, s, options),
        })
        .collect()
}

/// The scored windows in one line: how many, how many had their raise in service by the start
/// (of those with a measured raise), the median floor use and the minutes above the floor.
fn window_summary(
    windows: &[headroom_core::forecast::window_score::WindowScore],
) -> Option<String> {
    if windows.is_empty() {
        return None;
    }
    let measured: Vec<i64> = windows.iter().filter_map(|w| w.ready_s).collect();
    let in_time = measured.iter().filter(|s| **s <= 0).count();
    let mut used: Vec<u32> = windows.iter().map(|w| w.floor_used_pct).collect();
    used.sort_unstable();
    let above: u32 = windows.iter().map(|w| w.minutes_above_floor).sum();
    let ready = if measured.is_empty() {
        "no raise measured (the simulator runs no deployment watcher, which measures them)"
            .to_owned()
    } else {
        format!(
            "capacity in service by the start in {in_time} of {} with a measured raise",
            measured.len()
        )
    };
    Some(format!(
        "last {} planned windows: {ready}; floor used {} % (median); {above} minutes above the floor",
        windows.len(),
        used[used.len() / 2]
    ))
}
