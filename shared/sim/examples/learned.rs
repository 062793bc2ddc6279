//! The learned-plan benchmark: for each scenario, `plan suggest` on the first week of its trace
//! (as `headroom plan suggest --plan BASE --trace TRACE --world WORLD --until START+7d`), then the
//! simulation of the whole trace with that plan, against target tracking alone and the oracle.
//! `cargo run --release -p headroom-sim --example learned [-- BASE WORLD TRACE [DAYS]]`
//! (from the repository root; without arguments, the shipped learned scenarios), or
//! `... --example learned -- --dir DIR` for every `DIR/*/` holding `base.toml`, `world.toml` and
//! `trace.csv` (the held-out set `examples/heldout.rs` writes). `SHOW_REVIEWS=1` adds the
//! schedule review's last verdicts on stderr, `SHOW_PLAN=1` the suggested plan, `BUDGET=1.2`
//! tunes to another budget than the default (`BUDGET=none`: untuned).

use std::path::Path;

use headroom_core::suggest::tune::DEFAULT_BUDGET;
use headroom_sim::suggest::suggest_plan_within;
use headroom_sim::{run_all, Report, RunOptions, Scenario, Strategy, Trace, World};

/// (scenario directory under events/scenarios, trace under events/traces)
const LEARNED: [(&str, &str); 4] = [
    (
        "nyc-taxi-learned",
        "events/traces/nyc-taxi-2014-10-06-2wk-30min.csv",
    ),
    (
        "nyc-taxi-july4",
        "events/traces/nyc-taxi-2014-07-01-2wk-30min.csv",
    ),
    ("tweets-aapl", "events/traces/twitter-volume-aapl-5min.csv"),
    ("tweets-goog", "events/traces/twitter-volume-goog-5min.csv"),
];

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let root = std::env::var("CARGO_MANIFEST_DIR")
        .map(|d| Path::new(&d).join("../.."))
        .unwrap_or_else(|_| Path::new(env!("CARGO_MANIFEST_DIR")).join("../.."));
    let args: Vec<String> = std::env::args().skip(1).collect();
    let runs: Vec<(String, String, String, i64)> = if args.first().is_some_and(|a| a == "--dir") {
        let dir = args.get(1).ok_or("--dir needs a directory")?;
        let mut dirs: Vec<_> = std::fs::read_dir(dir)?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|d| {
                ["base.toml", "world.toml", "trace.csv"]
                    .iter()
                    .all(|f| d.join(f).is_file())
            })
            .collect();
        dirs.sort();
        dirs.iter()
            .map(|d| {
                let file = |f: &str| d.join(f).display().to_string();
                (file("base.toml"), file("world.toml"), file("trace.csv"), 7)
            })
            .collect()
    } else if args.len() >= 3 {
        vec![(
            args[0].clone(),
            args[1].clone(),
            args[2].clone(),
            args.get(3).map_or(Ok(7), |d| d.parse())?,
        )]
    } else {
        LEARNED
            .iter()
            .map(|(name, trace)| {
                let dir = root.join("events/scenarios").join(name);
                (
                    dir.join("base.toml").display().to_string(),
                    dir.join("world.toml").display().to_string(),
                    root.join(trace).display().to_string(),
                    7,
                )
            })
            .collect()
    };
    println!("| scenario | TT breach min | headroom breach min | cut | instance-hours vs TT | vs oracle | vs lower bound | forecast under-min | forecast over inst-h | breach min no forecast could know |");
    println!("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    for (base, world, trace, days) in runs {
        let read = |p: &str| std::fs::read_to_string(p).map_err(|e| format!("{p}: {e}"));
        let trace_t = Trace::parse(&trace, &read(&trace)?)?;
        let world_t = World::parse(&world, &read(&world)?)?;
        let until = trace_t.start + chrono::Duration::days(days);
        let started = std::time::Instant::now();
        // For experiments: `BUDGET=1.12` tunes to another budget than `plan suggest`'s default,
        // `BUDGET=none` leaves the suggestion untuned (as `--budget` does).
        let budget = match std::env::var("BUDGET").as_deref() {
            Ok("none") => None,
            Ok(b) => Some(b.parse()?),
            Err(_) => Some(DEFAULT_BUDGET),
        };
        let mut plan = suggest_plan_within(
            (&base, &read(&base)?),
            &trace_t,
            &world_t,
            Some(until),
            budget,
        )?;
        // On stderr, so the table on stdout stays a table: what `plan suggest` itself took.
        eprintln!(
            "{base}: plan suggest (the tuning included) took {:.1} s",
            started.elapsed().as_secs_f64()
        );
        // For experiments: extra keys for the (last) [target.forecast] table.
        if let Ok(mode) = std::env::var("FORECAST_MODE") {
            plan = plan.replace("mode = \"active\"", &format!("mode = \"{mode}\""));
        }
        if let Ok(extra) = std::env::var("FORECAST_EXTRA") {
            plan.push_str(&extra.replace(';', "\n"));
            plan.push('\n');
        }
        // For experiments: `from=>to` replacements in the suggested plan, `;`-separated
        // (`PLAN_REPLACE='hold = "30m"=>hold = "10m"'`).
        if let Ok(pairs) = std::env::var("PLAN_REPLACE") {
            for pair in pairs.split(';') {
                if let Some((from, to)) = pair.split_once("=>") {
                    plan = plan.replace(from, &to.replace("\\n", "\n"));
                }
            }
        }
        if std::env::var_os("SHOW_PLAN").is_some() {
            eprintln!("{plan}");
        }
        let name = Path::new(&base)
            .parent()
            .and_then(Path::file_name)
            .map_or("custom".into(), |n| n.to_string_lossy().into_owned());
        let scenario = Scenario::parse(
            &name,
            ("suggested", &plan),
            (&world, &read(&world)?),
            (&trace, &read(&trace)?),
        )?;
        let results = run_all(&scenario, &mut RunOptions::default());
        let report = Report::new(&scenario, results);
        let g = report.goals();
        let tt = report
            .get(Strategy::TargetTracking)
            .map_or(0, |r| r.total.breach_minutes);
        let hr = report.get(Strategy::Headroom);
        let score = hr
            .and_then(|r| r.headroom.as_ref())
            .map(|a| a.forecast_score.clone())
            .unwrap_or_default();
        let novelty = report.breach_novelty.unwrap_or_default();
        if std::env::var_os("SHOW_REVIEWS").is_some() {
            for line in hr
                .and_then(|r| r.headroom.as_ref())
                .map_or(&[][..], |a| &a.schedule_reviews[..])
            {
                eprintln!("{line}");
            }
        }
        println!(
            "| {name} | {tt} | {} | {:+.1} % | {:.3}x | {:.2}x | {:.2}x | {} | {:.0} | {} ({:.0} %) |",
            hr.map_or(0, |r| r.total.breach_minutes),
            -g.breach_reduction_percent,
            1.0 + g.extra_instance_hours_percent / 100.0,
            g.oracle_ratio,
            g.lower_bound_ratio,
            score.under_minutes,
            score.over_instance_hours,
            novelty.no_history + novelty.above_all_seen,
            novelty.unknowable_percent(),
        );
    }
    Ok(())
}
