//! Lambda entry point: initialise once (logging, environment, AWS clients), then serve ticks and
//! explicit peak events.

use chrono::Utc;
use headroom_adapters::{
    AasScalingTargets, Clients, CloudWatchDemand, DynamoStateStore, FunctionEnv, SageMakerCapacity,
};
use headroom_core::usecase::Ports;
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
    // SageMaker's counts for the few targets whose state asks for them (pending wakes, firing
    // burst guards); CloudWatch for the hourly forecast refresh.
    let ports = Ports::new(&aas, &store)
        .with_capacity(&capacity)
        .with_demand(&metrics);

    lambda_runtime::run(service_fn(|event: LambdaEvent<Value>| async move {
        let result = headroom_tick::handle(ports, &event.payload, Utc::now()).await;
        respond(result, &event.context.request_id, Caller::Asynchronous)
    }))
    .await
}
