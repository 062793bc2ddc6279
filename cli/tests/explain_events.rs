//! `headroom explain` on every event fixture in events/ (all subfolders), through the real
//! binary: each accepted event is explained by the handler that owns it, each fixture in
//! events/invalid/ is refused with a non-zero exit and a message naming the problem, and nothing
//! ever talks to AWS (the endpoint points at a closed port).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

/// Fixtures `explain` cannot handle yet, each with the reason. Empty: every fixture is handled.
/// A fixture listed here must fail; one that starts passing must be removed from the list.
const NOT_YET: &[(&str, &str)] = &[];

/// This package's directory as cargo gives it when the test runs. The compile-time value would
/// be another clone's when cargo reuses a test binary from a target dir shared between clones.
fn root() -> PathBuf {
    let package = std::env::var("CARGO_MANIFEST_DIR")
        .unwrap_or_else(|_| env!("CARGO_MANIFEST_DIR").to_owned());
    Path::new(&package).join("..")
}

fn explain(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_headroom"))
        .arg("explain")
        .args(args)
        .current_dir(root())
        // Nothing may reach AWS: a closed port and no credentials would make any call fail.
        .env("AWS_ENDPOINT_URL", "http://127.0.0.1:9")
        .env_remove("AWS_ACCESS_KEY_ID")
        .env_remove("AWS_SECRET_ACCESS_KEY")
        .env("AWS_REGION", "us-east-1")
        .output()
        .expect("the headroom binary runs")
}

fn fixtures(dir: &Path, out: &mut Vec<PathBuf>) {
    let entries = std::fs::read_dir(dir).unwrap_or_else(|e| panic!("read {}: {e}", dir.display()));
    for entry in entries {
        let path = entry.expect("directory entry").path();
        if path.is_dir() {
            fixtures(&path, out);
        } else if path.extension().is_some_and(|e| e == "json") {
            out.push(path);
        }
    }
}

fn relative(path: &Path) -> String {
    path.strip_prefix(root())
        .unwrap_or(path)
        .display()
        .to_string()
}

fn json_of(out: &Output, what: &str) -> Value {
    assert!(
        out.status.success(),
        "explain {what} failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "explain {what} printed no JSON ({e}):\n{}",
            String::from_utf8_lossy(&out.stdout)
        )
    })
}

#[test]
fn every_fixture_is_explained_or_refused_with_a_reason() {
    let mut all = Vec::new();
    fixtures(&root().join("events"), &mut all);
    all.sort();
    assert!(
        all.len() >= 20,
        "expected the fixtures of every feature, found {}",
        all.len()
    );
    for path in all {
        let name = relative(&path);
        let out = explain(&["--event", &name, "--desired", "7"]);
        if name.starts_with("events/invalid/") {
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert!(!out.status.success(), "{name} must be refused");
            assert!(
                stderr.contains("headroom does not accept this event:") && stderr.trim().len() > 60,
                "{name}: the error must name the problem:\n{stderr}"
            );
            assert!(
                out.stdout.is_empty(),
                "{name}: nothing on stdout when refused"
            );
            continue;
        }
        if let Some((_, why)) = NOT_YET.iter().find(|(f, _)| *f == name) {
            assert!(
                !out.status.success(),
                "{name} is listed as not handled yet ({why}) but now works: unlist it"
            );
            continue;
        }
        let v = json_of(&out, &name);
        assert_eq!(v["changes_nothing"], true, "{name}");
        let folder = name.split('/').nth(1).unwrap_or_default();
        let expected = match folder {
            "alarms" => "headroom-alarm",
            "schedule" => "headroom-tick",
            "sagemaker" | "pipeline" => "headroom-deploy",
            other => {
                panic!("{name}: fixtures in events/{other}/ have no expected handler: add one here")
            }
        };
        assert_eq!(v["handled_by"], expected, "{name}");
        assert!(
            v.get("result").is_some() || v.get("explanation").is_some(),
            "{name}: {v}"
        );
        assert!(
            v["result"].get("handler_error").is_none(),
            "{name} was refused: {}",
            v["result"]
        );
        assert!(
            v["result"]["rejected"].as_array().is_none_or(Vec::is_empty),
            "{name} was rejected for a target: {}",
            v["result"]
        );
    }
}

/// The min and scale-in suspension `explain` says the target would get.
fn bounds_after(v: &Value, target: &str) -> Option<(u64, bool)> {
    v["targets"]
        .as_array()?
        .iter()
        .find(|t| t["target"] == target)
        .map(|t| {
            (
                t["bounds_after"]["min"].as_u64().unwrap_or_default(),
                t["bounds_after"]["suspend_scale_in"]
                    .as_bool()
                    .unwrap_or_default(),
            )
        })
}

#[test]
fn alarm_fixtures_claim_what_the_example_plan_says() {
    const CHAT: &str = "endpoint/chat-prod/variant/AllTraffic";
    const ASYNC: &str = "endpoint/summarize-async/variant/AllTraffic";
    const IC: &str = "inference-component/llama-8b-ic";
    // (fixture, target, min after, scale-in suspended, claim source)
    let table = [
        ("eventbridge-burst-alarm.json", CHAT, 7, true, "guard"),
        // OK: the floor still holds for the hold time (20 min), scale-in still suspended.
        ("eventbridge-burst-ok.json", CHAT, 7, true, "guard"),
        ("eventbridge-metric-math-alarm.json", CHAT, 7, true, "guard"),
        // Named by ARN in the plan.
        ("eventbridge-composite-alarm.json", CHAT, 7, true, "guard"),
        ("direct-action-burst-alarm.json", CHAT, 7, true, "guard"),
        ("eventbridge-backlog-alarm.json", ASYNC, 1, false, "wake"),
        // OK: the quiet period keeps the wake capacity.
        ("direct-action-backlog-ok.json", ASYNC, 1, false, "wake"),
        (
            "eventbridge-ic-no-capacity-alarm.json",
            IC,
            1,
            false,
            "wake",
        ),
    ];
    for (file, target, min, suspend, source) in table {
        let path = format!("events/alarms/{file}");
        let v = json_of(&explain(&["--event", &path, "--desired", "7"]), &path);
        assert_eq!(
            bounds_after(&v, target),
            Some((min, suspend)),
            "{file}: {:#}",
            v["targets"]
        );
        let claims = v["targets"][0]["claims"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        assert!(
            claims.iter().any(|c| c["source"] == source),
            "{file}: {claims:?}"
        );
        assert_eq!(
            v["targets"].as_array().map(Vec::len),
            Some(1),
            "{file}: one target only"
        );
        let reasons = &v["targets"][0]["decisions"][0]["reasons"];
        assert!(reasons.to_string().contains(source), "{file}: {reasons}");
    }
}

#[test]
fn an_alarm_the_plan_does_not_name_would_change_nothing() {
    let v = json_of(
        &explain(&["--event", "events/alarms/eventbridge-unknown-alarm.json"]),
        "the unknown alarm",
    );
    assert_eq!(v["result"]["not_ours"], true);
    assert_eq!(v["targets"], Value::Array(vec![]));
    for call in [
        "register_scalable_target",
        "state_writes",
        "decision_log_records",
    ] {
        assert_eq!(v["would_call"][call], 0, "{call}");
    }
}

#[test]
fn without_desired_the_guard_holds_the_base_minimum_and_says_so() {
    let v = json_of(
        &explain(&["--event", "events/alarms/eventbridge-burst-alarm.json"]),
        "burst without --desired",
    );
    assert_eq!(
        bounds_after(&v, "endpoint/chat-prod/variant/AllTraffic"),
        Some((2, true))
    );
    assert!(
        v["assumed"]["desired_count"]
            .to_string()
            .contains("--desired"),
        "{}",
        v["assumed"]
    );
}

#[test]
fn at_and_plan_options_change_the_explanation() {
    // Decided at 16:30, the guard from 09:42 has run past its 6 h bound and its ramp.
    let v = json_of(
        &explain(&[
            "--event",
            "events/alarms/eventbridge-burst-alarm.json",
            "--desired",
            "7",
            "--at",
            "2026-03-14T16:30:00Z",
        ]),
        "burst at 16:30",
    );
    assert_eq!(v["at_source"], "--at");
    assert_eq!(
        bounds_after(&v, "endpoint/chat-prod/variant/AllTraffic"),
        Some((2, false))
    );

    let dir = std::env::temp_dir().join(format!("headroom-explain-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let plan = dir.join("plan.toml");
    std::fs::write(
        &plan,
        "version = 1\n[[target]]\nresource_id = \"endpoint/other/variant/AllTraffic\"\nmin_capacity = 1\nmax_capacity = 2\n",
    )
    .expect("write plan");
    let plan = plan.display().to_string();
    let v = json_of(
        &explain(&[
            "--event",
            "events/alarms/eventbridge-burst-alarm.json",
            "--plan",
            &plan,
        ]),
        "burst with another plan",
    );
    assert_eq!(
        v["result"]["not_ours"], true,
        "that plan names no burst alarm"
    );
}

#[test]
fn unreadable_events_and_plans_fail_with_the_file_named() {
    let dir = std::env::temp_dir().join(format!("headroom-explain-bad-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let broken = dir.join("broken.json");
    std::fs::write(&broken, "{\"detail-type\": ").expect("write");
    let broken = broken.display().to_string();
    let out = explain(&["--event", &broken]);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("broken.json") && stderr.contains("not valid JSON"),
        "{stderr}"
    );

    let out = explain(&[
        "--event",
        "events/alarms/eventbridge-burst-alarm.json",
        "--plan",
        "no/such/plan.toml",
    ]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("no/such/plan.toml"));

    let bad_plan = dir.join("bad.toml");
    std::fs::write(&bad_plan, "version = 1\n[[target]]\nresource_id = \"endpoint/x\"\nmin_capacity = 1\nmax_capacity = 2\n").expect("write");
    let bad_plan = bad_plan.display().to_string();
    let out = explain(&[
        "--event",
        "events/alarms/eventbridge-burst-alarm.json",
        "--plan",
        &bad_plan,
    ]);
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("target[0].resource_id"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// `--demand`: a tick refreshes the forecast from the trace before the instant, scores each
/// planned window in it, and opens the schedule review a wasteful peak calls for, all in the
/// explanation and nothing in AWS.
#[test]
fn a_tick_with_a_demand_trace_scores_the_windows_and_opens_the_schedule_review() {
    let base = std::fs::read_to_string(root().join("events/scenarios/daily-peak-bursts/plan.toml"))
        .expect("plan");
    // The morning rush needs about 23 instances at 10 requests/s each: a floor of 60 is wasteful.
    let plan = base.replace("floor = 25", "floor = 60").replace("max_capacity = 40", "max_capacity = 80").replace(
        "  [target.guard]",
        "  [target.forecast]\n  invocations_per_instance = 600.0\n  mode = \"forecast_only\"\n\n  [target.guard]",
    );
    let dir = std::env::temp_dir().join(format!("headroom-explain-demand-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let file = dir.join("plan.toml");
    std::fs::write(&file, plan).expect("write");
    let out = explain(&[
        "--event",
        "events/schedule/tick-rule.json",
        "--plan",
        file.to_str().expect("utf-8"),
        "--demand",
        "events/traces/synthetic-daily-peak-bursts-1m.csv",
        "--at",
        "2026-03-06T12:00:00Z",
    ]);
    let v = json_of(&out, "a tick with --demand");
    let t = &v["targets"][0];
    let windows = t["forecast"]["windows"].as_array().expect("windows");
    // Monday to Friday's mornings, each using well under the floor.
    assert_eq!(windows.len(), 5, "{windows:?}");
    assert!(
        windows
            .iter()
            .all(|w| w["floor"] == 60 && w["floor_used_pct"].as_u64().unwrap_or(100) < 50),
        "{windows:?}"
    );
    let notes = t["decisions"].to_string();
    assert!(
        notes.contains("window peak:weekday-morning 2026-03-02T09:00Z: floor 60 used"),
        "{notes}"
    );
    assert_eq!(t["schedule_reviews"][0]["verdict"], "wasteful", "{t}");
    assert_eq!(v["would_call"]["schedule_reviews_written"], 1);
    assert_eq!(v["changes_nothing"], true);
    std::fs::remove_dir_all(&dir).ok();
}

/// `--demand` reads the trace as `simulate` does: times each target's `trace_scale` from the
/// world file beside the plan (or `--world`), and the explanation says which.
#[test]
fn a_demand_trace_is_scaled_as_the_world_beside_the_plan_says() {
    let run = |extra: &[&str]| {
        let mut args = vec![
            "--event",
            "events/schedule/tick-rule.json",
            "--plan",
            "events/scenarios/tweets-aapl/plan.toml",
            "--demand",
            "events/traces/twitter-volume-aapl-5min.csv",
            "--at",
            "2015-03-10T12:00:00Z",
        ];
        args.extend_from_slice(extra);
        json_of(&explain(&args), "a tick with --demand")
    };
    let beside = run(&[]);
    assert!(
        beside["assumed"]["demand"]
            .as_str()
            .is_some_and(|d| d.contains("trace_scale in events/scenarios/tweets-aapl/world.toml")),
        "{}",
        beside["assumed"]
    );
    // The same world named: the same explanation.
    let named = run(&["--world", "events/scenarios/tweets-aapl/world.toml"]);
    assert_eq!(named["targets"], beside["targets"]);
    // A world whose scale is 1 reads a tenth of the demand: the forecast asks for less (5
    // instances at noon against 1).
    let dir = std::env::temp_dir().join(format!("headroom-explain-scale-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let world = std::fs::read_to_string(root().join("events/scenarios/tweets-aapl/world.toml"))
        .expect("world")
        .replace("trace_scale = 10", "trace_scale = 1");
    let unscaled = dir.join("world.toml");
    std::fs::write(&unscaled, world).expect("write");
    let tenth = run(&["--world", unscaled.to_str().expect("utf-8")]);
    let floor = |v: &serde_json::Value| {
        v["targets"][0]["bounds_after"]["min"]
            .as_u64()
            .unwrap_or_else(|| panic!("a minimum: {}", v["targets"][0]))
    };
    assert!(
        floor(&tenth) < floor(&beside),
        "{} vs {}",
        floor(&tenth),
        floor(&beside)
    );
    // A serverless variant's plan target (its dimension in the plan, not in the world) is
    // scaled by its world target all the same.
    let serverless = std::fs::read_to_string(root().join("events/scenarios/tweets-aapl/plan.toml"))
        .expect("plan")
        .replacen(
            "resource_id = \"endpoint/tweets-aapl/variant/AllTraffic\"",
            "resource_id = \"endpoint/tweets-aapl/variant/AllTraffic\"\ndimension = \"provisioned_concurrency\"",
            1,
        );
    assert!(
        serverless.contains("dimension"),
        "the plan changed: update this test"
    );
    let serverless_plan = dir.join("serverless.toml");
    std::fs::write(&serverless_plan, serverless).expect("write");
    let run_serverless = |world: &str| {
        json_of(
            &explain(&[
                "--event",
                "events/schedule/tick-rule.json",
                "--plan",
                serverless_plan.to_str().expect("utf-8"),
                "--demand",
                "events/traces/twitter-volume-aapl-5min.csv",
                "--at",
                "2015-03-10T12:00:00Z",
                "--world",
                world,
            ]),
            "a serverless tick with --demand",
        )
    };
    let scaled = run_serverless("events/scenarios/tweets-aapl/world.toml");
    let unscaled = run_serverless(unscaled.to_str().expect("utf-8"));
    assert!(
        floor(&unscaled) < floor(&scaled),
        "{} vs {}",
        floor(&unscaled),
        floor(&scaled)
    );
    std::fs::remove_dir_all(&dir).ok();
}

/// `--demand` with a plan that has no forecast to serve is a usage error, not a silent no-op.
#[test]
fn a_demand_trace_without_a_forecast_target_is_a_usage_error() {
    let out = explain(&[
        "--event",
        "events/schedule/tick-rule.json",
        "--demand",
        "events/traces/twitter-volume-aapl-5min.csv",
    ]);
    let text = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{text}");
    assert!(text.contains("has none: add one to a target"), "{text}");
}

/// `--demand` before an alarm event: a tick stores the forecast first, so the guard's hold after
/// OK reads it (`hold_without_forecast` only where no active forecast covers the clear).
#[test]
fn an_alarm_with_a_demand_trace_holds_as_the_forecast_it_finds() {
    let base = std::fs::read_to_string(root().join("events/plans/example.toml")).expect("plan");
    let plan = base.replacen(
        "  hold = \"20m\"\n",
        "  hold = \"5m\"\n  hold_without_forecast = \"90m\"\n",
        1,
    );
    // A forecast for the chat-prod target, written just before its guard section.
    let plan = plan.replacen(
        "  [target.guard]\n",
        "  [target.forecast]\n  invocations_per_instance = 600.0\n  min_history = \"2d\"\n\n  [target.guard]\n",
        1,
    );
    let ok = std::fs::read_to_string(root().join("events/alarms/eventbridge-burst-ok.json"))
        .expect("event")
        .replace("2026-03-14T10:17:3", "2026-03-06T12:10:0")
        .replace("2026-03-14T09:42:3", "2026-03-06T11:40:0");
    let dir = std::env::temp_dir().join(format!("headroom-explain-hold-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let (plan_file, event_file) = (dir.join("plan.toml"), dir.join("ok.json"));
    std::fs::write(&plan_file, plan).expect("write");
    std::fs::write(&event_file, ok).expect("write");
    let run = |demand: bool| {
        let mut args = vec![
            "--event",
            event_file.to_str().expect("utf-8"),
            "--plan",
            plan_file.to_str().expect("utf-8"),
            "--at",
            "2026-03-06T12:10:05Z",
        ];
        if demand {
            args.extend([
                "--demand",
                "events/traces/synthetic-daily-peak-bursts-1m.csv",
            ]);
        }
        json_of(&explain(&args), "an OK with and without --demand").to_string()
    };
    // WITH the trace's days before it, the forecast covers the clear: the short hold
    let with = run(true);
    assert!(with.contains("forecast refreshed: 11 slots"), "{with}");
    assert!(
        with.contains("cleared at 2026-03-06T12:10:01Z: holding 2 (the plan minimum (desired count not yet seen)) for 5m, then stepping down"),
        "{with}"
    );
    // WITHOUT, no forecast is stored: the longer hold, and the reason says why
    let without = run(false);
    assert!(
        without.contains("for 1h30m (hold_without_forecast: no active forecast covered the clear)"),
        "{without}"
    );
    std::fs::remove_dir_all(&dir).ok();
}
