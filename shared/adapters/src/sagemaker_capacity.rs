//! SageMaker: the [`CurrentCapacity`] port over the SDK. A variant's counts come from
//! DescribeEndpoint (`ProductionVariants[].DesiredInstanceCount/CurrentInstanceCount`), an
//! inference component's from DescribeInferenceComponent (`RuntimeConfig.DesiredCopyCount/
//! CurrentCopyCount`). A serverless variant's provisioned concurrency comes from DescribeEndpoint
//! too: `ProductionVariants[].DesiredServerlessConfig.ProvisionedConcurrency` and
//! `CurrentServerlessConfig.ProvisionedConcurrency` (SageMaker API reference,
//! ProductionVariantSummary and ProductionVariantServerlessConfig). One call per target; the tick
//! asks only for targets with a pending wake or a firing burst guard.
//!
//! A target SageMaker does not know (SageMaker answers `ValidationException: Could not find ...`)
//! is `None`, not an error: the plan may name an endpoint that is being recreated.

use aws_sdk_sagemaker::Client;
use headroom_core::capacity_port::{Counts, CurrentCapacity};
use headroom_core::ids::{
    ComponentName, EndpointName, ScalableTargetId, VariantCapacity, VariantName,
};
use headroom_core::ports::PortError;

use crate::error::{permanent, sagemaker_found};

/// SageMaker's desired and in-service counts.
#[derive(Debug, Clone)]
pub struct SageMakerCapacity {
    client: Client,
}

impl SageMakerCapacity {
    /// The AWS operations this adapter's methods call, as IAM names them (checked against the
    /// calls in this file and the functions' IAM policies by tests/tests/infra_consistency.rs).
    pub const OPERATIONS: &'static [&'static str] = &[
        "sagemaker:DescribeEndpoint",
        "sagemaker:DescribeInferenceComponent",
    ];

    pub fn new(client: Client) -> Self {
        Self { client }
    }

    async fn variant(
        &self,
        endpoint: &EndpointName,
        variant: &VariantName,
        capacity: VariantCapacity,
    ) -> Result<Option<Counts>, PortError> {
        let operation = || match capacity {
            VariantCapacity::Instances => {
                format!("describe endpoint {endpoint} for its instance counts")
            }
            VariantCapacity::ProvisionedConcurrency => {
                format!("describe endpoint {endpoint} for its provisioned concurrency")
            }
        };
        let Some(out) = sagemaker_found(
            self.client
                .describe_endpoint()
                .endpoint_name(endpoint.as_str())
                .send()
                .await,
            operation,
        )?
        else {
            return Ok(None);
        };
        let Some(v) = out
            .production_variants()
            .iter()
            .find(|v| v.variant_name() == Some(variant.as_str()))
        else {
            return Ok(None);
        };
        let (current, desired) = match capacity {
            VariantCapacity::Instances => (
                count(
                    &operation(),
                    "CurrentInstanceCount",
                    v.current_instance_count(),
                )?,
                count(
                    &operation(),
                    "DesiredInstanceCount",
                    v.desired_instance_count(),
                )?,
            ),
            VariantCapacity::ProvisionedConcurrency => (
                count(
                    &operation(),
                    "CurrentServerlessConfig.ProvisionedConcurrency",
                    v.current_serverless_config()
                        .and_then(|c| c.provisioned_concurrency()),
                )?,
                count(
                    &operation(),
                    "DesiredServerlessConfig.ProvisionedConcurrency",
                    v.desired_serverless_config()
                        .and_then(|c| c.provisioned_concurrency()),
                )?,
            ),
        };
        // While an update settles SageMaker may omit the desired count: the current one stands in.
        Ok(Some(Counts {
            desired: desired.unwrap_or(current.unwrap_or(0)),
            current: current.unwrap_or(0),
        }))
    }

    async fn component(&self, name: &ComponentName) -> Result<Option<Counts>, PortError> {
        let operation = || format!("describe inference component {name} for its copy counts");
        let Some(out) = sagemaker_found(
            self.client
                .describe_inference_component()
                .inference_component_name(name.as_str())
                .send()
                .await,
            operation,
        )?
        else {
            return Ok(None);
        };
        let runtime = out.runtime_config();
        let current = count(
            &operation(),
            "CurrentCopyCount",
            runtime.and_then(|r| r.current_copy_count()),
        )?;
        let desired = count(
            &operation(),
            "DesiredCopyCount",
            runtime.and_then(|r| r.desired_copy_count()),
        )?;
        Ok(Some(Counts {
            desired: desired.unwrap_or(current.unwrap_or(0)),
            current: current.unwrap_or(0),
        }))
    }
}

fn count(operation: &str, field: &str, value: Option<i32>) -> Result<Option<u32>, PortError> {
    value
        .map(|v| {
            u32::try_from(v).map_err(|_| {
                permanent(
                    operation.to_owned(),
                    format!("SageMaker reports a negative {field} ({v})"),
                )
            })
        })
        .transpose()
}

impl CurrentCapacity for SageMakerCapacity {
    async fn desired_and_current(
        &self,
        id: &ScalableTargetId,
    ) -> Result<Option<Counts>, PortError> {
        match id {
            ScalableTargetId::Variant {
                endpoint,
                variant,
                capacity,
            } => self.variant(endpoint, variant, *capacity).await,
            ScalableTargetId::InferenceComponent(name) => self.component(name).await,
        }
    }
}

#[cfg(test)]
mod tests {
    //! A real SageMaker client whose HTTP layer answers from aws-smithy-mocks rules: moto has no
    //! inference components, and throttling cannot be provoked against moto.

    use super::*;
    use aws_sdk_sagemaker::operation::describe_endpoint::DescribeEndpointOutput;
    use aws_sdk_sagemaker::operation::describe_inference_component::DescribeInferenceComponentError;
    use aws_sdk_sagemaker::operation::describe_inference_component::DescribeInferenceComponentOutput;
    use aws_sdk_sagemaker::types::{
        EndpointStatus, InferenceComponentRuntimeConfigSummary, InferenceComponentStatus,
        ProductionVariantServerlessConfig, ProductionVariantSummary,
    };
    use aws_smithy_mocks::{mock, Rule, RuleMode};
    use aws_smithy_runtime_api::client::orchestrator::HttpResponse;
    use aws_smithy_runtime_api::client::result::SdkError;
    use aws_smithy_types::error::metadata::ProvideErrorMetadata;
    use headroom_core::ports::ErrorClass;

    use crate::test_support::{json_error as error_response, sagemaker_client_with};

    fn client(rules: &[&Rule], attempts: u32) -> Client {
        sagemaker_client_with(rules, RuleMode::MatchAny, attempts)
    }

    fn id(s: &str) -> ScalableTargetId {
        s.parse().expect("valid id")
    }

    fn variant(name: &str, desired: i32, current: i32) -> ProductionVariantSummary {
        ProductionVariantSummary::builder()
            .variant_name(name)
            .desired_instance_count(desired)
            .current_instance_count(current)
            .build()
    }

    fn endpoint_rule() -> Rule {
        mock!(Client::describe_endpoint)
            .match_requests(|r| r.endpoint_name() == Some("chat-prod"))
            .then_output(|| {
                DescribeEndpointOutput::builder()
                    .endpoint_name("chat-prod")
                    .endpoint_status(EndpointStatus::Updating)
                    .production_variants(variant("Blue", 2, 2))
                    .production_variants(variant("AllTraffic", 6, 4))
                    .build()
            })
    }

    fn component_rule(desired: i32, current: i32) -> Rule {
        mock!(Client::describe_inference_component)
            .match_requests(|r| r.inference_component_name() == Some("llama-8b-ic"))
            .then_output(move || {
                DescribeInferenceComponentOutput::builder()
                    .inference_component_name("llama-8b-ic")
                    .inference_component_status(InferenceComponentStatus::InService)
                    .runtime_config(
                        InferenceComponentRuntimeConfigSummary::builder()
                            .desired_copy_count(desired)
                            .current_copy_count(current)
                            .build(),
                    )
                    .build()
            })
    }

    #[tokio::test]
    async fn a_variant_reports_its_own_counts_among_several() {
        let rule = endpoint_rule();
        let port = SageMakerCapacity::new(client(&[&rule], 1));
        let got = port
            .desired_and_current(&id("endpoint/chat-prod/variant/AllTraffic"))
            .await
            .expect("counts");
        assert_eq!(
            got,
            Some(Counts {
                desired: 6,
                current: 4
            })
        );
        let got = port
            .desired_and_current(&id("endpoint/chat-prod/variant/Green"))
            .await
            .expect("no error for a missing variant");
        assert_eq!(got, None);
        assert_eq!(rule.num_calls(), 2);
    }

    #[tokio::test]
    async fn a_serverless_variant_reports_its_provisioned_concurrency() {
        // GIVEN a serverless variant whose provisioned concurrency is being raised from 2 to 8
        let serverless = |pc: i32| {
            ProductionVariantServerlessConfig::builder()
                .memory_size_in_mb(2048)
                .max_concurrency(20)
                .provisioned_concurrency(pc)
                .build()
        };
        let rule = mock!(Client::describe_endpoint)
            .match_requests(|r| r.endpoint_name() == Some("faq-bot"))
            .then_output(move || {
                DescribeEndpointOutput::builder()
                    .endpoint_name("faq-bot")
                    .endpoint_status(EndpointStatus::Updating)
                    .production_variants(
                        ProductionVariantSummary::builder()
                            .variant_name("AllTraffic")
                            .current_serverless_config(serverless(2))
                            .desired_serverless_config(serverless(8))
                            .build(),
                    )
                    .build()
            });
        let port = SageMakerCapacity::new(client(&[&rule], 1));
        // WHEN its provisioned-concurrency target is read
        let pc = ScalableTargetId::provisioned_concurrency("faq-bot", "AllTraffic").unwrap();
        let got = port.desired_and_current(&pc).await.expect("counts");
        // THEN the counts are the provisioned concurrency, not instances (it has none)
        assert_eq!(
            got,
            Some(Counts {
                desired: 8,
                current: 2
            })
        );
        // AND the instance-count target of the same variant sees no instances
        let instances = id("endpoint/faq-bot/variant/AllTraffic");
        let got = port.desired_and_current(&instances).await.expect("counts");
        assert_eq!(
            got,
            Some(Counts {
                desired: 0,
                current: 0
            })
        );
    }

    #[tokio::test]
    async fn an_inference_component_reports_its_copy_counts() {
        let rule = component_rule(2, 0);
        let port = SageMakerCapacity::new(client(&[&rule], 1));
        let got = port
            .desired_and_current(&id("inference-component/llama-8b-ic"))
            .await
            .expect("counts");
        assert_eq!(
            got,
            Some(Counts {
                desired: 2,
                current: 0
            })
        );
    }

    #[tokio::test]
    async fn unknown_endpoints_and_components_are_none_not_errors() {
        let endpoint = mock!(Client::describe_endpoint).then_http_response(|| {
            error_response(
                400,
                "ValidationException",
                "Could not find endpoint \\\"arn:aws:sagemaker:us-east-1:123456789012:endpoint/gone\\\".",
            )
        });
        let component = mock!(Client::describe_inference_component).then_http_response(|| {
            error_response(
                400,
                "ValidationException",
                "Could not find inference component \\\"gone\\\".",
            )
        });
        let port = SageMakerCapacity::new(client(&[&endpoint, &component], 1));
        assert_eq!(
            port.desired_and_current(&id("endpoint/gone/variant/AllTraffic"))
                .await
                .expect("none"),
            None
        );
        assert_eq!(
            port.desired_and_current(&id("inference-component/gone"))
                .await
                .expect("none"),
            None
        );
    }

    #[tokio::test]
    async fn throttling_is_retryable_names_the_target_and_keeps_the_sdk_error() {
        let rule = mock!(Client::describe_inference_component)
            .then_http_response(|| error_response(400, "ThrottlingException", "Rate exceeded"));
        let port = SageMakerCapacity::new(client(&[&rule], 1));
        let err = port
            .desired_and_current(&id("inference-component/llama-8b-ic"))
            .await
            .expect_err("throttled");
        assert_eq!(err.class, ErrorClass::Retryable);
        assert!(err.operation.contains("llama-8b-ic"), "{}", err.operation);
        let sdk = err
            .cause()
            .downcast_ref::<SdkError<DescribeInferenceComponentError, HttpResponse>>()
            .expect("the SDK error stays the cause");
        assert_eq!(
            sdk.as_service_error().and_then(|e| e.code()),
            Some("ThrottlingException")
        );
    }

    #[tokio::test]
    async fn the_sdk_retries_throttling_and_then_succeeds() {
        // Two throttled answers, then the counts: with 3 attempts the caller never sees the
        // throttling.
        let rule = mock!(Client::describe_inference_component)
            .sequence()
            .http_response(|| error_response(400, "ThrottlingException", "Rate exceeded"))
            .times(2)
            .output(|| {
                DescribeInferenceComponentOutput::builder()
                    .runtime_config(
                        InferenceComponentRuntimeConfigSummary::builder()
                            .desired_copy_count(1)
                            .current_copy_count(1)
                            .build(),
                    )
                    .build()
            })
            .build();
        let port = SageMakerCapacity::new(client(&[&rule], 3));
        let got = port
            .desired_and_current(&id("inference-component/llama-8b-ic"))
            .await
            .expect("retried to success");
        assert_eq!(
            got,
            Some(Counts {
                desired: 1,
                current: 1
            })
        );
        assert_eq!(rule.num_calls(), 3);
    }

    #[tokio::test]
    async fn access_denied_and_bad_counts_are_permanent() {
        let rule = mock!(Client::describe_endpoint).then_http_response(|| {
            error_response(
                400,
                "AccessDeniedException",
                "not authorized to perform: sagemaker:DescribeEndpoint",
            )
        });
        let port = SageMakerCapacity::new(client(&[&rule], 1));
        let err = port
            .desired_and_current(&id("endpoint/chat-prod/variant/AllTraffic"))
            .await
            .expect_err("denied");
        assert_eq!(err.class, ErrorClass::Permanent);

        let rule = component_rule(-1, 0);
        let port = SageMakerCapacity::new(client(&[&rule], 1));
        let err = port
            .desired_and_current(&id("inference-component/llama-8b-ic"))
            .await
            .expect_err("negative");
        assert_eq!(err.class, ErrorClass::Permanent);
        assert!(
            err.to_string().contains("negative DesiredCopyCount"),
            "{err}"
        );
    }

    #[tokio::test]
    async fn server_errors_are_retryable() {
        let rule = mock!(Client::describe_endpoint)
            .then_http_response(|| error_response(503, "ServiceUnavailable", "try later"));
        let port = SageMakerCapacity::new(client(&[&rule], 1));
        let err = port
            .desired_and_current(&id("endpoint/chat-prod/variant/AllTraffic"))
            .await
            .expect_err("503");
        assert_eq!(err.class, ErrorClass::Retryable);
    }
}
