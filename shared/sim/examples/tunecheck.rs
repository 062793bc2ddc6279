//! How well `plan suggest --budget` predicts: for every setting of the tuning grid, the backtest
//! over the first DAYS of the trace (what the tuner sees) beside the simulation of the whole
//! trace (what the deployment would get). A diagnostic for the tuning rules, not a benchmark:
//! `cargo run --release -p headroom-sim --example tunecheck -- BASE WORLD TRACE [DAYS]`.

use headroom_sim::engine::run_reactive;
use headroom_sim::tune::backtest_grid;
use headroom_sim::{RunOptions, Scenario, Strategy, Trace, World};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [base, world, trace] = [0, 1, 2].map(|i| args.get(i).cloned().unwrap_or_default());
    let days: i64 = args.get(3).map_or(Ok(7), |d| d.parse())?;
    let read = |p: &str| std::fs::read_to_string(p).map_err(|e| format!("{p}: {e}"));
    let trace_t = Trace::parse(&trace, &read(&trace)?)?;
    let world_t = World::parse(&world, &read(&world)?)?;
    let until = trace_t.start + chrono::Duration::days(days);
    let grid = match backtest_grid((&base, &read(&base)?), &trace_t, &world_t, Some(until))? {
        Ok(grid) => grid,
        Err(untuned) => return Err(format!("not tunable:\n{untuned}").into()),
    };
    println!("| setting | backtest cost | backtest cut | whole-trace cost | whole-trace cut |");
    println!("|---|---:|---:|---:|---:|");
    for (knobs, result) in grid.settings.iter().zip(&grid.results) {
        let Some(Some(b)) = result.first() else {
            continue;
        };
        let mut file = grid.file.clone();
        for t in &mut file.targets {
            knobs.apply(t);
        }
        let plan = headroom_core::parse_plan("setting", &toml::to_string(&file)?)?;
        let scenario = Scenario::new("whole", plan, world_t.clone(), trace_t.clone())?;
        let mut options = RunOptions::default();
        let tt = run_reactive(&scenario, Strategy::TargetTracking, &mut options).total;
        let hr = run_reactive(&scenario, Strategy::Headroom, &mut options).total;
        let cut = 100.0 * (1.0 - hr.breach_minutes as f64 / tt.breach_minutes.max(1) as f64);
        println!(
            "| {} | {:.3}x | {:.1} % | {:.3}x | {:.1} % |",
            knobs.describe(&file.targets[0]),
            b.cost_ratio(),
            b.cut_percent(),
            hr.instance_hours / tt.instance_hours,
            cut
        );
    }
    Ok(())
}
