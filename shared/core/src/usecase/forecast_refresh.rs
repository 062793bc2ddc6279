//! The hourly forecast refresh, a use case of the tick: for the targets whose stored forecast is
//! due (the tick finds them in the states it already read, so a minute without a refresh costs
//! nothing extra), read their demand history in as few GetMetricData calls as the limits allow,
//! build each forecast and store it through the ordinary reconcile, which applies the forecast
//! claim at once. Idempotent: the change is keyed by the refresh minute, and a forecast that is no
//! longer due is left alone.

use chrono::{DateTime, Utc};
use serde::Serialize;

use crate::forecast::build::{forecast_with_hindcast, is_due, with_refresh_failed};
use crate::forecast::schedule_review::{review_schedule, PeakReview};
use crate::forecast::window_score::{keep_newest, score_windows, WindowScore, KEPT_SCORES};
use crate::forecast::DemandSeries;
use crate::forecast::RefreshFailed;
use crate::ids::ScalableTargetId;
use crate::lead_time::lead_time;
use crate::metrics_port::{
    demand_source, settled_end, targets_per_call_of, DemandHistory, DemandQuery,
};
use crate::plan::{Plan, TargetPlan};
use crate::ports::{ScalingTargets, StateStore};
use crate::reconcile::{reconcile_target, EventChange};

/// Forecasts one tick refreshes at most; the others stay due and the next ticks take them (a
/// refreshed forecast is not due again for an hour, so none waits long). Every forecast of a
/// fleet falls due in the same minute an hour after the first refresh; refreshed in one tick,
/// 500 would be 20 GetMetricData calls of up to 100,800 datapoints and 500 reconciles on top
/// of the tick's own pass, within the function's 60 s. A hundred is 4 calls and a fifth of the
/// writes, and 500 targets are all refreshed within five minutes of falling due.
pub const MAX_REFRESHES_PER_TICK: usize = 100;

/// What one refresh did.
#[derive(Debug, Default, Serialize)]
pub struct RefreshReport {
    /// GetMetricData calls made.
    pub metric_calls: usize,
    pub refreshed: Vec<String>,
    /// Targets with too little history, and why.
    pub unavailable: Vec<(String, String)>,
    pub errors: Vec<RefreshFailure>,
    /// The planned peaks' verdicts of each refreshed target, for the schedule reviews.
    #[serde(skip)]
    pub verdicts: Vec<(ScalableTargetId, Vec<PeakReview>)>,
}

#[derive(Debug, Serialize)]
pub struct RefreshFailure {
    pub target: String,
    pub error: String,
    /// AWS's error code, when AWS answered.
    pub code: Option<String>,
    pub retryable: bool,
}

/// Refreshes the forecasts of `due` (targets of `plan` with a `[target.forecast]`).
pub async fn refresh_forecasts<M: DemandHistory, A: ScalingTargets, S: StateStore>(
    metrics: &M,
    aas: &A,
    store: &S,
    plan: &Plan,
    due: &[ScalableTargetId],
    now: DateTime<Utc>,
) -> RefreshReport {
    let mut report = RefreshReport::default();
    let targets: Vec<&TargetPlan> = due
        .iter()
        .filter_map(|id| plan.target(id))
        .filter(|t| t.forecast.is_some())
        .collect();
    // Targets that read the same window at the same period, with as many queries each, share
    // calls: (history seconds, period seconds, queries per target).
    type CallShape = (i64, i64, usize);
    let mut groups: Vec<(CallShape, Vec<&TargetPlan>)> = Vec::new();
    for t in targets {
        let p = t.forecast.as_ref().expect("filtered on forecast");
        let queries = demand_source(&t.id, p.demand).queries();
        let key = (p.history.as_secs(), p.resolution.as_secs(), queries);
        match groups.iter_mut().find(|g| g.0 == key) {
            Some(g) => g.1.push(t),
            None => groups.push((key, vec![t])),
        }
    }
    for ((history, period, queries), members) in groups {
        let period = crate::duration::Span::seconds(period);
        // Both ends on period boundaries: CloudWatch labels a datapoint with its period's start,
        // and the series' slots are counted from `from`. The newest period read is one whose
        // datapoints are all published: one still filling would read low.
        let aligned_to = settled_end(now, period);
        let from = aligned_to - chrono::Duration::seconds(history);
        for chunk in members.chunks(targets_per_call_of(from, aligned_to, period, queries)) {
            let ids: Vec<ScalableTargetId> = chunk.iter().map(|t| t.id.clone()).collect();
            let queries: Vec<DemandQuery> = chunk
                .iter()
                .map(|t| DemandQuery {
                    target: t.id.clone(),
                    kind: t.forecast.as_ref().map(|f| f.demand).unwrap_or_default(),
                })
                .collect();
            report.metric_calls += 1;
            match metrics.demand(&queries, from, aligned_to, period).await {
                Ok(all) => {
                    for (t, series) in chunk.iter().zip(all) {
                        store_forecast(aas, store, t, &series, now, &mut report).await;
                    }
                }
                Err(e) => {
                    for (id, t) in ids.iter().zip(chunk) {
                        let failure = RefreshFailure {
                            target: id.to_string(),
                            code: e.code().map(str::to_owned),
                            error: format!("failed to read the demand history: {e}"),
                            retryable: e.is_retryable(),
                        };
                        // A retryable failure is tried again by the next tick; one that
                        // retrying cannot mend is stored, for status and to wait an hour.
                        if !failure.retryable {
                            store_failure(aas, store, t, &failure, now).await;
                        }
                        report.errors.push(failure);
                    }
                }
            }
        }
    }
    report
}

/// Marks `target`'s forecast with a refresh that failed for good, through the ordinary reconcile
/// (keyed by the minute, so a retried tick writes it once). If even that write fails, the next
/// tick finds the forecast due and tries the refresh again.
async fn store_failure<A: ScalingTargets, S: StateStore>(
    aas: &A,
    store: &S,
    target: &TargetPlan,
    failure: &RefreshFailure,
    now: DateTime<Utc>,
) {
    let Some(policy) = &target.forecast else {
        return;
    };
    let apply = |state: &mut crate::state::TargetState| -> Vec<String> {
        if !is_due(state.forecast.as_deref(), now) {
            return Vec::new();
        }
        let failed = RefreshFailed {
            at: now,
            error: failure.error.clone(),
            code: failure.code.clone(),
        };
        let next = with_refresh_failed(state.forecast.as_deref(), policy.slot.as_secs(), failed);
        state.forecast = Some(std::sync::Arc::new(next));
        vec![format!(
            "forecast not refreshed: {}; the next attempt in an hour",
            failure.error
        )]
    };
    let change = EventChange {
        key: format!("forecast-failed@{}", now.format("%Y-%m-%dT%H:%MZ")),
        apply: &apply,
    };
    if let Err(e) = reconcile_target(aas, store, target, now, "forecast", Some(&change)).await {
        tracing::warn!(target_id = %target.id, error = %e, "could not store the failed forecast refresh; the next tick tries again");
    }
}

async fn store_forecast<A: ScalingTargets, S: StateStore>(
    aas: &A,
    store: &S,
    target: &TargetPlan,
    series: &DemandSeries,
    now: DateTime<Utc>,
    report: &mut RefreshReport,
) {
    let Some(policy) = &target.forecast else {
        return;
    };
    let apply = |state: &mut crate::state::TargetState| -> Vec<String> {
        if !is_due(state.forecast.as_deref(), now) {
            return Vec::new();
        }
        let lead = lead_time(target, &state.lead_samples, state.model.as_ref()).span;
        let (mut next, hindcast) =
            forecast_with_hindcast(policy, series, lead, now, state.forecast.as_deref());
        // Peaks are judged beside the forecast only where its claim takes part in arbitration.
        let claiming = hindcast
            .as_ref()
            .filter(|_| policy.mode == crate::plan::ForecastMode::Active);
        next.schedule = review_schedule(
            target,
            series,
            policy.invocations_per_instance,
            claiming,
            now,
        );
        // The planned windows that ended since the last refresh, scored from the same history.
        let previous = state.forecast.as_deref();
        let after = previous
            .and_then(|f| f.windows_scored_until)
            .unwrap_or(series.start);
        let scored = score_windows(
            target,
            series,
            &state.lead_samples,
            policy.invocations_per_instance,
            lead.to_chrono(),
            after,
        );
        let mut notes: Vec<String> = scored
            .iter()
            .rev()
            .take(KEPT_SCORES)
            .rev()
            .map(WindowScore::describe)
            .collect();
        next.windows = keep_newest(
            previous.map(|f| f.windows.clone()).unwrap_or_default(),
            scored,
        );
        next.windows_scored_until = Some(after.max(series.end()));
        let note = match &next.unavailable {
            Some(why) => format!("no forecast: {why}"),
            None => format!(
                "forecast refreshed: {} slots, margin x{:.2}{}, {} days of history{}",
                next.slots.len(),
                next.margin,
                crate::forecast::level::level_note(next.level),
                next.history_days,
                if next.same_kind {
                    ""
                } else {
                    " (too few days of this kind: all days used)"
                }
            ),
        };
        state.forecast = Some(std::sync::Arc::new(next));
        notes.insert(0, note);
        notes
    };
    let change = EventChange {
        key: format!("forecast@{}", now.format("%Y-%m-%dT%H:%MZ")),
        apply: &apply,
    };
    match reconcile_target(aas, store, target, now, "forecast", Some(&change)).await {
        Ok(outcome) => {
            let Some(forecast) = outcome.decision.next_state.forecast.as_ref() else {
                return;
            };
            if !forecast.schedule.is_empty() {
                report
                    .verdicts
                    .push((target.id.clone(), forecast.schedule.clone()));
            }
            match &forecast.unavailable {
                Some(why) => report
                    .unavailable
                    .push((target.id.to_string(), why.clone())),
                None => report.refreshed.push(target.id.to_string()),
            }
        }
        Err(e) => report.errors.push(RefreshFailure {
            target: target.id.to_string(),
            code: e.aws_code().map(str::to_owned),
            retryable: e.is_retryable(),
            error: e.to_string(),
        }),
    }
}
