//! The learned scenarios (`plan suggest` on the first week, forecast on): their shipped plans are
//! exactly what `plan suggest` prints and do what the README's learned table says, on a bursty
//! trace the guard no longer ratchets MinCapacity up to MaxCapacity, and a holiday in the first
//! week does not cost the next.

use headroom_sim::suggest::suggest_plan;
use headroom_sim::{run_all, RunOptions, Scenario, Strategy, Trace, World};

fn root() -> String {
    let dir = std::env::var("CARGO_MANIFEST_DIR")
        .unwrap_or_else(|_| env!("CARGO_MANIFEST_DIR").to_owned());
    format!("{dir}/../..")
}

fn read(path: &str) -> String {
    std::fs::read_to_string(format!("{}/{path}", root())).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// (scenario directory, trace): each ships base.toml, world.toml and the suggested plan.toml.
pub const LEARNED: [(&str, &str); 4] = [
    (
        "nyc-taxi-learned",
        "events/traces/nyc-taxi-2014-10-06-2wk-30min.csv",
    ),
    (
        "nyc-taxi-july4",
        "events/traces/nyc-taxi-2014-07-01-2wk-30min.csv",
    ),
    ("tweets-aapl", "events/traces/twitter-volume-aapl-5min.csv"),
    ("tweets-goog", "events/traces/twitter-volume-goog-5min.csv"),
];

/// The learned scenario `name` and its trace.
fn learned(name: &str) -> (&'static str, &'static str) {
    LEARNED
        .into_iter()
        .find(|(dir, _)| *dir == name)
        .unwrap_or_else(|| panic!("no learned scenario {name}"))
}

fn suggested(dir: &str, trace_path: &str) -> String {
    let base = format!("events/scenarios/{dir}/base.toml");
    let world = format!("events/scenarios/{dir}/world.toml");
    let trace = Trace::parse(trace_path, &read(trace_path)).expect("trace");
    let world = World::parse(&world, &read(&world)).expect("world");
    let until = trace.start + chrono::Duration::days(7);
    suggest_plan((&base, &read(&base)), &trace, &world, Some(until)).expect("suggestion")
}

#[test]
fn shipped_learned_plans_are_what_plan_suggest_prints() {
    for (dir, trace) in LEARNED {
        let text = suggested(dir, trace);
        let path = format!("events/scenarios/{dir}/plan.toml");
        if std::env::var_os("HEADROOM_UPDATE_SHIPPED").is_some() {
            std::fs::write(format!("{}/{path}", root()), &text).expect("write");
        }
        assert!(
            read(&path) == text,
            "{path} differs from `headroom plan suggest --plan events/scenarios/{dir}/base.toml \
             --trace {trace} --world events/scenarios/{dir}/world.toml --until <start + 7d>`: \
             rerun this test with HEADROOM_UPDATE_SHIPPED=1"
        );
        assert!(text.contains("[target.forecast]"), "{path}");
    }
}

#[test]
fn the_guard_does_not_ratchet_min_capacity_on_a_bursty_trace() {
    // GIVEN two weeks of the AAPL tweet volume, its bursts up to hundreds of instances, with the
    // suggested plan (guard on the burst alarm, forecast on)
    let (dir, trace_path) = learned("tweets-aapl");
    let world = format!("events/scenarios/{dir}/world.toml");
    let trace = Trace::parse(trace_path, &read(trace_path)).expect("trace");
    let trace = trace.truncated(14 * 288);
    let plan = read(&format!("events/scenarios/{dir}/plan.toml"));
    let scenario = Scenario::new(
        dir,
        headroom_core::parse_plan("plan.toml", &plan).expect("plan"),
        World::parse(&world, &read(&world)).expect("world"),
        trace,
    )
    .expect("scenario");
    let max = scenario.plan.targets[0].max_capacity;
    let results = run_all(
        &scenario,
        &mut RunOptions {
            chart: true,
            progress: None,
        },
    );
    let hr = results
        .iter()
        .find(|r| r.strategy == Strategy::Headroom)
        .expect("headroom ran");
    // THEN in no minute whose demand needs less than half of MaxCapacity, looking back over the
    // guard's longest hold, is MinCapacity at MaxCapacity
    let points = &hr.chart[0];
    let window = 3 * 60 + 30; // max_duration 3h plus the hold, in minutes
    let mut at_max_needlessly = 0;
    for (i, p) in points.iter().enumerate() {
        let recent = points[i.saturating_sub(window)..=i]
            .iter()
            .map(|q| q.demand)
            .fold(0.0, f32::max);
        if p.min_capacity >= max && recent < max as f32 / 2.0 {
            at_max_needlessly += 1;
        }
    }
    assert_eq!(
        at_max_needlessly, 0,
        "minutes at MaxCapacity {max} with demand below half of it"
    );
}

#[test]
fn a_holiday_in_the_first_week_does_not_teach_the_weekdays_a_weekend() {
    // GIVEN two weeks of New York taxi demand from Tuesday 2014-07-01, Friday July 4 a holiday
    // in the week `plan suggest` reads, and its suggestion (peaks and forecast both learn from
    // that week)
    let (dir, trace_path) = learned("nyc-taxi-july4");
    let world = format!("events/scenarios/{dir}/world.toml");
    let plan = suggested(dir, trace_path);
    let scenario = Scenario::new(
        dir,
        headroom_core::parse_plan("plan.toml", &plan).expect("plan"),
        World::parse(&world, &read(&world)).expect("world"),
        Trace::parse(trace_path, &read(trace_path)).expect("trace"),
    )
    .expect("scenario");
    // WHEN it is simulated against target tracking alone
    let results = run_all(&scenario, &mut RunOptions::default());
    let of = |s: Strategy| {
        results
            .iter()
            .find(|r| r.strategy == s)
            .map(|r| (r.total.breach_minutes, r.total.instance_hours))
            .expect("strategy ran")
    };
    let ((tt_breach, tt_hours), (hr_breach, hr_hours)) =
        (of(Strategy::TargetTracking), of(Strategy::Headroom));
    // THEN the morning ramps of the week after are covered: more than 85 % fewer breach minutes
    // (74 % while July 4 counted as a weekday: the suggested ramp floor was 6, not 15), within
    // 1.15x
    assert!(
        hr_breach * 100 < tt_breach * 15,
        "headroom {hr_breach} breach minutes against target tracking's {tt_breach}"
    );
    assert!(hr_hours <= 1.15 * tt_hours, "{hr_hours} vs {tt_hours}");
}

/// The AAPL scenario's suggestion on `trace` (a prefix of its trace) with the history before
/// start + 7 days, tuned to `budget`.
fn aapl_suggestion(trace: &Trace, budget: Option<f64>) -> String {
    let (dir, _) = learned("tweets-aapl");
    let base = format!("events/scenarios/{dir}/base.toml");
    let world = format!("events/scenarios/{dir}/world.toml");
    let world = World::parse(&world, &read(&world)).expect("world");
    let until = trace.start + chrono::Duration::days(7);
    headroom_sim::suggest::suggest_plan_within(
        (&base, &read(&base)),
        trace,
        &world,
        Some(until),
        budget,
    )
    .expect("suggestion")
}

/// The first `days` days of the AAPL trace.
fn aapl_trace(days: usize) -> Trace {
    let (_, trace_path) = learned("tweets-aapl");
    Trace::parse(trace_path, &read(trace_path))
        .expect("trace")
        .truncated(days * 288)
}

#[test]
fn tuning_reads_only_the_history_before_until() {
    // GIVEN nine days of the AAPL trace, and the same nine days with everything after day 7
    // five times busier
    let trace = aapl_trace(9);
    let mut busier = trace.clone();
    for c in busier.counts.iter_mut().skip(7 * 288) {
        *c *= 5.0;
    }
    // THEN the tuned suggestions agree, and they are tuned
    let plan = aapl_suggestion(&trace, Some(1.15));
    assert_eq!(plan, aapl_suggestion(&busier, Some(1.15)));
    assert!(plan.contains("# Tuned to at most 1.15x"), "{plan}");
}

#[test]
fn the_budget_steers_the_guard_and_forecast_and_none_leaves_them_as_written() {
    let trace = aapl_trace(7);
    let parse = |text: &str| headroom_core::parse_plan("suggested", text).expect("valid");
    let hold = |text: &str| parse(text).targets[0].guard.as_ref().map(|g| g.hold);
    // Untuned: the base plan's 30-minute hold and the default quantile, no tuning evidence.
    let untuned = aapl_suggestion(&trace, None);
    assert!(!untuned.contains("Tuned"), "{untuned}");
    assert_eq!(hold(&untuned), Some(headroom_core::Span::minutes(30)));
    // At 1.15x the 30-minute hold (1.3x on this history) is given up for a shorter one; a
    // budget it fits keeps it.
    let tight = aapl_suggestion(&trace, Some(1.15));
    assert!(
        hold(&tight) < Some(headroom_core::Span::minutes(30)),
        "{tight}"
    );
    assert!(tight.contains("AllTraffic: kept: "), "{tight}");
    // A budget no setting's backtest fits within its margin keeps the cheapest, and says so.
    let none_fit = aapl_suggestion(&trace, Some(1.0));
    assert!(
        none_fit.contains("AllTraffic: no setting backtests within 0.98x, kept the cheapest: "),
        "{none_fit}"
    );
    let loose = aapl_suggestion(&trace, Some(3.0));
    assert!(loose.contains("# Tuned to at most 3.00x"), "{loose}");
    assert_eq!(
        hold(&loose),
        Some(headroom_core::Span::minutes(30)),
        "{loose}"
    );
}

/// The README's learned-table row for `name`: (target tracking's breach minutes, headroom's,
/// headroom's instance-hours over target tracking's).
fn readme_learned_row(name: &str) -> (u64, u64, f64) {
    let readme = read("README.md");
    let row = readme
        .lines()
        .find(|l| l.starts_with(&format!("| {name} ")))
        .unwrap_or_else(|| panic!("the README's learned table has no row for {name}"));
    let cells: Vec<&str> = row.split('|').map(str::trim).collect();
    let number = |i: usize| -> f64 {
        cells[i]
            .trim_end_matches('x')
            .parse()
            .unwrap_or_else(|_| panic!("{name}: cell {i} of {row:?} is no number"))
    };
    (number(2) as u64, number(3) as u64, number(5))
}

#[test]
fn the_shipped_learned_plans_do_what_the_readme_says_and_cut_news_bursts_by_60_percent() {
    // GIVEN each shipped learned plan (the first week's suggestion), simulated over its whole
    // trace against target tracking alone
    for (dir, trace_path) in LEARNED {
        let world = format!("events/scenarios/{dir}/world.toml");
        let plan = read(&format!("events/scenarios/{dir}/plan.toml"));
        let scenario = Scenario::new(
            dir,
            headroom_core::parse_plan("plan.toml", &plan).expect("plan"),
            World::parse(&world, &read(&world)).expect("world"),
            Trace::parse(trace_path, &read(trace_path)).expect("trace"),
        )
        .expect("scenario");
        let results = run_all(&scenario, &mut RunOptions::default());
        let of = |s: Strategy| {
            results
                .iter()
                .find(|r| r.strategy == s)
                .map(|r| (r.total.breach_minutes, r.total.instance_hours))
                .expect("strategy ran")
        };
        let ((tt_breach, tt_hours), (hr_breach, hr_hours)) =
            (of(Strategy::TargetTracking), of(Strategy::Headroom));
        // THEN the README's learned table says what they do (`--example learned` prints it)
        let (readme_tt, readme_hr, readme_cost) = readme_learned_row(dir);
        assert_eq!(
            (tt_breach, hr_breach),
            (readme_tt, readme_hr),
            "{dir}: the README's learned table is stale: rerun `--example learned`"
        );
        assert!(
            (hr_hours / tt_hours - readme_cost).abs() < 0.0015,
            "{dir}: instance-hours {:.3}x, the README says {readme_cost}x",
            hr_hours / tt_hours
        );
        if !dir.starts_with("tweets-") {
            continue;
        }
        // AND on the news-burst traces at least 60 % fewer breach minutes within 1.15x its
        // instance-hours (AAPL was at -58 % before the forecast learned today's level). This is
        // the goal itself, and AAPL meets the cut by a few points only: a change that fails it
        // moves the learned table, whose `learned` example says by how much. AAPL's cost, at
        // 1.146x, is within the budget because the tuner keeps clear of the backtest's own error
        // (`BACKTEST_COST_ERROR`): without it, it kept a 15-minute hold that the first week
        // priced at 1.14x and the whole trace at 1.174x.
        assert!(
            hr_breach * 100 <= tt_breach * 40,
            "{dir}: headroom {hr_breach} breach minutes against target tracking's {tt_breach}"
        );
        assert!(
            hr_hours <= 1.15 * tt_hours,
            "{dir}: {hr_hours} vs {tt_hours}"
        );
    }
}

/// The default scenario's week of one-minute demand, tuned at `budget`, and the same week
/// summed into five-minute rows.
fn default_week_suggestions(budget: f64) -> (String, String) {
    use headroom_sim::scenario::{DEFAULT_PLAN, DEFAULT_TRACE, DEFAULT_WORLD};
    let fine = Trace::parse("default trace", DEFAULT_TRACE).expect("trace");
    let coarse = Trace {
        interval_secs: 300,
        counts: fine.counts.chunks(5).map(|c| c.iter().sum()).collect(),
        ..fine.clone()
    };
    let world = World::parse("default world", DEFAULT_WORLD).expect("world");
    let suggest = |trace: &Trace| {
        headroom_sim::suggest::suggest_plan_within(
            ("default plan", DEFAULT_PLAN),
            trace,
            &world,
            None,
            Some(budget),
        )
        .expect("suggestion")
    };
    (suggest(&fine), suggest(&coarse))
}

#[test]
fn minute_level_history_also_tries_single_minute_slot_peaks() {
    use headroom_core::suggest::tune::grid;
    let (fine, coarse) = default_week_suggestions(3.0);
    let tried = |n: usize| format!("{n} settings simulated");
    let (minute, five) = (
        headroom_core::Span::minutes(1),
        headroom_core::Span::minutes(5),
    );
    // One-minute rows: the grid with single-minute peaks; five-minute rows: without them (at
    // five minutes a one-minute resolution reads the same peaks again).
    assert!(fine.contains(&tried(grid(minute).len())), "{fine}");
    assert!(coarse.contains(&tried(grid(five).len())), "{coarse}");
    assert!(grid(minute).len() > grid(five).len());
    // With room in the budget, the minute-level week keeps the setting that covers its
    // single-minute peaks, and the plan says so.
    assert!(fine.contains("resolution = \"1m\""), "{fine}");
    assert!(!coarse.contains("resolution = \"1m\""), "{coarse}");
    headroom_core::parse_plan("suggested", &fine).expect("a valid plan");
}

/// The evidence's clause after `label` on the target's line, up to the next one: for
/// "; as written (", "quantile 0.5, max_margin 1.2): 1.14x target tracking's instance-hours, 71 %
/// fewer breach minutes (43 vs 146)".
fn clause_after<'a>(plan: &'a str, label: &str) -> &'a str {
    let line = plan
        .lines()
        .find(|l| l.contains("AllTraffic: kept") || l.contains("AllTraffic: no setting"))
        .unwrap_or_else(|| panic!("no tuning line in\n{plan}"));
    let from = line
        .find(label)
        .unwrap_or_else(|| panic!("no {label:?} in {line}"))
        + label.len();
    line[from..].split(';').next().unwrap_or_default()
}

/// What a clause says the setting did: after its parenthesis.
fn figures(clause: &str) -> Option<&str> {
    clause.split("): ").nth(1)
}

/// `base`'s suggestion from the default scenario's week of one-minute demand, tuned to `budget`.
fn suggest_on_default_week(base: &str, budget: Option<f64>) -> String {
    use headroom_sim::scenario::{DEFAULT_TRACE, DEFAULT_WORLD};
    let trace = Trace::parse("default trace", DEFAULT_TRACE).expect("trace");
    let world = World::parse("default world", DEFAULT_WORLD).expect("world");
    headroom_sim::suggest::suggest_plan_within(("base", base), &trace, &world, None, budget)
        .expect("suggestion")
}

#[test]
fn the_evidence_prices_the_base_plan_as_it_stands_beside_the_suggestion() {
    use headroom_sim::scenario::DEFAULT_PLAN;
    let suggest = suggest_on_default_week;
    // GIVEN the default plan, which has peaks and a guard but no forecast: its own backtest is
    // not the "as written" setting's (the suggested peaks and a default forecast)
    let tuned = suggest(DEFAULT_PLAN, Some(1.15));
    let base = clause_after(&tuned, "; the base plan (");
    assert!(
        base.starts_with("its peaks, its guard, no forecast): "),
        "{tuned}"
    );
    assert!(figures(base).is_some_and(|f| f.contains("target tracking's instance-hours")));
    assert_ne!(
        figures(base),
        figures(clause_after(&tuned, "; as written (")),
        "{tuned}"
    );
    // WHEN the base plan is an untuned suggestion, whose peaks and forecast the new suggestion
    // repeats
    let untuned = suggest(DEFAULT_PLAN, None);
    let again = suggest(&untuned, Some(1.15));
    // THEN its own backtest is the "as written" setting's, figure for figure
    let own = clause_after(&again, "; the base plan (");
    assert!(
        own.starts_with("its peaks, its guard, its forecast): "),
        "{again}"
    );
    assert_eq!(
        figures(own),
        figures(clause_after(&again, "; as written (")),
        "the same plan backtests the same:\n{again}"
    );
}

#[test]
fn a_forecast_only_base_keeps_its_mode_and_tunes_only_the_guards_hold() {
    use headroom_core::plan::forecast::ForecastMode;
    use headroom_sim::scenario::DEFAULT_PLAN;
    // GIVEN the default plan, its forecast recorded only
    let base = format!(
        "{DEFAULT_PLAN}\n[target.forecast]\nmode = \"forecast_only\"\ninvocations_per_instance = 450.0\n"
    );
    let plan = suggest_on_default_week(&base, Some(1.15));
    // THEN the suggestion keeps the mode, tunes the guard's hold (shorter than the written
    // 1h30m on this week) and leaves the forecast's knobs, which did not act, as written
    let parsed = headroom_core::parse_plan("suggested", &plan).expect("valid");
    let target = &parsed.targets[0];
    assert_eq!(
        target.forecast.as_ref().map(|f| f.mode),
        Some(ForecastMode::ForecastOnly),
        "{plan}"
    );
    let hold = target.guard.as_ref().map(|g| g.hold);
    assert!(
        hold.is_some_and(|h| h < headroom_core::Span::minutes(90)),
        "{plan}"
    );
    let body: Vec<&str> = plan.lines().filter(|l| !l.starts_with('#')).collect();
    for knob in ["quantile", "max_margin", "resolution", "margin_quantile"] {
        assert!(
            !body.iter().any(|l| l.starts_with(&format!("{knob} ="))),
            "{knob} was not measured:\n{plan}"
        );
    }
    assert!(
        plan.contains(
            "the forecast stays forecast_only, as the base plan has it: it claims nothing, so \
             only the guard's hold was tuned"
        ),
        "{plan}"
    );
    assert!(
        plan.contains(": kept: forecast_only, guard hold "),
        "{plan}"
    );
}
