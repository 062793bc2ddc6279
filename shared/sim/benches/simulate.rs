//! The simulator's speed goals (issue 5; issue 12 keeps them with forecasting on), release
//! build:
//! - 30 days of one target at 10-second steps, all three strategies: under 1 s;
//! - 100 targets for 7 days, all three strategies: under 10 s.
//!
//! `cargo bench -p headroom-sim` (criterion; a handful of samples, the runs are long). The
//! allocator is the CLI's (mimalloc), so the figures are what `headroom simulate` does.

use std::time::Duration;

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use criterion::{criterion_group, criterion_main, Criterion};
use headroom_sim::{run_all, synthetic, RunOptions};

fn one_target_30_days(c: &mut Criterion) {
    let scenario = synthetic::fleet(1, 30).expect("the fleet scenario is valid");
    let mut group = c.benchmark_group("simulate");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(20));
    group.bench_function("1 target x 30 days, 3 strategies", |b| {
        b.iter(|| run_all(&scenario, &mut RunOptions::default()))
    });
    group.finish();
}

fn hundred_targets_7_days(c: &mut Criterion) {
    let scenario = synthetic::fleet(100, 7).expect("the fleet scenario is valid");
    let mut group = c.benchmark_group("simulate");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(60));
    group.bench_function("100 targets x 7 days, 3 strategies", |b| {
        b.iter(|| run_all(&scenario, &mut RunOptions::default()))
    });
    group.finish();
}

fn forecasting(c: &mut Criterion) {
    let mut group = c.benchmark_group("simulate");
    group.sample_size(10);
    for (targets, days, secs) in [(1, 30, 20), (100, 7, 120)] {
        let scenario = synthetic::fleet_forecasting(targets, days)
            .expect("the forecasting fleet scenario is valid");
        group.measurement_time(Duration::from_secs(secs));
        group.bench_function(
            format!("{targets} target(s) x {days} days, forecasting, 3 strategies"),
            |b| b.iter(|| run_all(&scenario, &mut RunOptions::default())),
        );
    }
    group.finish();
}

criterion_group!(
    benches,
    one_target_30_days,
    hundred_targets_7_days,
    forecasting
);
criterion_main!(benches);
