//! `headroom plan suggest`: the base plan with each target's weekly peaks replaced by the ones its
//! own demand history shows (what it could not show is kept: `headroom_core::suggest::kept`),
//! and a `[target.forecast]` section, printed as a complete plan on stdout with the evidence in
//! comments. Two sources of history, one suggestion
//! (`headroom_core::suggest::plan`):
//!
//! - `--days N` (the default, 14 days): each target's CloudWatch `Invocations` over the last N
//!   days, read as the forecast refresh reads it;
//! - `--trace TRACE --world WORLD`: offline, from a trace and the simulator's world file.
//!
//! `--until` ends the history in both forms. The offline form also tunes the suggestion to
//! `--budget` (default 1.15x target tracking's instance-hours) by simulating the same history
//! (`headroom_sim::tune`); the CloudWatch form has no world to simulate and prints it untuned.

use std::path::{Path, PathBuf};

use anyhow::Context;
use chrono::{DateTime, Utc};
use headroom_adapters::aas_history::AasHistory;
use headroom_adapters::{AwsSettings, Clients, CloudWatchDemand};
use headroom_core::suggest::cloudwatch::{
    suggest_from_cloudwatch, CloudWatchSuggestError, HistoryWindow, DEFAULT_DAYS,
};
use headroom_core::suggest::plan::SuggestError;
use headroom_core::suggest::tune::DEFAULT_BUDGET;
use headroom_sim::suggest::suggest_plan_within;
use headroom_sim::{Trace, World};

use crate::exit::{usage, CliError, Exit};

#[derive(clap::Args, Debug)]
pub struct SuggestArgs {
    /// The base plan: its targets, bounds, guard and wake stay; peaks and forecast are suggested.
    #[arg(long)]
    pub plan: PathBuf,
    /// Days of CloudWatch history to read, 1 to 63 (CloudWatch keeps 5-minute data 63 days);
    /// CloudWatch is the source unless --trace/--world are given, 14 days by default.
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=63), conflicts_with_all = ["trace", "world"])]
    pub days: Option<u32>,
    /// Offline: a request trace (CSV `timestamp,requests`) standing in for the CloudWatch history.
    #[arg(long)]
    pub trace: Option<PathBuf>,
    /// Offline: the simulator's world file (trace scale and target-tracking policy per target)
    /// [default: world.toml next to the base plan, as `headroom simulate` finds it].
    #[arg(long, requires = "trace")]
    pub world: Option<PathBuf>,
    /// Use only history before this instant (RFC 3339).
    #[arg(long, value_parser = crate::plan_cmd::parse_instant)]
    pub until: Option<DateTime<Utc>>,
    /// Offline: tune the forecast quantile and guard hold by simulating the history, keeping
    /// instance-hours within this many times target tracking's (default 1.15; `none`: untuned).
    /// A setting is chosen for its breach minutes only when its backtest stays 0.02x within it,
    /// for what a week's backtest misprices; when none does, the cheapest is kept and the plan's
    /// comments say so.
    #[arg(long, requires = "trace", value_parser = parse_budget)]
    pub budget: Option<Budget>,
}

/// `--budget`: a ratio of target tracking's instance-hours, or `none`.
#[derive(Debug, Clone, Copy)]
pub struct Budget(Option<f64>);

fn parse_budget(s: &str) -> Result<Budget, String> {
    if s == "none" {
        return Ok(Budget(None));
    }
    match s.parse::<f64>() {
        Ok(v) if v.is_finite() && (1.0..=10.0).contains(&v) => Ok(Budget(Some(v))),
        _ => Err(format!(
            "{s:?} is not a budget: a ratio of target tracking's instance-hours from 1 to 10 \
             (1.15: at most 15 % more), or none"
        )),
    }
}

pub async fn run(args: SuggestArgs) -> anyhow::Result<()> {
    let base_name = args.plan.display().to_string();
    let base = read(&args.plan, "base plan")?;
    let out = match &args.trace {
        Some(trace) => {
            let world = world_path(&args.plan, args.world.as_deref())?;
            let budget = args.budget.map_or(Some(DEFAULT_BUDGET), |b| b.0);
            offline((&base_name, &base), trace, &world, args.until, budget)?
        }
        None => from_cloudwatch((&base_name, &base), args.days, args.until).await?,
    };
    out!("{out}")?;
    Ok(())
}

/// `--world`, or world.toml next to the base plan.
fn world_path(base: &Path, given: Option<&Path>) -> anyhow::Result<PathBuf> {
    if let Some(world) = given {
        return Ok(world.to_owned());
    }
    let beside = base.parent().unwrap_or(Path::new(".")).join("world.toml");
    if beside.is_file() {
        Ok(beside)
    } else {
        Err(usage(format!(
            "--trace needs the simulator's world (trace scale and target tracking per target): \
             pass --world FILE, or put it at {}",
            beside.display()
        )))
    }
}

fn offline(
    base: (&str, &str),
    trace_path: &Path,
    world_path: &Path,
    until: Option<DateTime<Utc>>,
    budget: Option<f64>,
) -> anyhow::Result<String> {
    let trace = Trace::parse(
        &trace_path.display().to_string(),
        &read(trace_path, "trace")?,
    )?;
    let world = World::parse(
        &world_path.display().to_string(),
        &read(world_path, "world file")?,
    )?;
    // A row counts once it has ended before --until.
    let first_row_end = trace.start + chrono::Duration::seconds(trace.interval_secs);
    if let Some(until) = until.filter(|u| *u < first_row_end) {
        return Err(usage(format!(
            "--until {until} is before the trace's first row ends ({first_row_end}): there is \
             no history before it to learn from"
        )));
    }
    // What `simulate` would warn about, the backtest meets too.
    if let Ok(plan) = headroom_core::parse_plan(base.0, base.1) {
        for warning in headroom_sim::scenario::warnings(&plan, &world) {
            eprintln!("warning: {warning}");
        }
    }
    suggest_plan_within(base, &trace, &world, until, budget).map_err(suggest_error)
}

async fn from_cloudwatch(
    base: (&str, &str),
    days: Option<u32>,
    until: Option<DateTime<Utc>>,
) -> anyhow::Result<String> {
    // The base plan is checked before any AWS call: a typo costs no round trip.
    headroom_core::parse_plan(base.0, base.1)?;
    let clients = Clients::load(&AwsSettings::from_env()?).await;
    let window = HistoryWindow::last_days(days.unwrap_or(DEFAULT_DAYS), until, Utc::now());
    let out = suggest_from_cloudwatch(
        base,
        &CloudWatchDemand::new(clients.cloudwatch.clone()),
        &AasHistory::new(clients.aas.clone()),
        window,
    )
    .await
    .map_err(|e| match e {
        // The port error itself, so the exit code says which class of AWS failure it was.
        CloudWatchSuggestError::History(p) | CloudWatchSuggestError::Policies(p) => p.into(),
        CloudWatchSuggestError::Suggest(s) => suggest_error(s),
    })?;
    Ok(out.plan)
}

/// The suggestion's failure with the exit class of its cause: a base plan that does not parse or
/// names an unknown time zone is invalid input (5); a suggested plan that does not validate is a
/// headroom bug (1).
fn suggest_error(e: SuggestError) -> anyhow::Error {
    match e {
        SuggestError::Plan(p) => p.into(),
        e @ (SuggestError::Base { .. } | SuggestError::Mismatch(_)) => CliError {
            exit: Exit::Invalid,
            message: e.to_string(),
        }
        .into(),
        e @ SuggestError::Render(_) => e.into(),
    }
}

fn read(p: &Path, what: &str) -> anyhow::Result<String> {
    std::fs::read_to_string(p).with_context(|| format!("failed to read the {what} {}", p.display()))
}
