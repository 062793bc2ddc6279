//! `headroom pause TARGET --until ...` and `headroom resume TARGET`: an operator's override that
//! makes headroom leave one target alone, recorded in its state and the decision log.

use chrono::{DateTime, Utc};
use headroom_core::reconcile::{load_plan, reconcile_named, EventChange};
use headroom_core::state::Pause;
use headroom_core::{ScalableTargetId, Span, TargetState};

use crate::aws::{Aws, TableArgs};

#[derive(clap::Args, Debug)]
pub struct PauseArgs {
    /// The target's resource id, e.g. endpoint/chat-prod/variant/AllTraffic.
    pub target: ScalableTargetId,
    /// Until when: an RFC 3339 time or a duration from now (e.g. 2h).
    #[arg(long)]
    pub until: String,
    /// Why, for the decision log and `headroom status`.
    #[arg(long, default_value = "paused by an operator")]
    pub reason: String,
    #[command(flatten)]
    pub table: TableArgs,
}

#[derive(clap::Args, Debug)]
pub struct ResumeArgs {
    /// The target's resource id, e.g. endpoint/chat-prod/variant/AllTraffic.
    pub target: ScalableTargetId,
    #[command(flatten)]
    pub table: TableArgs,
}

/// An RFC 3339 instant, or a duration after `now`.
pub fn parse_until(text: &str, now: DateTime<Utc>) -> anyhow::Result<DateTime<Utc>> {
    if let Ok(t) = DateTime::parse_from_rfc3339(text) {
        return Ok(t.with_timezone(&Utc));
    }
    let span = Span::parse(text).map_err(|e| {
        crate::exit::usage(format!(
            "--until {text:?} is neither RFC 3339 nor a duration: {e}"
        ))
    })?;
    // To the second: the time is shown and stored, and nanoseconds only get in the way.
    Ok(chrono::SubsecRound::trunc_subsecs(
        now + span.to_chrono(),
        0,
    ))
}

pub async fn pause(args: PauseArgs) -> anyhow::Result<()> {
    let now = Utc::now();
    let until = parse_until(&args.until, now)?;
    anyhow::ensure!(
        until > now,
        "--until {} is in the past",
        until.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
    );
    let reason = args.reason.clone();
    let apply = move |state: &mut TargetState| {
        state.pause = Some(Pause {
            until,
            reason: reason.clone(),
        });
        vec![format!(
            "paused until {} by an operator: {reason}",
            until.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
        )]
    };
    change(&args.table, &args.target, now, "pause", &apply).await?;
    outln!(
        "{} paused until {}",
        args.target,
        until.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
    )?;
    Ok(())
}

pub async fn resume(args: ResumeArgs) -> anyhow::Result<()> {
    let now = Utc::now();
    let apply = |state: &mut TargetState| {
        state.pause = None;
        vec!["resumed by an operator".to_owned()]
    };
    let outcome = change(&args.table, &args.target, now, "resume", &apply).await?;
    outln!(
        "{} resumed: min {} max {}",
        args.target,
        outcome.desired.min,
        outcome.desired.max
    )?;
    Ok(())
}

async fn change(
    table: &TableArgs,
    target: &ScalableTargetId,
    now: DateTime<Utc>,
    what: &str,
    apply: &(dyn Fn(&mut TargetState) -> Vec<String> + Send + Sync),
) -> anyhow::Result<headroom_core::Decision> {
    let aws = Aws::connect(table).await?;
    let (_, plan) = load_plan(&aws.store).await?;
    let change = EventChange {
        key: format!("{what}:{}", now.timestamp_millis()),
        apply,
    };
    let outcome = reconcile_named(
        &aws.aas,
        &aws.store,
        &plan,
        target,
        now,
        &format!("cli:{what}"),
        Some(&change),
    )
    .await?;
    Ok(outcome.decision)
}
