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
    fails_with(&out, 2, "cannot be used with '--days <DAYS>'", "");
    assert!(out.stdout.is_empty());
}

#[test]
fn a_trace_without_a_world_reads_the_one_beside_the_plan_or_says_what_is_missing() {
    // Beside the base plan: the same suggestion as naming it.
    let trace = "events/traces/nyc-taxi-2014-10-06-2wk-30min.csv";
    let until = "2014-10-13T04:00:00Z";
    // (Untuned: the tuning reads the world as the suggestion does, and takes seconds here.)
    let beside = suggest(&["--trace", trace, "--until", until, "--budget", "none"]);
    let named = suggest(&[
        "--trace",
        trace,
        "--until",
        until,
        "--budget",
        "none",
        "--world",
        "events/scenarios/nyc-taxi-learned/world.toml",
    ]);
    assert!(
        beside.status.success(),
        "{}",
        String::from_utf8_lossy(&beside.stderr)
    );
    assert_eq!(beside.stdout, named.stdout);
    // Nowhere: a usage error naming where it looked.
    let dir = std::env::temp_dir().join(format!("headroom-suggest-noworld-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let base = dir.join("base.toml");
    std::fs::write(&base, taxi_base()).expect("write");
    let out = Command::new(env!("CARGO_BIN_EXE_headroom"))
        .current_dir(root())
        .args([
            "plan",
            "suggest",
            "--plan",
            base.to_str().expect("utf-8"),
            "--trace",
            trace,
        ])
        .output()
        .expect("run headroom");
    fails_with(&out, 2, "pass --world FILE, or put it at", "");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn days_outside_cloudwatchs_retention_are_refused() {
    for days in ["0", "64"] {
        let out = suggest(&["--days", days]);
        fails_with(&out, 2, "is not in 1..=63", &format!("--days {days}"));
    }
}

#[test]
fn a_budget_is_a_ratio_from_1_to_10_or_none() {
    for bad in ["0.5", "11", "cheap"] {
        let out = suggest(&[&OFFLINE[..], &["--budget", bad]].concat());
        fails_with(&out, 2, "is not a budget", &format!("--budget {bad}"));
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

#[test]
fn written_peaks_the_history_cannot_show_are_kept_with_the_reason() {
    // GIVEN the taxi base plan with a weekend peak and a one-time launch beside its weekday rush,
    // and a first week of history (2 whole weekend days: too few to call a window recurring)
    let base = format!(
        "{}
  [[target.peak]]
  name = \"weekend-brunch\"
  cron = \"0 10 * * SAT,SUN\"
  duration = \"2h\"
  floor = 9

  [[target.peak]]
  name = \"launch\"
  at = \"2014-10-20T14:00:00Z\"
  duration = \"1h\"
  floor = 30
",
        taxi_base()
    );
    // WHEN the plan is suggested
    let printed = suggest_untuned_from("kept", &base);
    // THEN the weekday rush is replaced by what the history shows, and the other two stay as
    // written, each with its reason
    let plan = headroom_core::parse_plan("suggested", &printed).expect("a valid plan");
    let names: Vec<&str> = plan.targets[0]
        .peaks
        .iter()
        .map(|p| p.name.as_str())
        .collect();
    assert!(!names.contains(&"weekday-morning-rush"), "{names:?}");
    assert!(
        names.contains(&"weekend-brunch") && names.contains(&"launch"),
        "{names:?}"
    );
    assert!(names.iter().any(|n| n.starts_with("weekday-")), "{names:?}");
    for line in [
        "written peak weekday-morning-rush replaced by what the history shows",
        "written peak weekend-brunch kept: it fires on weekends, and the history holds 2 whole \
         weekend day(s)",
        "written peak launch kept: a one-time event",
    ] {
        assert!(printed.contains(line), "missing {line:?} in:\n{printed}");
    }
}

#[test]
fn the_forecast_figure_and_its_demand_are_written_together() {
    // GIVEN a base plan whose forecast counts requests in flight, 0.8 per instance, and a world
    // whose target tracking counts invocations per instance (22.5 a minute)
    let base = format!(
        "{}
  [target.forecast]
  demand = \"concurrency\"
  invocations_per_instance = 0.8
",
        taxi_base()
    );
    // WHEN the plan is suggested from the trace, which the world reads as invocations
    let printed = suggest_untuned_from("demand", &base);
    // THEN the forecast divides invocations by the invocations figure, and says it replaced the
    // base plan's pair
    let plan = headroom_core::parse_plan("suggested", &printed).expect("a valid plan");
    let forecast = plan.targets[0].forecast.as_ref().expect("a forecast");
    assert_eq!(
        (forecast.demand, forecast.invocations_per_instance),
        (headroom_core::plan::forecast::DemandKind::Invocations, 22.5)
    );
    let line = "the base plan's forecast figure (0.8 per instance of concurrency) is replaced by \
                the one above: 22.5 per instance of invocations";
    assert!(printed.contains(line), "missing {line:?} in:\n{printed}");
}

/// `headroom plan suggest --budget none` on the taxi trace's first week, from `base` written to a
/// temporary file: the printed plan (the command must succeed).
fn suggest_untuned_from(name: &str, base: &str) -> String {
    let out = suggest_from(name, base, None);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("utf-8")
}

/// `headroom plan suggest --budget none` from `base` written to a temporary file, on the taxi
/// trace's first week or on `trace` (its text) in place of the taxi trace.
fn suggest_from(name: &str, base: &str, trace: Option<&str>) -> std::process::Output {
    let dir = std::env::temp_dir().join(format!("headroom-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join("base.toml");
    std::fs::write(&path, base).expect("write base");
    let mut args = OFFLINE.map(str::to_owned);
    if let Some(text) = trace {
        let trace_path = dir.join("trace.csv");
        std::fs::write(&trace_path, text).expect("write trace");
        args[1] = trace_path.display().to_string();
    }
    let out = Command::new(env!("CARGO_BIN_EXE_headroom"))
        .current_dir(root())
        .args(["plan", "suggest", "--plan", &path.display().to_string()])
        .args(args)
        .args(["--budget", "none"])
        .output()
        .expect("run headroom");
    let _ = std::fs::remove_dir_all(&dir);
    out
}

fn taxi_base() -> String {
    std::fs::read_to_string(root().join("events/scenarios/nyc-taxi-learned/base.toml"))
        .expect("base plan")
}

#[test]
fn a_plan_and_world_that_disagree_are_invalid_input_with_the_cause() {
    // GIVEN a base plan with a target the world does not simulate
    let base = format!(
        "{}
[[target]]
resource_id = \"endpoint/not-in-the-world/variant/AllTraffic\"
min_capacity = 1
max_capacity = 4
",
        taxi_base()
    );
    let out = suggest_from("disagree", &base, None);
    let err = String::from_utf8_lossy(&out.stderr);
    // THEN exit 5 (invalid input), naming the target, as `simulate` would; nothing printed. The
    // base plan is named as one of the two sides, not as the file at fault.
    assert_eq!(out.status.code(), Some(5), "{err}");
    assert!(
        err.contains("plan suggest (base plan ")
            && err.contains("base.toml): the plan and the world disagree")
            && err.contains("endpoint/not-in-the-world/variant/AllTraffic has no [[target]]"),
        "{err}"
    );
    assert!(out.stdout.is_empty());
}

#[test]
fn a_serverless_target_is_suggested_under_its_dimension() {
    // GIVEN the taxi target as a serverless variant's provisioned concurrency
    let base = taxi_base().replace(
        "resource_id = \"endpoint/taxi-demand/variant/AllTraffic\"",
        "resource_id = \"endpoint/taxi-demand/variant/AllTraffic\"\ndimension = \"provisioned_concurrency\"",
    );
    assert!(
        base.contains("dimension"),
        "the base plan changed: update this test"
    );
    let printed = suggest_untuned_from("serverless", &base);
    // THEN it gets its history, its peaks and a forecast like any target
    assert!(
        printed.contains("#   history: 7 local date(s) with data"),
        "{printed}"
    );
    let plan = headroom_core::parse_plan("suggested", &printed).expect("a valid plan");
    assert!(plan.targets[0].forecast.is_some(), "{printed}");
}

#[test]
fn a_trace_that_does_not_parse_is_invalid_input() {
    let trace = "timestamp,requests\n2014-10-06T04:00:00Z,5\n2014-10-06T05:00:00Z,6\n\
                 2014-10-06T05:30:00Z,7\n";
    let out = suggest_from("badtrace", &taxi_base(), Some(trace));
    fails_with(&out, 5, "invalid", "");
}

#[test]
fn an_until_before_the_trace_is_a_usage_error() {
    // The trace's rows are 30 minutes apart from 04:00: before 04:30 no row has ended.
    for until in ["2014-10-06T04:00:00Z", "2014-10-06T04:29:59Z"] {
        let mut args = OFFLINE;
        args[5] = until;
        let out = suggest(&args);
        fails_with(&out, 2, "no history before it", until);
    }
}

/// The command failed with exit `code` and said `needle` on stderr (`context`: which case).
fn fails_with(out: &std::process::Output, code: i32, needle: &str, context: &str) {
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(code), "{context}: {err}");
    assert!(err.contains(needle), "{context}: {err}");
}

#[test]
fn a_guard_alarm_the_world_lacks_is_warned_about_and_the_plan_still_printed() {
    let base = format!(
        "{}\n  [target.guard]\n  alarms = [\"no-such-alarm\"]\n",
        taxi_base()
    );
    let out = suggest_from("warned", &base, None);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains("warning: target endpoint/taxi-demand/variant/AllTraffic: guard alarm \"no-such-alarm\" is not an [[alarm]] of the world"),
        "{err}"
    );
    assert!(!out.stdout.is_empty());
}
