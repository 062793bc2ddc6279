//! CloudWatch behind `headroom_core::metrics_port::DemandHistory`: each target's demand history
//! through GetMetricData, as many targets per call as the call's limits allow (500 queries,
//! 100,800 datapoints; the use case chunks), following NextToken. A target's demand is one query
//! (`Invocations`, `ApproximateBacklogSize`), or for `concurrency` one metric-math expression
//! over three metrics that are read but not returned (`metrics_port::DemandSource`).

use std::collections::HashMap;

use aws_sdk_cloudwatch::primitives::DateTime as AwsDateTime;
use aws_sdk_cloudwatch::types::{
    Dimension, Metric, MetricDataQuery, MetricStat, ScanBy, StatusCode,
};
use aws_sdk_cloudwatch::Client;
use chrono::{DateTime, Utc};
use headroom_core::forecast::DemandSeries;
use headroom_core::metrics_port::{
    demand_source, period_start, workload_metrics, DemandHistory, DemandQuery, DemandSource,
    MetricRef, Workload,
};
use headroom_core::ports::PortError;
use headroom_core::{ScalableTargetId, Span};

use crate::error::{permanent, port_error, retryable};

pub struct CloudWatchDemand {
    client: Client,
}

impl CloudWatchDemand {
    /// The AWS operations this adapter's methods call, as IAM names them.
    pub const OPERATIONS: &'static [&'static str] = &["cloudwatch:GetMetricData"];

    pub fn new(client: Client) -> Self {
        Self { client }
    }
}

fn aws_time(t: DateTime<Utc>) -> AwsDateTime {
    AwsDateTime::from_secs(t.timestamp())
}

/// Pages of GetMetricData or DescribeAlarms read at most for one call of a port method: the
/// workload queries answer one datapoint each and 100 alarm names fit one page, so more pages
/// mean CloudWatch keeps paging.
pub(crate) const MAX_PAGES: usize = 10;

/// Pages of GetMetricData read at most for one demand call. A call is sized to fit CloudWatch's
/// 100,800 datapoints (`targets_per_call_of`), so it should come back in one or two; a token
/// that keeps coming back is CloudWatch (or a proxy) misbehaving, not more history.
pub(crate) const MAX_DEMAND_PAGES: usize = 20;

fn query(id: String, m: &MetricRef, period_secs: i64) -> MetricDataQuery {
    query_returning(id, m, period_secs, true)
}

fn query_returning(id: String, m: &MetricRef, period_secs: i64, returned: bool) -> MetricDataQuery {
    let metric = Metric::builder()
        .namespace(m.namespace)
        .metric_name(m.name)
        .set_dimensions(Some(
            m.dimensions
                .iter()
                .map(|(k, v)| Dimension::builder().name(*k).value(v).build())
                .collect(),
        ))
        .build();
    MetricDataQuery::builder()
        .id(id)
        .metric_stat(
            MetricStat::builder()
                .metric(metric)
                .period(period_secs as i32)
                .stat(m.statistic)
                .build(),
        )
        .return_data(returned)
        .build()
}

/// The queries of one target's demand, the one answering it named `id`: a single metric, or
/// the expression over its inputs (named `id_0`, `id_1`, ..., read but not returned).
fn demand_queries(id: &str, source: &DemandSource, period_secs: i64) -> Vec<MetricDataQuery> {
    let inputs = source.inputs();
    let names: Vec<String> = (0..inputs.len()).map(|k| format!("{id}_{k}")).collect();
    match source.expression(&names) {
        None => inputs
            .iter()
            .map(|m| query(id.to_owned(), m, period_secs))
            .collect(),
        Some(expression) => {
            let mut out: Vec<MetricDataQuery> = inputs
                .iter()
                .zip(&names)
                .map(|(m, name)| query_returning(name.clone(), m, period_secs, false))
                .collect();
            out.push(
                MetricDataQuery::builder()
                    .id(id)
                    .expression(expression)
                    .period(period_secs as i32)
                    .return_data(true)
                    .build(),
            );
            out
        }
    }
}

/// One of the three workload statistics of a target, as the datapoints CloudWatch returned for
/// the window (one, or two when the window straddles a period boundary).
fn combine(statistic: &str, values: &[f64]) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    Some(match statistic {
        "Maximum" => values.iter().copied().fold(f64::MIN, f64::max),
        "Sum" => values.iter().sum(),
        // Average of averages: exact for one datapoint, close enough for two.
        _ => values.iter().sum::<f64>() / values.len() as f64,
    })
}

impl DemandHistory for CloudWatchDemand {
    async fn workload(
        &self,
        targets: &[ScalableTargetId],
        from: DateTime<Utc>,
        to: DateTime<Utc>,
    ) -> Result<Vec<Workload>, PortError> {
        // One period covering the window (a multiple of 60 s, as GetMetricData requires).
        let period = ((to - from).num_seconds().max(60) + 59) / 60 * 60;
        let metrics: Vec<[MetricRef; 3]> = targets.iter().map(workload_metrics).collect();
        let queries: Vec<MetricDataQuery> = metrics
            .iter()
            .enumerate()
            .flat_map(|(i, ms)| {
                ms.iter()
                    .enumerate()
                    .map(move |(k, m)| query(format!("w{i}_{k}"), m, period))
            })
            .collect();
        let mut values: Vec<[Vec<f64>; 3]> = vec![Default::default(); targets.len()];
        let mut next_token: Option<String> = None;
        for _ in 0..MAX_PAGES {
            let out = self
                .client
                .get_metric_data()
                .set_metric_data_queries(Some(queries.clone()))
                .start_time(aws_time(from))
                .end_time(aws_time(to))
                .set_next_token(next_token.take())
                .send()
                .await
                .map_err(|e| {
                    port_error(
                        format!("read the workload metrics of {} target(s)", targets.len()),
                        e,
                    )
                })?;
            for r in out.metric_data_results() {
                let Some((i, k)) = r.id().and_then(|id| {
                    let (i, k) = id.strip_prefix('w')?.split_once('_')?;
                    Some((i.parse::<usize>().ok()?, k.parse::<usize>().ok()?))
                }) else {
                    continue;
                };
                if let Some(slot) = values.get_mut(i).and_then(|v| v.get_mut(k)) {
                    slot.extend(r.values());
                }
            }
            match out.next_token() {
                Some(token) if !token.is_empty() => next_token = Some(token.to_owned()),
                _ => break,
            }
        }
        let minutes = (to - from).num_seconds() as f64 / 60.0;
        Ok(values
            .iter()
            .zip(&metrics)
            .map(|(v, ms)| Workload {
                from,
                to,
                // ModelLatency is published in microseconds.
                model_latency_mean_s: combine(ms[0].statistic, &v[0]).map(|us| us / 1.0e6),
                concurrency_max: combine(ms[1].statistic, &v[1]),
                invocations_per_instance_per_min: combine(ms[2].statistic, &v[2])
                    .map(|sum| sum / minutes.max(1.0)),
            })
            .collect())
    }

    async fn demand(
        &self,
        targets: &[DemandQuery],
        from: DateTime<Utc>,
        to: DateTime<Utc>,
        period: Span,
    ) -> Result<Vec<DemandSeries>, PortError> {
        let secs = period.as_secs().max(60);
        // CloudWatch rounds an unaligned StartTime down to the period and labels each datapoint
        // with its period's start; so does this, or every datapoint would sit one slot early
        // under labels counted from the unaligned instant.
        let from = period_start(from, Span::seconds(secs));
        let sources: Vec<DemandSource> = targets
            .iter()
            .map(|q| demand_source(&q.target, q.kind))
            .collect();
        let queries: Vec<MetricDataQuery> = sources
            .iter()
            .enumerate()
            .flat_map(|(i, s)| demand_queries(&format!("t{i}"), s, secs))
            .collect();
        let slots = ((to - from).num_seconds() / secs).max(0) as usize;
        let mut values: Vec<Vec<f32>> = vec![vec![f32::NAN; slots]; targets.len()];
        let index: HashMap<String, usize> =
            (0..targets.len()).map(|i| (format!("t{i}"), i)).collect();
        let what = || format!("read the demand history of {} target(s)", targets.len());
        let mut next_token: Option<String> = None;
        for page in 0.. {
            if page == MAX_DEMAND_PAGES {
                return Err(retryable(
                    what(),
                    format!("GetMetricData still had a NextToken after {MAX_DEMAND_PAGES} pages; the next refresh reads again"),
                ));
            }
            let out = self
                .client
                .get_metric_data()
                .set_metric_data_queries(Some(queries.clone()))
                .start_time(aws_time(from))
                .end_time(aws_time(to))
                .scan_by(ScanBy::TimestampAscending)
                .set_next_token(next_token.take())
                .send()
                .await
                .map_err(|e| port_error(what(), e))?;
            for r in out.metric_data_results() {
                let Some(&i) = r.id().and_then(|id| index.get(id)) else {
                    continue;
                };
                // PartialData pages on (NextToken); the other two would leave periods missing
                // without a word, and a forecast built on them.
                let messages = || {
                    r.messages()
                        .iter()
                        .filter_map(|m| m.value())
                        .collect::<Vec<_>>()
                        .join("; ")
                };
                match r.status_code() {
                    Some(StatusCode::Forbidden) => {
                        return Err(permanent(
                            what(),
                            format!("CloudWatch answered Forbidden for {}: {}; allow cloudwatch:GetMetricData on the role", targets[i].target, messages()),
                        ))
                    }
                    Some(StatusCode::InternalError) => {
                        return Err(retryable(
                            what(),
                            format!("CloudWatch answered InternalError for {}: {}", targets[i].target, messages()),
                        ))
                    }
                    _ => {}
                }
                for (t, v) in r.timestamps().iter().zip(r.values()) {
                    let k = (t.secs() - from.timestamp()).div_euclid(secs);
                    if let Some(slot) = usize::try_from(k).ok().and_then(|k| values[i].get_mut(k)) {
                        // A Sum over the period as requests per minute; a level as it is.
                        *slot = if sources[i].is_count() {
                            (*v / (secs as f64 / 60.0)) as f32
                        } else {
                            *v as f32
                        };
                    }
                }
            }
            match out.next_token() {
                Some(token) if !token.is_empty() => next_token = Some(token.to_owned()),
                _ => break,
            }
        }
        Ok(values
            .into_iter()
            .map(|v| DemandSeries::new(from, secs, v))
            .collect())
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // a failed unwrap is a failed test
mod tests {
    //! Paging and error classes, against aws-smithy-mocks: moto never pages GetMetricData and
    //! cannot be made to fail on cue. The adapter against moto's CloudWatch (through the tests'
    //! CBOR bridge, since moto lacks the RPC v2 CBOR protocol this SDK sends) is in
    //! tests/tests/moto_forecast.rs and cli/tests/moto_cloudwatch.rs.
    use super::*;
    use crate::test_support::cloudwatch_client_with;
    use aws_sdk_cloudwatch::operation::get_metric_data::GetMetricDataOutput;
    use aws_sdk_cloudwatch::types::MetricDataResult;
    use aws_smithy_mocks::{mock, RuleMode};
    use headroom_core::plan::DemandKind;
    use headroom_core::ports::ErrorClass;

    fn t(s: &str) -> DateTime<Utc> {
        s.parse().unwrap()
    }

    fn result(id: &str, points: &[(&str, f64)]) -> MetricDataResult {
        points
            .iter()
            .fold(MetricDataResult::builder().id(id), |b, (at, v)| {
                b.timestamps(aws_time(t(at))).values(*v)
            })
            .build()
    }

    /// One `kind` query for `target`, 08:00-08:15 at 5 minutes.
    async fn read_one(client: Client, target: ScalableTargetId, kind: DemandKind) -> DemandSeries {
        let mut series = CloudWatchDemand::new(client)
            .demand(
                &[DemandQuery { target, kind }],
                t("2026-03-02T08:00:00Z"),
                t("2026-03-02T08:15:00Z"),
                Span::minutes(5),
            )
            .await
            .unwrap();
        series.remove(0)
    }

    #[tokio::test]
    async fn pages_are_joined_and_sums_become_requests_per_minute() {
        // GIVEN two pages: the first with target 0's 08:00 period, the second with its 08:10
        // period and target 1's 08:05
        let first = mock!(Client::get_metric_data)
            .match_requests(|r| r.next_token().is_none())
            .then_output(|| {
                GetMetricDataOutput::builder()
                    .metric_data_results(result("t0", &[("2026-03-02T08:00:00Z", 1500.0)]))
                    .next_token("page-2")
                    .build()
            });
        let second = mock!(Client::get_metric_data)
            .match_requests(|r| r.next_token() == Some("page-2"))
            .then_output(|| {
                GetMetricDataOutput::builder()
                    .metric_data_results(result("t0", &[("2026-03-02T08:10:00Z", 300.0)]))
                    .metric_data_results(result("t1", &[("2026-03-02T08:05:00Z", 50.0)]))
                    .build()
            });
        let client = cloudwatch_client_with(&[&first, &second], RuleMode::MatchAny, 1);
        let ids = [
            DemandQuery::invocations(ScalableTargetId::variant("shop", "AllTraffic").unwrap()),
            DemandQuery::invocations(ScalableTargetId::component("chat-ic").unwrap()),
        ];
        // WHEN 08:00-08:15 is read at 5 minutes
        let series = CloudWatchDemand::new(client)
            .demand(
                &ids,
                t("2026-03-02T08:00:00Z"),
                t("2026-03-02T08:15:00Z"),
                Span::minutes(5),
            )
            .await
            .unwrap();
        // THEN each target has three periods, Sums divided by 5 minutes, gaps missing
        assert_eq!(first.num_calls() + second.num_calls(), 2);
        assert_eq!(series[0].values[0], 300.0);
        assert!(series[0].values[1].is_nan());
        assert_eq!(series[0].values[2], 60.0);
        assert!(series[1].values[0].is_nan());
        assert_eq!(series[1].values[1], 10.0);
    }

    #[tokio::test]
    async fn a_backlog_is_the_endpoints_approximate_backlog_size_kept_as_a_level() {
        // GIVEN CloudWatch answering only a query for the endpoint's ApproximateBacklogSize
        // Average (no VariantName dimension: it is published per endpoint)
        let answer = mock!(Client::get_metric_data)
            .match_requests(|r| {
                r.metric_data_queries().iter().all(|q| {
                    let stat = q.metric_stat();
                    let metric = stat.and_then(|s| s.metric());
                    metric.and_then(|m| m.metric_name()) == Some("ApproximateBacklogSize")
                        && stat.and_then(|s| s.stat()) == Some("Average")
                        && metric.map(|m| m.dimensions().len()) == Some(1)
                })
            })
            .then_output(|| {
                GetMetricDataOutput::builder()
                    .metric_data_results(result("t0", &[("2026-03-02T08:05:00Z", 42.0)]))
                    .build()
            });
        let client = cloudwatch_client_with(&[&answer], RuleMode::MatchAny, 1);
        // WHEN an async endpoint's backlog is read at 5 minutes
        let series = read_one(
            client,
            ScalableTargetId::variant("jobs", "AllTraffic").unwrap(),
            DemandKind::Backlog,
        )
        .await;
        // THEN the Average is kept as it is (requests waiting, not a rate)
        assert_eq!(answer.num_calls(), 1);
        assert_eq!(series.values[1], 42.0);
    }

    #[tokio::test]
    async fn concurrency_is_one_expression_over_three_metrics_kept_as_a_level() {
        // GIVEN CloudWatch answering a request with the three input metrics (not returned) and
        // the expression multiplying the per-model concurrency by the instance count
        let answer = mock!(Client::get_metric_data)
            .match_requests(|r| {
                let qs = r.metric_data_queries();
                let metric = |i: usize| {
                    qs.get(i)
                        .and_then(|q| q.metric_stat())
                        .and_then(|s| Some((s.metric()?.metric_name()?, s.stat()?)))
                };
                qs.len() == 4
                    && metric(0) == Some(("ConcurrentRequestsPerModel", "Average"))
                    && metric(1) == Some(("Invocations", "Sum"))
                    && metric(2) == Some(("InvocationsPerInstance", "Sum"))
                    && qs[..3].iter().all(|q| q.return_data() == Some(false))
                    && qs[3].id() == Some("t0")
                    && qs[3].expression() == Some("IF(t0_2 > 0, t0_0 * t0_1 / t0_2, 0)")
                    && qs[3].return_data() == Some(true)
            })
            .then_output(|| {
                GetMetricDataOutput::builder()
                    .metric_data_results(result("t0", &[("2026-03-02T08:05:00Z", 36.0)]))
                    .build()
            });
        let client = cloudwatch_client_with(&[&answer], RuleMode::MatchAny, 1);
        // WHEN a variant's concurrency is read at 5 minutes
        let series = read_one(
            client,
            ScalableTargetId::variant("chat", "AllTraffic").unwrap(),
            DemandKind::Concurrency,
        )
        .await;
        // THEN the expression's value is the demand, as a level (requests in flight)
        assert_eq!(answer.num_calls(), 1);
        assert_eq!(series.values[1], 36.0);
        assert!(series.values[0].is_nan());
    }

    #[tokio::test]
    async fn a_server_error_is_retryable() {
        // (The body is not CBOR, so the code is not read: the 503 status classifies it.)
        let throttled = mock!(Client::get_metric_data).then_http_response(|| {
            crate::test_support::json_error(503, "ServiceUnavailable", "try later")
        });
        let client = cloudwatch_client_with(&[&throttled], RuleMode::MatchAny, 1);
        let err = CloudWatchDemand::new(client)
            .demand(
                &[DemandQuery::invocations(
                    ScalableTargetId::variant("shop", "AllTraffic").unwrap(),
                )],
                t("2026-03-02T08:00:00Z"),
                t("2026-03-02T09:00:00Z"),
                Span::minutes(5),
            )
            .await
            .unwrap_err();
        assert_eq!(err.class, ErrorClass::Retryable, "{err}");
    }

    #[tokio::test]
    async fn the_workload_is_one_call_in_domain_units() {
        // GIVEN CloudWatch's answer for one target's three queries over a day: ModelLatency in
        // microseconds, the highest concurrency, and the day's InvocationsPerInstance Sum
        let answer = mock!(Client::get_metric_data)
            .match_requests(|r| {
                r.metric_data_queries().len() == 3
                    && r.metric_data_queries()
                        .iter()
                        .all(|q| q.metric_stat().and_then(|m| m.period()) == Some(86_400))
            })
            .then_output(|| {
                GetMetricDataOutput::builder()
                    .metric_data_results(result("w0_0", &[("2026-03-13T09:00:00Z", 2_300_000.0)]))
                    .metric_data_results(result("w0_1", &[("2026-03-13T09:00:00Z", 3.0)]))
                    .metric_data_results(result("w0_2", &[("2026-03-13T09:00:00Z", 57_600.0)]))
                    .build()
            });
        let client = cloudwatch_client_with(&[&answer], RuleMode::MatchAny, 1);
        let ids = [ScalableTargetId::variant("chat", "AllTraffic").unwrap()];
        // WHEN the day is read
        let w = CloudWatchDemand::new(client)
            .workload(&ids, t("2026-03-13T09:00:00Z"), t("2026-03-14T09:00:00Z"))
            .await
            .unwrap();
        // THEN seconds, a count, and invocations per minute (57,600 / 1,440 minutes)
        assert_eq!(answer.num_calls(), 1);
        assert_eq!(w[0].model_latency_mean_s, Some(2.3));
        assert_eq!(w[0].concurrency_max, Some(3.0));
        assert_eq!(w[0].invocations_per_instance_per_min, Some(40.0));
    }

    #[tokio::test]
    async fn a_target_without_datapoints_measures_nothing() {
        let answer =
            mock!(Client::get_metric_data).then_output(|| GetMetricDataOutput::builder().build());
        let client = cloudwatch_client_with(&[&answer], RuleMode::MatchAny, 1);
        let ids = [ScalableTargetId::component("chat-ic").unwrap()];
        let w = CloudWatchDemand::new(client)
            .workload(&ids, t("2026-03-13T09:00:00Z"), t("2026-03-14T09:00:00Z"))
            .await
            .unwrap();
        assert_eq!(w[0].model_latency_mean_s, None);
        assert_eq!(w[0].invocations_per_instance_per_min, None);
    }

    /// `demand` for one variant, 08:00:03-08:15 at 5 minutes (an unaligned start, as a tick's
    /// clock gives).
    async fn read_unaligned(client: Client) -> Result<Vec<DemandSeries>, PortError> {
        CloudWatchDemand::new(client)
            .demand(
                &[DemandQuery::invocations(
                    ScalableTargetId::variant("shop", "AllTraffic").unwrap(),
                )],
                t("2026-03-02T08:00:03Z"),
                t("2026-03-02T08:15:00Z"),
                Span::minutes(5),
            )
            .await
    }

    #[tokio::test]
    async fn an_unaligned_start_reads_from_its_periods_start_and_labels_datapoints_there() {
        // GIVEN CloudWatch answering as it does for an unaligned StartTime: from 08:00:00, each
        // datapoint labelled with its period's start
        let answer = mock!(Client::get_metric_data)
            .match_requests(|r| r.start_time() == Some(&aws_time(t("2026-03-02T08:00:00Z"))))
            .then_output(|| {
                GetMetricDataOutput::builder()
                    .metric_data_results(result(
                        "t0",
                        &[
                            ("2026-03-02T08:00:00Z", 500.0),
                            ("2026-03-02T08:05:00Z", 1000.0),
                        ],
                    ))
                    .build()
            });
        let client = cloudwatch_client_with(&[&answer], RuleMode::MatchAny, 1);
        // WHEN 08:00:03-08:15 is read
        let series = read_unaligned(client).await.unwrap();
        // THEN the series starts at 08:00 and each datapoint sits in its own period (the 08:00
        // one was dropped, and the 08:05 one labelled 08:00:03, before)
        assert_eq!(answer.num_calls(), 1);
        assert_eq!(series[0].start, t("2026-03-02T08:00:00Z"));
        assert_eq!(series[0].values[..2], [100.0, 200.0]);
        assert!(series[0].values[2].is_nan());
    }

    #[tokio::test]
    async fn forbidden_is_permanent_and_an_internal_error_retryable() {
        for (status, class) in [
            (StatusCode::Forbidden, ErrorClass::Permanent),
            (StatusCode::InternalError, ErrorClass::Retryable),
        ] {
            let answer = mock!(Client::get_metric_data).then_output(move || {
                GetMetricDataOutput::builder()
                    .metric_data_results(
                        MetricDataResult::builder()
                            .id("t0")
                            .status_code(status.clone())
                            .messages(
                                aws_sdk_cloudwatch::types::MessageData::builder()
                                    .code("Forbidden")
                                    .value("not allowed")
                                    .build(),
                            )
                            .build(),
                    )
                    .build()
            });
            let client = cloudwatch_client_with(&[&answer], RuleMode::MatchAny, 1);
            let err = read_unaligned(client).await.unwrap_err();
            assert_eq!(err.class, class, "{err}");
            assert!(
                err.to_string().contains("endpoint/shop/variant/AllTraffic"),
                "{err}"
            );
        }
    }

    #[tokio::test]
    async fn a_next_token_that_never_ends_is_a_retryable_error_not_a_hang() {
        let endless = mock!(Client::get_metric_data).then_output(|| {
            GetMetricDataOutput::builder()
                .metric_data_results(result("t0", &[("2026-03-02T08:00:00Z", 5.0)]))
                .next_token("again")
                .build()
        });
        let client = cloudwatch_client_with(&[&endless], RuleMode::MatchAny, 1);
        let err = read_unaligned(client).await.unwrap_err();
        assert_eq!(err.class, ErrorClass::Retryable, "{err}");
        assert_eq!(endless.num_calls(), MAX_DEMAND_PAGES);
        assert!(err.to_string().contains("NextToken"), "{err}");
    }
}
