//! Application Auto Scaling: the [`ScalingHistory`] port over the SDK. DescribeScalingPolicies
//! (what a review shows) and DescribeScalingActivities (what lead-time measurement reads).
//!
//! moto's server has no DescribeScalingActivities (it answers HTTP 500): the tests here run the
//! real SDK client against aws-smithy-mocks rules, including throttling and server errors.

use aws_sdk_applicationautoscaling::types::{
    ScalableDimension, ScalingActivity as SdkActivity, ScalingActivityStatusCode, ScalingPolicy,
    ServiceNamespace,
};
use aws_sdk_applicationautoscaling::Client;
use headroom_core::deploy_ports::{ActivityStatus, ScalingActivity, ScalingHistory};
use headroom_core::ids::ScalableTargetId;
use headroom_core::ports::PortError;
use headroom_core::review::{ScalingPolicySummary, StepAdjustment};

use crate::error::{permanent, port_error};
use crate::sagemaker_models::to_chrono;

/// Pages of policies read at most (50 policies per target is AAS's quota: one page suffices;
/// the bound guards against a paging loop).
const MAX_POLICY_PAGES: usize = 5;
/// Activities per call: AAS's maximum page, the most recent first.
const ACTIVITY_PAGE: i32 = 50;

fn bound(b: Option<f64>) -> String {
    b.map_or_else(|| "inf".to_owned(), |v| format!("{v}"))
}

fn summary(p: &ScalingPolicy) -> ScalingPolicySummary {
    let tt = p.target_tracking_scaling_policy_configuration();
    let step = p.step_scaling_policy_configuration();
    let metric = tt.and_then(|c| {
        c.predefined_metric_specification()
            .map(|m| m.predefined_metric_type().as_str().to_owned())
            .or_else(|| {
                c.customized_metric_specification().map(|m| {
                    format!(
                        "{}/{}",
                        m.namespace().unwrap_or("metric-math"),
                        m.metric_name().unwrap_or("(expression)")
                    )
                })
            })
    });
    ScalingPolicySummary {
        name: p.policy_name().to_owned(),
        policy_type: p.policy_type().as_str().to_owned(),
        metric,
        target_value: tt.map(|c| c.target_value()),
        scale_in_cooldown_s: tt.and_then(|c| c.scale_in_cooldown()),
        scale_out_cooldown_s: tt.and_then(|c| c.scale_out_cooldown()),
        disable_scale_in: tt.and_then(|c| c.disable_scale_in()),
        cooldown_s: step.and_then(|c| c.cooldown()),
        steps: step
            .map(|c| {
                c.step_adjustments()
                    .iter()
                    .map(|s| {
                        format!(
                            "[{}, {}) -> {:+} ({})",
                            bound(s.metric_interval_lower_bound()),
                            bound(s.metric_interval_upper_bound()),
                            s.scaling_adjustment(),
                            c.adjustment_type()
                                .map_or("ChangeInCapacity", |t| t.as_str())
                        )
                    })
                    .collect()
            })
            .unwrap_or_default(),
        step_adjustments: step
            .map(|c| {
                c.step_adjustments()
                    .iter()
                    .map(|s| StepAdjustment {
                        lower: s.metric_interval_lower_bound(),
                        upper: s.metric_interval_upper_bound(),
                        adjustment: s.scaling_adjustment(),
                    })
                    .collect()
            })
            .unwrap_or_default(),
        alarms: p
            .alarms()
            .iter()
            .map(|a| a.alarm_name().to_owned())
            .collect(),
    }
}

fn activity(a: &SdkActivity) -> Option<ScalingActivity> {
    let status = match a.status_code() {
        ScalingActivityStatusCode::Successful => ActivityStatus::Successful,
        ScalingActivityStatusCode::InProgress => ActivityStatus::InProgress,
        ScalingActivityStatusCode::Pending => ActivityStatus::Pending,
        ScalingActivityStatusCode::Failed => ActivityStatus::Failed,
        ScalingActivityStatusCode::Unfulfilled => ActivityStatus::Unfulfilled,
        ScalingActivityStatusCode::Overridden => ActivityStatus::Overridden,
        other => ActivityStatus::Other(other.as_str().to_owned()),
    };
    Some(ScalingActivity {
        id: a.activity_id().to_owned(),
        started_at: to_chrono(a.start_time())?,
        ended_at: a.end_time().and_then(to_chrono),
        status,
        description: a.description().to_owned(),
        cause: a.cause().to_owned(),
        message: a.status_message().map(str::to_owned),
    })
}

/// AAS policies and activities of SageMaker targets.
#[derive(Debug, Clone)]
pub struct AasHistory {
    client: Client,
}

impl AasHistory {
    /// The AWS operations this adapter calls (what its IAM policy must allow).
    pub const OPERATIONS: &'static [&'static str] = &[
        "application-autoscaling:DescribeScalingPolicies",
        "application-autoscaling:DescribeScalingActivities",
    ];

    pub fn new(client: Client) -> Self {
        Self { client }
    }
}

impl ScalingHistory for AasHistory {
    async fn policies(
        &self,
        id: &ScalableTargetId,
    ) -> Result<Vec<ScalingPolicySummary>, PortError> {
        let mut out = Vec::new();
        let mut token: Option<String> = None;
        for _ in 0..MAX_POLICY_PAGES {
            let page = self
                .client
                .describe_scaling_policies()
                .service_namespace(ServiceNamespace::Sagemaker)
                .resource_id(id.resource_id())
                .scalable_dimension(ScalableDimension::from(id.dimension().as_str()))
                .set_next_token(token.take())
                .send()
                .await
                .map_err(|e| port_error(format!("describe the scaling policies of {id}"), e))?;
            out.extend(page.scaling_policies().iter().map(summary));
            match page.next_token() {
                Some(t) if !t.is_empty() => token = Some(t.to_owned()),
                _ => return Ok(out),
            }
        }
        Err(permanent(
            format!("describe the scaling policies of {id}"),
            format!("more than {MAX_POLICY_PAGES} pages of policies: AAS keeps paging"),
        ))
    }

    async fn activities(&self, id: &ScalableTargetId) -> Result<Vec<ScalingActivity>, PortError> {
        let page = self
            .client
            .describe_scaling_activities()
            .service_namespace(ServiceNamespace::Sagemaker)
            .resource_id(id.resource_id())
            .scalable_dimension(ScalableDimension::from(id.dimension().as_str()))
            .max_results(ACTIVITY_PAGE)
            .send()
            .await
            .map_err(|e| port_error(format!("describe the scaling activities of {id}"), e))?;
        Ok(page
            .scaling_activities()
            .iter()
            .filter_map(activity)
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use aws_sdk_applicationautoscaling::operation::describe_scaling_activities::DescribeScalingActivitiesError;
    use aws_sdk_applicationautoscaling::operation::describe_scaling_activities::DescribeScalingActivitiesOutput;
    use aws_sdk_applicationautoscaling::operation::describe_scaling_policies::DescribeScalingPoliciesOutput;
    use aws_sdk_applicationautoscaling::types::error::{
        InternalServiceException, ValidationException,
    };
    use aws_sdk_applicationautoscaling::types::{
        Alarm, MetricType, PolicyType, PredefinedMetricSpecification, StepAdjustment,
        StepScalingPolicyConfiguration, TargetTrackingScalingPolicyConfiguration,
    };
    use aws_smithy_mocks::{mock, Rule, RuleMode};
    use aws_smithy_runtime_api::client::orchestrator::HttpResponse;
    use aws_smithy_types::DateTime as SdkTime;
    use headroom_core::ports::ErrorClass;

    use crate::test_support::aas_client_with;

    fn client(rules: &[&Rule], attempts: u32) -> Client {
        aas_client_with(rules, RuleMode::Sequential, attempts)
    }

    fn target() -> ScalableTargetId {
        "endpoint/chat-prod/variant/AllTraffic"
            .parse()
            .expect("valid id")
    }

    fn sdk_activity(
        id: &str,
        start: i64,
        end: Option<i64>,
        to: u32,
        status: ScalingActivityStatusCode,
    ) -> SdkActivity {
        SdkActivity::builder()
            .activity_id(id)
            .service_namespace(ServiceNamespace::Sagemaker)
            .resource_id("endpoint/chat-prod/variant/AllTraffic")
            .scalable_dimension(ScalableDimension::SageMakerVariantDesiredInstanceCount)
            .description(format!("Setting desired instance count to {to}."))
            .cause("monitor alarm TargetTracking-endpoint/chat-prod/variant/AllTraffic-AlarmHigh-1a2b in state ALARM triggered policy inv-per-instance")
            .start_time(SdkTime::from_secs(start))
            .set_end_time(end.map(SdkTime::from_secs))
            .status_code(status)
            .status_message(format!("Successfully set desired instance count to {to}. Change successfully fulfilled by sagemaker."))
            .build()
            .expect("valid activity")
    }

    fn activities_output() -> DescribeScalingActivitiesOutput {
        DescribeScalingActivitiesOutput::builder()
            .scaling_activities(sdk_activity(
                "a2",
                1_773_500_000,
                None,
                5,
                ScalingActivityStatusCode::InProgress,
            ))
            .scaling_activities(sdk_activity(
                "a1",
                1_773_490_000,
                Some(1_773_490_402),
                4,
                ScalingActivityStatusCode::Successful,
            ))
            .build()
    }

    fn json_error(status: u16, code: &str) -> HttpResponse {
        crate::test_support::json_error(status, code, "from the test")
    }

    #[tokio::test]
    async fn reads_activities_with_their_times_for_the_target() {
        let rule = mock!(Client::describe_scaling_activities)
            .match_requests(|r| {
                r.resource_id() == Some("endpoint/chat-prod/variant/AllTraffic")
                    && r.scalable_dimension()
                        == Some(&ScalableDimension::SageMakerVariantDesiredInstanceCount)
                    && r.service_namespace() == Some(&ServiceNamespace::Sagemaker)
            })
            .then_output(activities_output);
        let list = AasHistory::new(client(&[&rule], 1))
            .activities(&target())
            .await
            .expect("read");
        assert_eq!(list.len(), 2);
        let done = list.iter().find(|a| a.id == "a1").expect("a1");
        assert_eq!(done.status, ActivityStatus::Successful);
        assert_eq!(
            done.ended_at.map(|e| (e - done.started_at).num_seconds()),
            Some(402)
        );
        let running = list.iter().find(|a| a.id == "a2").expect("a2");
        assert_eq!(running.status, ActivityStatus::InProgress);
        assert_eq!(running.ended_at, None);
        assert_eq!(rule.num_calls(), 1);
    }

    #[tokio::test]
    async fn throttling_then_success_is_retried_by_the_sdk() {
        let rule = mock!(Client::describe_scaling_activities)
            .sequence()
            .http_response(|| json_error(400, "ThrottlingException"))
            .output(activities_output)
            .build();
        let list = AasHistory::new(client(&[&rule], 3))
            .activities(&target())
            .await
            .expect("read after retry");
        assert_eq!(list.len(), 2);
        assert_eq!(rule.num_calls(), 2);
    }

    #[tokio::test]
    async fn exhausted_throttling_and_5xx_are_retryable() {
        let throttled = mock!(Client::describe_scaling_activities)
            .sequence()
            .http_response(|| json_error(400, "ThrottlingException"))
            .repeatedly()
            .build();
        let err = AasHistory::new(client(&[&throttled], 2))
            .activities(&target())
            .await
            .expect_err("throttled");
        assert_eq!(err.class, ErrorClass::Retryable, "{err}");
        assert!(
            err.operation
                .contains("scaling activities of endpoint/chat-prod/variant/AllTraffic"),
            "{}",
            err.operation
        );
        assert_eq!(throttled.num_calls(), 2);

        // moto's answer for an operation it lacks: HTTP 500 with an HTML page.
        let missing = mock!(Client::describe_scaling_activities)
            .sequence()
            .http_status(
                500,
                Some("<!doctype html><title>500 Internal Server Error</title>".into()),
            )
            .repeatedly()
            .build();
        let err = AasHistory::new(client(&[&missing], 1))
            .activities(&target())
            .await
            .expect_err("500");
        assert_eq!(err.class, ErrorClass::Retryable);

        let internal = mock!(Client::describe_scaling_activities).then_error(|| {
            DescribeScalingActivitiesError::InternalServiceException(
                InternalServiceException::builder().message("boom").build(),
            )
        });
        let err = AasHistory::new(client(&[&internal], 1))
            .activities(&target())
            .await
            .expect_err("internal");
        assert_eq!(err.class, ErrorClass::Retryable);
        assert!(err
            .cause()
            .downcast_ref::<aws_smithy_runtime_api::client::result::SdkError<
                DescribeScalingActivitiesError,
                HttpResponse,
            >>()
            .is_some());
    }

    #[tokio::test]
    async fn validation_is_permanent() {
        let rule = mock!(Client::describe_scaling_activities).then_error(|| {
            DescribeScalingActivitiesError::ValidationException(
                ValidationException::builder()
                    .message("bad resource id")
                    .build(),
            )
        });
        let err = AasHistory::new(client(&[&rule], 3))
            .activities(&target())
            .await
            .expect_err("invalid");
        assert_eq!(err.class, ErrorClass::Permanent);
        assert_eq!(rule.num_calls(), 1);
    }

    #[tokio::test]
    async fn policies_are_summarised_with_metric_target_and_cooldowns_across_pages() {
        let tracking = ScalingPolicy::builder()
            .policy_arn("arn:aws:autoscaling:us-east-1:1:scalingPolicy:x")
            .policy_name("inv-per-instance")
            .service_namespace(ServiceNamespace::Sagemaker)
            .resource_id("endpoint/chat-prod/variant/AllTraffic")
            .scalable_dimension(ScalableDimension::SageMakerVariantDesiredInstanceCount)
            .policy_type(PolicyType::TargetTrackingScaling)
            .target_tracking_scaling_policy_configuration(
                TargetTrackingScalingPolicyConfiguration::builder()
                    .target_value(70.0)
                    .predefined_metric_specification(
                        PredefinedMetricSpecification::builder()
                            .predefined_metric_type(
                                MetricType::SageMakerVariantInvocationsPerInstance,
                            )
                            .build()
                            .expect("valid"),
                    )
                    .scale_in_cooldown(300)
                    .scale_out_cooldown(60)
                    .build()
                    .expect("valid"),
            )
            .alarms(
                Alarm::builder()
                    .alarm_name("TargetTracking-AlarmHigh")
                    .alarm_arn("arn:x")
                    .build()
                    .expect("valid"),
            )
            .creation_time(SdkTime::from_secs(1_773_000_000))
            .build()
            .expect("valid policy");
        let step = ScalingPolicy::builder()
            .policy_arn("arn:aws:autoscaling:us-east-1:1:scalingPolicy:y")
            .policy_name("wake-from-zero")
            .service_namespace(ServiceNamespace::Sagemaker)
            .resource_id("endpoint/chat-prod/variant/AllTraffic")
            .scalable_dimension(ScalableDimension::SageMakerVariantDesiredInstanceCount)
            .policy_type(PolicyType::StepScaling)
            .step_scaling_policy_configuration(
                StepScalingPolicyConfiguration::builder()
                    .cooldown(120)
                    .step_adjustments(
                        StepAdjustment::builder()
                            .metric_interval_lower_bound(0.0)
                            .scaling_adjustment(1)
                            .build()
                            .expect("valid"),
                    )
                    .build(),
            )
            .creation_time(SdkTime::from_secs(1_773_000_000))
            .build()
            .expect("valid policy");
        let rule = mock!(Client::describe_scaling_policies)
            .sequence()
            .output(move || {
                DescribeScalingPoliciesOutput::builder()
                    .scaling_policies(tracking.clone())
                    .next_token("page-2")
                    .build()
            })
            .output(move || {
                DescribeScalingPoliciesOutput::builder()
                    .scaling_policies(step.clone())
                    .build()
            })
            .build();
        let list = AasHistory::new(client(&[&rule], 1))
            .policies(&target())
            .await
            .expect("read");
        assert_eq!(rule.num_calls(), 2, "both pages read");
        assert_eq!(list.len(), 2);
        assert_eq!(list[0].policy_type, "TargetTrackingScaling");
        assert_eq!(
            list[0].metric.as_deref(),
            Some("SageMakerVariantInvocationsPerInstance")
        );
        assert_eq!(list[0].target_value, Some(70.0));
        assert_eq!(
            (list[0].scale_in_cooldown_s, list[0].scale_out_cooldown_s),
            (Some(300), Some(60))
        );
        assert_eq!(list[0].alarms, ["TargetTracking-AlarmHigh"]);
        assert_eq!(list[1].cooldown_s, Some(120));
        assert_eq!(list[1].steps, ["[0, inf) -> +1 (ChangeInCapacity)"]);
        assert_eq!(
            list[1].step_adjustments,
            [headroom_core::review::StepAdjustment {
                lower: Some(0.0),
                upper: None,
                adjustment: 1
            }]
        );
    }
}
