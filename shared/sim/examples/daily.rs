//! Per-day breach minutes and instance-hours of target tracking and headroom for a scenario (a
//! diagnostic): `cargo run --release -p headroom-sim --example daily -- PLAN WORLD TRACE`. Then the
//! schedule review's last verdicts and the window scores.

use headroom_sim::engine::run_reactive;
use headroom_sim::{RunOptions, Scenario, Strategy};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.len() < 3 {
        return Err("usage: daily PLAN WORLD TRACE".into());
    }
    let read = |p: &str| std::fs::read_to_string(p).map_err(|e| format!("{p}: {e}"));
    let scenario = Scenario::parse(
        "daily",
        (&args[0], &read(&args[0])?),
        (&args[1], &read(&args[1])?),
        (&args[2], &read(&args[2])?),
    )?;
    let mut options = RunOptions::default();
    let tt = run_reactive(&scenario, Strategy::TargetTracking, &mut options);
    let hr = run_reactive(&scenario, Strategy::Headroom, &mut options);
    let days = |r: &headroom_sim::engine::StrategyResult| -> Vec<(u32, f64)> {
        r.per_target[0]
            .quarters
            .chunks(96)
            .map(|d| {
                (
                    d.iter().map(|q| q.breach_minutes).sum(),
                    d.iter().map(|q| q.instance_seconds).sum::<f64>() / 3600.0,
                )
            })
            .collect()
    };
    println!("day | tt breach | hr breach | tt inst-h | hr inst-h | cost");
    for (i, (t, h)) in days(&tt).iter().zip(days(&hr)).enumerate() {
        println!(
            "{i:>3} | {:>5} | {:>5} | {:>8.1} | {:>8.1} | {:.3}",
            t.0,
            h.0,
            t.1,
            h.1,
            h.1 / t.1
        );
    }
    if let Some(activity) = &hr.headroom {
        for line in activity
            .schedule_reviews
            .iter()
            .chain(&activity.window_scores)
        {
            println!("{line}");
        }
    }
    Ok(())
}
