//! Synthetic traces, generated deterministically from a seed, shipped under `events/traces/` and
//! checked against this code by a test (`cargo run -p headroom-sim --example make-traces`
//! regenerates them).

use chrono::{DateTime, Datelike, Duration, Timelike, Utc, Weekday};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

/// One wave of a generated burst episode: a few waves of extra traffic, the later ones
/// "rebounds" of the first. Kept so reports can say where breach minutes fall (`attribution.rs`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BurstWave {
    /// The wave's first minute, counted from the trace start.
    pub start_minute: i64,
    pub minutes: i64,
    /// Load multiplier while the wave lasts.
    pub factor: f64,
    /// The first wave of its episode: nothing earlier in the trace announces it.
    pub first: bool,
}

/// A chat API over `days` days from `start` (a Monday, 00:00 UTC), one row per minute:
/// - nights at about 15 requests/s, days at about 60, with smooth shoulders;
/// - a weekday morning peak: from 09:00 UTC the load climbs to about 220 requests/s within five
///   minutes, holds until 10:30 and eases back by 11:30 (the peak an operator knows about);
/// - unplanned burst episodes, one or two a day, starting between 12:00 and 19:00: a first wave of 5 to 9
///   minutes at 2.2x to 3x the load, then one to three rebound waves of 5 to 9 minutes at 1.8x to
///   2.6x, each starting 15 to 30 minutes after the previous one ends;
/// - multiplicative noise of about 5 % per minute.
pub fn daily_peak_bursts(start: DateTime<Utc>, days: i64, seed: u64) -> Vec<(DateTime<Utc>, u64)> {
    daily_peak_bursts_with_waves(start, days, seed).0
}

/// [`daily_peak_bursts`] and the burst waves it placed, in order.
pub fn daily_peak_bursts_with_waves(
    start: DateTime<Utc>,
    days: i64,
    seed: u64,
) -> (Vec<(DateTime<Utc>, u64)>, Vec<BurstWave>) {
    let mut rng = SmallRng::seed_from_u64(seed);
    let mut waves: Vec<BurstWave> = Vec::new();
    for day in 0..days {
        let day_start = day * 1440;
        let episodes = rng.random_range(1..=2);
        let mut earliest = 12 * 60;
        for _ in 0..episodes {
            let latest = 21 * 60 - 120;
            if earliest > latest {
                break;
            }
            let mut at = day_start + rng.random_range(earliest..=latest);
            let count = rng.random_range(2..=4);
            for w in 0..count {
                let minutes = rng.random_range(5..=9);
                let factor = if w == 0 {
                    rng.random_range(2.2..3.0)
                } else {
                    rng.random_range(1.8..2.6)
                };
                waves.push(BurstWave {
                    start_minute: at,
                    minutes,
                    factor,
                    first: w == 0,
                });
                at += minutes + rng.random_range(15..=30);
            }
            earliest = at - day_start + 60;
        }
    }
    let mut rows = Vec::with_capacity((days * 1440) as usize);
    for m in 0..days * 1440 {
        let at = start + Duration::minutes(m);
        let minute_of_day = f64::from(at.hour() * 60 + at.minute());
        let weekday = !matches!(at.weekday(), Weekday::Sat | Weekday::Sun);
        let mut rate = diurnal(minute_of_day);
        if weekday {
            rate += morning_peak(minute_of_day);
        }
        let factor = waves
            .iter()
            .find(|w| m >= w.start_minute && m < w.start_minute + w.minutes)
            .map_or(1.0, |w| w.factor);
        let noise = 1.0 + 0.05 * (rng.random::<f64>() * 2.0 - 1.0);
        rows.push((at, (rate * factor * noise * 60.0).round() as u64));
    }
    (rows, waves)
}

/// Requests/s without peaks and bursts: 15 at night, 60 by day.
fn diurnal(minute: f64) -> f64 {
    let (night, day) = (15.0, 60.0);
    let smooth = |x: f64| {
        let x = x.clamp(0.0, 1.0);
        x * x * (3.0 - 2.0 * x)
    };
    let up = smooth((minute - 6.0 * 60.0) / (2.5 * 60.0));
    let down = smooth((minute - 17.0 * 60.0) / (5.0 * 60.0));
    night + (day - night) * (up - down).max(0.0)
}

/// Extra requests/s of the weekday morning peak.
fn morning_peak(minute: f64) -> f64 {
    let extra = 160.0;
    let (start, full, hold_until, end) = (9.0 * 60.0, 9.0 * 60.0 + 5.0, 10.5 * 60.0, 11.5 * 60.0);
    if minute < start || minute >= end {
        0.0
    } else if minute < full {
        extra * (minute - start + 1.0) / (full - start)
    } else if minute < hold_until {
        extra
    } else {
        extra * (end - minute) / (end - hold_until)
    }
}

/// An async endpoint's batch jobs over `days` days, one row per minute: mostly idle, with six to
/// ten batches a day at random times, each of 30 to 300 requests spread over one to five minutes.
pub fn async_batches(start: DateTime<Utc>, days: i64, seed: u64) -> Vec<(DateTime<Utc>, u64)> {
    let mut rng = SmallRng::seed_from_u64(seed);
    let minutes = (days * 1440) as usize;
    let mut counts = vec![0u64; minutes];
    for day in 0..days {
        let batches = rng.random_range(6..=10);
        for _ in 0..batches {
            let at = (day * 1440 + rng.random_range(0..1440 - 5)) as usize;
            let spread = rng.random_range(1..=5);
            let total: u64 = rng.random_range(30..=300);
            for i in 0..spread {
                counts[at + i] +=
                    total / spread as u64 + u64::from(i < (total % spread as u64) as usize);
            }
        }
    }
    counts
        .into_iter()
        .enumerate()
        .map(|(m, n)| (start + Duration::minutes(m as i64), n))
        .collect()
}

/// The CSV form every trace uses.
pub fn to_csv(header_comment: &str, rows: &[(DateTime<Utc>, u64)]) -> String {
    let mut out = String::with_capacity(rows.len() * 28 + 200);
    for line in header_comment.lines() {
        out.push_str("# ");
        out.push_str(line);
        out.push('\n');
    }
    out.push_str("timestamp,requests\n");
    for (at, n) in rows {
        out.push_str(&at.format("%Y-%m-%dT%H:%M:%SZ").to_string());
        out.push(',');
        out.push_str(&n.to_string());
        out.push('\n');
    }
    out
}

/// Where every shipped synthetic trace starts: a Monday.
fn shipped_start() -> DateTime<Utc> {
    DateTime::parse_from_rfc3339("2026-03-02T00:00:00Z")
        .map(|t| t.with_timezone(&Utc))
        .unwrap_or(DateTime::UNIX_EPOCH)
}

/// The burst waves of the shipped `synthetic-daily-peak-bursts-1m.csv` (the default scenario's
/// trace), for attributing its breach minutes.
pub fn shipped_daily_peak_bursts_waves() -> Vec<BurstWave> {
    daily_peak_bursts_with_waves(shipped_start(), 7, 5).1
}

/// How far ahead the what-if's campaign system announces a burst, and what it asks for: the
/// first waves reach about 18.4 instances' worth of load, so 20 instances, for half an hour.
const ANNOUNCED_AHEAD_MINUTES: i64 = 15;
const ANNOUNCED_FLOOR: u32 = 20;
const ANNOUNCED_DURATION: &str = "30m";

/// The what-if world `events/scenarios/daily-peak-bursts/world-announced.toml`: the default
/// world, plus one `headroom.peak/v1` announcement per burst episode of the shipped trace, sent
/// 15 minutes before its first wave. It asks what wiring the system that causes the bursts
/// to headroom would buy; the rebound waves are left to the guard.
pub fn announced_world() -> String {
    let start = shipped_start();
    let mut out = String::from(
        "# What-if: the default world (world.toml) plus a headroom.peak/v1 announcement for every burst\n\
         # episode of the shipped trace, sent 15 minutes before its first wave by the system that causes\n\
         # it. Generated by `cargo run -p headroom-sim --example make-traces`; do not edit.\n",
    );
    out.push_str(crate::scenario::DEFAULT_WORLD);
    let fmt = |t: DateTime<Utc>| t.format("%Y-%m-%dT%H:%M:%SZ").to_string();
    for wave in shipped_daily_peak_bursts_waves().iter().filter(|w| w.first) {
        let starts = start + Duration::minutes(wave.start_minute);
        let sent = starts - Duration::minutes(ANNOUNCED_AHEAD_MINUTES);
        out.push_str(&format!(
            "\n[[announcement]]\ntarget = \"endpoint/chat-api/variant/AllTraffic\"\nname = \"burst-{}\"\nsent = \"{}\"\nstarts = \"{}\"\nduration = \"{ANNOUNCED_DURATION}\"\nfloor = {ANNOUNCED_FLOOR}\n",
            starts.format("%a-%H%M").to_string().to_lowercase(),
            fmt(sent),
            fmt(starts),
        ));
    }
    out
}

/// The shipped generated what-if files: (path from the repository root, contents).
pub fn shipped_what_ifs() -> Vec<(&'static str, String)> {
    vec![(
        "events/scenarios/daily-peak-bursts/world-announced.toml",
        announced_world(),
    )]
}

/// The shipped synthetic traces: (file name under `events/traces/`, contents).
pub fn shipped() -> Vec<(&'static str, String)> {
    let monday = shipped_start();
    vec![
        (
            "synthetic-daily-peak-bursts-1m.csv",
            to_csv(
                "Synthetic: headroom_sim::synthetic::daily_peak_bursts(2026-03-02T00:00Z, 7 days, seed 5).\nRegenerate with `cargo run -p headroom-sim --example make-traces`.",
                &daily_peak_bursts(monday, 7, 5),
            ),
        ),
        (
            "synthetic-async-batches-1m.csv",
            to_csv(
                "Synthetic: headroom_sim::synthetic::async_batches(2026-03-02T00:00Z, 3 days, seed 11).\nRegenerate with `cargo run -p headroom-sim --example make-traces`.",
                &async_batches(monday, 3, 11),
            ),
        ),
    ]
}

/// A fleet of `targets` copies of the default scenario's chat API (the same plan and world per
/// target, each with its own endpoint name and a slightly different load) over `days` days of the
/// synthetic daily-peak-and-bursts trace. Used by the benchmark and the tests.
pub fn fleet(targets: usize, days: i64) -> Result<crate::Scenario, crate::scenario::ScenarioError> {
    fleet_with(targets, days, false)
}

/// [`fleet`] with a `[target.forecast]` on every target (10 requests/s per instance, the default
/// world's capacity): the speed goals are stated with forecasting on.
pub fn fleet_forecasting(
    targets: usize,
    days: i64,
) -> Result<crate::Scenario, crate::scenario::ScenarioError> {
    fleet_with(targets, days, true)
}

fn fleet_with(
    targets: usize,
    days: i64,
    forecast: bool,
) -> Result<crate::Scenario, crate::scenario::ScenarioError> {
    let monday = shipped_start();
    let trace = to_csv("fleet", &daily_peak_bursts(monday, days, 5));
    let plan_one = crate::scenario::DEFAULT_PLAN;
    let world_one = crate::scenario::DEFAULT_WORLD;
    let mut plan = String::from("version = 1\n[defaults]\ntimezone = \"UTC\"\n");
    let mut world = String::from("seed = 7\n");
    let target_block = |text: &str, header: &str| -> String {
        // Everything from the first `[[target]]` on, without the alarms.
        let from = text.find(header).unwrap_or(0);
        let body = &text[from..];
        body.find("\n[[alarm]]")
            .map_or(body, |end| &body[..end])
            .to_owned()
    };
    let plan_target = target_block(plan_one, "[[target]]");
    let world_target = target_block(world_one, "[[target]]");
    let alarm = world_one.find("[[alarm]]").map_or("", |i| &world_one[i..]);
    for i in 0..targets {
        let name = format!("chat-api-{i:03}");
        plan.push_str(&plan_target.replace("chat-api", &name));
        plan.push('\n');
        if forecast {
            plan.push_str(
                "[target.forecast]\ninvocations_per_instance = 600.0\nhistory = \"7d\"\n",
            );
        }
        world.push_str(&world_target.replace("chat-api", &name).replace(
            "capacity_per_instance = 10.0",
            &format!(
                "trace_scale = {}\ncapacity_per_instance = 10.0",
                0.8 + 0.4 * (i as f64 / targets.max(1) as f64)
            ),
        ));
        world.push('\n');
        world.push_str(&alarm.replace("chat-api", &name));
        world.push('\n');
    }
    crate::Scenario::parse(
        &format!("fleet-{targets}x{days}d"),
        ("fleet plan", &plan),
        ("fleet world", &world),
        ("fleet trace", &trace),
    )
}
