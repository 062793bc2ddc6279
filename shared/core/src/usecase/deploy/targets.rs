//! Which managed targets an event concerns: those on its endpoint (inference components are
//! described only when the endpoint can host them), or, for an endpoint-config event, those on
//! the managed endpoint whose config in force it is.

use crate::deploy_ports::{Endpoints, ReviewStore, ScalingHistory};
use crate::ids::{ComponentName, EndpointName, ScalableTargetId, VariantName};
use crate::metrics_port::DemandHistory;
use crate::plan::{Plan, TargetPlan};
use crate::ports::{ScalingTargets, StateStore};

use super::observe::Observer;
use super::{DeployError, Watcher};

/// Which targets of an endpoint a pipeline hook names.
#[derive(Debug, Clone, Default)]
pub(super) struct Only {
    pub(super) variant: Option<VariantName>,
    pub(super) component: Option<ComponentName>,
}

impl Only {
    fn allows(&self, id: &ScalableTargetId) -> bool {
        match (id, &self.variant, &self.component) {
            (_, None, None) => true,
            (ScalableTargetId::Variant { variant, .. }, Some(v), _) => variant == v,
            (ScalableTargetId::InferenceComponent(name), _, Some(c)) => name == c,
            _ => false,
        }
    }
}

impl<T, H, E, S, R, D> Watcher<'_, T, H, E, S, R, D>
where
    T: ScalingTargets,
    H: ScalingHistory,
    E: Endpoints,
    S: StateStore,
    R: ReviewStore,
    D: DemandHistory,
{
    /// The managed targets hosted on `endpoint` (inference components are described to find
    /// their endpoint).
    pub(super) async fn targets_on<'p>(
        &self,
        plan: &'p Plan,
        endpoint: &EndpointName,
        only: &Only,
        observer: &mut Observer<'_, E>,
    ) -> Result<Vec<&'p TargetPlan>, DeployError> {
        let mut out = Vec::new();
        // Components are described only when this endpoint can host them: an event about one
        // endpoint touches only the targets on it (issue 11, item 11).
        let mut hosts_components = None;
        for t in &plan.targets {
            if !only.allows(&t.id) {
                continue;
            }
            let on_endpoint = match &t.id {
                ScalableTargetId::Variant { endpoint: e, .. } => e == endpoint,
                ScalableTargetId::InferenceComponent(_) => {
                    let hosts = match hosts_components {
                        Some(h) => h,
                        None => {
                            *hosts_components.insert(observer.may_host_components(endpoint).await?)
                        }
                    };
                    hosts
                        && observer.endpoint_of(&t.id).await?.as_deref() == Some(endpoint.as_str())
                }
            };
            if on_endpoint {
                out.push(t);
            }
        }
        Ok(out)
    }

    /// The managed endpoint whose config in force is `config`, if any.
    pub(super) async fn endpoint_using(
        &self,
        plan: &Plan,
        config: &str,
        observer: &mut Observer<'_, E>,
    ) -> Result<Option<EndpointName>, DeployError> {
        let mut seen = std::collections::BTreeSet::new();
        for t in &plan.targets {
            let Some(name) = observer.endpoint_of(&t.id).await? else {
                continue;
            };
            if !seen.insert(name.clone()) {
                continue;
            }
            let Ok(endpoint) = EndpointName::parse(name) else {
                continue;
            };
            if observer
                .endpoint(&endpoint)
                .await?
                .and_then(|e| e.config_name)
                .as_deref()
                == Some(config)
            {
                return Ok(Some(endpoint));
            }
        }
        Ok(None)
    }
}
