//! A held-out check for the learning rules: writes seventeen synthetic scenarios that no rule was
//! tuned on, each as an operator would set it up from the trace's first week, for the
//! learned-plan benchmark to run:
//!
//! ```text
//! cargo run --release -p headroom-sim --example heldout -- DIR
//! cargo run --release -p headroom-sim --example learned -- --dir DIR
//! ```
//!
//! - `web1`..`web4`: 27 days at 1 minute from a Monday. A daily cycle (quiet night, morning
//!   ramp, lunch dip, evening shoulder) at a random phase, weekends at about half the weekday
//!   level, a day level drawn lognormal (sigma 0.12), slow AR(1) noise, 3-12 surges a day of
//!   1.2-3.2x for 3-40 minutes at random times (mostly in the day), an evening burst every other
//!   day, and Poisson counts.
//! - `calm1`, `calm2`: the same as web, but 0-3 mild surges a day (1.1-1.6x for 3-20 minutes)
//!   and no evening bursts: a daily rhythm is most of what target tracking misses, the regime
//!   of the issue's real web trace (its naive seasonal yardstick: -85 % at 1.12x there, about
//!   the same here).
//! - `lb1`, `lb2`: 14 days at 5 minutes, the same cycle, dominated by 15-25 heavy-tailed
//!   (Pareto) bursts a day of 5-30 minutes.
//! - `lb3`, `lb4`: the same, with 2-6 bursts a day but row-to-row noise of about a fifth:
//!   target tracking is behind each jump (15-17 % of the minutes in breach), the regime of the
//!   issue's real load-balancer trace (its yardstick: -72 % at 1.27x there, -70 % to -74 % at
//!   1.19-1.21x here).
//!
//! - `calm-low`, `web-low`, `lb-low`: the same as calm, web and the choppy load balancer at a
//!   fifth to a quarter of the traffic (about 50 requests a minute, two or three instances):
//!   there one instance more is half as many again, every floor moves in large steps, and the
//!   Poisson noise of a minute is a larger share of it.
//! - `drift-growth`, `drift-decline`, `drift-launch`, `drift-shift`: calm web-like traffic that
//!   moves away from the first week the plan is suggested from: doubling over the 27 days,
//!   halving, a step from 60 % to the full level after week one, and the daily rhythm two hours
//!   later from day 10. The forecast learns from recent days; these show how fast it follows.
//!
//! Beside each, `yardstick.toml`: the issue's naive seasonal floor on the same target, for
//! `headroom simulate --plan DIR/NAME/yardstick.toml --trace DIR/NAME/trace.csv`.
//!
//! Each base plan is what the issue's operator writes from week 1: a weekday window 09:00-17:00 at
//! that window's p90 demand, and a guard on the burst alarm. The world: a GPU model at 2 s a
//! request (0.5 req/s an instance), target tracking at 80 % (24 invocations a minute), 4.5-9
//! minutes of provisioning. The traces are guesses at what unseen traffic looks like, not a
//! target: a rule that only helps here is as suspect as one that only helps a shipped trace.

use std::fmt::Write as _;
use std::path::Path;

use chrono::{DateTime, Datelike, Duration, TimeZone, Timelike, Utc};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

/// A trace's rows: each step's start and its request count.
type Rows = Vec<(DateTime<Utc>, u64)>;

/// Requests a minute one instance serves at target tracking's target (0.5 req/s at 80 %).
const INVOCATIONS_PER_INSTANCE: f64 = 24.0;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = std::env::args().nth(1).ok_or("usage: heldout DIR")?;
    let start = Utc.with_ymd_and_hms(2026, 1, 5, 0, 0, 0).unwrap(); // a Monday
    let steady = Drift::None;
    let (growth, decline) = (Drift::Growth(2.0), Drift::Growth(0.5));
    let launch = Drift::Step {
        day: 7,
        before: 0.6,
    };
    let later = Drift::Later {
        day: 10,
        hours: 2.0,
    };
    let scenarios: [(&str, Rows); 17] = [
        ("web1", web(start, 101, 300.0, &BUSY, steady)),
        ("web2", web(start, 202, 450.0, &BUSY, steady)),
        ("web3", web(start, 303, 200.0, &BUSY, steady)),
        ("web4", web(start, 404, 600.0, &BUSY, steady)),
        ("calm1", web(start, 707, 300.0, &CALM, steady)),
        ("calm2", web(start, 808, 450.0, &CALM, steady)),
        ("lb1", load_balancer(start, 505, 180.0, &BURSTY)),
        ("lb2", load_balancer(start, 606, 300.0, &BURSTY)),
        ("lb3", load_balancer(start, 909, 240.0, &CHOPPY)),
        ("lb4", load_balancer(start, 1010, 400.0, &CHOPPY)),
        ("calm-low", web(start, 717, 90.0, &CALM, steady)),
        ("web-low", web(start, 111, 90.0, &BUSY, steady)),
        ("lb-low", load_balancer(start, 919, 60.0, &CHOPPY)),
        ("drift-growth", web(start, 1111, 250.0, &CALM, growth)),
        ("drift-decline", web(start, 1212, 450.0, &CALM, decline)),
        ("drift-launch", web(start, 1313, 300.0, &CALM, launch)),
        ("drift-shift", web(start, 1414, 300.0, &CALM, later)),
    ];
    for (name, rows) in scenarios {
        let out = Path::new(&dir).join(name);
        std::fs::create_dir_all(&out)?;
        std::fs::write(out.join("trace.csv"), csv(&rows))?;
        std::fs::write(out.join("base.toml"), base_plan(name, &rows))?;
        std::fs::write(out.join("world.toml"), world(name))?;
        std::fs::write(out.join("yardstick.toml"), yardstick_plan(name, &rows))?;
        println!("wrote {}", out.display());
    }
    Ok(())
}

/// The day's shape at `hour` (0-24): 0.22 at night up to about 1.0 in the working day.
fn daily_shape(hour: f64, phase: f64, weekend: bool) -> f64 {
    let h = (hour - phase).rem_euclid(24.0);
    let sigmoid = |x: f64| 1.0 / (1.0 + (-x).exp());
    let night = 0.22;
    let day = (sigmoid((h - 8.0) * 1.6) - sigmoid((h - 18.5) * 1.0)).max(0.0);
    let lunch = -0.12 * (-(h - 12.5).powi(2) / 0.5).exp();
    let evening = 0.35 * (-(h - 20.5).powi(2) / 3.0).exp() * if weekend { 1.0 } else { 0.6 };
    let mut s = night + (1.0 - night) * day + lunch + evening;
    if weekend {
        s = night + (s - night) * 0.55;
    }
    s.max(0.05)
}

fn gauss(rng: &mut SmallRng) -> f64 {
    // Box-Muller: enough for noise.
    let (u, v): (f64, f64) = (rng.random_range(f64::EPSILON..1.0), rng.random());
    (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()
}

fn poisson(rng: &mut SmallRng, mean: f64) -> u64 {
    if mean > 50.0 {
        return (mean + mean.sqrt() * gauss(rng)).round().max(0.0) as u64;
    }
    let (limit, mut k, mut p) = ((-mean).exp(), 0, 1.0);
    loop {
        p *= rng.random::<f64>();
        if p < limit {
            return k;
        }
        k += 1;
    }
}

fn is_weekend(t: DateTime<Utc>) -> bool {
    t.weekday().number_from_monday() >= 6
}

/// Raises `mult` to a surge of `size` over `len` steps from `at`, with short ramps at its ends.
fn surge(mult: &mut [f64], at: usize, len: usize, size: f64, ramp: usize) {
    for k in 0..len {
        let Some(m) = mult.get_mut(at + k) else { break };
        let edge = ((k + 1).min(len - k).min(ramp) as f64) / ramp as f64;
        *m = m.max(1.0 + (size - 1.0) * edge);
    }
}

/// The random surges of a web-like trace: how many a day, how long (minutes), how high, and
/// whether every other evening has a burst.
struct Surges {
    per_day: std::ops::RangeInclusive<u32>,
    minutes: std::ops::RangeInclusive<usize>,
    size: std::ops::Range<f64>,
    evening_bursts: bool,
}

/// `web1`..`web4`: surges through the day that no seasonal estimate places.
const BUSY: Surges = Surges {
    per_day: 3..=12,
    minutes: 3..=40,
    size: 1.2..3.2,
    evening_bursts: true,
};

/// `calm1`, `calm2`: a few mild surges, so the daily rhythm is most of what target tracking
/// misses.
const CALM: Surges = Surges {
    per_day: 0..=3,
    minutes: 3..=20,
    size: 1.1..1.6,
    evening_bursts: false,
};

/// How a web-like trace's traffic moves away from its first week, for the `drift-*` scenarios:
/// the forecast learns from the first week's days and must follow what comes after.
#[derive(Clone, Copy)]
enum Drift {
    None,
    /// The level grows (or shrinks) steadily to this factor of the first day's by the last day.
    Growth(f64),
    /// The level is `before` of its later value until `day` (a launch after week one).
    Step {
        day: usize,
        before: f64,
    },
    /// From `day` on, the daily rhythm comes `hours` later (users in another time zone).
    Later {
        day: usize,
        hours: f64,
    },
}

impl Drift {
    /// The level factor and the rhythm's extra phase (hours) on `day`, `fraction` (0-1) of the
    /// way through the run.
    fn at(self, day: usize, fraction: f64) -> (f64, f64) {
        match self {
            Drift::None => (1.0, 0.0),
            Drift::Growth(factor) => (factor.powf(fraction), 0.0),
            Drift::Step { day: from, before } => (if day < from { before } else { 1.0 }, 0.0),
            Drift::Later { day: from, hours } => (1.0, if day < from { 0.0 } else { hours }),
        }
    }
}

/// Web-like: 27 days of requests a minute, peaking near `peak` on a weekday, drifting from its
/// first week as `drift` says (no draw of the generator depends on it, so a drift changes only
/// the level and the phase of the same trace).
fn web(start: DateTime<Utc>, seed: u64, peak: f64, surges: &Surges, drift: Drift) -> Rows {
    const DAYS: usize = 27;
    let mut rng = SmallRng::seed_from_u64(seed);
    let phase = rng.random_range(-1.5..1.5);
    let mut mult = vec![1.0; DAYS * 1440];
    for day in 0..DAYS {
        for _ in 0..rng.random_range(surges.per_day.clone()) {
            let hour = if rng.random::<f64>() < 0.7 {
                rng.random_range(8.0..22.0)
            } else {
                rng.random_range(0.0..24.0)
            };
            let (len, size) = (
                rng.random_range(surges.minutes.clone()),
                rng.random_range(surges.size.clone()),
            );
            surge(&mut mult, day * 1440 + (hour * 60.0) as usize, len, size, 3);
        }
        if surges.evening_bursts && rng.random::<f64>() < 0.5 {
            let hour = rng.random_range(19.0..23.0);
            let (len, size) = (rng.random_range(20..=60), rng.random_range(1.5..2.5));
            surge(&mut mult, day * 1440 + (hour * 60.0) as usize, len, size, 3);
        }
    }
    let level: Vec<f64> = (0..DAYS).map(|_| (0.12 * gauss(&mut rng)).exp()).collect();
    let mut noise = 0.0;
    (0..DAYS * 1440)
        .map(|i| {
            let t = start + Duration::minutes(i as i64);
            noise = 0.9 * noise + 0.06 * gauss(&mut rng);
            let hour = f64::from(t.hour()) + f64::from(t.minute()) / 60.0;
            let (drift_level, later) = drift.at(i / 1440, i as f64 / (DAYS * 1440) as f64);
            let mean = peak
                * drift_level
                * level[i / 1440]
                * daily_shape(hour, phase + later, is_weekend(t))
                * noise.exp()
                * mult[i];
            (t, poisson(&mut rng, mean))
        })
        .collect()
}

/// A load-balancer-like trace's bursts a day and its noise from one 5-minute row to the next
/// (AR(1): `carry` of the last row's, plus a normal step of `step`).
struct Churn {
    bursts_per_day: std::ops::RangeInclusive<u32>,
    carry: f64,
    step: f64,
}

/// `lb1`, `lb2`: heavy-tailed bursts all day.
const BURSTY: Churn = Churn {
    bursts_per_day: 15..=25,
    carry: 0.8,
    step: 0.1,
};

/// `lb3`, `lb4`: a few bursts, but each 5-minute row jumps by a fifth or more from the last:
/// target tracking, reacting to each jump, is behind much of the day.
const CHOPPY: Churn = Churn {
    bursts_per_day: 2..=6,
    carry: 0.3,
    step: 0.22,
};

/// Load-balancer-like: 14 days of requests per 5 minutes (`peak` a minute on a weekday),
/// with bursts and row-to-row noise as `churn` says.
fn load_balancer(start: DateTime<Utc>, seed: u64, peak: f64, churn: &Churn) -> Rows {
    const DAYS: usize = 14;
    const PER_DAY: usize = 288;
    let mut rng = SmallRng::seed_from_u64(seed);
    let phase = rng.random_range(-2.0..2.0);
    let mut mult = vec![1.0; DAYS * PER_DAY];
    for day in 0..DAYS {
        for _ in 0..rng.random_range(churn.bursts_per_day.clone()) {
            let at = day * PER_DAY + rng.random_range(0..PER_DAY);
            // Pareto (alpha 1.6) above 1, capped: most bursts small, a few 4x and more.
            let pareto = rng.random_range(f64::EPSILON..1.0f64).powf(-1.0 / 1.6);
            let size = 1.0 + (pareto - 1.0).min(6.0) * 0.8;
            surge(&mut mult, at, rng.random_range(1..=6), size, 1);
        }
    }
    let level: Vec<f64> = (0..DAYS).map(|_| (0.15 * gauss(&mut rng)).exp()).collect();
    let mut noise = 0.0;
    (0..DAYS * PER_DAY)
        .map(|i| {
            let t = start + Duration::minutes(5 * i as i64);
            noise = churn.carry * noise + churn.step * gauss(&mut rng);
            let hour = f64::from(t.hour()) + f64::from(t.minute()) / 60.0;
            let mean = 5.0
                * peak
                * level[i / PER_DAY]
                * daily_shape(hour, phase, is_weekend(t))
                * noise.exp()
                * mult[i];
            (t, poisson(&mut rng, mean))
        })
        .collect()
}

fn csv(rows: &[(DateTime<Utc>, u64)]) -> String {
    let mut out = String::from("timestamp,requests\n");
    for (t, n) in rows {
        let _ = writeln!(out, "{},{n}", t.format("%Y-%m-%dT%H:%M:%SZ"));
    }
    out
}

/// The operator's plan from the first week: weekdays 09:00-17:00 at that window's p90 demand.
fn base_plan(name: &str, rows: &[(DateTime<Utc>, u64)]) -> String {
    let step_minutes = (rows[1].0 - rows[0].0).num_minutes() as f64;
    let week_end = rows[0].0 + Duration::days(7);
    let mut window: Vec<f64> = rows
        .iter()
        .filter(|(t, _)| *t < week_end && !is_weekend(*t) && (9..17).contains(&t.hour()))
        .map(|(_, n)| *n as f64 / step_minutes)
        .collect();
    window.sort_by(f64::total_cmp);
    let p90 = window[(0.9 * (window.len() - 1) as f64) as usize];
    let floor = (p90 / INVOCATIONS_PER_INSTANCE).ceil().max(1.0);
    plan_text(
        &format!(
            "# What an operator writes from {name}'s first week: the weekday working day at its p90\n\
             # demand ({p90:.0} requests/min at {INVOCATIONS_PER_INSTANCE} an instance), a guard on the burst alarm."
        ),
        name,
        &format!(
            r#"  [[target.peak]]
  name = "business-hours"
  cron = "0 9 * * MON-FRI"
  duration = "8h"
  floor = {floor}
"#
        ),
    )
}

/// The issue's naive seasonal yardstick on the same target: the base plan's guard, no peaks, a
/// forecast of a low quantile of each 10-minute slot's peak over the last five days of the same
/// kind at the trace's own resolution, no margin, lead time 12 minutes. Its quantile (0.3 here)
/// is the one knob: edit it to trace the yardstick's cost line.
fn yardstick_plan(name: &str, rows: &[(DateTime<Utc>, u64)]) -> String {
    let resolution = (rows[1].0 - rows[0].0).num_minutes();
    plan_text(
        &format!("# The naive seasonal yardstick for {name} (`issues show 12`, \"How good\")."),
        name,
        &format!(
            r#"  [target.forecast]
  invocations_per_instance = {INVOCATIONS_PER_INSTANCE:.1}
  history = "7d"
  resolution = "{resolution}m"
  quantile = 0.3
  max_margin = 1.0
"#
        ),
    )
}

/// A plan for `name`'s target under `comment`: its bounds and lead time, then `sections`, then
/// the guard on its burst alarm that every plan here has.
fn plan_text(comment: &str, name: &str, sections: &str) -> String {
    format!(
        r#"{comment}
version = 1

[defaults]
timezone = "UTC"

[[target]]
resource_id = "endpoint/{name}/variant/AllTraffic"
min_capacity = 1
max_capacity = 100
lead_time = "12m"

{sections}
  [target.guard]
  alarms = ["{name}-burst"]
  hold = "30m"
  max_duration = "3h"
"#
    )
}

fn world(name: &str) -> String {
    format!(
        r#"# A GPU model at 2 s a request; target tracking at 80 % of an instance (0.5 req/s x 60 s x 0.8).
seed = 7

[metrics]
standard_delay = "2m"

[[target]]
resource_id = "endpoint/{name}/variant/AllTraffic"
mode = "real-time"
capacity_per_instance = 0.5
latency_objective = "5s"
queue_bound = 20
provisioning = {{ min = "4m30s", max = "9m" }}

  [target.target_tracking]
  metric = "InvocationsPerInstance"
  target_value = {INVOCATIONS_PER_INSTANCE}

[[alarm]]
name = "{name}-burst"
target = "endpoint/{name}/variant/AllTraffic"
metric = "InvocationsPerInstance"
comparison = "GreaterThanThreshold"
threshold = 27.0
evaluation_periods = 2
datapoints_to_alarm = 2
"#
    )
}
