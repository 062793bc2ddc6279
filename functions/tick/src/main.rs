//! Lambda entry point: initialise once (logging, environment, AWS clients), then serve events.

use chrono::Utc;
use headroom_adapters::{
    AasScalingTargets, Clients, DynamoStateStore, FunctionEnv, SageMakerCapacity,
};
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
    let aas = AasScalingTargets::new(clients.aas.clone());
    let store = DynamoStateStore::new(clients.dynamo.clone(), env.table.clone());
    let capacity = SageMakerCapacity::new(clients.sagemaker.clone());

    lambda_runtime::run(service_fn(|event: LambdaEvent<Value>| {
        let (aas, store, capacity) = (&aas, &store, &capacity);
        async move {
            match headroom_tick::handle(aas, store, capacity, &event.payload, Utc::now()).await {
                Ok(outcome) => Ok(serde_json::to_value(outcome)?),
                // Retryable: fail the invocation so Lambda retries, then the failure destination.
                Err(e) if e.is_retryable() => Err(Error::from(e)),
                // Permanent: a retry would fail the same way; answer and log why.
                Err(e) => {
                    tracing::error!(error = %e, request_id = %event.context.request_id, "event rejected");
                    Ok(json!({ "handled": "rejected", "error": e.to_string() }))
                }
            }
        }
    }))
    .await
}
