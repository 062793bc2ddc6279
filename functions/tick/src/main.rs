//! Lambda entry point: initialise once (logging, environment, AWS clients), then serve ticks and
//! explicit peak events.

use chrono::Utc;
use headroom_adapters::{
    AasScalingTargets, Clients, CloudWatchDemand, DynamoReviews, DynamoStateStore, FunctionEnv,
    SageMakerCapacity,
};
use headroom_core::usecase::Ports;
use headroom_lambda::{respond, Caller, RawEvent};
use lambda_runtime::{service_fn, Error, LambdaEvent};

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
    let reviews = DynamoReviews::new(clients.dynamo.clone(), env.table.clone());
    // SageMaker's counts for the few targets whose state asks for them (pending wakes, firing
    // burst guards); CloudWatch for the hourly forecast refresh; the reviews table part for the
    // schedule reviews its verdicts open.
    let ports = Ports::new(&aas, &store)
        .with_capacity(&capacity)
        .with_demand(&metrics)
        .with_reviews(&reviews);

    lambda_runtime::run(service_fn(|event: LambdaEvent<RawEvent>| async move {
        // JSON serde_json cannot read (too deep, 1e309, a lone surrogate) is answered
        // `rejected`: no retry could make it readable.
        let (raw, context) = event.into_parts();
        let payload = match raw.into_value() {
            Ok(payload) => payload,
            Err(e) => return respond::<(), _>(Err(e), &context.request_id, Caller::Asynchronous),
        };
        let result = headroom_tick::handle(ports, &payload, Utc::now()).await;
        respond(result, &context.request_id, Caller::Asynchronous)
    }))
    .await
}
