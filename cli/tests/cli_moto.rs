//! The `headroom` binary against moto over HTTP: storing plans (and refusing invalid ones without
//! writing), showing them, pausing and resuming a target, and status.

use std::process::{Command, Output};

use headroom_tests::{create_endpoint, moto, sdk_config, unique};

struct Cli {
    table: String,
}

/// This package's directory as cargo gives it when the test runs. The compile-time value would
/// be another clone's when cargo reuses a test binary from a target dir shared between clones.
fn manifest_dir() -> String {
    std::env::var("CARGO_MANIFEST_DIR").unwrap_or_else(|_| env!("CARGO_MANIFEST_DIR").to_owned())
}

impl Cli {
    fn run(&self, args: &[&str]) -> Output {
        Command::new(env!("CARGO_BIN_EXE_headroom"))
            .args(args)
            .current_dir(format!("{}/..", manifest_dir()))
            .env("AWS_ENDPOINT_URL", moto())
            .env("AWS_ACCESS_KEY_ID", "testing")
            .env("AWS_SECRET_ACCESS_KEY", "testing")
            .env("AWS_REGION", "us-east-1")
            .env("HEADROOM_TABLE", &self.table)
            .env("HEADROOM_AWS_MAX_ATTEMPTS", "1")
            .output()
            .expect("the headroom binary runs")
    }

    fn ok(&self, args: &[&str]) -> String {
        let out = self.run(args);
        assert!(
            out.status.success(),
            "headroom {args:?} failed:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    fn fails(&self, args: &[&str]) -> String {
        let out = self.run(args);
        assert!(!out.status.success(), "headroom {args:?} should fail");
        String::from_utf8_lossy(&out.stderr).into_owned()
    }
}

fn plan_for(endpoint: &str) -> String {
    format!(
        "version = 1\n[[target]]\nresource_id = \"endpoint/{endpoint}/variant/AllTraffic\"\nmin_capacity = 1\nmax_capacity = 4\n"
    )
}

#[tokio::test(flavor = "multi_thread")]
async fn a_missing_table_is_one_line_exit_4_saying_run_init_table() {
    let cli = Cli {
        table: unique("cli-no-table"),
    };
    for args in [&["plan", "show"][..], &["status"][..]] {
        let out = cli.run(args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(4), "headroom {args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert_eq!(
            err.matches("ResourceNotFoundException").count(),
            1,
            "the AWS code once: {err}"
        );
        assert!(err.contains("headroom plan init-table"), "{err}");
        assert!(!err.contains("service error"), "{err}");
    }
    // With the table there but no plan in it: still "not found", with what to do.
    cli.ok(&["plan", "init-table"]);
    let out = cli.run(&["plan", "show"]);
    assert_eq!(out.status.code(), Some(4));
    assert!(String::from_utf8_lossy(&out.stderr).contains("headroom plan apply FILE"));
}

#[tokio::test(flavor = "multi_thread")]
async fn plans_are_validated_before_storing_and_versioned() {
    let cli = Cli {
        table: unique("cli-plan"),
    };
    cli.ok(&["plan", "init-table"]);

    let dir = std::env::temp_dir().join(unique("plans"));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let bad = dir.join("bad.toml");
    std::fs::write(&bad, "version = 1\n[[target]]\nresource_id = \"endpoint/x\"\nmin_capacity = 3\nmax_capacity = 1\n").expect("write");
    let err = cli.fails(&["plan", "apply", bad.to_str().expect("utf-8 path")]);
    assert!(
        err.contains("target[0].min_capacity: 3 is above max_capacity 1"),
        "{err}"
    );
    let err = cli.fails(&["plan", "show"]);
    assert!(
        err.contains("no plan stored"),
        "an invalid plan writes nothing: {err}"
    );

    let out = cli.ok(&["plan", "apply", "events/plans/example.toml"]);
    assert!(out.contains("stored plan version 1"), "{out}");
    let out = cli.ok(&["plan", "apply", "events/plans/example.toml"]);
    assert!(out.contains("already this file"), "{out}");
    let good = dir.join("good.toml");
    std::fs::write(&good, plan_for("other")).expect("write");
    assert!(cli
        .ok(&["plan", "apply", good.to_str().expect("utf-8 path")])
        .contains("version 2"));
    let shown = cli.ok(&["plan", "show"]);
    assert!(shown.starts_with("# version 2"), "{shown}");
}

#[tokio::test(flavor = "multi_thread")]
async fn pause_leaves_a_target_alone_and_resume_steers_it_again() {
    let cli = Cli {
        table: unique("cli-pause"),
    };
    let endpoint = unique("cli-ep");
    let config = sdk_config().await;
    create_endpoint(&aws_sdk_sagemaker::Client::new(&config), &endpoint, 1)
        .await
        .expect("endpoint in moto");
    cli.ok(&["plan", "init-table"]);
    let dir = std::env::temp_dir().join(unique("plans"));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let plan = dir.join("plan.toml");
    std::fs::write(&plan, plan_for(&endpoint)).expect("write");
    cli.ok(&["plan", "apply", plan.to_str().expect("utf-8 path")]);
    let target = format!("endpoint/{endpoint}/variant/AllTraffic");

    let out = cli.ok(&["pause", &target, "--until", "1h", "--reason", "load test"]);
    assert!(out.contains("paused until"), "{out}");
    let status: serde_json::Value =
        serde_json::from_str(&cli.ok(&["status", &target, "--json"])).expect("status is JSON");
    let row = &status["targets"][0];
    assert_eq!(row["paused"]["reason"], "load test");
    assert!(
        row["observed"].is_null(),
        "paused: headroom did not register the target"
    );
    assert_eq!(row["lead_time"]["source"], "configured");
    assert!(
        row["recent_decisions"][0]["notes"][0]
            .as_str()
            .unwrap_or("")
            .contains("paused"),
        "{row}"
    );

    let out = cli.ok(&["resume", &target]);
    assert!(out.contains("resumed: min 1 max 4"), "{out}");
    let status: serde_json::Value =
        serde_json::from_str(&cli.ok(&["status", &target, "--json"])).expect("status is JSON");
    assert_eq!(
        status["targets"][0]["observed"]["max"], 4,
        "resumed: registered with the plan's bounds"
    );
    assert_eq!(status["targets"][0]["in_step"], true);

    let err = cli.fails(&[
        "pause",
        "endpoint/not-managed/variant/AllTraffic",
        "--until",
        "1h",
    ]);
    assert!(err.contains("not managed by the plan"), "{err}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_schedule_review_is_listed_shown_and_acknowledged() {
    use headroom_adapters::DynamoReviews;
    use headroom_core::deploy_ports::ScheduleReviewStore;
    use headroom_core::forecast::schedule_review::{PeakReview, Verdict};
    use headroom_core::review::schedule::{decide_schedule_review, ScheduleReviewAction};

    // GIVEN a stored plan with a nightly peak and the schedule review the tick's refresh opened
    let cli = Cli {
        table: unique("cli-sched"),
    };
    cli.ok(&["plan", "init-table"]);
    let text = "version = 1\n[[target]]\nresource_id = \"endpoint/shop/variant/AllTraffic\"\nmin_capacity = 1\nmax_capacity = 80\n[[target.peak]]\nname = \"nightly\"\ncron = \"0 3 * * *\"\nduration = \"1h\"\nfloor = 40\n";
    let dir = std::env::temp_dir().join(unique("plans"));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let file = dir.join("plan.toml");
    std::fs::write(&file, text).expect("write");
    cli.ok(&["plan", "apply", file.to_str().expect("utf-8 path")]);
    let plan = headroom_core::parse_plan("plan.toml", text).expect("plan");
    let target = &plan.targets[0];
    let verdict = PeakReview {
        peak: "nightly".into(),
        verdict: Verdict::Wasteful,
        occurrences: 4,
        evidence: "the busiest period used under half the floor 40 in 4 of 4 occurrences (as little as 25 %)".into(),
    };
    let ScheduleReviewAction::Open(review) = decide_schedule_review(
        None,
        &target.id,
        &target.peaks[0],
        &verdict,
        chrono::Utc::now(),
    ) else {
        panic!("opened")
    };
    let config = sdk_config().await;
    let store = DynamoReviews::new(aws_sdk_dynamodb::Client::new(&config), cli.table.clone());
    store.save_schedule_review(&review).await.expect("stored");

    // WHEN the operator lists, shows and acknowledges it
    let list = cli.ok(&["reviews", "list"]);
    let show: serde_json::Value =
        serde_json::from_str(&cli.ok(&["reviews", "show", review.id.as_str()])).expect("JSON");
    let ack = cli.ok(&[
        "reviews",
        "ack",
        review.id.as_str(),
        "--note",
        "kept for the sale",
        "--by",
        "ana",
    ]);
    let after = cli.ok(&["reviews", "list"]);
    let all: serde_json::Value =
        serde_json::from_str(&cli.ok(&["reviews", "list", "--all", "--json"])).expect("JSON");

    // THEN each says what it should
    assert!(list.starts_with("ID") && list.contains("VERDICT"), "{list}");
    assert!(
        list.contains(review.id.as_str()) && list.contains("nightly  wasteful"),
        "{list}"
    );
    assert_eq!(show["kind"], "schedule");
    assert_eq!(show["verdict"], "wasteful");
    assert!(
        ack.contains("acknowledged") && ack.contains("peak nightly: wasteful"),
        "{ack}"
    );
    assert_eq!(after.trim(), "no open reviews");
    assert_eq!(all[0]["status"], "acked", "{all}");
    assert_eq!(all[0]["ack"]["note"], "kept for the sale");
}
