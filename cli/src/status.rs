//! `headroom status [TARGET] [--json]`: what headroom sees and wants for each managed target:
//! AAS bounds, the decision it would make now and why, live claims, pause, drift, the lead time in
//! use and where it came from, wake latency, and (for one target) its recent decisions.

use chrono::{DateTime, SecondsFormat, Utc};
use headroom_core::decide::decide;
use headroom_core::forecast::window_score::WindowScore;
use headroom_core::ids::Dimension;
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
            let lead = lead_time(target, &state.lead_samples, state.model.as_ref());
            let d = decide(target, seen, &state, lead.span, now);
            let mut latencies: Vec<i64> = state.wake_latencies.iter().map(|w| w.seconds).collect();
            latencies.sort_unstable();
            let mut row = json!({
                "target": target.id.to_string(),
                "dimension": target.id.dimension().as_str(),
                "unit": target.id.dimension().unit(2),
                "observed": d.observed,
                "desired": d.desired,
                "in_step": seen.is_some_and(|o| o.bounds() == d.desired),
                "action_now": d.action,
                "reasons": d.reasons,
                "claims": d.claims,
                "paused": state.pause,
                "drift": state.drift,
                "last_error": state.last_error,
                "lead_time": lead,
                "model": state.model,
                "wake_latency": {
                    "count": latencies.len(),
                    "last_seconds": state.wake_latencies.last().map(|w| w.seconds),
                    "median_seconds": latencies.get(latencies.len() / 2),
                    "pending_since": state.wake_pending_since,
                },
            });
            if let Some(policy) = &target.forecast {
                row["forecast"] =
                    serde_json::to_value(headroom_core::forecast::summary::summarize(
                        policy,
                        state.forecast.as_deref(),
                        lead.span,
                        now,
                    ))?;
            }
            if args.target.is_some() {
                row["recent_decisions"] = Value::Array(
                    aws.store
                        .recent_log(&target.id, args.decisions)
                        .await?
                        .into_iter()
                        .map(|entry| entry.body)
                        .collect(),
                );
            }
            rows.push(row);
        }
    }
    if args.json {
        let mut answer = json!({ "plan_version": version, "targets": rows });
        times_to_seconds(&mut answer);
        outln!("{}", serde_json::to_string_pretty(&answer)?)?;
    } else {
        outln!(
            "plan version {version}, {} target(s), at {}",
            rows.len(),
            now.to_rfc3339_opts(SecondsFormat::Secs, true)
        )?;
        for row in &rows {
            print_row(row)?;
        }
    }
    Ok(())
}

fn print_row(row: &Value) -> std::io::Result<()> {
    outln!("{}", row_text(row))
}

/// One target's block of `headroom status`.
fn row_text(row: &Value) -> String {
    use std::fmt::Write as _;
    let mut out = String::new();
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
    let _ = writeln!(out, "\n{}", row["target"].as_str().unwrap_or("?"));
    // A variant's resource id reads like an instance count: say when it is not one.
    if row["dimension"] == Dimension::VariantProvisionedConcurrency.as_str() {
        let _ = writeln!(
            out,
            "  counts:    {} ({})",
            row["unit"].as_str().unwrap_or(""),
            row["dimension"].as_str().unwrap_or("")
        );
    }
    let _ = writeln!(out, "  AAS now:   {}", bounds(&row["observed"]));
    // Why AAS differs from what headroom wants: paused, failing, or simply not yet reconciled.
    let state_note = if !row["paused"].is_null() {
        "  <- PAUSED: headroom leaves AAS as it is".to_owned()
    } else if !row["last_error"].is_null() {
        format!("  <- FAILING since {}", secs(&row["last_error"]["since"]))
    } else if row["in_step"] == true {
        String::new()
    } else {
        "  <- will change at the next reconcile".to_owned()
    };
    let _ = writeln!(out, "  headroom:  {}{state_note}", bounds(&row["desired"]));
    if !row["last_error"].is_null() {
        let _ = writeln!(
            out,
            "  ERROR:     {}",
            row["last_error"]["message"].as_str().unwrap_or("")
        );
    }
    for reason in row["reasons"].as_array().into_iter().flatten() {
        let _ = writeln!(out, "    because {}", reason.as_str().unwrap_or(""));
    }
    for claim in row["claims"].as_array().into_iter().flatten() {
        let _ = writeln!(
            out,
            "  claim {} floor {} ({} until {})",
            claim["source"].as_str().unwrap_or("?"),
            claim["floor"],
            claim["phase"].as_str().unwrap_or(""),
            secs(&claim["until"])
        );
    }
    if !row["paused"].is_null() {
        let _ = writeln!(
            out,
            "  PAUSED until {}: {}",
            secs(&row["paused"]["until"]),
            row["paused"]["reason"].as_str().unwrap_or("")
        );
    }
    if !row["drift"].is_null() {
        let _ = writeln!(
            out,
            "  DRIFT seen {}: AAS had {} while headroom had set {}",
            secs(&row["drift"]["detected_at"]),
            bounds(&row["drift"]["observed"]),
            bounds(&row["drift"]["expected"])
        );
    }
    let _ = writeln!(
        out,
        "  lead time: {} ({})",
        row["lead_time"]["span"].as_str().unwrap_or(""),
        row["lead_time"]["detail"].as_str().unwrap_or("")
    );
    if let Some(model) = row["model"].as_str() {
        let _ = writeln!(out, "  model:     {model}");
    }
    let f = &row["forecast"];
    if !f.is_null() {
        let mode = if f["mode"] == "forecast_only" {
            " (forecast only: changes nothing)"
        } else {
            ""
        };
        match f["unavailable"].as_str() {
            Some(why) => {
                let _ = writeln!(out, "  forecast:  none{mode}: {why}");
            }
            None => {
                let next: Vec<String> = f["next"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(|p| format!("{} -> {}", secs(&p[0]), p[1]))
                    .collect();
                let _ = writeln!(
                    out,
                    "  forecast:  floor now {}{mode}, margin x{:.2}{}, {} day(s) of history, refreshed {}; next {}",
                    f["floor_now"].as_u64().map_or("none".to_owned(), |n| n.to_string()),
                    f["margin"].as_f64().unwrap_or(1.0),
                    headroom_core::forecast::level::level_note(f["level"].as_f64().unwrap_or(1.0)),
                    f["history_days"],
                    secs(&f["computed_at"]),
                    next.join(", ")
                );
            }
        }
        if let Some(failed) = f["refresh_failed"].as_object() {
            let code = failed["code"]
                .as_str()
                .map_or(String::new(), |c| format!(" ({c})"));
            let _ = writeln!(
                out,
                "  forecast refresh failed {}{code}: {}; the tick tries again an hour after it",
                secs(&failed["at"]),
                failed["error"].as_str().unwrap_or("")
            );
        }
        for r in f["schedule"].as_array().into_iter().flatten() {
            let _ = writeln!(
                out,
                "  schedule review: peak {} {}: {}",
                r["peak"].as_str().unwrap_or(""),
                r["verdict"].as_str().unwrap_or("").to_uppercase(),
                r["evidence"].as_str().unwrap_or("")
            );
        }
        for w in f["windows"].as_array().into_iter().flatten() {
            if let Ok(score) = serde_json::from_value::<WindowScore>(w.clone()) {
                let _ = writeln!(out, "  scored: {}", score.describe());
            }
        }
        let sc = &f["score"];
        if sc["slots"].as_u64().unwrap_or(0) > 0 {
            let _ = writeln!(
                out,
                "  forecast score: {} slot(s), {} minute(s) under-forecast, {:.1} instance-hour(s) over",
                sc["slots"],
                sc["under_minutes"],
                sc["over_instance_hours"].as_f64().unwrap_or(0.0)
            );
        }
    }
    let wake = &row["wake_latency"];
    if wake["count"].as_u64().unwrap_or(0) > 0 || !wake["pending_since"].is_null() {
        let _ = writeln!(
            out,
            "  wake latency: last {}s, median {}s over {} wake(s){}",
            wake["last_seconds"],
            wake["median_seconds"],
            wake["count"],
            if wake["pending_since"].is_null() {
                String::new()
            } else {
                format!(", waking since {}", secs(&wake["pending_since"]))
            }
        );
    }
    for d in row["recent_decisions"].as_array().into_iter().flatten() {
        let _ = writeln!(
            out,
            "  decision {} [{}] min {} — {}",
            secs(&d["at"]),
            d["trigger"].as_str().unwrap_or(""),
            d["desired"]["min"],
            d["reasons"][0].as_str().unwrap_or("")
        );
    }
    out.trim_end().to_owned()
}

/// An RFC 3339 time from the JSON, to the second (the stored times carry nanoseconds).
fn secs(v: &Value) -> String {
    let text = v.as_str().unwrap_or("");
    DateTime::parse_from_rfc3339(text).map_or_else(
        |_| text.to_owned(),
        |t| {
            t.with_timezone(&Utc)
                .to_rfc3339_opts(SecondsFormat::Secs, true)
        },
    )
}

/// Every RFC 3339 time in `v`, to the second, as the text output shows them.
fn times_to_seconds(v: &mut Value) {
    match v {
        Value::String(text) if text.contains('T') && DateTime::parse_from_rfc3339(text).is_ok() => {
            *text = secs(&Value::String(std::mem::take(text)));
        }
        Value::Array(items) => items.iter_mut().for_each(times_to_seconds),
        Value::Object(fields) => fields.values_mut().for_each(times_to_seconds),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_times_are_to_the_second_and_other_text_is_left_alone() {
        let mut v = json!({
            "since": "2026-03-14T09:00:00.123456789Z",
            "claims": [{ "until": "2026-03-14T10:00:00.5+01:00" }],
            "reason": "not a time",
        });
        times_to_seconds(&mut v);
        assert_eq!(v["since"], "2026-03-14T09:00:00Z");
        assert_eq!(v["claims"][0]["until"], "2026-03-14T09:00:00Z");
        assert_eq!(v["reason"], "not a time");
    }

    fn row(extra: Value) -> Value {
        let mut row = json!({
            "target": "endpoint/chat/variant/AllTraffic",
            "observed": { "min": 1, "max": 4, "suspend_scale_in": false },
            "desired": { "min": 2, "max": 4, "suspend_scale_in": false },
            "in_step": false,
            "reasons": ["min 2 is the plan's base minimum"],
            "claims": [],
            "paused": null, "drift": null, "last_error": null,
            "lead_time": { "span": "15m", "detail": "configured" },
            "wake_latency": { "count": 0, "pending_since": null },
        });
        for (k, v) in extra.as_object().into_iter().flatten() {
            row[k] = v.clone();
        }
        row
    }

    #[test]
    fn the_scored_windows_are_shown() {
        let text = row_text(&row(json!({ "forecast": {
            "mode": "active", "computed_at": "2026-03-06T08:00:00Z", "margin": 1.0,
            "history_days": 5, "floor_now": 2, "next": [],
            "score": { "slots": 0, "under_minutes": 0, "over_instance_hours": 0.0 },
            "windows": [{ "window": "peak:morning", "start": "2026-03-05T09:00:00Z",
                "end": "2026-03-05T10:00:00Z", "floor": 20, "busiest": 30, "floor_used_pct": 150,
                "minutes_above_floor": 10, "ready_s": 300 }],
        }})));
        assert!(text.contains("  scored: window peak:morning 2026-03-05T09:00Z: floor 20 used 150 % (busiest need 30), 10 min above the floor, in service only 300 s after the start: raise the lead time"), "{text}");
    }

    #[test]
    fn the_forecast_says_what_it_claims_or_why_there_is_none() {
        let text = row_text(&row(json!({ "forecast": {
            "mode": "active", "computed_at": "2026-03-06T08:00:00.123456Z", "margin": 1.1,
            "history_days": 5, "floor_now": 20, "next": [["2026-03-06T09:10:00Z", 22]],
            "score": { "slots": 12, "under_minutes": 5, "over_instance_hours": 1.5 },
        }})));
        assert!(text.contains("forecast:  floor now 20, margin x1.10, 5 day(s) of history, refreshed 2026-03-06T08:00:00Z; next 2026-03-06T09:10:00Z -> 22"), "{text}");
        // Today's level shows only when it moved the slots.
        let busy = row_text(&row(json!({ "forecast": {
            "mode": "active", "computed_at": "2026-03-06T08:00:00Z", "margin": 1.1, "level": 1.15,
            "history_days": 5, "floor_now": 23, "next": [], "score": { "slots": 0 },
        }})));
        assert!(
            busy.contains("margin x1.10, today's level x1.15, 5 day(s)"),
            "{busy}"
        );
        assert!(
            text.contains(
                "forecast score: 12 slot(s), 5 minute(s) under-forecast, 1.5 instance-hour(s) over"
            ),
            "{text}"
        );
        let none = row_text(&row(json!({ "forecast": {
            "mode": "forecast_only", "unavailable": "only 2 whole day(s) of demand history",
            "margin": 1.0, "history_days": 2, "next": [], "score": { "slots": 0 },
        }})));
        assert!(
            none.contains("forecast:  none (forecast only: changes nothing): only 2 whole day(s)"),
            "{none}"
        );
    }

    #[test]
    fn a_refresh_that_failed_for_good_is_shown_with_its_code() {
        let text = row_text(&row(json!({ "forecast": {
            "mode": "active", "computed_at": "2026-03-06T08:00:00Z",
            "unavailable": "the demand history could not be read",
            "margin": 1.0, "history_days": 0, "next": [], "score": { "slots": 0 },
            "refresh_failed": { "at": "2026-03-06T08:00:00Z",
                "error": "failed to read the demand history: AccessDeniedException: not authorized to perform cloudwatch:GetMetricData",
                "code": "AccessDeniedException" },
        }})));
        assert!(
            text.contains("  forecast:  none: the demand history could not be read\n"),
            "{text}"
        );
        assert!(text.contains("  forecast refresh failed 2026-03-06T08:00:00Z (AccessDeniedException): failed to read the demand history: AccessDeniedException: not authorized to perform cloudwatch:GetMetricData; the tick tries again an hour after it"), "{text}");
    }

    #[test]
    fn a_provisioned_concurrency_target_says_what_it_counts() {
        let text = row_text(&row(json!({
            "target": "endpoint/faq-bot/variant/AllTraffic",
            "dimension": "sagemaker:variant:DesiredProvisionedConcurrency",
            "unit": "provisioned concurrent invocations",
        })));
        assert!(
            text.contains("  counts:    provisioned concurrent invocations (sagemaker:variant:DesiredProvisionedConcurrency)"),
            "{text}"
        );
        let instances = row_text(&row(json!({
            "dimension": "sagemaker:variant:DesiredInstanceCount", "unit": "instances",
        })));
        assert!(!instances.contains("counts:"), "{instances}");
    }

    #[test]
    fn a_failing_target_says_so_with_its_error_and_since_when() {
        let text = row_text(&row(json!({ "last_error": {
            "since": "2026-03-14T09:00:00.123456789Z",
            "message": "failed to register the scalable target: AccessDeniedException: no",
            "retryable": false,
        }})));
        assert!(
            text.contains("FAILING since 2026-03-14T09:00:00Z"),
            "{text}"
        );
        assert!(text.contains("AccessDeniedException"), "{text}");
        assert!(
            !text.contains("will change at the next reconcile"),
            "{text}"
        );
    }

    #[test]
    fn a_paused_target_and_drift_are_shown_as_such() {
        let text = row_text(&row(json!({
            "paused": { "until": "2026-03-14T12:00:00.5Z", "reason": "load test" },
            "drift": {
                "detected_at": "2026-03-14T09:30:00.25Z",
                "observed": { "min": 5, "max": 4, "suspend_scale_in": false },
                "expected": { "min": 2, "max": 4, "suspend_scale_in": false },
            },
        })));
        assert!(text.contains("<- PAUSED"), "{text}");
        assert!(
            text.contains("PAUSED until 2026-03-14T12:00:00Z: load test"),
            "{text}"
        );
        assert!(text.contains("DRIFT seen 2026-03-14T09:30:00Z"), "{text}");
        assert!(
            !text.contains("will change at the next reconcile"),
            "{text}"
        );
        let plain = row_text(&row(json!({})));
        assert!(
            plain.contains("will change at the next reconcile"),
            "{plain}"
        );
    }

    #[test]
    fn times_print_to_the_second() {
        assert_eq!(
            secs(&json!("2026-03-14T10:17:31.887654321Z")),
            "2026-03-14T10:17:31Z"
        );
        assert_eq!(
            secs(&json!("2026-03-14T10:17:31+01:00")),
            "2026-03-14T09:17:31Z"
        );
        assert_eq!(secs(&Value::Null), "");
    }
}
