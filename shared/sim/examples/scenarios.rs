//! Runs every shipped scenario and prints the README's results tables (markdown), or the full
//! table of one scenario:
//! `cargo run --release -p headroom-sim --example scenarios [-- NAME]` (from the repository root).
//! Besides the shipped scenarios it runs the what-if plans next to them, and splits the default
//! scenario's breach minutes by where they fall (`headroom_sim::attribution`).

use std::path::Path;

use headroom_sim::attribution::{attribute, BreachCauses};
use headroom_sim::{run_all, synthetic, Report, RunOptions, Scenario, Strategy};

/// (scenario directory under events/scenarios, trace under events/traces)
const SHIPPED: [(&str, &str); 4] = [
    ("daily-peak-bursts", "synthetic-daily-peak-bursts-1m.csv"),
    ("nyc-taxi", "nyc-taxi-2014-10-06-2wk-30min.csv"),
    ("async-batches", "synthetic-async-batches-1m.csv"),
    ("azure-llm", "azure-llm-conv-10s.csv"),
];

/// (scenario directory, plan and world files in it, what they change): what-ifs run on the
/// scenario's trace.
const WHAT_IFS: [(&str, &str, &str, &str); 2] = [
    (
        "daily-peak-bursts",
        "plan-afternoon-floor.toml",
        "world.toml",
        "afternoon floor (what-if)",
    ),
    (
        "daily-peak-bursts",
        "plan.toml",
        "world-announced.toml",
        "bursts announced (what-if)",
    ),
];

fn load(root: &Path, name: &str, trace: &str) -> Result<Scenario, Box<dyn std::error::Error>> {
    load_files(root, name, ("plan.toml", "world.toml"), trace)
}

fn load_files(
    root: &Path,
    name: &str,
    (plan, world): (&str, &str),
    trace: &str,
) -> Result<Scenario, Box<dyn std::error::Error>> {
    let dir = root.join("events/scenarios").join(name);
    let plan = dir.join(plan);
    let world = dir.join(world);
    let trace = root.join("events/traces").join(trace);
    let read = |p: &Path| std::fs::read_to_string(p).map_err(|e| format!("{}: {e}", p.display()));
    let show = |p: &Path| p.strip_prefix(root).unwrap_or(p).display().to_string();
    Ok(Scenario::parse(
        name,
        (&show(&plan), &read(&plan)?),
        (&show(&world), &read(&world)?),
        (&show(&trace), &read(&trace)?),
    )?)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // `cargo run` gives the package's directory at run time too; the compile-time value would be
    // another clone's when cargo reuses a binary from a target dir shared between clones.
    let package = std::env::var("CARGO_MANIFEST_DIR")
        .unwrap_or_else(|_| env!("CARGO_MANIFEST_DIR").to_owned());
    let root = Path::new(&package).join("../..");
    let only = std::env::args().nth(1);
    if let Some(name) = &only {
        let (_, trace) = SHIPPED
            .iter()
            .find(|(n, _)| n == name)
            .ok_or_else(|| format!("no shipped scenario {name:?}"))?;
        let scenario = load(&root, name, trace)?;
        let report = Report::new(&scenario, run_all(&scenario, &mut RunOptions::default()));
        print!("{}", report.table());
        return Ok(());
    }
    println!("| scenario | strategy | breach min | in planned peaks | failed | instance-hours | launches | max backlog |");
    println!("|---|---|---:|---:|---:|---:|---:|---:|");
    let mut goals = Vec::new();
    let mut causes: Vec<(String, BreachCauses)> = Vec::new();
    let mut runs: Vec<(String, Scenario)> = Vec::new();
    for (name, trace) in SHIPPED {
        runs.push((name.to_owned(), load(&root, name, trace)?));
    }
    for (name, plan, world, label) in WHAT_IFS {
        let trace = SHIPPED.iter().find(|(n, _)| *n == name).map_or("", |s| s.1);
        runs.push((
            format!("{name}, {label}"),
            load_files(&root, name, (plan, world), trace)?,
        ));
    }
    for (name, scenario) in &runs {
        let results = run_all(scenario, &mut RunOptions::default());
        // The generator knows this trace's bursts: split its breach minutes by where they fall.
        if name.starts_with("daily-peak-bursts") {
            let waves = synthetic::shipped_daily_peak_bursts_waves();
            let peaks = scenario.peak_windows(0);
            let start = scenario.trace.start.timestamp();
            // Target tracking once (the what-ifs change only headroom's inputs); the oracle
            // never breaches.
            let shown = |s: Strategy| {
                s == Strategy::Headroom
                    || (s == Strategy::TargetTracking && name == "daily-peak-bursts")
            };
            for r in results.iter().filter(|r| shown(r.strategy)) {
                let spans = &r.per_target[0].breach_spans;
                let label = format!("{name}: {}", r.strategy.name());
                causes.push((label, attribute(spans, start, &peaks, &waves)));
            }
        }
        let report = Report::new(scenario, results);
        for s in Strategy::ALL {
            let Some(r) = report.get(s) else { continue };
            let t = &r.total;
            println!(
                "| {name} | {} | {} | {} | {} | {:.1} | {} | {} |",
                s.name(),
                t.breach_minutes,
                t.breach_minutes_in_peaks,
                t.failed_requests,
                t.instance_hours,
                t.launches,
                t.max_backlog
            );
        }
        goals.push((name.clone(), report.goals()));
    }
    println!();
    println!("| scenario | planned peaks breach-free | breach minutes vs target tracking | instance-hours vs target tracking | instance-hours vs oracle | all goals |");
    println!("|---|---|---:|---:|---:|---|");
    for (name, g) in goals {
        let breach = if g.no_breach_either_way {
            "none either way".to_owned()
        } else {
            format!("{:+.1} %", -g.breach_reduction_percent)
        };
        println!(
            "| {name} | {} | {breach} | {:+.1} % | {:.2}x | {} |",
            match g.peaks_breach_free {
                Some(true) => "yes",
                Some(false) => "no",
                None => "n/a",
            },
            g.extra_instance_hours_percent,
            g.oracle_ratio,
            if g.met { "met" } else { "missed" }
        );
    }
    println!();
    println!("Where the breach minutes of the daily-peak-bursts trace fall:");
    println!();
    println!("| run | breach min | in planned peaks | in first waves of bursts | in rebound waves | elsewhere |");
    println!("|---|---:|---:|---:|---:|---:|");
    for (run, c) in causes {
        println!(
            "| {run} | {} | {} | {} | {} | {} |",
            c.total(),
            c.planned_peaks,
            c.first_waves,
            c.rebound_waves,
            c.elsewhere
        );
    }
    Ok(())
}
