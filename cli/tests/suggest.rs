//! `headroom plan suggest` as an operator runs it: from the repository root, on the first week of
//! a shipped trace, it prints exactly the shipped suggested plan, and that plan validates.

use std::process::Command;

fn root() -> std::path::PathBuf {
    let dir = std::env::var("CARGO_MANIFEST_DIR")
        .unwrap_or_else(|_| env!("CARGO_MANIFEST_DIR").to_owned());
    std::path::Path::new(&dir).join("..")
}

/// The offline form on the nyc-taxi learned scenario's first week.
const OFFLINE: [&str; 6] = [
    "--trace",
    "events/traces/nyc-taxi-2014-10-06-2wk-30min.csv",
    "--world",
    "events/scenarios/nyc-taxi-learned/world.toml",
    "--until",
    "2014-10-13T04:00:00Z",
];

#[test]
fn plan_suggest_prints_the_shipped_learned_plan() {
    let out = suggest(&OFFLINE);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let printed = String::from_utf8(out.stdout).expect("utf-8");
    let shipped =
        std::fs::read_to_string(root().join("events/scenarios/nyc-taxi-learned/plan.toml"))
            .expect("shipped plan");
    assert_eq!(printed, shipped);
    assert!(printed.contains("[target.forecast]") && printed.contains("[[target.peak]]"));
}

/// `headroom plan suggest ARGS` from the repository root.
fn suggest(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_headroom"))
        .current_dir(root())
        .args([
            "plan",
            "suggest",
            "--plan",
            "events/scenarios/nyc-taxi-learned/base.toml",
        ])
        .args(args)
        .output()
        .expect("run headroom")
}

#[test]
fn a_trace_and_cloudwatch_days_together_are_a_usage_error() {
    let out = suggest(&[
        "--trace",
        "events/traces/nyc-taxi-2014-10-06-2wk-30min.csv",
        "--world",
        "events/scenarios/nyc-taxi-learned/world.toml",
        "--days",
        "7",
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("cannot be used with '--days <DAYS>'"), "{err}");
    assert!(out.stdout.is_empty());
}

#[test]
fn a_trace_without_a_world_says_what_is_missing() {
    let out = suggest(&["--trace", "events/traces/nyc-taxi-2014-10-06-2wk-30min.csv"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("--world <WORLD>"), "{err}");
}

#[test]
fn days_outside_cloudwatchs_retention_are_refused() {
    for days in ["0", "64"] {
        let out = suggest(&["--days", days]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "--days {days}: {err}");
        assert!(err.contains("is not in 1..=63"), "{err}");
    }
}

#[test]
fn a_budget_is_a_ratio_from_1_to_10_or_none() {
    for bad in ["0.5", "11", "cheap"] {
        let out = suggest(&[&OFFLINE[..], &["--budget", bad]].concat());
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "--budget {bad}: {err}");
        assert!(err.contains("is not a budget"), "{err}");
    }
    // Without a world there is nothing to simulate: the CloudWatch form takes no budget.
    let out = suggest(&["--budget", "1.2"]);
    assert_eq!(out.status.code(), Some(2));
    // `none` prints the suggestion untuned: no tuning evidence, the forecast at its defaults.
    let out = suggest(&[&OFFLINE[..], &["--budget", "none"]].concat());
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let printed = String::from_utf8(out.stdout).expect("utf-8");
    assert!(!printed.contains("# Tuned"), "{printed}");
    assert!(!printed.contains("quantile ="), "{printed}");
}
