//! SageMaker: the deployment watcher's [`Endpoints`] port over the SDK. DescribeEndpoint,
//! DescribeEndpointConfig, DescribeModel and DescribeInferenceComponent become domain views;
//! AddTags marks an endpoint whose policies need a review.
//!
//! A resource SageMaker does not know (`ValidationException: Could not find ...`) is `Ok(None)`:
//! deletions race with events, and "gone" is an answer, not a failure.

use aws_sdk_sagemaker::types::{ContainerDefinition, Tag};
use aws_sdk_sagemaker::Client;
use chrono::{DateTime, Utc};
use headroom_core::deploy_ports::{
    ComponentView, ConfigVariantView, EndpointConfigView, EndpointVariantView, EndpointView,
    Endpoints, ManagedInstanceScalingView, ModelView,
};
use headroom_core::endpoint_status::EndpointStatus;
use headroom_core::identity::ContainerIdentity;
use headroom_core::ids::{ComponentName, EndpointName};
use headroom_core::ports::PortError;

use crate::error::{port_error, sagemaker_found};

pub(crate) fn to_chrono(t: &aws_smithy_types::DateTime) -> Option<DateTime<Utc>> {
    DateTime::from_timestamp(t.secs(), t.subsec_nanos())
}

fn count(n: Option<i32>) -> Option<u32> {
    n.and_then(|n| u32::try_from(n).ok())
}

fn container(c: &ContainerDefinition) -> ContainerIdentity {
    ContainerIdentity {
        image: c.image().map(str::to_owned),
        model_data: c
            .model_data_url()
            .or_else(|| {
                c.model_data_source()
                    .and_then(|s| s.s3_data_source())
                    .and_then(|s| s.s3_uri())
            })
            .map(str::to_owned),
        model_package: c.model_package_name().map(str::to_owned),
    }
}

/// SageMaker endpoints, configs, models and inference components, read for model identity.
#[derive(Debug, Clone)]
pub struct SageMakerModels {
    client: Client,
}

impl SageMakerModels {
    /// The AWS operations this adapter calls (what its IAM policy must allow).
    pub const OPERATIONS: &'static [&'static str] = &[
        "sagemaker:DescribeEndpoint",
        "sagemaker:DescribeEndpointConfig",
        "sagemaker:DescribeModel",
        "sagemaker:DescribeInferenceComponent",
        "sagemaker:AddTags",
    ];

    pub fn new(client: Client) -> Self {
        Self { client }
    }
}

/// A variant's ManagedInstanceScaling in headroom's terms.
fn managed_instance_scaling(
    m: &aws_sdk_sagemaker::types::ProductionVariantManagedInstanceScaling,
) -> ManagedInstanceScalingView {
    let policy = m.scale_in_policy();
    ManagedInstanceScalingView {
        enabled: m.status().is_some_and(|s| s.as_str() == "ENABLED"),
        min_instances: count(m.min_instance_count()),
        max_instances: count(m.max_instance_count()),
        scale_in_strategy: policy
            .and_then(|p| p.strategy())
            .map(|s| s.as_str().to_owned()),
        scale_in_cooldown_minutes: policy.and_then(|p| count(p.cooldown_in_minutes())),
    }
}

impl Endpoints for SageMakerModels {
    async fn describe_endpoint(
        &self,
        name: &EndpointName,
    ) -> Result<Option<EndpointView>, PortError> {
        let Some(out) = sagemaker_found(
            self.client
                .describe_endpoint()
                .endpoint_name(name.as_str())
                .send()
                .await,
            || format!("describe endpoint {name}"),
        )?
        else {
            return Ok(None);
        };
        Ok(Some(EndpointView {
            name: name.clone(),
            arn: out.endpoint_arn().map(str::to_owned),
            config_name: out.endpoint_config_name().map(str::to_owned),
            status: EndpointStatus::parse(out.endpoint_status().map_or("", |s| s.as_str())),
            variants: out
                .production_variants()
                .iter()
                .filter_map(|v| {
                    Some(EndpointVariantView {
                        name: v.variant_name()?.to_owned(),
                        current_instances: count(v.current_instance_count()),
                        desired_instances: count(v.desired_instance_count()),
                    })
                })
                .collect(),
            last_modified: out.last_modified_time().and_then(to_chrono),
        }))
    }

    async fn describe_endpoint_config(
        &self,
        name: &str,
    ) -> Result<Option<EndpointConfigView>, PortError> {
        let Some(out) = sagemaker_found(
            self.client
                .describe_endpoint_config()
                .endpoint_config_name(name)
                .send()
                .await,
            || format!("describe endpoint config {name}"),
        )?
        else {
            return Ok(None);
        };
        Ok(Some(EndpointConfigView {
            name: name.to_owned(),
            variants: out
                .production_variants()
                .iter()
                .filter_map(|v| {
                    Some(ConfigVariantView {
                        name: v.variant_name()?.to_owned(),
                        model_name: v.model_name().map(str::to_owned),
                        instance_type: v.instance_type().map(|t| t.as_str().to_owned()),
                        serverless: v.serverless_config().is_some(),
                        managed_instance_scaling: v
                            .managed_instance_scaling()
                            .map(managed_instance_scaling),
                    })
                })
                .collect(),
            async_inference: out.async_inference_config().is_some(),
        }))
    }

    async fn describe_model(&self, name: &str) -> Result<Option<ModelView>, PortError> {
        let Some(out) = sagemaker_found(
            self.client.describe_model().model_name(name).send().await,
            || format!("describe model {name}"),
        )?
        else {
            return Ok(None);
        };
        // A single-container model has PrimaryContainer; an inference pipeline has Containers.
        let containers = match out.primary_container() {
            Some(c) => vec![container(c)],
            None => out.containers().iter().map(container).collect(),
        };
        Ok(Some(ModelView {
            name: name.to_owned(),
            arn: out.model_arn().map(str::to_owned),
            containers,
        }))
    }

    async fn describe_inference_component(
        &self,
        name: &ComponentName,
    ) -> Result<Option<ComponentView>, PortError> {
        let Some(out) = sagemaker_found(
            self.client
                .describe_inference_component()
                .inference_component_name(name.as_str())
                .send()
                .await,
            || format!("describe inference component {name}"),
        )?
        else {
            return Ok(None);
        };
        let spec = out.specification();
        let container = spec.and_then(|s| s.container()).map(|c| ContainerIdentity {
            // The image as specified (what a deployment changes), not the resolved digest.
            image: c
                .deployed_image()
                .and_then(|d| d.specified_image().or(d.resolved_image()))
                .map(str::to_owned),
            model_data: c.artifact_url().map(str::to_owned),
            model_package: None,
        });
        Ok(Some(ComponentView {
            name: name.clone(),
            arn: out.inference_component_arn().map(str::to_owned),
            endpoint: out.endpoint_name().map(str::to_owned),
            variant: out.variant_name().map(str::to_owned),
            model_name: spec.and_then(|s| s.model_name()).map(str::to_owned),
            container,
            status: out
                .inference_component_status()
                .map(|s| s.as_str().to_owned()),
        }))
    }

    async fn tag_endpoint(
        &self,
        endpoint_arn: &str,
        key: &str,
        value: &str,
    ) -> Result<(), PortError> {
        let tag = Tag::builder().key(key).value(value).build();
        self.client
            .add_tags()
            .resource_arn(endpoint_arn)
            .tags(tag)
            .send()
            .await
            .map_err(|e| port_error(format!("tag {endpoint_arn} with {key}={value}"), e))?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    //! What moto cannot serve (inference components) through a real SDK client with a mocked
    //! HTTP layer; the rest runs against moto in tests/tests/moto_deploy.rs.

    use super::*;
    use aws_sdk_sagemaker::operation::describe_inference_component::DescribeInferenceComponentOutput;
    use aws_sdk_sagemaker::operation::describe_model::DescribeModelOutput;
    use aws_sdk_sagemaker::types::{
        DeployedImage, InferenceComponentContainerSpecificationSummary,
        InferenceComponentSpecificationSummary, InferenceComponentStatus, ModelDataSource,
        S3ModelDataSource,
    };
    use aws_smithy_mocks::{mock, Rule, RuleMode};
    use aws_smithy_runtime_api::client::orchestrator::HttpResponse;
    use aws_smithy_runtime_api::client::result::SdkError;
    use headroom_core::ports::ErrorClass;

    use crate::test_support::{json_error, sagemaker_client_with};

    fn client(rules: &[&Rule], attempts: u32) -> Client {
        sagemaker_client_with(rules, RuleMode::Sequential, attempts)
    }

    fn ic_output() -> DescribeInferenceComponentOutput {
        DescribeInferenceComponentOutput::builder()
            .inference_component_name("ic-llama")
            .inference_component_arn("arn:aws:sagemaker:us-east-1:123456789012:inference-component/ic-llama")
            .endpoint_name("chat-prod")
            .endpoint_arn("arn:aws:sagemaker:us-east-1:123456789012:endpoint/chat-prod")
            .variant_name("AllTraffic")
            .inference_component_status(InferenceComponentStatus::InService)
            .specification(
                InferenceComponentSpecificationSummary::builder()
                    .model_name("llama-v8")
                    .container(
                        InferenceComponentContainerSpecificationSummary::builder()
                            .deployed_image(
                                DeployedImage::builder()
                                    .specified_image("763104351884.dkr.ecr.us-east-1.amazonaws.com/djl-inference:0.29.0-lmi11")
                                    .resolved_image("763104351884.dkr.ecr.us-east-1.amazonaws.com/djl-inference@sha256:abc")
                                    .build(),
                            )
                            .artifact_url("s3://models/llama-v8/")
                            .build(),
                    )
                    .build(),
            )
            .build()
    }

    fn ic_name() -> ComponentName {
        ComponentName::parse("ic-llama").expect("valid name")
    }

    #[tokio::test]
    async fn reads_an_inference_component_model_and_container() {
        let rule = mock!(Client::describe_inference_component)
            .match_requests(|r| r.inference_component_name() == Some("ic-llama"))
            .then_output(ic_output);
        let ic = SageMakerModels::new(client(&[&rule], 1))
            .describe_inference_component(&ic_name())
            .await
            .expect("described")
            .expect("exists");
        assert_eq!(ic.endpoint.as_deref(), Some("chat-prod"));
        assert_eq!(ic.model_name.as_deref(), Some("llama-v8"));
        let c = ic.container.expect("container");
        assert_eq!(
            c.image.as_deref(),
            Some("763104351884.dkr.ecr.us-east-1.amazonaws.com/djl-inference:0.29.0-lmi11")
        );
        assert_eq!(c.model_data.as_deref(), Some("s3://models/llama-v8/"));
        assert_eq!(ic.status.as_deref(), Some("InService"));
        assert_eq!(rule.num_calls(), 1);
    }

    #[tokio::test]
    async fn an_unknown_inference_component_is_none() {
        let rule = mock!(Client::describe_inference_component).then_http_response(|| {
            json_error(
                400,
                "ValidationException",
                "Could not find inference component \\\"ic-llama\\\".",
            )
        });
        let got = SageMakerModels::new(client(&[&rule], 1))
            .describe_inference_component(&ic_name())
            .await;
        assert!(matches!(got, Ok(None)), "{got:?}");
    }

    #[tokio::test]
    async fn throttling_is_retried_by_the_sdk_then_succeeds() {
        let rule = mock!(Client::describe_inference_component)
            .sequence()
            .http_response(|| json_error(400, "ThrottlingException", "Rate exceeded"))
            .times(2)
            .output(ic_output)
            .build();
        let got = SageMakerModels::new(client(&[&rule], 3))
            .describe_inference_component(&ic_name())
            .await;
        assert!(matches!(got, Ok(Some(_))), "{got:?}");
        assert_eq!(
            rule.num_calls(),
            3,
            "two throttled attempts, then the answer"
        );
    }

    #[tokio::test]
    async fn persistent_throttling_and_server_errors_are_retryable() {
        let throttled = mock!(Client::describe_inference_component)
            .sequence()
            .http_response(|| json_error(400, "ThrottlingException", "Rate exceeded"))
            .repeatedly()
            .build();
        let err = SageMakerModels::new(client(&[&throttled], 3))
            .describe_inference_component(&ic_name())
            .await
            .expect_err("throttled throughout");
        assert_eq!(err.class, ErrorClass::Retryable, "{err}");
        assert!(err.operation.contains("ic-llama"), "{}", err.operation);
        assert_eq!(throttled.num_calls(), 3);

        let broken = mock!(Client::describe_inference_component)
            .sequence()
            .http_status(503, Some("<html>Service Unavailable</html>".into()))
            .http_status(500, None)
            .build();
        let err = SageMakerModels::new(client(&[&broken], 2))
            .describe_inference_component(&ic_name())
            .await
            .expect_err("5xx throughout");
        assert_eq!(err.class, ErrorClass::Retryable, "{err}");
        // The SDK error is kept as the cause, not flattened.
        assert!(err
            .cause()
            .downcast_ref::<SdkError<aws_sdk_sagemaker::operation::describe_inference_component::DescribeInferenceComponentError, HttpResponse>>()
            .is_some());
    }

    #[tokio::test]
    async fn access_denied_is_permanent() {
        let rule = mock!(Client::describe_inference_component).then_http_response(|| {
            json_error(
                400,
                "AccessDeniedException",
                "not authorized to perform sagemaker:DescribeInferenceComponent",
            )
        });
        let err = SageMakerModels::new(client(&[&rule], 3))
            .describe_inference_component(&ic_name())
            .await
            .expect_err("denied");
        assert_eq!(err.class, ErrorClass::Permanent);
        assert_eq!(rule.num_calls(), 1, "a permanent error is not retried");
    }

    #[tokio::test]
    async fn model_data_source_stands_in_for_model_data_url() {
        let rule = mock!(Client::describe_model).then_output(|| {
            DescribeModelOutput::builder()
                .model_name("llama-v8")
                .model_arn("arn:aws:sagemaker:us-east-1:123456789012:model/llama-v8")
                .primary_container(
                    ContainerDefinition::builder()
                        .image("763104351884.dkr.ecr.us-east-1.amazonaws.com/djl-inference:0.29.0-lmi11")
                        .model_data_source(
                            ModelDataSource::builder()
                                .s3_data_source(
                                    S3ModelDataSource::builder()
                                        .s3_uri("s3://models/llama-v8/")
                                        .s3_data_type(aws_sdk_sagemaker::types::S3ModelDataType::S3Prefix)
                                        .compression_type(aws_sdk_sagemaker::types::ModelCompressionType::None)
                                        .build(),
                                )
                                .build(),
                        )
                        .model_package_name("arn:aws:sagemaker:us-east-1:123456789012:model-package/chat/8")
                        .build(),
                )
                .build()
        });
        let m = SageMakerModels::new(client(&[&rule], 1))
            .describe_model("llama-v8")
            .await
            .expect("described")
            .expect("exists");
        assert_eq!(m.containers.len(), 1);
        assert_eq!(
            m.containers[0].model_data.as_deref(),
            Some("s3://models/llama-v8/")
        );
        assert_eq!(m.containers[0].model_package_version(), Some(8));
    }

    #[tokio::test]
    async fn an_endpoint_config_for_components_carries_its_managed_instance_scaling() {
        use aws_sdk_sagemaker::operation::describe_endpoint_config::DescribeEndpointConfigOutput;
        use aws_sdk_sagemaker::types::{
            ManagedInstanceScalingScaleInStrategy, ManagedInstanceScalingStatus, ProductionVariant,
            ProductionVariantManagedInstanceScaling,
            ProductionVariantManagedInstanceScalingScaleInPolicy,
        };
        // GIVEN a variant hosting components (no model), SageMaker scaling its instances 0..4
        // and releasing idle ones (moto stores no ManagedInstanceScaling: mocked)
        let answer = mock!(Client::describe_endpoint_config).then_output(|| {
            DescribeEndpointConfigOutput::builder()
                .endpoint_config_name("llm-config")
                .production_variants(
                    ProductionVariant::builder()
                        .variant_name("AllTraffic")
                        .instance_type(
                            aws_sdk_sagemaker::types::ProductionVariantInstanceType::MlG512Xlarge,
                        )
                        .managed_instance_scaling(
                            ProductionVariantManagedInstanceScaling::builder()
                                .status(ManagedInstanceScalingStatus::Enabled)
                                .min_instance_count(0)
                                .max_instance_count(4)
                                .scale_in_policy(
                                    ProductionVariantManagedInstanceScalingScaleInPolicy::builder()
                                        .strategy(
                                            ManagedInstanceScalingScaleInStrategy::IdleRelease,
                                        )
                                        .build(),
                                )
                                .build(),
                        )
                        .build(),
                )
                .build()
        });
        // WHEN it is described
        let c = SageMakerModels::new(client(&[&answer], 1))
            .describe_endpoint_config("llm-config")
            .await
            .unwrap()
            .unwrap();
        // THEN the strategy is kept, the cooldown left unset (SageMaker's default applies)
        let v = &c.variants[0];
        assert_eq!(v.model_name, None);
        assert!(!v.serverless && !c.async_inference);
        assert_eq!(
            v.managed_instance_scaling,
            Some(ManagedInstanceScalingView {
                enabled: true,
                min_instances: Some(0),
                max_instances: Some(4),
                scale_in_strategy: Some("IDLE_RELEASE".into()),
                scale_in_cooldown_minutes: None,
            })
        );
    }
}
