//! Times the two speed goals once each, per strategy (a quick check; the benchmark is
//! `cargo bench -p headroom-sim`): `cargo run --release -p headroom-sim --example speed`.
//! `-- N` times only the Nth case (1-4), for a profiler.

use std::time::Instant;

/// The CLI's allocator, so the figures are what `headroom simulate` does.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use headroom_sim::engine::run_reactive;
use headroom_sim::{oracle, synthetic, RunOptions, Strategy};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let only: Option<usize> = std::env::args().nth(1).and_then(|a| a.parse().ok());
    let cases = [
        (1, 30, false),
        (100, 7, false),
        (1, 30, true),
        (100, 7, true),
    ];
    for (i, (targets, days, forecast)) in cases.into_iter().enumerate() {
        if only.is_some_and(|n| n != i + 1) {
            continue;
        }
        let scenario = if forecast {
            synthetic::fleet_forecasting(targets, days)?
        } else {
            synthetic::fleet(targets, days)?
        };
        let mut line = format!(
            "{targets:>3} target(s) x {days:>2} days{}:",
            if forecast { ", forecasting" } else { "" }
        );
        let mut total = 0.0;
        for s in Strategy::ALL {
            let started = Instant::now();
            let result = match s {
                Strategy::Oracle => oracle::run(&scenario, &mut RunOptions::default()),
                _ => run_reactive(&scenario, s, &mut RunOptions::default()),
            };
            let took = started.elapsed().as_secs_f64();
            total += took;
            line.push_str(&format!(" {} {took:.3} s", s.name()));
            if let Some(h) = &result.headroom {
                line.push_str(&format!(
                    " ({} ticks, {} alarm events, {} forecast refreshes)",
                    h.ticks, h.alarm_events, h.forecast_refreshes
                ));
            }
            line.push(';');
        }
        println!("{line} total {total:.3} s");
    }
    Ok(())
}
