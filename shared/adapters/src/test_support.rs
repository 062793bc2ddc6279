//! Real SDK clients whose HTTP layer answers from aws-smithy-mocks rules, with retries off so
//! each rule sees exactly the calls the adapter makes.

use aws_smithy_mocks::{create_mock_http_client, MockResponseInterceptor, Rule, RuleMode};

fn interceptor(rules: &[&Rule]) -> MockResponseInterceptor {
    rules.iter().fold(
        MockResponseInterceptor::new().rule_mode(RuleMode::MatchAny),
        |i, r| i.with_rule(r),
    )
}

macro_rules! mock_client {
    ($name:ident, $sdk:ident) => {
        pub(crate) fn $name(rules: &[&Rule]) -> $sdk::Client {
            let config = $sdk::Config::builder()
                .behavior_version($sdk::config::BehaviorVersion::latest())
                .region($sdk::config::Region::new("us-east-1"))
                .credentials_provider($sdk::config::Credentials::new(
                    "test", "test", None, None, "mock",
                ))
                .retry_config($sdk::config::retry::RetryConfig::disabled())
                .http_client(create_mock_http_client())
                .interceptor(interceptor(rules))
                .build();
            $sdk::Client::from_conf(config)
        }
    };
}

mock_client!(aas_client, aws_sdk_applicationautoscaling);
mock_client!(dynamo_client, aws_sdk_dynamodb);
