//! `plan suggest --days N` (the CloudWatch form): each target's demand over the last N days from
//! its CloudWatch metric (`metrics_port::DemandHistory`), then the same suggestion as the offline
//! form (`suggest::plan`). Only where the series comes from differs.
//!
//! The history is read as the hourly forecast refresh reads it: each target's demand source
//! (`demand_source`: `Invocations`, or the backlog or the requests in flight where the base plan
//! or the tracking policy says so), at 5-minute periods, as many targets per GetMetricData call
//! as the call's limits allow (`targets_per_call_of`): 25 invocation targets per call over 14
//! days, 5 over 63; a kind that takes more queries a target gets calls of its own.

use chrono::{DateTime, Duration, Utc};

use crate::deploy_ports::ScalingHistory;
use crate::duration::Span;
use crate::forecast::DemandSeries;
use crate::metrics_port::{
    demand_source, period_start, settled_end, targets_per_call_of, DemandHistory, DemandQuery,
};
use crate::plan::forecast::DemandKind;
use crate::plan::parse_plan;
use crate::ports::PortError;
use crate::suggest::capacity::{from_plan, from_policies};
use crate::suggest::plan::{instant, suggest_plan, SuggestError, TargetHistory};

pub const DEFAULT_DAYS: u32 = 14;
/// CloudWatch keeps 5-minute datapoints for 63 days; older ones exist only hourly. The same
/// bound as `[target.forecast] history` (`LONGEST_HISTORY`; a test keeps them equal).
pub const MAX_DAYS: u32 = 63;
/// The period read: the forecast's default resolution, and fine enough for 10-minute slots.
pub const PERIOD: Span = Span::minutes(5);

/// The stretch of history read: `[from, to)`, on period boundaries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HistoryWindow {
    pub from: DateTime<Utc>,
    pub to: DateTime<Utc>,
}

impl HistoryWindow {
    /// The `days` days before `until` (never later than the history published by `now`),
    /// `days` within 1..=[`MAX_DAYS`].
    pub fn last_days(days: u32, until: Option<DateTime<Utc>>, now: DateTime<Utc>) -> Self {
        let settled = settled_end(now, PERIOD);
        let to = until.map_or(settled, |u| period_start(u, PERIOD).min(settled));
        let from = to - Duration::days(i64::from(days.clamp(1, MAX_DAYS)));
        Self { from, to }
    }

    pub fn days(&self) -> i64 {
        (self.to - self.from).num_days()
    }
}

/// The suggested plan and what reading it cost.
#[derive(Debug, Clone)]
pub struct CloudWatchSuggestion {
    pub plan: String,
    /// GetMetricData calls made.
    pub metric_calls: usize,
}

/// A failure of [`suggest_from_cloudwatch`]: the base plan, or the AWS call that failed (its
/// own line says what, AWS's code and what to do).
#[derive(Debug, thiserror::Error)]
pub enum CloudWatchSuggestError {
    #[error(transparent)]
    Suggest(#[from] SuggestError),
    #[error(transparent)]
    History(PortError),
    #[error(transparent)]
    Policies(PortError),
}

/// The suggested plan for `base` from its targets' CloudWatch history in `window`. A target's
/// scaling policies are read only when the base plan does not give its `invocations_per_instance`.
pub async fn suggest_from_cloudwatch<M: DemandHistory, H: ScalingHistory>(
    (base_name, base_text): (&str, &str),
    metrics: &M,
    policies: &H,
    window: HistoryWindow,
) -> Result<CloudWatchSuggestion, CloudWatchSuggestError> {
    let plan = parse_plan(base_name, base_text).map_err(SuggestError::from)?;
    let mut histories: Vec<TargetHistory> = Vec::with_capacity(plan.targets.len());
    for target in &plan.targets {
        let capacity = match from_plan(target) {
            Some(c) => Ok(c),
            None => from_policies(
                &policies
                    .policies(&target.id)
                    .await
                    .map_err(CloudWatchSuggestError::Policies)?,
            ),
        };
        histories.push(TargetHistory {
            id: target.id.clone(),
            history: DemandSeries::empty(window.from, PERIOD.as_secs()),
            capacity,
        });
    }
    // Only the targets something can be suggested for are read, each kind of demand in calls
    // of its own (a kind's queries per target set how many fit a call).
    let mut metric_calls = 0;
    for kind in [
        DemandKind::Invocations,
        DemandKind::Backlog,
        DemandKind::Concurrency,
    ] {
        let mut wanted: Vec<&mut TargetHistory> = histories
            .iter_mut()
            .filter(|h| h.capacity.as_ref().is_ok_and(|c| c.demand == kind))
            .collect();
        let Some(first) = wanted.first() else {
            continue;
        };
        let queries = demand_source(&first.id, kind).queries();
        let per_call = targets_per_call_of(window.from, window.to, PERIOD, queries);
        for chunk in wanted.chunks_mut(per_call) {
            let ids: Vec<DemandQuery> = chunk
                .iter()
                .map(|h| DemandQuery {
                    target: h.id.clone(),
                    kind,
                })
                .collect();
            metric_calls += 1;
            let series = metrics
                .demand(&ids, window.from, window.to, PERIOD)
                .await
                .map_err(CloudWatchSuggestError::History)?;
            for (h, s) in chunk.iter_mut().zip(series) {
                h.history = s;
            }
        }
    }
    let header = vec![
        format!("Suggested by `headroom plan suggest` from {base_name} and CloudWatch:"),
        format!(
            "each target's demand (Invocations, Sum per {PERIOD}, unless its evidence below names another) from {} to {} ({} days), in {metric_calls} GetMetricData call(s).",
            instant(window.from),
            instant(window.to),
            window.days()
        ),
        "Peaks: recurring windows of the history, each with a floor that nearly every day used."
            .into(),
        "The forecast learns the rest from the endpoint's own CloudWatch history once deployed."
            .into(),
    ];
    Ok(CloudWatchSuggestion {
        plan: suggest_plan((base_name, base_text), &header, &histories)?,
        metric_calls,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::deploy_ports::ScalingActivity;
    use crate::ids::ScalableTargetId;
    use crate::memory::block_on;
    use crate::memory::MemoryDemand;
    use crate::review::ScalingPolicySummary;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// AAS without policies, counting the reads.
    #[derive(Default)]
    struct NoPolicies {
        reads: AtomicUsize,
    }

    impl ScalingHistory for NoPolicies {
        async fn policies(
            &self,
            _id: &ScalableTargetId,
        ) -> Result<Vec<ScalingPolicySummary>, PortError> {
            self.reads.fetch_add(1, Ordering::Relaxed);
            Ok(Vec::new())
        }
        async fn activities(
            &self,
            _id: &ScalableTargetId,
        ) -> Result<Vec<ScalingActivity>, PortError> {
            Ok(Vec::new())
        }
    }

    /// AAS with one target-tracking policy on `metric` (target value 4) for every target.
    struct Tracking {
        metric: &'static str,
    }

    impl ScalingHistory for Tracking {
        async fn policies(
            &self,
            _id: &ScalableTargetId,
        ) -> Result<Vec<ScalingPolicySummary>, PortError> {
            Ok(vec![ScalingPolicySummary {
                name: "tt".into(),
                policy_type: "TargetTrackingScaling".into(),
                metric: Some(self.metric.into()),
                target_value: Some(4.0),
                scale_in_cooldown_s: None,
                scale_out_cooldown_s: None,
                disable_scale_in: None,
                cooldown_s: None,
                steps: Vec::new(),
                step_adjustments: Vec::new(),
                alarms: Vec::new(),
            }])
        }
        async fn activities(
            &self,
            _id: &ScalableTargetId,
        ) -> Result<Vec<ScalingActivity>, PortError> {
            Ok(Vec::new())
        }
    }

    fn t(s: &str) -> DateTime<Utc> {
        s.parse().expect("instant")
    }

    fn variant(i: usize) -> ScalableTargetId {
        ScalableTargetId::variant(&format!("e{i}"), "AllTraffic").expect("id")
    }

    /// `days` days up to `to` at 5 minutes: 60/min, and 300/min 09:00-11:00 UTC on weekdays.
    fn rhythm(to: DateTime<Utc>, days: i64) -> DemandSeries {
        use chrono::{Datelike, Timelike};
        let from = to - Duration::days(days);
        let values = (0..days * 288)
            .map(|i| {
                let at = from + Duration::minutes(5 * i);
                let weekday = at.weekday().num_days_from_monday() < 5;
                if weekday && (9..11).contains(&at.hour()) {
                    300.0
                } else {
                    60.0
                }
            })
            .collect();
        DemandSeries::new(from, 300, values)
    }

    fn plan(targets: usize, forecast_for: impl Fn(usize) -> bool) -> String {
        let mut text = String::from("version = 1\n");
        for i in 0..targets {
            text.push_str(&format!(
                "[[target]]\nresource_id = \"{}\"\nmin_capacity = 1\nmax_capacity = 40\n\
                 [[target.peak]]\nname = \"planned\"\ncron = \"0 8 * * MON-FRI\"\nduration = \"1h\"\nfloor = 3\n",
                variant(i)
            ));
            if forecast_for(i) {
                text.push_str("[target.forecast]\ninvocations_per_instance = 30.0\n");
            }
        }
        text
    }

    #[test]
    fn thirty_targets_over_fourteen_days_take_two_calls() {
        // GIVEN 30 targets with 14 days of a weekday rhythm each
        let now = t("2026-03-16T00:02:00Z");
        let window = HistoryWindow::last_days(14, None, now);
        let metrics = (0..30).fold(MemoryDemand::default(), |m, i| {
            m.with(variant(i), rhythm(window.to, 14))
        });
        // WHEN suggested
        let out = block_on(suggest_from_cloudwatch(
            ("base.toml", &plan(30, |_| true)),
            &metrics,
            &NoPolicies::default(),
            window,
        ))
        .expect("suggestion");
        // THEN 25 targets fit a call (100,800 / 4,032 datapoints): two calls, as the refresh makes
        assert_eq!(out.metric_calls, 2);
        assert_eq!(metrics.calls.load(Ordering::Relaxed), 2);
        assert!(
            out.plan.contains("in 2 GetMetricData call(s)"),
            "{}",
            out.plan
        );
        // AND every target's planned 08:00 peak is replaced by the two learned weekday peaks (a
        // ramp and a busy window, from 08:40: the smoothed climb starts at 08:50, one slot early)
        assert!(!out.plan.contains("name = \"planned\""), "{}", out.plan);
        assert_eq!(
            out.plan.matches("cron = \"40 8 * * MON-FRI\"").count(),
            60,
            "{}",
            out.plan
        );
    }

    #[test]
    fn too_little_history_keeps_the_base_peaks_and_says_why() {
        // GIVEN a target with two days of history only
        let now = t("2026-03-16T00:02:00Z");
        let window = HistoryWindow::last_days(14, None, now);
        let metrics = MemoryDemand::default().with(variant(0), rhythm(window.to, 2));
        // WHEN suggested
        let out = block_on(suggest_from_cloudwatch(
            ("base.toml", &plan(1, |_| true)),
            &metrics,
            &NoPolicies::default(),
            window,
        ))
        .expect("suggestion");
        // THEN no peak is suggested, the planned one stays, and the comments say why
        assert!(out.plan.contains("name = \"planned\""), "{}", out.plan);
        assert!(
            out.plan
                .contains("weekdays: 0 whole day(s) of history, too few"),
            "{}",
            out.plan
        );
        assert!(
            out.plan.contains("too little history to suggest peaks"),
            "{}",
            out.plan
        );
        assert!(out.plan.contains("[target.forecast]"), "{}", out.plan);
    }

    #[test]
    fn a_target_without_a_capacity_figure_is_not_read_and_stays_as_in_the_base() {
        // GIVEN two targets, the second without a forecast section or an invocations policy
        let now = t("2026-03-16T00:02:00Z");
        let window = HistoryWindow::last_days(14, None, now);
        let metrics = MemoryDemand::default().with(variant(0), rhythm(window.to, 14));
        let policies = NoPolicies::default();
        // WHEN suggested
        let out = block_on(suggest_from_cloudwatch(
            ("base.toml", &plan(2, |i| i == 0)),
            &metrics,
            &policies,
            window,
        ))
        .expect("suggestion");
        // THEN only the second target's policies were read, and it is named as left alone
        assert_eq!(policies.reads.load(Ordering::Relaxed), 1);
        assert!(
            out.plan.contains(&format!(
                "# {}: left as in base.toml: no invocations_per_instance",
                variant(1)
            )),
            "{}",
            out.plan
        );
        assert_eq!(
            out.plan
                .lines()
                .filter(|l| *l == "[target.forecast]")
                .count(),
            1,
            "{}",
            out.plan
        );
    }

    #[test]
    fn a_target_tracked_on_concurrency_is_read_and_forecast_as_requests_in_flight() {
        // GIVEN two targets: the first with the base plan's invocations figure, the second
        // without one, tracked by AAS on ConcurrentRequestsPerModel (target 4 per instance)
        let now = t("2026-03-16T00:02:00Z");
        let window = HistoryWindow::last_days(14, None, now);
        let metrics = MemoryDemand::default()
            .with(variant(0), rhythm(window.to, 14))
            .with(variant(1), rhythm(window.to, 14));
        // WHEN suggested
        let out = block_on(suggest_from_cloudwatch(
            ("base.toml", &plan(2, |i| i == 0)),
            &metrics,
            &Tracking {
                metric: "SageMakerVariantConcurrentRequestsPerModelHighResolution",
            },
            window,
        ))
        .expect("suggestion");
        // THEN each is read by its own kind, in calls of their own
        let asked: Vec<(ScalableTargetId, DemandKind)> = metrics
            .queries
            .lock()
            .expect("queries")
            .iter()
            .map(|q| (q.target.clone(), q.kind))
            .collect();
        assert_eq!(
            asked,
            vec![
                (variant(0), DemandKind::Invocations),
                (variant(1), DemandKind::Concurrency)
            ]
        );
        assert_eq!(out.metric_calls, 2);
        // AND the second's forecast says what its figure counts, with the evidence
        assert_eq!(
            out.plan.matches("demand = \"concurrency\"").count(),
            1,
            "{}",
            out.plan
        );
        assert!(
            out.plan.contains("invocations_per_instance 4.00: the target-tracking target value of SageMakerVariantConcurrentRequestsPerModelHighResolution"),
            "{}",
            out.plan
        );
        assert!(out.plan.contains("the requests in flight"), "{}", out.plan);
        crate::plan::parse_plan("suggested", &out.plan).expect("a valid plan");
        // AND its peaks, which would need 75 instances at 4 in flight each, stay within
        // max_capacity 40, and the evidence says so
        assert!(
            out.plan
                .contains("floors capped at max_capacity 40: weekday-ramp-0840 (needed 75)"),
            "{}",
            out.plan
        );
    }

    #[test]
    fn a_base_plan_forecasting_the_backlog_has_its_backlog_read() {
        // GIVEN an asynchronous endpoint whose base plan forecasts its backlog
        let now = t("2026-03-16T00:02:00Z");
        let window = HistoryWindow::last_days(14, None, now);
        let metrics = MemoryDemand::default().with(variant(0), rhythm(window.to, 14));
        let base = format!(
            "{}[target.forecast]\ndemand = \"backlog\"\ninvocations_per_instance = 30.0\n",
            plan(1, |_| false)
        );
        // WHEN suggested
        let out = block_on(suggest_from_cloudwatch(
            ("base.toml", &base),
            &metrics,
            &NoPolicies::default(),
            window,
        ))
        .expect("suggestion");
        // THEN ApproximateBacklogSize was read, not Invocations, and the plan still says backlog
        let kinds: Vec<DemandKind> = metrics
            .queries
            .lock()
            .expect("queries")
            .iter()
            .map(|q| q.kind)
            .collect();
        assert_eq!(kinds, vec![DemandKind::Backlog]);
        assert!(out.plan.contains("demand = \"backlog\""), "{}", out.plan);
        assert!(out.plan.contains("ApproximateBacklogSize"), "{}", out.plan);
    }

    #[test]
    fn the_window_ends_on_a_period_boundary_never_after_what_is_published() {
        let now = t("2026-03-16T10:07:30Z");
        let w = HistoryWindow::last_days(14, Some(t("2026-04-01T00:00:00Z")), now);
        // 10:05..10:10 is still filling, and 10:04 may not be published yet.
        assert_eq!(w.to, t("2026-03-16T10:00:00Z"));
        assert_eq!(w.from, t("2026-03-02T10:00:00Z"));
        let w = HistoryWindow::last_days(14, None, t("2026-03-16T10:08:00Z"));
        assert_eq!(w.to, t("2026-03-16T10:05:00Z"));
        // An `--until` in the past ends the window at its period's start.
        let w = HistoryWindow::last_days(14, Some(t("2026-03-09T08:12:00Z")), now);
        assert_eq!(w.to, t("2026-03-09T08:10:00Z"));
        let w = HistoryWindow::last_days(200, Some(t("2026-03-10T00:00:00Z")), now);
        assert_eq!(w.days(), i64::from(MAX_DAYS));
        assert_eq!(
            i64::from(MAX_DAYS) * 86_400,
            crate::plan::forecast::LONGEST_HISTORY.as_secs()
        );
    }
}
