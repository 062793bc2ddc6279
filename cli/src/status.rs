//! `headroom status [TARGET] [--json]`: what headroom sees and wants for each managed target:
//! AAS bounds, the decision it would make now and why, live claims, pause, drift, the lead time in
//! use and where it came from, wake latency, and (for one target) its recent decisions.

use chrono::Utc;
use headroom_core::decide::decide;
use headroom_core::lead_time::lead_time;
use headroom_core::ports::{ScalingTargets, StateStore, DESCRIBE_PAGE};
use headroom_core::reconcile::load_plan;
use headroom_core::state::take_state;
use headroom_core::ScalableTargetId;
use serde_json::{json, Value};

use crate::aws::{Aws, TableArgs};

#[derive(clap::Args, Debug)]
pub struct StatusArgs {
    /// Only this target (and show its recent decisions).
    pub target: Option<ScalableTargetId>,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
    /// How many recent decisions to show for one target.
    #[arg(long, default_value_t = 5)]
    pub decisions: usize,
    #[command(flatten)]
    pub table: TableArgs,
}

pub async fn run(args: StatusArgs) -> anyhow::Result<()> {
    let now = Utc::now();
    let aws = Aws::connect(&args.table).await?;
    let (version, plan) = load_plan(&aws.store).await?;
    let targets: Vec<_> = match &args.target {
        Some(id) => vec![plan.target(id).ok_or_else(|| {
            crate::exit::not_found(format!(
                "{id} is not managed by the stored plan (version {version})"
            ))
        })?],
        None => plan.targets.iter().collect(),
    };
    let mut rows = Vec::new();
    for page in targets.chunks(DESCRIBE_PAGE) {
        let ids: Vec<ScalableTargetId> = page.iter().map(|t| t.id.clone()).collect();
        let observed = aws.aas.describe(&ids).await?;
        let mut states = aws.store.load_states(&ids).await?;
        for target in page {
            let state = take_state(&mut states, &target.id);
            let seen = observed.iter().find(|o| o.id == target.id);
            let lead = lead_time(target, &state.lead_samples, state.model.as_deref());
            let d = decide(target, seen, &state, lead.span, now);
            let mut latencies: Vec<i64> = state.wake_latencies.iter().map(|w| w.seconds).collect();
            latencies.sort_unstable();
            let mut row = json!({
                "target": target.id.to_string(),
                "observed": d.observed,
                "desired": d.desired,
                "in_step": seen.is_some_and(|o| o.bounds() == d.desired),
                "action_now": d.action,
                "reasons": d.reasons,
                "claims": d.claims,
                "paused": state.pause,
                "drift": state.drift,
                "lead_time": lead,
                "model": state.model,
                "wake_latency": {
                    "count": latencies.len(),
                    "last_seconds": state.wake_latencies.last().map(|w| w.seconds),
                    "median_seconds": latencies.get(latencies.len() / 2),
                    "pending_since": state.wake_pending_since,
                },
            });
            if args.target.is_some() {
                row["recent_decisions"] =
                    Value::Array(aws.store.recent_log(&target.id, args.decisions).await?);
            }
            rows.push(row);
        }
    }
    if args.json {
        outln!(
            "{}",
            serde_json::to_string_pretty(&json!({ "plan_version": version, "targets": rows }))?
        )?;
    } else {
        outln!(
            "plan version {version}, {} target(s), at {}",
            rows.len(),
            now.to_rfc3339()
        )?;
        for row in &rows {
            print_row(row)?;
        }
    }
    Ok(())
}

fn print_row(row: &Value) -> std::io::Result<()> {
    let bounds = |b: &Value| match b {
        Value::Null => "not registered".to_owned(),
        b => format!(
            "min {} max {}{}",
            b["min"],
            b["max"],
            if b["suspend_scale_in"] == true {
                " (scale-in suspended)"
            } else {
                ""
            }
        ),
    };
    outln!("\n{}", row["target"].as_str().unwrap_or("?"))?;
    outln!("  AAS now:   {}", bounds(&row["observed"]))?;
    outln!(
        "  headroom:  {}{}",
        bounds(&row["desired"]),
        if row["in_step"] == true {
            ""
        } else {
            "  <- will change at the next reconcile"
        }
    )?;
    for reason in row["reasons"].as_array().into_iter().flatten() {
        outln!("    because {}", reason.as_str().unwrap_or(""))?;
    }
    for claim in row["claims"].as_array().into_iter().flatten() {
        outln!(
            "  claim {} floor {} ({} until {})",
            claim["source"].as_str().unwrap_or("?"),
            claim["floor"],
            claim["phase"].as_str().unwrap_or(""),
            claim["until"].as_str().unwrap_or("")
        )?;
    }
    if !row["paused"].is_null() {
        outln!(
            "  PAUSED until {}: {}",
            row["paused"]["until"].as_str().unwrap_or(""),
            row["paused"]["reason"].as_str().unwrap_or("")
        )?;
    }
    if !row["drift"].is_null() {
        outln!(
            "  drift seen {}: AAS had {} while headroom had set {}",
            row["drift"]["detected_at"].as_str().unwrap_or(""),
            bounds(&row["drift"]["observed"]),
            bounds(&row["drift"]["expected"])
        )?;
    }
    outln!(
        "  lead time: {} ({})",
        row["lead_time"]["span"].as_str().unwrap_or(""),
        row["lead_time"]["detail"].as_str().unwrap_or("")
    )?;
    if let Some(model) = row["model"].as_str() {
        outln!("  model:     {model}")?;
    }
    let wake = &row["wake_latency"];
    if wake["count"].as_u64().unwrap_or(0) > 0 || !wake["pending_since"].is_null() {
        outln!(
            "  wake latency: last {}s, median {}s over {} wake(s){}",
            wake["last_seconds"],
            wake["median_seconds"],
            wake["count"],
            if wake["pending_since"].is_null() {
                String::new()
            } else {
                format!(
                    ", waking since {}",
                    wake["pending_since"].as_str().unwrap_or("")
                )
            }
        )?;
    }
    for d in row["recent_decisions"].as_array().into_iter().flatten() {
        outln!(
            "  decision {} [{}] min {} — {}",
            d["at"].as_str().unwrap_or(""),
            d["trigger"].as_str().unwrap_or(""),
            d["desired"]["min"],
            d["reasons"][0].as_str().unwrap_or("")
        )?;
    }
    Ok(())
}
