//! `headroom lint [TARGET] [--json]`: each managed target's scaling policies judged against its
//! endpoint and a window of its measurements (`headroom_core::usecase::lint`). Read-only. The
//! exit status is 6 when a finding of severity `error` exists, so a pipeline can gate on it.

use chrono::{SecondsFormat, Utc};
use headroom_adapters::aas_history::AasHistory;
use headroom_adapters::sagemaker_models::SageMakerModels;
use headroom_adapters::{CloudWatchDemand, CloudWatchLint};
use headroom_core::lint::Severity;
use headroom_core::usecase::lint::{run as lint, LintError, LintReport};
use headroom_core::usecase::Ports;
use headroom_core::{ScalableTargetId, Span};

use crate::aws::{Aws, TableArgs};
use crate::exit::{CliError, Exit};

#[derive(clap::Args, Debug)]
pub struct LintArgs {
    /// Only this target (`endpoint/E/variant/V` or `inference-component/IC`); all by default.
    pub target: Option<ScalableTargetId>,
    /// How far back the measurements go (ModelLatency, concurrency, invocations).
    #[arg(long, default_value = "1d", value_parser = parse_window)]
    pub window: Span,
    /// Print the report as JSON (`kind: headroom.lint/v1`).
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub table: TableArgs,
}

fn parse_window(text: &str) -> Result<Span, String> {
    let span = Span::parse(text).map_err(|e| e.to_string())?;
    // CloudWatch keeps 1-minute datapoints 15 days; a day or two is what a lint wants.
    if span.as_secs() < 300 || span.as_secs() > 15 * 86_400 {
        return Err(format!("{text} must be between 5m and 15d"));
    }
    Ok(span)
}

pub async fn run(args: LintArgs) -> anyhow::Result<()> {
    let aws = Aws::connect(&args.table).await?;
    let history = AasHistory::new(aws.clients.aas.clone());
    let endpoints = SageMakerModels::new(aws.clients.sagemaker.clone());
    let demand = CloudWatchLint::new(
        CloudWatchDemand::new(aws.clients.cloudwatch.clone()),
        aws.clients.cloudwatch.clone(),
    );
    let ports = Ports::new(&aws.aas, &aws.store)
        .with_history(&history)
        .with_endpoints(&endpoints)
        .with_demand(&demand);
    // To the second: the window is printed, and nanoseconds only get in the way.
    let now = chrono::SubsecRound::trunc_subsecs(Utc::now(), 0);
    let report = lint(ports, args.target.as_ref(), now, args.window)
        .await
        .map_err(lint_error)?;
    if args.json {
        outln!("{}", serde_json::to_string_pretty(&report)?)?;
    } else {
        print_table(&report)?;
    }
    let errors = count(&report, Severity::Error);
    if errors > 0 {
        return Err(CliError {
            exit: Exit::Findings,
            message: format!(
                "{errors} finding(s) of severity error: change what they say, then lint again"
            ),
        }
        .into());
    }
    Ok(())
}

/// The port error itself when there is one, so the exit code says which class of AWS failure.
fn lint_error(e: LintError) -> anyhow::Error {
    match e {
        LintError::Plan(p) => p.into(),
        LintError::Unmanaged { target } => crate::exit::not_found(format!(
            "{target} is not managed by the plan: `headroom plan show` lists the targets"
        )),
        e @ LintError::Port { .. } => e.into(),
    }
}

fn count(report: &LintReport, severity: Severity) -> usize {
    report
        .targets
        .iter()
        .flat_map(|t| &t.findings)
        .filter(|f| f.severity == severity)
        .count()
}

fn print_table(report: &LintReport) -> anyhow::Result<()> {
    outln!(
        "measured {} .. {}",
        report.from.to_rfc3339_opts(SecondsFormat::Secs, true),
        report.to.to_rfc3339_opts(SecondsFormat::Secs, true)
    )?;
    for t in &report.targets {
        outln!()?;
        let measured = t.measured.as_ref().map_or_else(
            || "no measurements".to_owned(),
            |w| {
                let show = |v: Option<f64>| v.map_or_else(|| "-".to_owned(), |v| format!("{v:.2}"));
                format!(
                    "ModelLatency mean {}, concurrency max {}, invocations/instance/min {}",
                    w.model_latency_mean_s
                        .map_or_else(|| "-".to_owned(), headroom_core::lint::secs),
                    show(w.concurrency_max),
                    show(w.invocations_per_instance_per_min)
                )
            },
        );
        outln!("{} ({:?}): {measured}", t.target, t.serving)?;
        if t.findings.is_empty() {
            outln!("  no findings")?;
        }
        for f in &t.findings {
            outln!(
                "  {:<5}  {:<22} {}",
                f.severity.as_str(),
                f.rule,
                f.subject.as_deref().unwrap_or("-")
            )?;
            outln!("         evidence: {}", f.evidence)?;
            outln!("         change:   {}", f.change)?;
        }
        for g in &t.gaps {
            outln!("  gap: {g}")?;
        }
    }
    outln!()?;
    outln!(
        "{} error(s), {} warning(s), {} info",
        count(report, Severity::Error),
        count(report, Severity::Warn),
        count(report, Severity::Info)
    )?;
    Ok(())
}
