//! The deployment watcher: SageMaker endpoint, deployment, endpoint-config and model package
//! state changes and deployment pipelines' own calls (`headroom.pipeline/v1`). The use cases are
//! `headroom_core::usecase::deploy`; this crate parses the event and wires the ports.

pub mod operations;

use chrono::{DateTime, Utc};
use headroom_core::alarms::Home;
use headroom_core::deploy_ports::{Endpoints, ReviewStore, ScalingHistory};
use headroom_core::metrics_port::DemandHistory;
use headroom_core::ports::{ScalingTargets, StateStore};
use headroom_core::trigger::{Function, Trigger};
use headroom_core::usecase::deploy::{on_model_package, on_pipeline, on_sagemaker};
use headroom_core::usecase::Ports;
use headroom_lambda::{misrouted, parse, EdgeError};

pub use headroom_core::usecase::deploy::{DeployError, Origin, Outcome, Response};

pub type Error = EdgeError<DeployError>;

/// Handles one raw event at `now`, from any account (the handler tests, whose fixtures come
/// from one account; the entry point calls [`handle_at_home`]).
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
    dispatch(ports, parse(event)?, Ok(Origin::Anywhere), now).await
}

/// Handles one raw event at `now` in the function's `home` account and region: SageMaker and
/// model-package events from elsewhere are refused, and so is every such event while the home
/// is unknown (`function_arn` is what the runtime sent). A pipeline's call is a direct,
/// IAM-authorised invocation that names no account: it needs no home.
pub async fn handle_at_home<T, H, C, E, S, R, D>(
    ports: Ports<'_, T, H, C, E, S, R, D>,
    event: &serde_json::Value,
    home: Option<&Home>,
    function_arn: &str,
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
    let origin = home.map(Origin::Home).ok_or_else(|| {
        EdgeError::Failed(DeployError::UnknownHome {
            arn: function_arn.to_owned(),
        })
    });
    dispatch(ports, parse(event)?, origin, now).await
}

async fn dispatch<T, H, C, E, S, R, D>(
    ports: Ports<'_, T, H, C, E, S, R, D>,
    trigger: Trigger,
    origin: Result<Origin<'_>, Error>,
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
    // Only the events of other services need the origin: a pipeline's call names no account.
    let result = match trigger {
        Trigger::SageMaker(ev) => on_sagemaker(ports, &ev, origin?, now).await,
        Trigger::ModelPackage(ev) => on_model_package(ports, &ev, origin?, now).await,
        Trigger::Pipeline(hook) => on_pipeline(ports, &hook, now).await,
        other => return Err(misrouted(&other, Function::Deploy)),
    };
    result.map_err(EdgeError::Failed)
}
