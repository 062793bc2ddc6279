//! A SageMaker state change: find the managed endpoint it concerns (an endpoint-config event
//! names only its config), then watch the endpoint's managed targets.

use chrono::{DateTime, Utc};

use crate::deploy_ports::{Endpoints, ReviewStore, ScalingHistory};
use crate::metrics_port::DemandHistory;
use crate::ports::{ScalingTargets, StateStore};
use crate::reconcile::load_plan;
use crate::trigger::{SageMakerEvent, SageMakerEventKind};

use super::observe::Observer;
use super::targets::Only;
use super::watch::Watch;
use super::{DeployError, Outcome, Response, Watcher};

impl<T, H, E, S, R, D> Watcher<'_, T, H, E, S, R, D>
where
    T: ScalingTargets,
    H: ScalingHistory,
    E: Endpoints,
    S: StateStore,
    R: ReviewStore,
    D: DemandHistory,
{
    pub async fn on_sagemaker(
        &self,
        ev: &SageMakerEvent,
        now: DateTime<Utc>,
    ) -> Result<Response, DeployError> {
        let (_, plan) = load_plan(self.state).await?;
        let mut observer = Observer::new(self.endpoints, now);
        let trigger = format!(
            "sagemaker:{}{}",
            ev.kind.detail_type(),
            ev.status
                .as_ref()
                .map(|s| format!(":{s}"))
                .unwrap_or_default()
        );
        let (endpoint, targets) = match (&ev.endpoint, ev.kind) {
            (
                Some(endpoint),
                SageMakerEventKind::EndpointState | SageMakerEventKind::DeploymentState,
            ) => (
                endpoint.clone(),
                self.targets_on(&plan, endpoint, &Only::default(), &mut observer)
                    .await?,
            ),
            _ => {
                let config = ev.endpoint_config.clone().unwrap_or_default();
                match self.endpoint_using(&plan, &config, &mut observer).await? {
                    Some(endpoint) => {
                        let targets = self
                            .targets_on(&plan, &endpoint, &Only::default(), &mut observer)
                            .await?;
                        (endpoint, targets)
                    }
                    None => {
                        tracing::info!(trigger, endpoint_config = %config, "no managed endpoint uses this config: nothing to do");
                        let mut r = Response::new(trigger, None, Outcome::Ignored);
                        r.reason = Some(format!(
                            "no managed endpoint uses endpoint config {config} (yet): the endpoint's own events follow when one switches to it"
                        ));
                        return Ok(r);
                    }
                }
            }
        };
        let mut response = Response::new(
            trigger.clone(),
            Some(endpoint.to_string()),
            Outcome::Watched,
        );
        if targets.is_empty() {
            tracing::info!(trigger, endpoint = %endpoint, "endpoint has no target managed by the plan: nothing to do");
            response.outcome = Outcome::Ignored;
            response.reason = Some(format!(
                "endpoint {endpoint} has no target managed by the plan: headroom leaves it alone"
            ));
            return Ok(response);
        }
        let watch = Watch {
            trigger,
            key: ev.idempotency_key(),
            event: Some(ev),
            label: None,
            now,
        };
        for target in targets {
            response
                .targets
                .push(self.watch_target(target, &mut observer, &watch).await?);
        }
        Ok(response)
    }
}
