//! Reading the model identity behind a managed target from SageMaker:
//! DescribeEndpoint -> EndpointConfigName -> DescribeEndpointConfig -> the variant's ModelName ->
//! DescribeModel, or, for an inference component, DescribeInferenceComponent -> its model and
//! container. One invocation describes each resource at most once (variants of one endpoint
//! share its config).

use std::collections::HashMap;

use crate::deploy_ports::{ComponentView, EndpointConfigView, EndpointView, Endpoints, ModelView};
use crate::identity::ModelIdentity;
use crate::ids::{ComponentName, EndpointName, ScalableTargetId};
use chrono::{DateTime, Utc};

use super::error::{port, DeployError};

/// What SageMaker says about one managed target.
#[derive(Debug, Clone, PartialEq)]
pub enum Observation {
    Serving {
        identity: Box<ModelIdentity>,
        /// The ARN of the endpoint hosting the target (for the review tag).
        endpoint_arn: Option<String>,
    },
    /// The endpoint, config, model or component does not exist (deleted, or not created yet).
    Absent { why: String },
}

pub struct Observer<'a, E: Endpoints> {
    endpoints: &'a E,
    now: DateTime<Utc>,
    endpoint_cache: HashMap<String, Option<EndpointView>>,
    config_cache: HashMap<String, Option<EndpointConfigView>>,
    model_cache: HashMap<String, Option<ModelView>>,
    component_cache: HashMap<String, Option<ComponentView>>,
}

impl<'a, E: Endpoints> Observer<'a, E> {
    pub fn new(endpoints: &'a E, now: DateTime<Utc>) -> Self {
        Self {
            endpoints,
            now,
            endpoint_cache: HashMap::new(),
            config_cache: HashMap::new(),
            model_cache: HashMap::new(),
            component_cache: HashMap::new(),
        }
    }

    pub async fn endpoint(
        &mut self,
        name: &EndpointName,
    ) -> Result<Option<EndpointView>, DeployError> {
        if let Some(hit) = self.endpoint_cache.get(name.as_str()) {
            return Ok(hit.clone());
        }
        let got = self
            .endpoints
            .describe_endpoint(name)
            .await
            .map_err(port(name, "describe the endpoint"))?;
        self.endpoint_cache.insert(name.to_string(), got.clone());
        Ok(got)
    }

    /// Whether `endpoint` may host inference components: a variant that hosts them names no
    /// model in the endpoint config (the components name theirs). An endpoint or config that
    /// cannot be found may (nothing rules it out). Lets an event about a model-based endpoint
    /// skip describing every component of the plan, so one component's failures cannot fail it.
    pub async fn may_host_components(
        &mut self,
        endpoint: &EndpointName,
    ) -> Result<bool, DeployError> {
        let Some(config_name) = self.endpoint(endpoint).await?.and_then(|e| e.config_name) else {
            return Ok(true);
        };
        Ok(self
            .config(&config_name)
            .await?
            .is_none_or(|c| c.variants.iter().any(|v| v.model_name.is_none())))
    }

    pub async fn config(&mut self, name: &str) -> Result<Option<EndpointConfigView>, DeployError> {
        if let Some(hit) = self.config_cache.get(name) {
            return Ok(hit.clone());
        }
        let got = self
            .endpoints
            .describe_endpoint_config(name)
            .await
            .map_err(port(name, "describe the endpoint config"))?;
        self.config_cache.insert(name.to_owned(), got.clone());
        Ok(got)
    }

    async fn model(&mut self, name: &str) -> Result<Option<ModelView>, DeployError> {
        if let Some(hit) = self.model_cache.get(name) {
            return Ok(hit.clone());
        }
        let got = self
            .endpoints
            .describe_model(name)
            .await
            .map_err(port(name, "describe the model"))?;
        self.model_cache.insert(name.to_owned(), got.clone());
        Ok(got)
    }

    pub async fn component(
        &mut self,
        name: &ComponentName,
    ) -> Result<Option<ComponentView>, DeployError> {
        if let Some(hit) = self.component_cache.get(name.as_str()) {
            return Ok(hit.clone());
        }
        let got = self
            .endpoints
            .describe_inference_component(name)
            .await
            .map_err(port(name, "describe the inference component"))?;
        self.component_cache.insert(name.to_string(), got.clone());
        Ok(got)
    }

    /// The endpoint hosting a target: named by a variant's id, read from SageMaker for an
    /// inference component. `None` when the component does not exist.
    pub async fn endpoint_of(
        &mut self,
        id: &ScalableTargetId,
    ) -> Result<Option<String>, DeployError> {
        match id {
            ScalableTargetId::Variant { endpoint, .. } => Ok(Some(endpoint.to_string())),
            ScalableTargetId::InferenceComponent(name) => {
                Ok(self.component(name).await?.and_then(|c| c.endpoint))
            }
        }
    }

    /// The identity serving behind `id` now.
    pub async fn observe(&mut self, id: &ScalableTargetId) -> Result<Observation, DeployError> {
        match id {
            ScalableTargetId::Variant {
                endpoint, variant, ..
            } => self.observe_variant(endpoint, variant.as_str()).await,
            ScalableTargetId::InferenceComponent(name) => self.observe_component(name).await,
        }
    }

    async fn observe_variant(
        &mut self,
        endpoint: &EndpointName,
        variant: &str,
    ) -> Result<Observation, DeployError> {
        let absent = |why: String| Ok(Observation::Absent { why });
        let Some(ep) = self.endpoint(endpoint).await? else {
            return absent(format!("endpoint {endpoint} does not exist"));
        };
        let Some(config_name) = ep.config_name.clone() else {
            return absent(format!("endpoint {endpoint} reports no endpoint config"));
        };
        let Some(config) = self.config(&config_name).await? else {
            return absent(format!(
                "endpoint config {config_name} of {endpoint} does not exist"
            ));
        };
        let Some(cv) = config.variants.iter().find(|v| v.name == variant).cloned() else {
            return absent(format!(
                "endpoint config {config_name} has no variant {variant}"
            ));
        };
        let mut identity = ModelIdentity {
            endpoint: Some(endpoint.to_string()),
            endpoint_config: Some(config_name.clone()),
            inference_component: None,
            model_name: cv.model_name.clone(),
            model_arn: None,
            containers: Vec::new(),
            instance_type: cv.instance_type.clone(),
            version_label: None,
            observed_at: self.now,
        };
        // A variant hosting inference components names no model: its identity is its config's
        // shape, and the components carry their own identities.
        if let Some(model_name) = &cv.model_name {
            let Some(model) = self.model(model_name).await? else {
                return absent(format!(
                    "model {model_name} of {config_name}/{variant} does not exist"
                ));
            };
            identity.model_arn = model.arn;
            identity.containers = model.containers;
        }
        Ok(Observation::Serving {
            identity: Box::new(identity),
            endpoint_arn: ep.arn,
        })
    }

    async fn observe_component(
        &mut self,
        name: &ComponentName,
    ) -> Result<Observation, DeployError> {
        let Some(ic) = self.component(name).await? else {
            return Ok(Observation::Absent {
                why: format!("inference component {name} does not exist"),
            });
        };
        let mut identity = ModelIdentity {
            endpoint: ic.endpoint.clone(),
            endpoint_config: None,
            inference_component: Some(name.to_string()),
            model_name: ic.model_name.clone(),
            model_arn: None,
            containers: Vec::new(),
            instance_type: None,
            version_label: None,
            observed_at: self.now,
        };
        if let Some(model_name) = &ic.model_name {
            match self.model(model_name).await? {
                Some(model) => {
                    identity.model_arn = model.arn;
                    identity.containers = model.containers;
                }
                None => {
                    return Ok(Observation::Absent {
                        why: format!(
                            "model {model_name} of inference component {name} does not exist"
                        ),
                    })
                }
            }
        }
        // The component's own container (image, artifact) serves too.
        identity.containers.extend(ic.container.clone());
        let endpoint_arn = match ic.endpoint.as_deref().map(EndpointName::parse) {
            Some(Ok(ep)) => self.endpoint(&ep).await?.and_then(|e| e.arn),
            _ => None,
        };
        Ok(Observation::Serving {
            identity: Box::new(identity),
            endpoint_arn,
        })
    }
}
