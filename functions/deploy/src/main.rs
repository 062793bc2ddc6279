//! Lambda entry point: initialise once (JSON logs, environment, AWS clients), then serve events.

use chrono::Utc;
use headroom_adapters::aas_history::AasHistory;
use headroom_adapters::dynamo_reviews::DynamoReviews;
use headroom_adapters::sagemaker_models::SageMakerModels;
use headroom_adapters::{AasScalingTargets, Clients, DynamoStateStore, FunctionEnv};
use headroom_deploy::Deploy;
use lambda_runtime::{service_fn, Error, LambdaEvent};
use serde_json::{json, Value};

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Error> {
    tracing_subscriber::fmt()
        .json()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "info".into()),
        )
        .with_current_span(false)
        .with_target(false)
        .init();
    let env = FunctionEnv::from_env()?;
    let clients = Clients::load(&env.aws).await;
    let endpoints = SageMakerModels::new(clients.sagemaker.clone());
    let history = AasHistory::new(clients.aas.clone());
    let reviews = DynamoReviews::new(clients.dynamo.clone(), env.table.clone());
    let aas = AasScalingTargets::new(clients.aas.clone());
    let store = DynamoStateStore::new(clients.dynamo.clone(), env.table.clone());

    lambda_runtime::run(service_fn(|event: LambdaEvent<Value>| {
        let deploy = Deploy {
            endpoints: &endpoints,
            history: &history,
            reviews: &reviews,
            aas: &aas,
            store: &store,
        };
        async move {
            // A pipeline invokes synchronously and reads the answer: every error goes back to it.
            let direct = event.payload.get("kind").is_some();
            match deploy.handle(&event.payload, Utc::now()).await {
                Ok(response) => Ok(serde_json::to_value(response)?),
                // Retryable: fail the invocation so Lambda retries, then the failure destination.
                Err(e) if e.is_retryable() || direct => Err(Error::from(e)),
                // Refused input: fail loudly so the event lands in the failure destination.
                Err(e @ (headroom_deploy::DeployError::BadEvent(_) | headroom_deploy::DeployError::WrongTrigger { .. })) => {
                    tracing::error!(error = %e, request_id = %event.context.request_id, "event refused");
                    Err(Error::from(e))
                }
                // Permanent AWS failure on an EventBridge event: a retry fails the same way.
                Err(e) => {
                    tracing::error!(error = %e, request_id = %event.context.request_id, "event rejected");
                    Ok(json!({ "kind": headroom_deploy::handler::RESULT_KIND, "outcome": "rejected", "error": e.to_string() }))
                }
            }
        }
    }))
    .await
}
