//! Times the two speed goals once each (a quick check; the benchmark is `cargo bench -p
//! headroom-sim`): `cargo run --release -p headroom-sim --example speed`.

use std::time::Instant;

use headroom_sim::{run_all, synthetic, RunOptions};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    for (targets, days) in [(1, 30), (100, 7)] {
        let scenario = synthetic::fleet(targets, days)?;
        let started = Instant::now();
        let results = run_all(&scenario, &mut RunOptions::default());
        let took = started.elapsed();
        let steps = scenario.trace.steps() * targets;
        println!(
            "{targets:>3} target(s) x {days:>2} days: {:.3} s for 3 strategies ({} target-steps each; headroom ticks: {})",
            took.as_secs_f64(),
            steps,
            results[1].headroom.as_ref().map_or(0, |h| h.ticks)
        );
    }
    Ok(())
}
