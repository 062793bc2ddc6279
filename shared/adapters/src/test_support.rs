//! Real SDK clients whose HTTP layer answers from aws-smithy-mocks rules, so each rule sees
//! exactly the calls (and, where a test asks for them, the retries) the adapter makes.

use std::time::Duration;

use aws_smithy_mocks::{create_mock_http_client, MockResponseInterceptor, Rule, RuleMode};
use aws_smithy_runtime_api::client::orchestrator::HttpResponse;

fn interceptor(rules: &[&Rule], mode: RuleMode) -> MockResponseInterceptor {
    rules
        .iter()
        .fold(MockResponseInterceptor::new().rule_mode(mode), |i, r| {
            i.with_rule(r)
        })
}

macro_rules! mock_client {
    ($name:ident, $sdk:ident) => {
        /// A client answering from `rules` in `mode`, making up to `attempts` attempts per call
        /// with millisecond backoffs (a retried throttling sequence takes no time).
        pub(crate) fn $name(rules: &[&Rule], mode: RuleMode, attempts: u32) -> $sdk::Client {
            let retry = $sdk::config::retry::RetryConfig::standard()
                .with_max_attempts(attempts)
                .with_initial_backoff(Duration::from_millis(1))
                .with_max_backoff(Duration::from_millis(2));
            let config = $sdk::Config::builder()
                .behavior_version($sdk::config::BehaviorVersion::latest())
                .region($sdk::config::Region::new("us-east-1"))
                .credentials_provider($sdk::config::Credentials::new(
                    "test", "test", None, None, "mock",
                ))
                .retry_config(retry)
                .http_client(create_mock_http_client())
                .interceptor(interceptor(rules, mode))
                .build();
            $sdk::Client::from_conf(config)
        }
    };
}

mock_client!(aas_client_with, aws_sdk_applicationautoscaling);
mock_client!(dynamo_client_with, aws_sdk_dynamodb);
mock_client!(sagemaker_client_with, aws_sdk_sagemaker);
mock_client!(cloudwatch_client_with, aws_sdk_cloudwatch);

/// An Application Auto Scaling client answering from any matching rule, one attempt per call.
pub(crate) fn aas_client(rules: &[&Rule]) -> aws_sdk_applicationautoscaling::Client {
    aas_client_with(rules, RuleMode::MatchAny, 1)
}

/// A DynamoDB client answering from any matching rule, one attempt per call.
pub(crate) fn dynamo_client(rules: &[&Rule]) -> aws_sdk_dynamodb::Client {
    dynamo_client_with(rules, RuleMode::MatchAny, 1)
}

/// An error response as AWS's JSON protocols send it: `__type` holds the code.
pub(crate) fn json_error(status: u16, code: &str, message: &str) -> HttpResponse {
    HttpResponse::new(
        status.try_into().expect("valid status"),
        aws_smithy_types::body::SdkBody::from(format!(
            r#"{{"__type":"{code}","message":"{message}"}}"#
        )),
    )
}
