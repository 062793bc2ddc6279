//! Lambda entry point: initialise once (JSON logs, environment, AWS clients), then serve alarm
//! events from the EventBridge rule or the alarm's direct Lambda action.

use chrono::Utc;
use headroom_adapters::{
    AasScalingTargets, Clients, DynamoStateStore, FunctionEnv, SageMakerCapacity,
};
use headroom_alarm::{AlarmError, Origin};
use headroom_core::alarms::Home;
use headroom_core::usecase::Ports;
use headroom_lambda::{respond, Caller, EdgeError};
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
    let ports = Ports::new(&aas, &store).with_capacity(&capacity);

    lambda_runtime::run(service_fn(|event: LambdaEvent<Value>| async move {
        // The function's own account and region: alarm events from elsewhere are refused
        // unless the plan names them by ARN.
        let arn = &event.context.invoked_function_arn;
        let result = match Home::from_function_arn(arn) {
            Some(home) => {
                headroom_alarm::handle(ports, &event.payload, Origin::Home(&home), Utc::now()).await
            }
            None => Err(EdgeError::Failed(AlarmError::UnknownHome {
                arn: arn.clone(),
            })),
        };
        // Both the EventBridge rule and the alarm action invoke asynchronously.
        respond(result, &event.context.request_id, Caller::Asynchronous)
    }))
    .await
}
