//! The deployment watcher: SageMaker endpoint, deployment, endpoint-config and model package
//! state changes and deployment pipelines' own calls (`headroom.pipeline/v1`). The use cases are
//! `headroom_core::usecase::deploy`; this crate parses the event and wires the ports.

pub mod operations;

use chrono::{DateTime, Utc};
use headroom_core::deploy_ports::{Endpoints, ReviewStore, ScalingHistory};
use headroom_core::metrics_port::DemandHistory;
use headroom_core::ports::{ScalingTargets, StateStore};
use headroom_core::trigger::{Function, Trigger};
use headroom_core::usecase::deploy::{on_model_package, on_pipeline, on_sagemaker};
use headroom_core::usecase::Ports;
use headroom_lambda::{misrouted, parse, EdgeError};

pub use headroom_core::usecase::deploy::{DeployError, Outcome, Response};

pub type Error = EdgeError<DeployError>;

/// Handles one raw event at `now`.
pub async fn handle<T, H, C, E, S, R, D>(
    ports: Ports<'_, T, H, C, E, S, R, D>,
    event: &serde_json::Value,
    now: DateTime<Utc>,
) -> Result<Response, Error>
where
    T: ScalingTargets,
    H: ScalingHistory,
    E: Endpoints,
    S: StateStore,
    R: ReviewStore,
    D: DemandHistory,
{
    let result = match parse(event)? {
        Trigger::SageMaker(ev) => on_sagemaker(ports, &ev, now).await,
        Trigger::ModelPackage(ev) => on_model_package(ports, &ev, now).await,
        Trigger::Pipeline(hook) => on_pipeline(ports, &hook, now).await,
        other => return Err(misrouted(&other, Function::Deploy)),
    };
    result.map_err(EdgeError::Failed)
}
