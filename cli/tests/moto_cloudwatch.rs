//! The `headroom` binary with CloudWatch in moto: `plan suggest --days` reads each target's
//! `Invocations` (put here with PutMetricData) through the real adapter, and `headroom status`
//! shows the forecast that the tick learned from them.
//!
//! moto does not serve aws-sdk-cloudwatch's RPC v2 CBOR protocol: CloudWatch requests go through
//! `headroom_tests::cbor_bridge` (`AWS_ENDPOINT_URL_CLOUDWATCH` for the binary), everything else
//! to moto directly.

use std::process::{Command, Output};

use chrono::{DateTime, Datelike, Duration, DurationRound, Timelike, Utc};
use headroom_adapters::{AasScalingTargets, CloudWatchDemand};
use headroom_core::ports::ScalingTargets;
use headroom_core::trigger::Tick;
use headroom_core::usecase::tick::on_tick;
use headroom_core::usecase::Ports;
use headroom_core::{ScalableTargetId, Suspended};
use headroom_tests::cbor_bridge::CborBridge;
use headroom_tests::cloudwatch::{cloudwatch_client, put_invocations};
use headroom_tests::{create_endpoint, moto, sdk_config, table_with_plan, unique};

fn manifest_dir() -> String {
    std::env::var("CARGO_MANIFEST_DIR").unwrap_or_else(|_| env!("CARGO_MANIFEST_DIR").to_owned())
}

/// `headroom ARGS` against moto, CloudWatch at `cloudwatch` (the bridge's URL).
fn headroom(args: &[&str], cloudwatch: &str, table: &str) -> Output {
    Command::new(env!("CARGO_BIN_EXE_headroom"))
        .args(args)
        .current_dir(format!("{}/..", manifest_dir()))
        .env("AWS_ENDPOINT_URL", moto())
        .env("AWS_ENDPOINT_URL_CLOUDWATCH", cloudwatch)
        .env("AWS_ACCESS_KEY_ID", "testing")
        .env("AWS_SECRET_ACCESS_KEY", "testing")
        .env("AWS_REGION", "us-east-1")
        .env("HEADROOM_TABLE", table)
        .env("HEADROOM_AWS_MAX_ATTEMPTS", "1")
        .output()
        .expect("the headroom binary runs")
}

fn stdout_of(out: &Output, what: &str) -> String {
    assert!(
        out.status.success(),
        "{what} failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Requests per 5-minute period from `from` to `to`: 300/min 09:00-11:00 UTC on weekdays, else
/// 60/min.
fn weekday_rhythm(from: DateTime<Utc>, to: DateTime<Utc>) -> Vec<(DateTime<Utc>, f64)> {
    let mut points = Vec::new();
    let mut at = from;
    while at < to {
        let busy = at.weekday().num_days_from_monday() < 5 && (9..11).contains(&at.hour());
        points.push((at, if busy { 300.0 * 5.0 } else { 60.0 * 5.0 }));
        at += Duration::minutes(5);
    }
    points
}

fn now_period() -> DateTime<Utc> {
    Utc::now()
        .duration_trunc(Duration::minutes(5))
        .expect("trunc")
}

#[tokio::test(flavor = "multi_thread")]
async fn plan_suggest_days_learns_from_cloudwatch_and_keeps_what_too_little_history_cannot_say() {
    // GIVEN a week of a weekday rhythm for one variant, and two days only for another
    let config = sdk_config().await;
    let bridge = CborBridge::start(moto());
    let cloudwatch = cloudwatch_client(&config, &bridge);
    let learned = ScalableTargetId::variant(&unique("suggest"), "AllTraffic").expect("id");
    let young = ScalableTargetId::variant(&unique("young"), "AllTraffic").expect("id");
    let to = now_period();
    put_invocations(
        &cloudwatch,
        &learned,
        &weekday_rhythm(to - Duration::days(7), to),
    )
    .await;
    put_invocations(
        &cloudwatch,
        &young,
        &weekday_rhythm(to - Duration::days(2), to),
    )
    .await;
    // AND a base plan with a planned peak and a forecast section for each
    let base_text = [&learned, &young]
        .iter()
        .map(|id| {
            format!(
                "[[target]]\nresource_id = \"{id}\"\nmin_capacity = 1\nmax_capacity = 40\n\
                 [[target.peak]]\nname = \"planned\"\ncron = \"0 7 * * MON-FRI\"\nduration = \"1h\"\nfloor = 4\n\
                 [target.forecast]\ninvocations_per_instance = 30.0\n"
            )
        })
        .fold("version = 1\n".to_owned(), |a, t| a + &t);
    let dir = std::env::temp_dir().join(unique("suggest-days"));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let base = dir.join("base.toml");
    std::fs::write(&base, &base_text).expect("write the base plan");
    let base = base.display().to_string();

    // WHEN the plan is suggested from the last 7 days of CloudWatch
    let out = headroom(
        &["plan", "suggest", "--plan", &base, "--days", "7"],
        &bridge.url(),
        "unused",
    );
    let printed = stdout_of(&out, "plan suggest --days 7");

    // THEN one GetMetricData call read both targets
    assert_eq!(bridge.calls("GetMetricData"), 1, "{printed}");
    // AND the printed plan validates, with a forecast section for each target
    let suggested = dir.join("suggested.toml");
    std::fs::write(&suggested, &printed).expect("write the suggestion");
    stdout_of(
        &headroom(
            &["plan", "validate", &suggested.display().to_string()],
            &bridge.url(),
            "unused",
        ),
        "plan validate",
    );
    let plan = headroom_core::parse_plan("suggested", &printed).expect("a valid plan");
    assert!(
        plan.targets.iter().all(|t| t.forecast.is_some()),
        "{printed}"
    );
    // AND the week-old target's planned peak is replaced by learned weekday peaks
    let peaks_of = |id: &ScalableTargetId| -> Vec<String> {
        plan.target(id)
            .expect("the target")
            .peaks
            .iter()
            .map(|p| p.name.clone())
            .collect()
    };
    let learned_peaks = peaks_of(&learned);
    assert!(
        !learned_peaks.is_empty() && learned_peaks.iter().all(|n| n.starts_with("weekday-")),
        "{learned_peaks:?}\n{printed}"
    );
    // AND the two-day-old target keeps its planned peak, and the comments say why
    assert_eq!(peaks_of(&young), vec!["planned".to_owned()], "{printed}");
    let young_comments = &printed[printed.find(&format!("# {young}:")).expect("its comments")..];
    assert!(
        young_comments.contains("day(s) of history, too few to call a window recurring")
            && young_comments.contains("too little history to suggest peaks"),
        "{printed}"
    );
    assert!(
        printed.contains("from CloudWatch") || printed.contains("and CloudWatch"),
        "{printed}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn status_shows_the_forecast_the_tick_learned_from_cloudwatch() {
    // GIVEN four days of 600 requests/min in CloudWatch for a variant AAS holds at 1..40, and a
    // plan forecasting at 30 requests/min per instance
    let config = sdk_config().await;
    let bridge = CborBridge::start(moto());
    let cloudwatch = cloudwatch_client(&config, &bridge);
    let sagemaker = aws_sdk_sagemaker::Client::new(&config);
    let endpoint = unique("status-fc");
    create_endpoint(&sagemaker, &endpoint, 1)
        .await
        .expect("endpoint");
    let id = ScalableTargetId::variant(&endpoint, "AllTraffic").expect("id");
    let clients = headroom_adapters::Clients::new(&config);
    let aas = AasScalingTargets::new(clients.aas.clone());
    aas.register(&id, 1, 40, Suspended::default())
        .await
        .expect("register");
    let now = now_period() + Duration::minutes(1);
    let to = now_period();
    let flat: Vec<_> = weekday_rhythm(to - Duration::days(4), to)
        .into_iter()
        .map(|(at, _)| (at, 600.0 * 5.0))
        .collect();
    put_invocations(&cloudwatch, &id, &flat).await;
    let plan = format!(
        "version = 1\n[[target]]\nresource_id = \"{id}\"\nmin_capacity = 1\nmax_capacity = 40\n\
         lead_time = \"10m\"\n[target.forecast]\ninvocations_per_instance = 30.0\nhistory = \"5d\"\n"
    );
    let (store, _) = table_with_plan(&clients.dynamo, "status-forecast.toml", &plan, now).await;
    // AND the tick has refreshed the forecast through the real CloudWatch adapter
    let metrics = CloudWatchDemand::new(cloudwatch.clone());
    let tick = Tick {
        at: Some(now),
        id: None,
    };
    on_tick(Ports::new(&aas, &store).with_demand(&metrics), &tick, now)
        .await
        .expect("tick");
    assert_eq!(bridge.calls("GetMetricData"), 1);

    // WHEN an operator asks for the target's status
    let table = store.table().to_owned();
    let json = stdout_of(
        &headroom(
            &["status", &id.to_string(), "--json"],
            &bridge.url(),
            &table,
        ),
        "status --json",
    );
    let text = stdout_of(
        &headroom(&["status", &id.to_string()], &bridge.url(), &table),
        "status",
    );

    // THEN it shows the forecast's floor (600/min / 30 = 20) and the forecast claim behind MinCapacity
    let status: serde_json::Value = serde_json::from_str(&json).expect("status JSON");
    let row = &status["targets"][0];
    assert_eq!(
        row["forecast"]["unavailable"],
        serde_json::Value::Null,
        "{json}"
    );
    assert_eq!(row["forecast"]["floor_now"], 20, "{json}");
    assert_eq!(row["observed"]["min"], 20, "{json}");
    assert!(
        row["claims"]
            .as_array()
            .is_some_and(|c| c.iter().any(|c| c.to_string().contains("forecast"))),
        "a forecast claim: {json}"
    );
    assert!(text.contains("forecast:  floor now 20"), "{text}");
}

#[test]
fn an_unreachable_cloudwatch_is_one_line_and_exit_3() {
    // GIVEN CloudWatch at a port nothing listens on
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port");
    let dir = std::env::temp_dir().join(unique("suggest-down"));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let base = dir.join("base.toml");
    std::fs::write(
        &base,
        "version = 1\n[[target]]\nresource_id = \"endpoint/down/variant/AllTraffic\"\n\
         min_capacity = 1\nmax_capacity = 4\n[target.forecast]\ninvocations_per_instance = 30.0\n",
    )
    .expect("write the base plan");
    // WHEN the plan is suggested from CloudWatch
    let out = headroom(
        &["plan", "suggest", "--plan", &base.display().to_string()],
        &format!("http://{closed}"),
        "unused",
    );
    // THEN one line says what failed and what to check, and the exit code says "AWS access"
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("failed to read the demand history of 1 target(s)")
            && err.contains("AWS_ENDPOINT_URL"),
        "{err}"
    );
    assert!(out.stdout.is_empty(), "no partial plan on stdout");
}
