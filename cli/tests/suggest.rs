//! `headroom plan suggest` as an operator runs it: from the repository root, on the first week of
//! a shipped trace, it prints exactly the shipped suggested plan, and that plan validates.

use std::process::Command;

fn root() -> std::path::PathBuf {
    let dir = std::env::var("CARGO_MANIFEST_DIR")
        .unwrap_or_else(|_| env!("CARGO_MANIFEST_DIR").to_owned());
    std::path::Path::new(&dir).join("..")
}

#[test]
fn plan_suggest_prints_the_shipped_learned_plan() {
    let out = Command::new(env!("CARGO_BIN_EXE_headroom"))
        .current_dir(root())
        .args([
            "plan",
            "suggest",
            "--plan",
            "events/scenarios/nyc-taxi-learned/base.toml",
            "--trace",
            "events/traces/nyc-taxi-2014-10-06-2wk-30min.csv",
            "--world",
            "events/scenarios/nyc-taxi-learned/world.toml",
            "--until",
            "2014-10-13T04:00:00Z",
        ])
        .output()
        .expect("run headroom");
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

#[test]
fn plan_suggest_without_a_trace_says_what_is_missing() {
    let out = Command::new(env!("CARGO_BIN_EXE_headroom"))
        .current_dir(root())
        .args([
            "plan",
            "suggest",
            "--plan",
            "events/scenarios/nyc-taxi-learned/base.toml",
        ])
        .output()
        .expect("run headroom");
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--trace TRACE --world WORLD"), "{err}");
}
