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
    Validate {
        /// The plan file (TOML).
        file: PathBuf,
        /// Print JSON: `{"file", "valid", "targets", "issues": [{"field", "problem"}]}`.
        #[arg(long)]
        json: bool,
    },
    /// Validate and store a plan as the next version (refuses an invalid plan, writing nothing).
    Apply {
        /// The plan file (TOML).
        file: PathBuf,
        #[command(flatten)]
        table: TableArgs,
    },
    /// Print the stored plan and its version.
    Show {
        #[command(flatten)]
        table: TableArgs,
        /// Print JSON: `{"version", "source_name", "applied_at", "text"}`.
        #[arg(long)]
        json: bool,
    },
    /// Show how each target's MinCapacity would move over a period, from the plan alone (no AWS).
    Preview {
        /// The plan file (TOML).
        file: PathBuf,
        /// Start of the period (RFC 3339); default now.
        #[arg(long, value_parser = parse_instant)]
        from: Option<DateTime<Utc>>,
        /// Length of the period.
        #[arg(long, default_value = "24h", value_parser = parse_span)]
        period: Span,
        /// Resolution.
        #[arg(long, default_value = "1m", value_parser = parse_span)]
        step: Span,
        /// Print JSON: `{"targets": [{"target", "changes": [{"at", "min", "reason"}]}]}`.
        #[arg(long)]
        json: bool,
    },
    /// Print the plan with peaks and a forecast section suggested from the demand history.
    Suggest(crate::suggest::SuggestArgs),
    /// Create headroom's DynamoDB table (for local use; deployments create it from infra/).
    InitTable {
        #[command(flatten)]
        table: TableArgs,
    },
}

pub fn parse_span(text: &str) -> Result<Span, String> {
    Span::parse(text)
}

/// An instant on the command line: RFC 3339, and the message shows the form when it is not.
pub fn parse_instant(text: &str) -> Result<DateTime<Utc>, String> {
    // chrono's own reading (RFC 3339 and its near forms, as before); only the message is ours.
    text.trim()
        .parse::<DateTime<Utc>>()
        .map_err(|e| format!("write an RFC 3339 instant, e.g. 2026-12-03T09:00:00Z ({e})"))
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
        PlanCommand::Suggest(args) => crate::suggest::run(args).await,
        PlanCommand::Validate { file, json: true } => {
            let text = std::fs::read_to_string(&file)
                .with_context(|| format!("failed to read plan file {}", file.display()))?;
            let (valid, targets, issues) = match parse_plan(&file.display().to_string(), &text) {
                Ok(plan) => (
                    true,
                    plan.targets.iter().map(target_json).collect(),
                    Vec::new(),
                ),
                Err(e) => (
                    false,
                    Vec::new(),
                    e.issues
                        .iter()
                        .map(|i| serde_json::json!({ "field": i.field, "problem": i.problem }))
                        .collect(),
                ),
            };
            outln!(
                "{}",
                serde_json::to_string_pretty(&serde_json::json!({
                    "file": file.display().to_string(),
                    "valid": valid,
                    "targets": targets,
                    "issues": issues,
                }))?
            )?;
            if valid {
                Ok(())
            } else {
                // The JSON said it all; the exit code says "invalid input".
                Err(crate::exit::CliError {
                    exit: crate::exit::Exit::Invalid,
                    message: format!("plan {} is invalid", file.display()),
                }
                .into())
            }
        }
        PlanCommand::Validate { file, json: false } => {
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
        PlanCommand::Show { table, json } => {
            let aws = Aws::connect(&table).await?;
            match aws.store.load_plan().await? {
                Some(p) if json => {
                    outln!("{}", serde_json::to_string_pretty(&p)?)?;
                    Ok(())
                }
                Some(p) => {
                    outln!(
                        "# version {} from {} applied {}\n{}",
                        p.version,
                        p.source_name,
                        p.applied_at
                            .to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
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
            json,
        } => {
            let (_, plan) = read_plan(&file)?;
            let changes = preview_changes(&plan, from.unwrap_or_else(Utc::now), period, step);
            if json {
                let targets: Vec<_> = changes
                    .iter()
                    .map(|(target, changes)| {
                        serde_json::json!({
                            "target": target,
                            "changes": changes.iter().map(|c| serde_json::json!({
                                "at": c.at.to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
                                "min": c.min,
                                "reason": c.reason,
                            })).collect::<Vec<_>>(),
                        })
                    })
                    .collect();
                outln!(
                    "{}",
                    serde_json::to_string_pretty(&serde_json::json!({ "targets": targets }))?
                )?;
            } else {
                out!("{}", preview_text(&changes))?;
            }
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

/// One change of a target's MinCapacity in a preview.
pub struct PreviewChange {
    pub at: DateTime<Utc>,
    pub min: u32,
    pub reason: String,
}

/// Each target's MinCapacity changes over the period, from the plan's peaks alone, as the pure
/// decision computes them (configured lead time, no stored claims).
pub fn preview_changes(
    plan: &Plan,
    from: DateTime<Utc>,
    period: Span,
    step: Span,
) -> Vec<(String, Vec<PreviewChange>)> {
    let state = TargetState::default();
    let mut out = Vec::new();
    for target in &plan.targets {
        let mut changes = Vec::new();
        let mut last: Option<u32> = None;
        let mut at = from;
        let end = from + period.to_chrono();
        while at < end {
            let d = decide(target, None, &state, target.lead_time, at);
            if last != Some(d.desired.min) {
                changes.push(PreviewChange {
                    at,
                    min: d.desired.min,
                    reason: d.reasons[0].clone(),
                });
                last = Some(d.desired.min);
            }
            at += step.to_chrono().max(chrono::Duration::seconds(1));
        }
        out.push((target.id.to_string(), changes));
    }
    out
}

/// The preview as text: one block per target, one line per change.
pub fn preview_text(changes: &[(String, Vec<PreviewChange>)]) -> String {
    let mut out = String::new();
    for (target, changes) in changes {
        out.push_str(&format!("{target}\n"));
        for c in changes {
            out.push_str(&format!(
                "  {}  min {:>3}  {}\n",
                c.at.format("%Y-%m-%d %H:%MZ"),
                c.min,
                c.reason
            ));
        }
    }
    out
}

/// What `plan validate` prints about one target, as JSON.
fn target_json(t: &headroom_core::TargetPlan) -> serde_json::Value {
    serde_json::json!({
        "target": t.id.to_string(),
        "min_capacity": t.min_capacity,
        "max_capacity": t.max_capacity,
        "lead_time": t.lead_time.to_string(),
        "peaks": t.peaks.len(),
        "guard": t.guard.is_some(),
        "wake": t.wake.is_some(),
    })
}
