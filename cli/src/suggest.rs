//! `headroom plan suggest`: the base plan with each target's peaks replaced by the ones its own
//! demand history shows, and a `[target.forecast]` section, printed as a complete plan on stdout
//! with the evidence in comments. Offline from a trace and a world file (`--trace --world`, only
//! the history before `--until`). The rules are in `headroom_core::suggest`.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context};
use chrono::{DateTime, Utc};
use headroom_sim::suggest::suggest_plan;
use headroom_sim::{Trace, World};

#[derive(clap::Args, Debug)]
pub struct SuggestArgs {
    /// The base plan: its targets, bounds, guard and wake stay; peaks and forecast are suggested.
    #[arg(long)]
    pub plan: PathBuf,
    /// A request trace (CSV `timestamp,requests`) standing in for the CloudWatch history.
    #[arg(long, requires = "world")]
    pub trace: Option<PathBuf>,
    /// The simulator's world file: trace scale and target-tracking policy per target.
    #[arg(long, requires = "trace")]
    pub world: Option<PathBuf>,
    /// Use only history before this instant (RFC 3339).
    #[arg(long)]
    pub until: Option<DateTime<Utc>>,
    /// Days of CloudWatch history to read (without --trace).
    #[arg(long, default_value_t = 14)]
    pub days: u32,
}

pub fn run(args: SuggestArgs) -> anyhow::Result<()> {
    let (Some(trace_path), Some(world_path)) = (&args.trace, &args.world) else {
        bail!(
            "plan suggest needs --trace TRACE --world WORLD in this version: reading the history \
             from CloudWatch (--days {}) is not built yet",
            args.days
        );
    };
    let base = read(&args.plan, "base plan")?;
    let trace = Trace::parse(
        &trace_path.display().to_string(),
        &read(trace_path, "trace")?,
    )?;
    let world = World::parse(
        &world_path.display().to_string(),
        &read(world_path, "world file")?,
    )?;
    let out = suggest_plan(
        (&args.plan.display().to_string(), &base),
        &trace,
        &world,
        args.until,
    )?;
    out!("{out}")?;
    Ok(())
}

fn read(p: &Path, what: &str) -> anyhow::Result<String> {
    std::fs::read_to_string(p).with_context(|| format!("failed to read the {what} {}", p.display()))
}
