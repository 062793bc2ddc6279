// The watcher's future nests deeply (handler -> use case -> watch -> reconcile -> SDK calls):
// computing its layout needs more than the default query depth.
#![recursion_limit = "256"]

//! Lambda entry point: initialise once (JSON logs, environment, AWS clients), then serve events.

use chrono::Utc;
use headroom_adapters::aas_history::AasHistory;
use headroom_adapters::dynamo_reviews::DynamoReviews;
use headroom_adapters::sagemaker_models::SageMakerModels;
use headroom_adapters::{
    AasScalingTargets, Clients, CloudWatchDemand, DynamoStateStore, FunctionEnv,
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
    let endpoints = SageMakerModels::new(clients.sagemaker.clone());
    let history = AasHistory::new(clients.aas.clone());
    let reviews = DynamoReviews::new(clients.dynamo.clone(), env.table.clone());
    let aas = AasScalingTargets::new(clients.aas.clone());
    let store = DynamoStateStore::new(clients.dynamo.clone(), env.table.clone());
    // A review's lint reads the old and new model's measurements (not the alarms: this role
    // may describe only TargetTracking* alarms, infra/template.yaml).
    let metrics = CloudWatchDemand::new(clients.cloudwatch.clone());
    let ports = Ports::new(&aas, &store)
        .with_history(&history)
        .with_endpoints(&endpoints)
        .with_reviews(&reviews)
        .with_demand(&metrics);
    let env = &env;

    lambda_runtime::run(service_fn(|event: LambdaEvent<RawEvent>| async move {
        // JSON serde_json cannot read (too deep, 1e309, a lone surrogate) is answered
        // `rejected`: no retry could make it readable.
        let (raw, context) = event.into_parts();
        let payload = match raw.into_value() {
            Ok(payload) => payload,
            Err(e) => return respond::<(), _>(Err(e), &context.request_id, Caller::Asynchronous),
        };
        // A pipeline invokes synchronously and reads the answer; SageMaker events come from
        // EventBridge, asynchronously.
        let caller = if payload.get("kind").is_some() {
            Caller::Direct
        } else {
            Caller::Asynchronous
        };
        // The function's own account and region: SageMaker events from elsewhere are refused.
        let arn = &context.invoked_function_arn;
        let home = env.home(arn);
        let result =
            headroom_deploy::handle_at_home(ports, &payload, home.as_ref(), arn, Utc::now()).await;
        respond(result, &context.request_id, caller)
    }))
    .await
}
