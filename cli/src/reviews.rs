//! `headroom reviews list|show|ack`: the scaling-policy reviews (`rv-`) the deployment watcher
//! opens when the model behind a managed target changes, the schedule reviews (`sr-`) the hourly
//! forecast refresh opens when a planned peak no longer matches the demand, and their
//! acknowledgement (a policy review's also flips the endpoint's `headroom:policy-review` tag to
//! `acked` once no other review of it is open).

use chrono::{SecondsFormat, Utc};
use headroom_adapters::dynamo_reviews::DynamoReviews;
use headroom_adapters::sagemaker_models::SageMakerModels;
use headroom_core::reconcile::load_plan;
use headroom_core::review::schedule::{is_schedule_review_id, ScheduleReview};
use headroom_core::review::{Review, ReviewStatus};
use headroom_core::usecase::reviews::{
    ack_review, ack_schedule, is_current, list_reviews, list_schedule_reviews,
};

use crate::aws::{Aws, TableArgs};

#[derive(clap::Subcommand, Debug)]
pub enum ReviewsCommand {
    /// List reviews of the managed targets (open and pending ones unless --all), newest first:
    /// policy reviews, then schedule reviews. A pending review is an approved model package
    /// that does not serve yet.
    List(ListArgs),
    /// Print one review in full (JSON). A policy review: old and new model, policies, bounds,
    /// decisions, warm-up, lint. A schedule review: the peak, its verdict and the evidence.
    Show(ShowArgs),
    /// Acknowledge a review once it was checked: the policies against the new model, or the
    /// planned peak against its verdict (rewriting the peak in the plan also retires it).
    Ack(AckArgs),
}

#[derive(clap::Args, Debug)]
pub struct ListArgs {
    /// Include acknowledged, superseded and withdrawn reviews.
    #[arg(long)]
    pub all: bool,
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub table: TableArgs,
}

#[derive(clap::Args, Debug)]
pub struct ShowArgs {
    /// The review id (`rv-...` or `sr-...`, from `headroom reviews list`).
    pub id: String,
    #[command(flatten)]
    pub table: TableArgs,
}

#[derive(clap::Args, Debug)]
pub struct AckArgs {
    /// The review id (`rv-...` or `sr-...`, from `headroom reviews list`).
    pub id: String,
    /// What was checked and decided (kept with the review).
    #[arg(long)]
    pub note: String,
    /// Who acknowledges (defaults to $USER).
    #[arg(long, env = "USER")]
    pub by: Option<String>,
    #[command(flatten)]
    pub table: TableArgs,
}

pub async fn run(cmd: ReviewsCommand) -> anyhow::Result<()> {
    match cmd {
        ReviewsCommand::List(args) => list(args).await,
        ReviewsCommand::Show(args) => show(args).await,
        ReviewsCommand::Ack(args) => ack(args).await,
    }
}

async fn list(args: ListArgs) -> anyhow::Result<()> {
    let aws = Aws::connect(&args.table).await?;
    let (_, plan) = load_plan(&aws.store).await?;
    let store = DynamoReviews::new(aws.clients.dynamo.clone(), args.table.table.clone());
    let reviews = list_reviews(&store, &plan, args.all).await?;
    let schedule = list_schedule_reviews(&store, &plan, args.all).await?;
    if args.json {
        // One array: policy reviews as stored, schedule reviews with `"kind": "schedule"`.
        let mut all: Vec<serde_json::Value> = reviews
            .iter()
            .map(serde_json::to_value)
            .collect::<Result<_, _>>()?;
        for r in &schedule {
            all.push(schedule_json(r)?);
        }
        outln!("{}", serde_json::to_string_pretty(&all)?)?;
        return Ok(());
    }
    if reviews.is_empty() && schedule.is_empty() {
        outln!("no {}reviews", if args.all { "" } else { "open " })?;
        return Ok(());
    }
    if !reviews.is_empty() {
        out!("{}", table(&reviews))?;
    }
    if !schedule.is_empty() {
        if !reviews.is_empty() {
            outln!()?;
        }
        let rows: Vec<(ScheduleReview, bool)> = schedule
            .into_iter()
            .map(|r| {
                let current = plan.target(&r.target).is_some_and(|t| is_current(&r, t));
                (r, current)
            })
            .collect();
        out!("{}", schedule_table(&rows))?;
    }
    Ok(())
}

/// A schedule review as JSON, marked as such.
fn schedule_json(r: &ScheduleReview) -> anyhow::Result<serde_json::Value> {
    let mut v = serde_json::to_value(r)?;
    if let Some(o) = v.as_object_mut() {
        o.insert("kind".into(), "schedule".into());
    }
    Ok(v)
}

async fn show(args: ShowArgs) -> anyhow::Result<()> {
    let aws = Aws::connect(&args.table).await?;
    let (_, plan) = load_plan(&aws.store).await?;
    let store = DynamoReviews::new(aws.clients.dynamo.clone(), args.table.table.clone());
    let not_found = || {
        crate::exit::not_found(format!("no review {} among the managed targets' reviews: `headroom reviews list --all` shows them", args.id))
    };
    if is_schedule_review_id(&args.id) {
        let review = list_schedule_reviews(&store, &plan, true)
            .await?
            .into_iter()
            .find(|r| r.id == args.id)
            .ok_or_else(not_found)?;
        outln!(
            "{}",
            serde_json::to_string_pretty(&schedule_json(&review)?)?
        )?;
        return Ok(());
    }
    let review = list_reviews(&store, &plan, true)
        .await?
        .into_iter()
        .find(|r| r.id == args.id)
        .ok_or_else(not_found)?;
    outln!("{}", serde_json::to_string_pretty(&review)?)?;
    Ok(())
}

async fn ack(args: AckArgs) -> anyhow::Result<()> {
    let aws = Aws::connect(&args.table).await?;
    let (_, plan) = load_plan(&aws.store).await?;
    let store = DynamoReviews::new(aws.clients.dynamo.clone(), args.table.table.clone());
    let by = args.by.unwrap_or_default();
    if is_schedule_review_id(&args.id) {
        let done = ack_schedule(&store, &plan, &args.id, &by, &args.note, Utc::now()).await?;
        outln!(
            "acknowledged {} ({}, peak {}: {}) by {}",
            done.id,
            done.target,
            done.peak,
            done.verdict.as_str(),
            by.trim()
        )?;
        return Ok(());
    }
    let endpoints = SageMakerModels::new(aws.clients.sagemaker.clone());
    let done = ack_review(
        &store,
        &endpoints,
        &plan,
        &args.id,
        &by,
        &args.note,
        Utc::now(),
    )
    .await?;
    outln!(
        "acknowledged {} ({}) by {}{}",
        done.review.id,
        done.review.target,
        by.trim(),
        done.tag
            .map(|t| format!("; endpoint tag headroom:policy-review={t}"))
            .unwrap_or_default()
    )?;
    Ok(())
}

/// A model in a few characters: the pipeline's label, else the model name, else the fingerprint
/// (`headroom reviews show` has the rest).
fn short(i: &headroom_core::identity::ModelIdentity) -> String {
    i.version_label
        .clone()
        .or_else(|| i.model_name.clone())
        .or_else(|| i.inference_component.clone())
        .unwrap_or_else(|| i.fingerprint().into())
}

/// The lint's findings by severity ("1 error, 2 warn"), "-" for a review stored before the lint.
fn lint_summary(r: &Review) -> String {
    use headroom_core::lint::Severity;
    let Some(lint) = &r.lint else {
        return "-".into();
    };
    let n = |s: Severity| lint.findings.iter().filter(|f| f.severity == s).count();
    let parts: Vec<String> = [Severity::Error, Severity::Warn, Severity::Info]
        .into_iter()
        .filter(|s| n(*s) > 0)
        .map(|s| format!("{} {}", n(s), s.as_str()))
        .collect();
    if parts.is_empty() {
        "no findings".into()
    } else {
        parts.join(", ")
    }
}

/// A plain-text table, one review a line.
pub fn table(reviews: &[Review]) -> String {
    let rows: Vec<[String; 8]> = reviews
        .iter()
        .map(|r| {
            let warmup = match (r.warmup.p90_s, r.warmup.samples) {
                (Some(p90), n) => format!("p90 {p90}s of {n}; lead {}s", r.warmup.lead_time_s),
                (None, _) => format!("no samples; lead {}s", r.warmup.lead_time_s),
            };
            [
                r.id.to_string(),
                r.status.as_str().to_owned(),
                r.target.to_string(),
                r.opened_at.to_rfc3339_opts(SecondsFormat::Secs, true),
                format!(
                    "{} -> {}",
                    r.previous
                        .as_ref()
                        .map_or_else(|| r.previous_fingerprint.to_string(), short),
                    // A pending review's model is the approved package, not serving yet.
                    match (&r.package, r.is_approval(), r.status) {
                        (Some(p), true, ReviewStatus::Withdrawn) => {
                            format!("package {} (withdrawn)", p.label())
                        }
                        (Some(p), true, _) => format!("package {} (approved)", p.label()),
                        _ => short(&r.current),
                    }
                ),
                r.policies.len().to_string(),
                warmup,
                lint_summary(r),
            ]
        })
        .collect();
    let header = [
        "ID",
        "STATUS",
        "TARGET",
        "OPENED",
        "CHANGE",
        "POLICIES",
        "WARM-UP (OLD MODEL)",
        "LINT",
    ];
    render(&header, &rows)
}

/// A plain-text table of schedule reviews with whether the plan still holds each peak as
/// reviewed (else its status reads `outdated`: the peak was rewritten or removed since).
pub fn schedule_table(reviews: &[(ScheduleReview, bool)]) -> String {
    let rows: Vec<[String; 7]> = reviews
        .iter()
        .map(|(r, current)| {
            [
                r.id.to_string(),
                if *current {
                    r.status.as_str()
                } else {
                    "outdated"
                }
                .to_owned(),
                r.target.to_string(),
                r.verdict_since.to_rfc3339_opts(SecondsFormat::Secs, true),
                r.peak.clone(),
                r.verdict.as_str().to_owned(),
                r.evidence.clone(),
            ]
        })
        .collect();
    let header = [
        "ID", "STATUS", "TARGET", "SINCE", "PEAK", "VERDICT", "EVIDENCE",
    ];
    render(&header, &rows)
}

/// Left-aligned columns two spaces apart; the last column is not padded.
fn render<const N: usize>(header: &[&str; N], rows: &[[String; N]]) -> String {
    let mut widths: Vec<usize> = header.iter().map(|h| h.len()).collect();
    for row in rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let line = |cells: Vec<&str>| {
        let mut out = String::new();
        for (i, (cell, w)) in cells.iter().zip(&widths).enumerate() {
            if i + 1 == cells.len() {
                out.push_str(cell);
            } else {
                out.push_str(&format!("{cell:<w$}  "));
            }
        }
        out.trim_end().to_owned() + "\n"
    };
    let mut out = line(header.to_vec());
    for row in rows {
        out.push_str(&line(row.iter().map(String::as_str).collect()));
    }
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // a test that cannot unwrap has failed
mod tests {
    use super::*;
    use chrono::DateTime;
    use headroom_core::identity::{ContainerIdentity, ModelIdentity};
    use headroom_core::model::{LeadSample, SampleSource};
    use headroom_core::review::{build_review, ReviewInput};

    fn identity(version: &str, label: Option<&str>) -> ModelIdentity {
        ModelIdentity {
            endpoint: Some("chat-prod".into()),
            endpoint_config: Some(format!("chat-prod-config-{version}")),
            inference_component: None,
            model_name: Some(format!("chat-llama-{version}")),
            model_arn: None,
            containers: vec![ContainerIdentity {
                image: Some(
                    "763104351884.dkr.ecr.us-east-1.amazonaws.com/djl-inference:0.29.0-lmi11"
                        .into(),
                ),
                model_data: Some(format!("s3://models/chat-llama/{version}/")),
                model_package: None,
            }],
            instance_type: Some("ml.g5.2xlarge".into()),
            version_label: label.map(str::to_owned),
            observed_at: DateTime::UNIX_EPOCH,
        }
    }

    #[test]
    fn the_table_shows_the_change_the_policies_and_the_old_warmup() {
        let plan = headroom_core::parse_plan(
            "t",
            "version = 1\n[[target]]\nresource_id = \"endpoint/chat-prod/variant/AllTraffic\"\nmin_capacity = 2\nmax_capacity = 8\n",
        )
        .unwrap();
        let old = identity("v7", None);
        let at = DateTime::parse_from_rfc3339("2026-03-14T09:12:00Z")
            .unwrap()
            .with_timezone(&Utc);
        let samples: Vec<LeadSample> = [300, 360, 420]
            .iter()
            .map(|s| LeadSample {
                ended_at: at,
                seconds: *s,
                model: Some(old.fingerprint()),
                source: SampleSource::AasActivity,
            })
            .collect();
        let review = build_review(ReviewInput {
            target: &plan.targets[0],
            at,
            trigger: "sagemaker:x".into(),
            endpoint_arn: None,
            tagged: false,
            previous_fingerprint: old.fingerprint(),
            previous: Some(old),
            current: identity("v8", Some("llama3-8b-2026-03-14.2")),
            policies: vec![],
            observed: None,
            decisions: vec![],
            samples: &samples,
            gaps: vec![],
            lint: Some(headroom_core::review::ReviewLint {
                findings: vec![headroom_core::lint::Finding {
                    rule: "target-value".into(),
                    severity: headroom_core::lint::Severity::Error,
                    target: "endpoint/chat-prod/variant/AllTraffic".into(),
                    subject: None,
                    evidence: "e".into(),
                    change: "TargetValue 70 -> 33".into(),
                }],
                ..Default::default()
            }),
        });
        let text = table(std::slice::from_ref(&review));
        eprintln!("{text}");
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 2);
        assert!(lines[0].starts_with("ID") && lines[0].contains("WARM-UP (OLD MODEL)"));
        assert!(lines[1].starts_with(review.id.as_str()));
        assert!(
            lines[1].contains("chat-llama-v7 -> llama3-8b-2026-03-14.2"),
            "{}",
            lines[1]
        );
        assert!(
            lines[1].contains("p90 420s of 3; lead 525s"),
            "{}",
            lines[1]
        );
        assert!(lines[1].ends_with("1 error"), "{}", lines[1]);
    }

    #[test]
    fn the_schedule_table_shows_the_verdict_and_marks_a_rewritten_peak_outdated() {
        use headroom_core::forecast::schedule_review::{PeakReview, Verdict};
        use headroom_core::review::schedule::{decide_schedule_review, ScheduleReviewAction};
        let plan = headroom_core::parse_plan(
            "t",
            "version = 1\n[[target]]\nresource_id = \"endpoint/shop/variant/AllTraffic\"\nmin_capacity = 1\nmax_capacity = 80\n[[target.peak]]\nname = \"morning\"\ncron = \"0 9 * * MON-FRI\"\nduration = \"2h\"\nfloor = 60\n",
        )
        .unwrap();
        let t = &plan.targets[0];
        let verdict = PeakReview {
            peak: "morning".into(),
            verdict: Verdict::Wasteful,
            occurrences: 5,
            evidence: "the busiest period used under half the floor 60 in 5 of 5 occurrences (as little as 33 %)".into(),
        };
        let at = DateTime::parse_from_rfc3339("2026-03-09T10:00:00Z")
            .unwrap()
            .with_timezone(&Utc);
        let ScheduleReviewAction::Open(r) =
            decide_schedule_review(None, &t.id, &t.peaks[0], &verdict, at)
        else {
            panic!("opened")
        };
        assert!(is_current(&r, t));
        let text = schedule_table(&[(r.clone(), true), (r.clone(), false)]);
        eprintln!("{text}");
        let lines: Vec<&str> = text.lines().collect();
        assert!(
            lines[0].starts_with("ID") && lines[0].contains("VERDICT"),
            "{}",
            lines[0]
        );
        assert!(
            lines[1].starts_with(r.id.as_str()) && lines[1].contains("  open  "),
            "{}",
            lines[1]
        );
        assert!(
            lines[1].contains("morning  wasteful  the busiest period"),
            "{}",
            lines[1]
        );
        assert!(lines[2].contains("  outdated  "), "{}", lines[2]);
    }
}
