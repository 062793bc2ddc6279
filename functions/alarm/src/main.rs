//! Lambda entry point: initialise once (JSON logs, environment, AWS clients), then serve alarm
//! events from the EventBridge rule or the alarm's direct Lambda action.

use chrono::Utc;
use headroom_adapters::{
    AasScalingTargets, Clients, DynamoStateStore, FunctionEnv, SageMakerCapacity,
};
use headroom_alarm::{AlarmError, Origin};
use headroom_core::usecase::Ports;
use headroom_lambda::{respond, Caller, EdgeError, RawEvent};
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
    let ports = Ports::new(&aas, &store).with_capacity(&capacity);
    let env = &env;

    lambda_runtime::run(service_fn(|event: LambdaEvent<RawEvent>| async move {
        // JSON serde_json cannot read (too deep, 1e309, a lone surrogate) is answered
        // `rejected`: no retry could make it readable.
        let (raw, context) = event.into_parts();
        let payload = match raw.into_value() {
            Ok(payload) => payload,
            Err(e) => return respond::<(), _>(Err(e), &context.request_id, Caller::Asynchronous),
        };
        // The function's own account and region: alarm events from elsewhere are refused
        // unless the plan names them by ARN.
        let arn = &context.invoked_function_arn;
        let home = env.home(arn);
        let result = match home {
            Some(home) => {
                headroom_alarm::handle(ports, &payload, Origin::Home(&home), Utc::now()).await
            }
            None => Err(EdgeError::Failed(AlarmError::UnknownHome {
                arn: arn.clone(),
            })),
        };
        // Both the EventBridge rule and the alarm action invoke asynchronously.
        respond(result, &context.request_id, Caller::Asynchronous)
    }))
    .await
}
