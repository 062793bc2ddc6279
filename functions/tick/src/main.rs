//! Lambda entry point: initialise once (logging, environment, AWS clients), then serve ticks and
//! explicit peak events.

use chrono::Utc;
use headroom_adapters::{
    AasScalingTargets, Clients, CloudWatchDemand, DynamoStateStore, FunctionEnv, SageMakerCapacity,
};
use headroom_lambda::{respond, Caller};
use lambda_runtime::{service_fn, Error, LambdaEvent};
use serde_json::Value;

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Error> {
    headroom_lambda::prepare_runtime();
    headroom_lambda::init_logging();
    let env = FunctionEnv::from_env()?;
    let clients = Clients::load(&env.aws).await;
    let aas = AasScalingTargets::new(clients.aas.clone());
    let store = DynamoStateStore::new(clients.dynamo.clone(), env.table.clone());
    let capacity = SageMakerCapacity::new(clients.sagemaker.clone());
    let metrics = CloudWatchDemand::new(clients.cloudwatch.clone());

    lambda_runtime::run(service_fn(|event: LambdaEvent<Value>| {
        let (aas, store, capacity, metrics) = (&aas, &store, &capacity, &metrics);
        async move {
            let result = headroom_tick::handle_with_metrics(
                aas,
                store,
                capacity,
                Some(metrics),
                &event.payload,
                Utc::now(),
            )
            .await;
            respond(result, &event.context.request_id, Caller::Asynchronous)
        }
    }))
    .await
}
