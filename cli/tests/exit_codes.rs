//! How the binary ends when things go wrong: one line naming what failed and what to do, an exit
//! code by class (README, section CLI), and a closed stdout ending quietly. No AWS needed: the
//! AWS cases point the SDK at a closed local port or leave the region out.

use std::process::{Command, Output, Stdio};

/// This package's directory as cargo gives it when the test runs (a reused binary's compile-time
/// value may be another clone's).
fn manifest_dir() -> String {
    std::env::var("CARGO_MANIFEST_DIR").unwrap_or_else(|_| env!("CARGO_MANIFEST_DIR").to_owned())
}

fn headroom() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_headroom"));
    // Nothing from the machine's own AWS setup.
    for var in [
        "AWS_REGION",
        "AWS_DEFAULT_REGION",
        "AWS_PROFILE",
        "AWS_ENDPOINT_URL",
        "AWS_ACCESS_KEY_ID",
        "AWS_SECRET_ACCESS_KEY",
        "AWS_SESSION_TOKEN",
    ] {
        cmd.env_remove(var);
    }
    cmd.env("AWS_CONFIG_FILE", "/nonexistent")
        .env("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent")
        .env("AWS_EC2_METADATA_DISABLED", "true")
        .env("HEADROOM_AWS_MAX_ATTEMPTS", "1")
        .current_dir(format!("{}/..", manifest_dir()));
    cmd
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn no_region_exits_3_saying_set_aws_region() {
    let out = headroom()
        .args(["plan", "show"])
        .env("AWS_ACCESS_KEY_ID", "testing")
        .env("AWS_SECRET_ACCESS_KEY", "testing")
        .env("AWS_ENDPOINT_URL", "http://127.0.0.1:1")
        .output()
        .expect("runs");
    let text = stderr(&out);
    assert_eq!(out.status.code(), Some(3), "{text}");
    assert!(text.contains("set AWS_REGION"), "{text}");
    assert_eq!(text.lines().count(), 1, "one line: {text}");
    assert!(!text.contains("dispatch failure"), "{text}");
}

#[test]
fn no_credentials_exit_3_saying_check_credentials() {
    let out = headroom()
        .args(["plan", "show"])
        .env("AWS_REGION", "us-east-1")
        .env("AWS_ENDPOINT_URL", "http://127.0.0.1:1")
        .output()
        .expect("runs");
    let text = stderr(&out);
    assert_eq!(out.status.code(), Some(3), "{text}");
    assert!(text.contains("check the AWS credentials"), "{text}");
    assert_eq!(text.lines().count(), 1, "one line: {text}");
}

#[test]
fn an_unreachable_endpoint_exits_3_naming_it() {
    let out = headroom()
        .args(["status"])
        .env("AWS_REGION", "us-east-1")
        .env("AWS_ACCESS_KEY_ID", "testing")
        .env("AWS_SECRET_ACCESS_KEY", "testing")
        .env("AWS_ENDPOINT_URL", "http://127.0.0.1:1")
        .output()
        .expect("runs");
    let text = stderr(&out);
    assert_eq!(out.status.code(), Some(3), "{text}");
    assert!(text.contains("Connection refused"), "{text}");
    assert!(text.contains("AWS_ENDPOINT_URL"), "{text}");
}

#[test]
fn an_invalid_plan_exits_5_and_a_bad_flag_2() {
    let out = headroom()
        .args(["plan", "validate", "Cargo.toml"])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(5), "{}", stderr(&out));
    let out = headroom()
        .args(["pause", "endpoint/a/variant/b", "--until", "soon"])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let out = headroom().args(["no-such-command"]).output().expect("runs");
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    // An instant not in RFC 3339 shows the form, whichever option takes it.
    for args in [
        &[
            "explain",
            "--event",
            "events/schedule/tick-rule.json",
            "--at",
            "2026-03-14 10:00",
        ][..],
        &[
            "plan",
            "preview",
            "events/plans/example.toml",
            "--from",
            "2026-12-03",
        ],
    ] {
        let out = headroom().args(args).output().expect("runs");
        let text = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {text}");
        assert!(
            text.contains("e.g. 2026-12-03T09:00:00Z"),
            "{args:?}: {text}"
        );
    }
}

#[test]
fn an_input_file_that_cannot_be_read_exits_2_naming_it_and_a_broken_event_5() {
    let missing: [&[&str]; 4] = [
        &["plan", "validate", "no/such/plan.toml"],
        &[
            "simulate",
            "--plan",
            "no/such/plan.toml",
            "--trace",
            "events/traces/nyc-taxi-2014-10-06-2wk-30min.csv",
        ],
        &["explain", "--event", "no/such/event.json"],
        &[
            "simulate",
            "--plan",
            "events/scenarios/nyc-taxi/plan.toml",
            "--trace",
            "no/such/trace.csv",
        ],
    ];
    for args in missing {
        let out = headroom().args(args).output().expect("runs");
        let text = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {text}");
        assert!(text.contains("no/such/"), "{args:?} names the file: {text}");
    }
    // A directory where a file belongs is the command line's fault too.
    let out = headroom()
        .args(["plan", "validate", "events"])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    // A file that reads but is not an event: invalid input.
    let out = headroom()
        .args(["explain", "--event", "events/traces/README.md"])
        .output()
        .expect("runs");
    let text = stderr(&out);
    assert_eq!(out.status.code(), Some(5), "{text}");
    assert!(text.contains("is not valid JSON"), "{text}");
}

#[test]
fn a_chart_not_named_svg_and_an_unknown_chart_target_are_usage_errors_saying_what_fits() {
    let out = headroom()
        .args(["simulate", "--chart", "/tmp/headroom-chart.png"])
        .output()
        .expect("runs");
    let text = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{text}");
    assert!(text.contains("name the file with .svg"), "{text}");
    let chart = std::env::temp_dir().join(format!("headroom-chart-{}.svg", std::process::id()));
    let out = headroom()
        .args([
            "simulate",
            "--chart",
            chart.to_str().expect("utf-8"),
            "--target",
            "nope",
        ])
        .output()
        .expect("runs");
    let text = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{text}");
    assert!(
        text.contains("--target nope: the world has no such target; it has endpoint/"),
        "{text}"
    );
    std::fs::remove_file(&chart).ok();
}

/// Runs `args` with stdout a pipe whose reader is gone before the binary writes (as `| head -1`
/// or `| true` leave it).
fn with_closed_stdout(args: &[&str]) -> Output {
    let mut child = headroom()
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("runs");
    drop(child.stdout.take());
    child.wait_with_output().expect("ends")
}

#[test]
fn a_closed_stdout_ends_quietly() {
    for args in [
        &["simulate", "--json"][..],
        &[
            "explain",
            "--event",
            "events/alarms/eventbridge-burst-ok.json",
        ][..],
    ] {
        let out = with_closed_stdout(args);
        let text = stderr(&out);
        assert!(!text.contains("panicked"), "headroom {args:?}: {text}");
        assert_eq!(out.status.code(), Some(0), "headroom {args:?}: {text}");
    }
}

#[test]
fn plan_validate_and_preview_speak_json() {
    let out = headroom()
        .args(["plan", "validate", "--json", "events/plans/example.toml"])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(v["valid"], true);
    assert!(
        v["targets"].as_array().is_some_and(|t| !t.is_empty()),
        "{v}"
    );

    let bad = std::env::temp_dir().join(format!("headroom-bad-{}.toml", std::process::id()));
    std::fs::write(&bad, "version = 1\n[[target]]\nresource_id = \"endpoint/a/variant/b\"\nmin_capacity = \"x\"\nmax_capacity = 0\nlead_time = \"3x\"\n").expect("write");
    let out = headroom()
        .args(["plan", "validate", "--json"])
        .arg(&bad)
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(5), "{}", stderr(&out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(v["valid"], false);
    // two type errors and max_capacity 0, all three in one run
    assert_eq!(v["issues"].as_array().map(Vec::len), Some(3), "{v}");

    let out = headroom()
        .args(["plan", "preview", "--json", "events/plans/example.toml"])
        .args(["--from", "2026-12-01T00:00:00Z", "--period", "1d"])
        .output()
        .expect("runs");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(v["targets"][0]["changes"][0]["at"], "2026-12-01T00:00:00Z");
}

#[test]
fn completions_are_printed_for_bash_zsh_and_fish() {
    for shell in ["bash", "zsh", "fish"] {
        let out = headroom()
            .args(["completions", shell])
            .output()
            .expect("runs");
        let script = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{shell}: {}", stderr(&out));
        assert!(
            script.contains("simulate") && script.contains("preview"),
            "{shell}"
        );
    }
}
