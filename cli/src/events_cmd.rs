//! `headroom events peak`: prints a `headroom.peak/v1` event whose window is relative to now,
//! for the local walkthrough and for testing a schedule's input before wiring it (the sample in
//! `events/schedule/peak.json` has fixed dates, long past by the time someone tries it).

use chrono::{SecondsFormat, Utc};
use headroom_core::{ScalableTargetId, Span};
use serde_json::json;

use crate::plan_cmd::parse_span;

#[derive(clap::Subcommand, Debug)]
pub enum EventsCommand {
    /// Print an explicit-peak event (`headroom.peak/v1`) starting `--in` from now.
    Peak(PeakArgs),
}

#[derive(clap::Args, Debug)]
pub struct PeakArgs {
    /// The managed target the peak is for.
    #[arg(long)]
    pub target: ScalableTargetId,
    /// How long from now the peak starts (headroom pre-scales its lead time before).
    #[arg(long = "in", default_value = "20m", value_parser = parse_span)]
    pub starts_in: Span,
    /// How long the peak lasts.
    #[arg(long, default_value = "1h", value_parser = parse_span)]
    pub duration: Span,
    /// The MinCapacity the peak asks for, within the plan's bounds.
    #[arg(long, default_value_t = 4)]
    pub floor: u32,
    /// The peak's name: with its start, the event's id (a resent event is the same peak).
    #[arg(long, default_value = "walkthrough")]
    pub name: String,
    /// Also suspend scale-in while the peak lasts (target tracking may still scale out).
    #[arg(long)]
    pub suspend_scale_in: bool,
}

pub fn run(cmd: EventsCommand) -> anyhow::Result<()> {
    let EventsCommand::Peak(args) = cmd;
    let now = chrono::SubsecRound::trunc_subsecs(Utc::now(), 0);
    let starts = now + args.starts_in.to_chrono();
    let ends = starts + args.duration.to_chrono();
    let at = |t: chrono::DateTime<Utc>| t.to_rfc3339_opts(SecondsFormat::Secs, true);
    let event = json!({
        "kind": "headroom.peak/v1",
        "target": args.target.to_string(),
        "name": args.name,
        "floor": args.floor,
        "starts_at": at(starts),
        "ends_at": at(ends),
        "suspend_scale_in": args.suspend_scale_in,
        "id": format!("{}-{}", args.name, starts.timestamp()),
    });
    outln!("{}", serde_json::to_string_pretty(&event)?)?;
    Ok(())
}
