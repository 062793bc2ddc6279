//! The shipped scenarios and traces: they parse, the synthetic ones are what their generator
//! makes, runs are deterministic, and the default scenario keeps headroom's planned peaks clean.

mod common;
use common::*;
use headroom_sim::attribution::attribute;
use headroom_sim::{run_all, synthetic, Report, RunOptions, Scenario, Strategy, World};

/// This package's directory as cargo gives it when the test runs. The compile-time value would
/// be another clone's when cargo reuses a test binary from a target dir shared between clones.
fn manifest_dir() -> String {
    std::env::var("CARGO_MANIFEST_DIR").unwrap_or_else(|_| env!("CARGO_MANIFEST_DIR").to_owned())
}

fn read(path: &str) -> String {
    let full = format!("{}/../../{path}", manifest_dir());
    std::fs::read_to_string(full).unwrap_or_else(|e| panic!("{path}: {e}"))
}

#[test]
fn synthetic_traces_are_what_their_generator_makes() {
    for (name, text) in synthetic::shipped() {
        assert!(
            read(&format!("events/traces/{name}")) == text,
            "events/traces/{name} differs from its generator: run `cargo run -p headroom-sim --example make-traces`"
        );
    }
}

#[test]
fn generated_what_if_files_are_what_their_generator_makes() {
    for (path, text) in synthetic::shipped_what_ifs() {
        assert!(
            read(path) == text,
            "{path} differs from its generator: run `cargo run -p headroom-sim --example make-traces`"
        );
    }
}

#[test]
fn every_shipped_scenario_parses_with_its_trace() {
    for (dir, trace) in [
        ("daily-peak-bursts", "synthetic-daily-peak-bursts-1m.csv"),
        ("nyc-taxi", "nyc-taxi-2014-10-06-2wk-30min.csv"),
        ("async-batches", "synthetic-async-batches-1m.csv"),
        ("azure-llm", "azure-llm-conv-10s.csv"),
    ] {
        let plan = read(&format!("events/scenarios/{dir}/plan.toml"));
        let world = read(&format!("events/scenarios/{dir}/world.toml"));
        let trace = read(&format!("events/traces/{trace}"));
        let s = Scenario::parse(dir, ("plan", &plan), ("world", &world), ("trace", &trace));
        assert!(
            s.is_ok(),
            "{dir}: {}",
            s.err().map(|e| e.to_string()).unwrap_or_default()
        );
    }
}

#[test]
fn the_embedded_default_is_the_shipped_scenario() {
    assert_eq!(
        headroom_sim::scenario::DEFAULT_PLAN,
        read("events/scenarios/daily-peak-bursts/plan.toml")
    );
    assert_eq!(
        headroom_sim::scenario::DEFAULT_WORLD,
        read("events/scenarios/daily-peak-bursts/world.toml")
    );
    let s = Scenario::default_scenario().expect("the default scenario is valid");
    assert_eq!(s.trace.counts.len(), 7 * 1440);
}

#[test]
fn the_same_seed_gives_the_same_result_and_another_seed_another() {
    let base = Scenario::default_scenario().expect("valid");
    let two_days = |seed: u64| {
        let mut s = base.clone();
        s.trace = s.trace.truncated(2 * 1440);
        s.world.seed = seed;
        Report::new(&s, run_all(&s, &mut RunOptions::default())).to_json()
    };
    let a = two_days(7);
    assert_eq!(a, two_days(7));
    // Provisioning times are drawn from the seed: another seed starts instances at other times.
    let b = two_days(8);
    assert_ne!(
        a["strategies"]["target_tracking"]["instance_hours"],
        b["strategies"]["target_tracking"]["instance_hours"]
    );
}

#[test]
fn json_has_the_three_strategies_with_the_issue_keys() {
    let s = headroom_sim::synthetic::fleet(1, 1).expect("fleet");
    let json = Report::new(&s, run_all(&s, &mut RunOptions::default())).to_json();
    for strategy in ["target_tracking", "headroom", "oracle"] {
        for key in [
            "breach_minutes",
            "failed_requests",
            "instance_hours",
            "launches",
            "max_backlog",
        ] {
            assert!(
                json["strategies"][strategy].get(key).is_some(),
                "{strategy}.{key} missing in {json}"
            );
        }
    }
}

#[test]
fn the_default_scenario_keeps_planned_peaks_clean_for_less_than_fifteen_percent_more() {
    let s = Scenario::default_scenario().expect("valid");
    let results = run_all(&s, &mut RunOptions::default());
    let tt = of(&results, Strategy::TargetTracking);
    let hr = of(&results, Strategy::Headroom);
    assert!(
        tt.total.breach_minutes_in_peaks > 0,
        "the scenario must be a challenge"
    );
    assert_eq!(hr.total.breach_minutes_in_peaks, 0);
    assert!(hr.total.breach_minutes < tt.total.breach_minutes);
    assert!(hr.total.instance_hours <= tt.total.instance_hours * 1.15);
    assert_eq!(hr.headroom.as_ref().map(|h| h.errors), Some(0));
}

#[test]
fn on_the_default_scenario_headroom_breaches_only_in_the_unannounced_first_waves() {
    let s = Scenario::default_scenario().expect("valid");
    let results = run_all(&s, &mut RunOptions::default());
    let waves = synthetic::shipped_daily_peak_bursts_waves();
    let peaks = s.peak_windows(0);
    let causes = |strategy| {
        attribute(
            &of(&results, strategy).per_target[0].breach_spans,
            s.trace.start.timestamp(),
            &peaks,
            &waves,
        )
    };
    let (tt, hr) = (causes(Strategy::TargetTracking), causes(Strategy::Headroom));
    // Target tracking breaches at the peaks and on rebounds, where headroom's features act...
    assert!(tt.planned_peaks > 0 && tt.rebound_waves > 0, "{tt:?}");
    // ...and headroom clears both; what is left is the first wave of each burst episode, which
    // nothing announces.
    assert_eq!(
        (hr.planned_peaks, hr.rebound_waves, hr.elsewhere),
        (0, 0, 0),
        "{hr:?}"
    );
    assert!(
        hr.first_waves > 0 && hr.first_waves <= tt.first_waves,
        "{hr:?} {tt:?}"
    );
    // The spans hold every breach minute the summary counts, one span per burst here.
    let spans = of(&results, Strategy::Headroom).per_target[0]
        .breach_spans
        .clone();
    assert_eq!(
        hr.total(),
        of(&results, Strategy::Headroom).total.breach_minutes
    );
    let first_waves = waves.iter().filter(|w| w.first).count();
    assert!(!spans.is_empty() && spans.len() <= first_waves, "{spans:?}");

    // The report lists them: the longest five in the table, all of them in the JSON.
    let report = Report::new(&s, results);
    let table = report.table();
    assert!(
        table.contains(&format!(
            "where headroom still breaches, longest first (5 of {}",
            spans.len()
        )),
        "{table}"
    );
    let json = report.to_json();
    let listed = &json["strategies"]["headroom"]["per_target"][0]["breach_spans"];
    assert_eq!(
        listed.as_array().map(Vec::len),
        Some(spans.len()),
        "{listed}"
    );
}

/// A what-if on the default scenario: its trace with a plan and a world from its directory.
fn default_what_if(plan: &str, world: &str) -> Scenario {
    let dir = "events/scenarios/daily-peak-bursts";
    let (plan, world) = (
        read(&format!("{dir}/{plan}")),
        read(&format!("{dir}/{world}")),
    );
    let trace = read("events/traces/synthetic-daily-peak-bursts-1m.csv");
    Scenario::parse(
        "what-if",
        ("plan", &plan),
        ("world", &world),
        ("trace", &trace),
    )
    .unwrap_or_else(|e| panic!("the what-if runs on the default trace: {e}"))
}

#[test]
fn holding_capacity_for_unannounced_bursts_costs_more_than_the_goal_allows() {
    // The README's what-if: serving the first waves without knowing when they come means holding
    // burst capacity through every afternoon. It clears the breach minutes at far more than the
    // 15 % extra instance-hours the simulator's goal allows.
    let s = default_what_if("plan-afternoon-floor.toml", "world.toml");
    let results = run_all(&s, &mut RunOptions::default());
    let (tt, hr) = (
        &of(&results, Strategy::TargetTracking).total,
        &of(&results, Strategy::Headroom).total,
    );
    assert_eq!(hr.breach_minutes, 0);
    assert!(
        hr.instance_hours > tt.instance_hours * 1.4,
        "{} vs {}",
        hr.instance_hours,
        tt.instance_hours
    );
}

#[test]
fn announcing_the_default_scenarios_bursts_serves_their_first_waves() {
    // The README's other what-if: the system that causes the bursts sends a headroom.peak/v1
    // event 15 minutes before each episode. The first waves, which nothing else can foresee, are
    // then served, and the scenario meets every goal.
    let s = default_what_if("plan.toml", "world-announced.toml");
    let results = run_all(&s, &mut RunOptions::default());
    let hr = of(&results, Strategy::Headroom);
    let waves = synthetic::shipped_daily_peak_bursts_waves();
    let episodes = waves.iter().filter(|w| w.first).count() as u64;
    assert_eq!(hr.headroom.as_ref().map(|h| h.peak_events), Some(episodes));
    let causes = attribute(
        &hr.per_target[0].breach_spans,
        s.trace.start.timestamp(),
        &s.peak_windows(0),
        &waves,
    );
    assert_eq!(
        (causes.planned_peaks, causes.first_waves),
        (0, 0),
        "{causes:?}"
    );
    let goals = Report::new(&s, results).goals();
    assert!(goals.met, "{goals}");
}

#[test]
fn a_world_target_missing_from_the_plan_is_refused_by_name() {
    let world = World::parse(
        "w",
        "[[target]]\nresource_id = \"endpoint/other/variant/v\"\ncapacity_per_instance = 1.0\nprovisioning = \"5m\"\n",
    )
    .expect("valid world");
    let plan = headroom_core::parse_plan(
        "p",
        "version = 1\n[[target]]\nresource_id = \"endpoint/e/variant/v\"\nmin_capacity = 1\nmax_capacity = 2\n",
    )
    .expect("valid plan");
    let trace =
        headroom_sim::Trace::parse("t", &trace("2026-01-05T00:00:00Z", 2, |_| 1.0)).expect("trace");
    let err = Scenario::new("x", plan, world, trace)
        .expect_err("mismatch")
        .to_string();
    assert!(
        err.contains("endpoint/other/variant/v is not in the plan"),
        "{err}"
    );
    assert!(
        err.contains("endpoint/e/variant/v has no [[target]] in the world"),
        "{err}"
    );
}

#[test]
fn an_alarm_the_world_lacks_and_a_target_nothing_scales_are_warned_about() {
    let world = |policy: &str| {
        World::parse(
            "w",
            &format!(
                "[[target]]\nresource_id = \"endpoint/e/variant/v\"\ncapacity_per_instance = 1.0\n\
                 provisioning = \"5m\"\n{policy}\n[[alarm]]\nname = \"e-burst\"\n\
                 target = \"endpoint/e/variant/v\"\nmetric = \"InvocationsPerInstance\"\n\
                 comparison = \"GreaterThanThreshold\"\nthreshold = 50.0\n\
                 evaluation_periods = 1\ndatapoints_to_alarm = 1\n"
            ),
        )
        .expect("valid world")
    };
    let plan = |alarm: &str| {
        headroom_core::parse_plan(
            "p",
            &format!(
                "version = 1\n[[target]]\nresource_id = \"endpoint/e/variant/v\"\nmin_capacity = 1\n\
                 max_capacity = 2\n[target.guard]\nalarms = [\"{alarm}\"]\n"
            ),
        )
        .expect("valid plan")
    };
    let trace =
        headroom_sim::Trace::parse("t", &trace("2026-01-05T00:00:00Z", 2, |_| 1.0)).expect("trace");
    let tracked =
        "[target.target_tracking]\nmetric = \"InvocationsPerInstance\"\ntarget_value = 48\n";
    let warnings = |plan, world| {
        Scenario::new("x", plan, world, trace.clone())
            .expect("valid scenario")
            .warnings()
    };
    // Named by name or by ARN, tracked: nothing to say.
    assert_eq!(
        warnings(plan("e-burst"), world(tracked)),
        Vec::<String>::new()
    );
    let arn = "arn:aws:cloudwatch:eu-west-1:123456789012:alarm:e-burst";
    assert_eq!(warnings(plan(arn), world(tracked)), Vec::<String>::new());
    // A typo in the alarm's name, and no policy at all: one line each.
    let w = warnings(plan("e-brust"), world(""));
    assert_eq!(w.len(), 2, "{w:?}");
    assert!(
        w[0].contains("guard alarm \"e-brust\" is not an [[alarm]] of the world"),
        "{w:?}"
    );
    assert!(w[1].contains("no scaling policy"), "{w:?}");
}

#[test]
fn the_chart_draws_one_panel_per_strategy() {
    let s = headroom_sim::synthetic::fleet(1, 1).expect("fleet");
    let results = run(&s);
    let path = std::env::temp_dir().join(format!("headroom-sim-chart-{}.svg", std::process::id()));
    headroom_sim::chart::draw(&path, "fleet: chat-api-000", &results, 0).expect("chart drawn");
    let svg = std::fs::read_to_string(&path).expect("chart written");
    let _ = std::fs::remove_file(&path);
    assert!(svg.starts_with("<svg"), "{}", &svg[..svg.len().min(100)]);
    for label in [
        "target_tracking",
        "headroom",
        "oracle",
        "demand",
        "in service",
        "MinCapacity",
    ] {
        assert!(svg.contains(label), "{label} missing from the chart");
    }
}
