//! `headroom plan validate | apply | show | preview | init-table`.

use std::path::PathBuf;

use anyhow::Context;
use chrono::{DateTime, Utc};
use headroom_core::decide::decide;
use headroom_core::plan::{parse_plan, Plan};
use headroom_core::ports::{SaveOutcome, StateStore, StoredPlan};
use headroom_core::{Span, TargetState};

use crate::aws::{Aws, TableArgs};

#[derive(clap::Subcommand, Debug)]
pub enum PlanCommand {
    /// Check a plan file; print what it manages. Touches nothing.
    Validate { file: PathBuf },
    /// Validate and store a plan as the next version (refuses an invalid plan, writing nothing).
    Apply {
        file: PathBuf,
        #[command(flatten)]
        table: TableArgs,
    },
    /// Print the stored plan and its version.
    Show {
        #[command(flatten)]
        table: TableArgs,
    },
    /// Show how each target's MinCapacity would move over a period, from the plan alone (no AWS).
    Preview {
        file: PathBuf,
        /// Start of the period (RFC 3339); default now.
        #[arg(long)]
        from: Option<DateTime<Utc>>,
        /// Length of the period.
        #[arg(long, default_value = "24h", value_parser = parse_span)]
        period: Span,
        /// Resolution.
        #[arg(long, default_value = "1m", value_parser = parse_span)]
        step: Span,
    },
    /// Create headroom's DynamoDB table (for local use; deployments create it from infra/).
    InitTable {
        #[command(flatten)]
        table: TableArgs,
    },
}

pub fn parse_span(text: &str) -> Result<Span, String> {
    Span::parse(text)
}

/// Reads and validates a plan file; the error names the file and every problem.
pub fn read_plan(file: &PathBuf) -> anyhow::Result<(String, Plan)> {
    let text = std::fs::read_to_string(file)
        .with_context(|| format!("failed to read plan file {}", file.display()))?;
    let plan = parse_plan(&file.display().to_string(), &text)?;
    Ok((text, plan))
}

pub async fn run(cmd: PlanCommand) -> anyhow::Result<()> {
    match cmd {
        PlanCommand::Validate { file } => {
            let (_, plan) = read_plan(&file)?;
            outln!(
                "{} is valid: {} managed target(s)",
                file.display(),
                plan.targets.len()
            )?;
            for t in &plan.targets {
                outln!(
                    "  {}  min {} max {}  lead time {}  peaks {}  guard {}  wake {}",
                    t.id,
                    t.min_capacity,
                    t.max_capacity,
                    t.lead_time,
                    t.peaks.len(),
                    if t.guard.is_some() { "yes" } else { "no" },
                    if t.wake.is_some() { "yes" } else { "no" },
                )?;
            }
            Ok(())
        }
        PlanCommand::Apply { file, table } => {
            let (text, plan) = read_plan(&file)?;
            let aws = Aws::connect(&table).await?;
            let current = aws.store.load_plan().await?;
            if current.as_ref().is_some_and(|c| c.text == text) {
                outln!(
                    "the stored plan (version {}) is already this file: nothing written",
                    current.map_or(0, |c| c.version)
                )?;
                return Ok(());
            }
            let expected = current.as_ref().map_or(0, |c| c.version);
            let stored = StoredPlan {
                version: expected + 1,
                text,
                source_name: file.display().to_string(),
                applied_at: Utc::now(),
            };
            match aws.store.save_plan(&stored, expected).await? {
                SaveOutcome::Saved => {
                    outln!("stored plan version {} ({} targets) in table {}", expected + 1, plan.targets.len(), table.table)?;
                    Ok(())
                }
                SaveOutcome::Conflict => anyhow::bail!("someone stored another plan version meanwhile: run `headroom plan show`, then apply again"),
            }
        }
        PlanCommand::Show { table } => {
            let aws = Aws::connect(&table).await?;
            match aws.store.load_plan().await? {
                Some(p) => {
                    outln!(
                        "# version {} from {} applied {}\n{}",
                        p.version,
                        p.source_name,
                        p.applied_at.to_rfc3339(),
                        p.text
                    )?;
                    Ok(())
                }
                None => Err(crate::exit::not_found(format!(
                    "no plan stored in table {}: run `headroom plan apply FILE`",
                    table.table
                ))),
            }
        }
        PlanCommand::Preview {
            file,
            from,
            period,
            step,
        } => {
            let (_, plan) = read_plan(&file)?;
            out!(
                "{}",
                preview(&plan, from.unwrap_or_else(Utc::now), period, step)
            )?;
            Ok(())
        }
        PlanCommand::InitTable { table } => {
            let aws = Aws::connect(&table).await?;
            let created =
                headroom_adapters::create_table(&aws.clients.dynamo, &table.table).await?;
            outln!("table {}: {created:?}", table.table)?;
            Ok(())
        }
    }
}

/// Each target's MinCapacity changes over the period, from the plan's peaks alone, as the pure
/// decision computes them (configured lead time, no stored claims).
pub fn preview(plan: &Plan, from: DateTime<Utc>, period: Span, step: Span) -> String {
    let mut out = String::new();
    let state = TargetState::default();
    for target in &plan.targets {
        out.push_str(&format!("{}\n", target.id));
        let mut last: Option<u32> = None;
        let mut at = from;
        let end = from + period.to_chrono();
        while at < end {
            let d = decide(target, None, &state, target.lead_time, at);
            if last != Some(d.desired.min) {
                out.push_str(&format!(
                    "  {}  min {:>3}  {}\n",
                    at.format("%Y-%m-%d %H:%MZ"),
                    d.desired.min,
                    d.reasons[0]
                ));
                last = Some(d.desired.min);
            }
            at += step.to_chrono().max(chrono::Duration::seconds(1));
        }
    }
    out
}
