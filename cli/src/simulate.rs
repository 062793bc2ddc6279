//! `headroom simulate`: replays a traffic trace against modelled Application Auto Scaling, with
//! and without headroom, next to an oracle with perfect foresight. Without arguments it runs the
//! embedded default scenario.

use std::path::{Path, PathBuf};

use anyhow::Context;
use headroom_sim::{engine::RunOptions, Report, Scenario, Strategy};

#[derive(clap::Args, Debug)]
pub struct SimulateArgs {
    /// headroom's plan (TOML). Without --plan and --trace, the embedded default scenario runs.
    #[arg(long, requires = "trace")]
    pub plan: Option<PathBuf>,
    /// Traffic trace: CSV `timestamp,requests`, RFC 3339 UTC, equally spaced (10 s to 1 h).
    #[arg(long, requires = "plan")]
    pub trace: Option<PathBuf>,
    /// What the plan does not say: capacities, provisioning times, AAS policies, alarms
    /// (default: world.toml next to the plan).
    #[arg(long, requires = "plan")]
    pub world: Option<PathBuf>,
    /// Print one JSON object instead of the table.
    #[arg(long)]
    pub json: bool,
    /// Draw demand, instances in service and MinCapacity over time for the three strategies.
    #[arg(long, value_name = "FILE.svg")]
    pub chart: Option<PathBuf>,
    /// Chart only this target (default: every target of the world).
    #[arg(long, requires = "chart")]
    pub target: Option<String>,
}

/// The chart's targets: all of the world's, or the one `--target` names, each with its planned
/// peak windows shaded. (A forecast adds its windows here, labelled "forecast".)
fn chart_targets(
    scenario: &Scenario,
    only: Option<&str>,
) -> anyhow::Result<Vec<headroom_sim::chart::ChartTarget>> {
    let targets: Vec<_> = scenario
        .world
        .targets
        .iter()
        .enumerate()
        .filter(|(_, t)| only.is_none_or(|name| t.id.to_string() == name))
        .map(|(index, t)| headroom_sim::chart::ChartTarget {
            index,
            name: t.id.to_string(),
            windows: scenario
                .peak_windows(index)
                .into_iter()
                .map(|(start, end)| headroom_sim::chart::Window {
                    start,
                    end,
                    label: "planned peak".into(),
                })
                .collect(),
        })
        .collect();
    if targets.is_empty() {
        let known: Vec<String> = scenario
            .world
            .targets
            .iter()
            .map(|t| t.id.to_string())
            .collect();
        return Err(crate::exit::usage(format!(
            "--target {}: the world has no such target; it has {}",
            only.unwrap_or(""),
            known.join(", ")
        )));
    }
    Ok(targets)
}

pub fn run(args: SimulateArgs) -> anyhow::Result<()> {
    // The chart is SVG whatever the name says: a .png named file would not open as one.
    if let Some(path) = &args.chart {
        let svg = path
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("svg"));
        if !svg {
            return Err(crate::exit::usage(format!(
                "--chart {}: the chart is SVG; name the file with .svg (e.g. out.svg)",
                path.display()
            )));
        }
    }
    let scenario = load(&args)?;
    // Which targets to chart is known before the run: a wrong --target costs no simulation.
    let chart = match &args.chart {
        Some(path) => Some((path, chart_targets(&scenario, args.target.as_deref())?)),
        None => None,
    };
    for warning in scenario.warnings() {
        eprintln!("warning: {warning}");
    }
    // indicatif draws only when stderr is a terminal; piped or redirected, nothing is written.
    let bar = indicatif::ProgressBar::new(100).with_style(
        indicatif::ProgressStyle::with_template("simulating {msg:<16} {bar:30} {pos:>3} %")
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    let mut progress = |s: Strategy, done: f64| {
        bar.set_message(s.name());
        bar.set_position((done * 100.0).round() as u64);
    };
    let mut options = RunOptions {
        chart: args.chart.is_some(),
        progress: (!bar.is_hidden()).then_some(&mut progress as &mut dyn FnMut(Strategy, f64)),
    };
    let results = headroom_sim::run_all(&scenario, &mut options);
    bar.finish_and_clear();
    let report = Report::new(&scenario, results);
    if let Some((path, targets)) = &chart {
        headroom_sim::chart::draw_targets(path, &scenario.name, &report.results, targets)?;
        if !args.json {
            eprintln!("chart written to {}", path.display());
        }
    }
    if args.json {
        outln!("{}", serde_json::to_string_pretty(&report.to_json())?)?;
    } else {
        out!("{}", report.table())?;
    }
    Ok(())
}

fn load(args: &SimulateArgs) -> anyhow::Result<Scenario> {
    let (Some(plan), Some(trace)) = (&args.plan, &args.trace) else {
        return Ok(Scenario::default_scenario()?);
    };
    let world = args
        .world
        .clone()
        .unwrap_or_else(|| plan.parent().unwrap_or(Path::new(".")).join("world.toml"));
    let read = |p: &Path, what: &str| {
        std::fs::read_to_string(p)
            .with_context(|| format!("failed to read the {what} {}", p.display()))
    };
    let (plan_text, world_text, trace_text) = (
        read(plan, "plan")?,
        read(&world, "world file (pass --world FILE)")?,
        read(trace, "trace")?,
    );
    let name = plan
        .parent()
        .and_then(Path::file_name)
        .map_or_else(|| "custom".to_owned(), |n| n.to_string_lossy().into_owned());
    let p = plan.display().to_string();
    let w = world.display().to_string();
    let t = trace.display().to_string();
    Ok(Scenario::parse(
        &name,
        (&p, &plan_text),
        (&w, &world_text),
        (&t, &trace_text),
    )?)
}
