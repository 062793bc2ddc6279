//! CloudWatch for `headroom lint` and policy reviews: the workload metrics and demand history
//! of [`CloudWatchDemand`] (GetMetricData), plus DescribeAlarms for the alarms the policies and
//! the plan name. A separate adapter so the tick, which reads demand only, is not allowed
//! DescribeAlarms.

use aws_sdk_cloudwatch::Client;
use chrono::{DateTime, Utc};
use headroom_core::forecast::DemandSeries;
use headroom_core::metrics_port::{AlarmView, DemandHistory, DemandQuery, Workload};
use headroom_core::ports::PortError;
use headroom_core::{ScalableTargetId, Span};

use crate::cloudwatch::{CloudWatchDemand, MAX_PAGES};
use crate::error::port_error;

pub struct CloudWatchLint {
    metrics: CloudWatchDemand,
    client: Client,
}

impl CloudWatchLint {
    /// The AWS operations this adapter's own methods call (the metrics' are `CloudWatchDemand`'s).
    pub const OPERATIONS: &'static [&'static str] = &["cloudwatch:DescribeAlarms"];

    pub fn new(metrics: CloudWatchDemand, client: Client) -> Self {
        Self { metrics, client }
    }
}

impl DemandHistory for CloudWatchLint {
    async fn demand(
        &self,
        targets: &[DemandQuery],
        from: DateTime<Utc>,
        to: DateTime<Utc>,
        period: Span,
    ) -> Result<Vec<DemandSeries>, PortError> {
        self.metrics.demand(targets, from, to, period).await
    }

    async fn workload(
        &self,
        targets: &[ScalableTargetId],
        from: DateTime<Utc>,
        to: DateTime<Utc>,
    ) -> Result<Vec<Workload>, PortError> {
        self.metrics.workload(targets, from, to).await
    }

    async fn alarms(&self, names: &[String]) -> Result<Vec<AlarmView>, PortError> {
        if names.is_empty() {
            return Ok(Vec::new());
        }
        let mut out = Vec::new();
        let mut next_token: Option<String> = None;
        for _ in 0..MAX_PAGES {
            let page = self
                .client
                .describe_alarms()
                .set_alarm_names(Some(names.to_vec()))
                .set_next_token(next_token.take())
                .send()
                .await
                .map_err(|e| port_error(format!("describe {} alarm(s)", names.len()), e))?;
            out.extend(page.metric_alarms().iter().map(|a| AlarmView {
                name: a.alarm_name().unwrap_or_default().to_owned(),
                namespace: a.namespace().map(str::to_owned),
                metric: a.metric_name().map(str::to_owned),
            }));
            match page.next_token() {
                Some(token) if !token.is_empty() => next_token = Some(token.to_owned()),
                _ => break,
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // a failed unwrap is a failed test
mod tests {
    use super::*;
    use crate::test_support::cloudwatch_client_with;
    use aws_smithy_mocks::{mock, RuleMode};
    use headroom_core::ports::ErrorClass;

    fn lint_port(client: Client) -> CloudWatchLint {
        CloudWatchLint::new(CloudWatchDemand::new(client.clone()), client)
    }

    #[tokio::test]
    async fn alarms_name_their_metric_and_access_denied_is_permanent() {
        use aws_sdk_cloudwatch::operation::describe_alarms::DescribeAlarmsOutput;
        use aws_sdk_cloudwatch::types::MetricAlarm;
        let answer = mock!(Client::describe_alarms).then_output(|| {
            DescribeAlarmsOutput::builder()
                .metric_alarms(
                    MetricAlarm::builder()
                        .alarm_name("chat-ic-wake")
                        .namespace("AWS/SageMaker")
                        .metric_name("NoCapacityInvocationFailures")
                        .build(),
                )
                .build()
        });
        let client = cloudwatch_client_with(&[&answer], RuleMode::MatchAny, 1);
        let a = lint_port(client)
            .alarms(&["chat-ic-wake".to_owned()])
            .await
            .unwrap();
        assert_eq!(a[0].metric.as_deref(), Some("NoCapacityInvocationFailures"));

        let denied = mock!(Client::describe_alarms).then_http_response(|| {
            crate::test_support::json_error(
                400,
                "AccessDenied",
                "not authorized to perform cloudwatch:DescribeAlarms",
            )
        });
        let client = cloudwatch_client_with(&[&denied], RuleMode::MatchAny, 1);
        let err = lint_port(client)
            .alarms(&["x".to_owned()])
            .await
            .unwrap_err();
        assert_eq!(err.class, ErrorClass::Permanent, "{err}");
    }
}
