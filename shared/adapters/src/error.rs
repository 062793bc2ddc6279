//! SDK errors, classified into [`PortError`]s: is a retry worth it? The SDK error stays the
//! source, so the log and the CLI can show AWS's own code and message.
//!
//! Two signals decide, because each alone misses cases: the operation's typed error
//! (`is_*_exception()`, via [`Transient`]) knows the modeled throttling and internal errors, and
//! the error code plus HTTP status catch what the operation does not model (AWS sends
//! `ThrottlingException` on operations whose model lacks it; a proxy answers 502 or 503).

use std::error::Error as StdError;

use aws_smithy_runtime_api::client::orchestrator::HttpResponse;
use aws_smithy_runtime_api::client::result::SdkError;
use aws_smithy_types::error::metadata::ProvideErrorMetadata;
use headroom_core::ports::{ErrorClass, FailureKind, PortError};

/// Error codes that mean "try again later", whatever the operation.
const RETRYABLE_CODES: &[&str] = &[
    "ThrottlingException",
    "Throttling",
    "ThrottledException",
    "TooManyRequestsException",
    "RequestThrottled",
    "RequestThrottledException",
    "ProvisionedThroughputExceededException",
    "RequestLimitExceeded",
    "TransactionInProgressException",
    "TransactionConflictException",
    "ReplicatedWriteConflictException",
    // AAS: another RegisterScalableTarget or policy change on the same target is in flight.
    "ConcurrentUpdateException",
    "InternalServerError",
    "InternalServiceException",
    "InternalFailure",
    "ServiceUnavailable",
    "ServiceUnavailableException",
    "RequestTimeout",
    "RequestTimeoutException",
];

/// What headroom knows about one operation's errors: which modeled ones a retry can cure, and
/// the IAM action the caller needs (named in an AccessDenied hint).
pub trait Transient {
    /// `dynamodb:GetItem`: the permission the operation needs.
    const IAM_ACTION: &'static str;
    fn is_transient(&self) -> bool;
}

/// Implements [`Transient`] for an operation error from its IAM action and the names of its
/// retryable variants' `is_*` helpers (`[]`: the operation models none).
macro_rules! transient {
    ($($error:ty = $action:literal => [$($is:ident),* $(,)?];)+) => {
        $(impl Transient for $error {
            const IAM_ACTION: &'static str = $action;
            fn is_transient(&self) -> bool {
                false $(|| self.$is())*
            }
        })+
    };
}

mod dynamo_errors {
    use super::Transient;
    use aws_sdk_dynamodb::operation::{
        batch_get_item::BatchGetItemError, create_table::CreateTableError,
        describe_table::DescribeTableError, describe_time_to_live::DescribeTimeToLiveError,
        get_item::GetItemError, put_item::PutItemError, query::QueryError,
        transact_write_items::TransactWriteItemsError, update_time_to_live::UpdateTimeToLiveError,
    };

    transient! {
        PutItemError = "dynamodb:PutItem" => [
            is_provisioned_throughput_exceeded_exception,
            is_request_limit_exceeded,
            is_throttling_exception,
            is_internal_server_error,
            is_transaction_conflict_exception,
            is_replicated_write_conflict_exception,
        ];
        GetItemError = "dynamodb:GetItem" => [
            is_provisioned_throughput_exceeded_exception,
            is_request_limit_exceeded,
            is_throttling_exception,
            is_internal_server_error,
        ];
        BatchGetItemError = "dynamodb:BatchGetItem" => [
            is_provisioned_throughput_exceeded_exception,
            is_request_limit_exceeded,
            is_throttling_exception,
            is_internal_server_error,
        ];
        QueryError = "dynamodb:Query" => [
            is_provisioned_throughput_exceeded_exception,
            is_request_limit_exceeded,
            is_throttling_exception,
            is_internal_server_error,
        ];
        TransactWriteItemsError = "dynamodb:TransactWriteItems" => [
            is_provisioned_throughput_exceeded_exception,
            is_request_limit_exceeded,
            is_throttling_exception,
            is_internal_server_error,
            is_transaction_in_progress_exception,
        ];
        CreateTableError = "dynamodb:CreateTable" => [is_internal_server_error, is_limit_exceeded_exception];
        DescribeTableError = "dynamodb:DescribeTable" => [is_internal_server_error];
        UpdateTimeToLiveError = "dynamodb:UpdateTimeToLive" => [is_internal_server_error, is_limit_exceeded_exception];
        DescribeTimeToLiveError = "dynamodb:DescribeTimeToLive" => [is_internal_server_error];
    }
}

mod aas_errors {
    use super::Transient;
    use aws_sdk_applicationautoscaling::operation::{
        describe_scalable_targets::DescribeScalableTargetsError,
        describe_scaling_activities::DescribeScalingActivitiesError,
        describe_scaling_policies::DescribeScalingPoliciesError,
        register_scalable_target::RegisterScalableTargetError,
    };

    // AAS's LimitExceededException is an account quota (too many targets): permanent.
    transient! {
        DescribeScalableTargetsError = "application-autoscaling:DescribeScalableTargets" => [is_concurrent_update_exception, is_internal_service_exception];
        RegisterScalableTargetError = "application-autoscaling:RegisterScalableTarget" => [is_concurrent_update_exception, is_internal_service_exception];
        DescribeScalingPoliciesError = "application-autoscaling:DescribeScalingPolicies" => [is_concurrent_update_exception, is_internal_service_exception];
        DescribeScalingActivitiesError = "application-autoscaling:DescribeScalingActivities" => [is_concurrent_update_exception, is_internal_service_exception];
    }
}

mod cloudwatch_errors {
    use super::Transient;
    use aws_sdk_cloudwatch::operation::describe_alarms::DescribeAlarmsError;
    use aws_sdk_cloudwatch::operation::get_metric_data::GetMetricDataError;

    // GetMetricData and DescribeAlarms model only InvalidNextToken (permanent); throttling and
    // server faults are recognised by code and HTTP status in `class_of`.
    transient! {
        GetMetricDataError = "cloudwatch:GetMetricData" => [];
        DescribeAlarmsError = "cloudwatch:DescribeAlarms" => [];
    }
}

mod sagemaker_errors {
    use super::Transient;
    use aws_sdk_sagemaker::operation::{
        add_tags::AddTagsError, describe_endpoint::DescribeEndpointError,
        describe_endpoint_config::DescribeEndpointConfigError,
        describe_inference_component::DescribeInferenceComponentError,
        describe_model::DescribeModelError,
    };

    // None of these operations models a retryable error: throttling and server faults are
    // recognised by code and HTTP status in `class_of`.
    transient! {
        DescribeEndpointError = "sagemaker:DescribeEndpoint" => [];
        DescribeInferenceComponentError = "sagemaker:DescribeInferenceComponent" => [];
        DescribeEndpointConfigError = "sagemaker:DescribeEndpointConfig" => [];
        DescribeModelError = "sagemaker:DescribeModel" => [];
        AddTagsError = "sagemaker:AddTags" => [];
    }
}

/// Whether retrying `err` can help.
pub fn class_of<E>(err: &SdkError<E, HttpResponse>) -> ErrorClass
where
    E: ProvideErrorMetadata + Transient,
{
    match err {
        // The attempt or the whole call ran out of time: the next one may not.
        SdkError::TimeoutError(_) => ErrorClass::Retryable,
        // Connection refused or reset, DNS, TLS: transient, unless the request itself was unusable.
        SdkError::DispatchFailure(failure) if failure.is_user() => ErrorClass::Permanent,
        SdkError::DispatchFailure(_) => ErrorClass::Retryable,
        // A response that was cut off or garbled in transit.
        SdkError::ResponseError(_) => ErrorClass::Retryable,
        // The request could not be built (a missing required field): ours to fix.
        SdkError::ConstructionFailure(_) => ErrorClass::Permanent,
        SdkError::ServiceError(ctx) => {
            let status = ctx.raw().status();
            let code_says_retry = ctx
                .err()
                .code()
                .is_some_and(|c| RETRYABLE_CODES.contains(&c));
            if ctx.err().is_transient()
                || code_says_retry
                || status.is_server_error()
                || status.as_u16() == 429
            {
                ErrorClass::Retryable
            } else {
                ErrorClass::Permanent
            }
        }
        _ => ErrorClass::Permanent,
    }
}

/// Codes by which AWS refuses the caller itself: the credentials, not the request.
const CREDENTIAL_CODES: &[&str] = &[
    "UnrecognizedClientException",
    "InvalidClientTokenId",
    "InvalidSignatureException",
    "SignatureDoesNotMatch",
    "IncompleteSignature",
    "MissingAuthenticationToken",
    "ExpiredToken",
    "ExpiredTokenException",
];

const CHECK_CREDENTIALS: &str = "check the AWS credentials (AWS_PROFILE, or AWS_ACCESS_KEY_ID and \
     AWS_SECRET_ACCESS_KEY; `aws sso login` for an expired session)";

/// Classifies `err` and wraps it, naming the operation ("describe the scalable targets"), with
/// AWS's code and message once and what to do about it.
pub fn port_error<E>(operation: impl Into<String>, err: SdkError<E, HttpResponse>) -> PortError
where
    E: ProvideErrorMetadata + Transient + StdError + Send + Sync + 'static,
{
    let mut class = class_of(&err);
    let answer = describe(&err);
    // No region is a configuration mistake: every retry fails the same way. Missing credentials
    // stay retryable: in Lambda they come from the runtime, and a failed event should reach the
    // failure destination rather than be dropped as rejected.
    if answer.kind == FailureKind::Config && answer.message.to_ascii_lowercase().contains("region")
    {
        class = ErrorClass::Permanent;
    }
    let port =
        PortError::new(operation, class, err).with_answer(answer.kind, answer.code, answer.message);
    match answer.hint {
        Some(hint) => port.with_hint(hint),
        None => port,
    }
}

struct Answer {
    kind: FailureKind,
    code: Option<String>,
    message: String,
    hint: Option<String>,
}

/// What an SDK error says, once, and what to do about it.
fn describe<E>(err: &SdkError<E, HttpResponse>) -> Answer
where
    E: ProvideErrorMetadata + Transient + StdError + 'static,
{
    let SdkError::ServiceError(ctx) = err else {
        return describe_transport(err);
    };
    let status = ctx.raw().status().as_u16();
    let code = ctx.err().code().map(str::to_owned);
    let message = ctx
        .err()
        .message()
        .map(str::to_owned)
        // A modeled error built without metadata still displays its own message.
        .or_else(|| {
            let own = ctx.err().to_string();
            (!own.is_empty() && !own.starts_with("unhandled error")).then_some(own)
        })
        // A body that is no AWS error (a proxy's HTML page) has neither code nor message.
        .unwrap_or_else(|| format!("HTTP {status} without an AWS error message"));
    let c = code.as_deref().unwrap_or("");
    let (kind, hint) = if c.starts_with("AccessDenied") || c == "UnauthorizedOperation" {
        (
            FailureKind::Access,
            Some(format!(
                "the caller lacks the IAM permission {}: grant it (the functions' roles are in \
                 infra/template.yaml)",
                E::IAM_ACTION
            )),
        )
    } else if CREDENTIAL_CODES.contains(&c) {
        (FailureKind::Access, Some(CHECK_CREDENTIALS.to_owned()))
    } else if c == "ResourceNotFoundException" && E::IAM_ACTION.starts_with("dynamodb:") {
        (
            FailureKind::NotFound,
            Some(
                "the table does not exist in this account and region: create it with `headroom \
                 plan init-table` (or deploy infra/template.yaml), or check --table / \
                 HEADROOM_TABLE and AWS_REGION"
                    .to_owned(),
            ),
        )
    } else if c.contains("NotFound") {
        (FailureKind::NotFound, None)
    } else if RETRYABLE_CODES.contains(&c) || status == 429 || status >= 500 {
        (
            FailureKind::Aws,
            Some(
                "transient: retried with backoff; if it persists, check the service's quotas \
                 and health"
                    .to_owned(),
            ),
        )
    } else if c == "ValidationException" {
        (
            FailureKind::Aws,
            Some(
                "AWS refused the request's values: check the plan for this target (`headroom \
                 plan validate`)"
                    .to_owned(),
            ),
        )
    } else {
        (FailureKind::Aws, None)
    };
    Answer {
        kind,
        code,
        message,
        hint,
    }
}

/// A request that got no AWS answer: never sent (no region, no credentials), or lost on the way.
fn describe_transport<E>(err: &SdkError<E, HttpResponse>) -> Answer
where
    E: StdError + 'static,
{
    let mut message = match err {
        SdkError::TimeoutError(_) => "no answer in time".to_owned(),
        other => chain_text(other),
    };
    // The SDK lists every provider of its chain, one per line: the hint says where to look.
    if let Some(cut) = message.find("no credentials found in chain") {
        message.truncate(cut + "no credentials found in chain".len());
    }
    let lower = message.to_ascii_lowercase();
    let (kind, hint) = if lower.contains("region") {
        (
            FailureKind::Config,
            "set AWS_REGION (or the profile's region)".to_owned(),
        )
    } else if lower.contains("credentials") {
        (
            FailureKind::Config,
            format!("no usable credentials: {CHECK_CREDENTIALS}"),
        )
    } else if matches!(err, SdkError::ConstructionFailure(_)) {
        (
            FailureKind::Local,
            "the request could not be built: a defect in headroom, please report it".to_owned(),
        )
    } else {
        (
            FailureKind::Unreachable,
            "could not reach AWS: check the network, AWS_ENDPOINT_URL and AWS_REGION".to_owned(),
        )
    };
    Answer {
        kind,
        code: None,
        message,
        hint: Some(hint),
    }
}

/// The displays of an error's source chain, each said once: the SDK's wrappers ("dispatch
/// failure", "other", "io error") carry no information, and a link whose display includes the
/// next link's is cut to what it adds.
fn chain_text(err: &(dyn StdError + 'static)) -> String {
    const WRAPPERS: &[&str] = &[
        "dispatch failure",
        "other",
        "io error",
        "service error",
        "response error",
        "timeout",
        "user",
    ];
    let mut links: Vec<String> = Vec::new();
    let mut next: Option<&(dyn StdError + 'static)> = Some(err);
    while let Some(e) = next {
        let text = e.to_string();
        next = e.source();
        let own = match next.map(ToString::to_string) {
            Some(inner) if !inner.is_empty() => text.replace(&inner, ""),
            _ => text,
        };
        let own = own.trim().trim_end_matches(':').trim().to_owned();
        if own.is_empty() || WRAPPERS.contains(&own.as_str()) || links.contains(&own) {
            continue;
        }
        links.push(own);
    }
    if links.is_empty() {
        err.to_string()
    } else {
        links.join(": ")
    }
}

/// A SageMaker Describe* answer, with a resource SageMaker does not know as `Ok(None)`: it answers
/// `ValidationException: Could not find ...`, and "gone" (deleted, or being recreated) is an
/// answer, not a failure. Any other error is classified, naming `operation`.
pub fn sagemaker_found<T, E>(
    result: Result<T, SdkError<E, HttpResponse>>,
    operation: impl FnOnce() -> String,
) -> Result<Option<T>, PortError>
where
    E: ProvideErrorMetadata + Transient + StdError + Send + Sync + 'static,
{
    match result {
        Ok(out) => Ok(Some(out)),
        Err(e) if is_sagemaker_not_found(&e) => Ok(None),
        Err(e) => Err(port_error(operation(), e)),
    }
}

fn is_sagemaker_not_found<E: ProvideErrorMetadata>(err: &SdkError<E, HttpResponse>) -> bool {
    err.as_service_error().is_some_and(|e| {
        e.code() == Some("ValidationException")
            && e.message().is_some_and(|m| m.contains("Could not find"))
    })
}

/// A failure that is not the SDK's: a stored item headroom cannot read, or work left undone.
pub fn permanent(
    operation: impl Into<String>,
    source: impl Into<Box<dyn StdError + Send + Sync>>,
) -> PortError {
    PortError::new(operation, ErrorClass::Permanent, source)
}

pub fn retryable(
    operation: impl Into<String>,
    source: impl Into<Box<dyn StdError + Send + Sync>>,
) -> PortError {
    PortError::new(operation, ErrorClass::Retryable, source)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // a failed unwrap is a failed test
mod tests {
    //! Classification through a real SDK client whose HTTP layer is mocked, so the errors are
    //! exactly what the SDK builds from AWS's responses.

    use super::*;
    use crate::test_support::{aas_client, dynamo_client};
    use aws_sdk_applicationautoscaling::operation::describe_scalable_targets::DescribeScalableTargetsError;
    use aws_sdk_applicationautoscaling::types::error::ValidationException as AasValidation;
    use aws_sdk_dynamodb::operation::get_item::GetItemError;
    use aws_sdk_dynamodb::types::error::ProvisionedThroughputExceededException;
    use aws_smithy_mocks::mock;

    fn json_error(status: u16, code: &str) -> HttpResponse {
        crate::test_support::json_error(status, code, "from the test")
    }

    #[tokio::test]
    async fn modeled_throttling_is_retryable_and_keeps_the_sdk_error() {
        let rule = mock!(aws_sdk_dynamodb::Client::get_item).then_error(|| {
            GetItemError::ProvisionedThroughputExceededException(
                ProvisionedThroughputExceededException::builder()
                    .message("slow down")
                    .build(),
            )
        });
        let client = dynamo_client(&[&rule]);
        let err = client.get_item().table_name("t").send().await.unwrap_err();
        let port = port_error("read the plan", err);
        assert_eq!(port.class, ErrorClass::Retryable);
        assert_eq!(port.operation, "read the plan");
        // A mocked modeled error carries no error metadata, so no code; AWS's own answers do
        // (the `json_error` tests below).
        assert!(port.message().contains("slow down"), "{port}");
        let source = port
            .cause()
            .downcast_ref::<SdkError<GetItemError, HttpResponse>>();
        assert!(
            source.is_some_and(|e| e
                .as_service_error()
                .is_some_and(|s| s.is_provisioned_throughput_exceeded_exception())),
            "the SDK error must stay the cause: {:?}",
            port.cause()
        );
    }

    /// `port_error` of one GetItem answered by `response`.
    async fn get_item_port_error(response: fn() -> HttpResponse) -> PortError {
        let rule = mock!(aws_sdk_dynamodb::Client::get_item).then_http_response(response);
        let client = dynamo_client(&[&rule]);
        let err = client.get_item().table_name("t").send().await.unwrap_err();
        port_error("read the current plan from table t", err)
    }

    fn occurrences(haystack: &str, needle: &str) -> usize {
        haystack.matches(needle).count()
    }

    #[tokio::test]
    async fn a_missing_table_says_its_code_once_and_to_run_init_table() {
        let port = get_item_port_error(|| {
            crate::test_support::json_error(
                400,
                "com.amazonaws.dynamodb.v20120810#ResourceNotFoundException",
                "Requested resource not found",
            )
        })
        .await;
        let line = port.to_string();
        assert_eq!(port.kind, FailureKind::NotFound);
        assert_eq!(port.code(), Some("ResourceNotFoundException"));
        assert!(
            line.starts_with("failed to read the current plan from table t: ResourceNotFoundException: Requested resource not found; "),
            "{line}"
        );
        assert_eq!(occurrences(&line, "ResourceNotFoundException"), 1, "{line}");
        assert_eq!(
            occurrences(&line, "Requested resource not found"),
            1,
            "{line}"
        );
        assert!(line.contains("headroom plan init-table"), "{line}");
        assert!(!line.contains("service error"), "{line}");
        assert!(
            std::error::Error::source(&port).is_none(),
            "the chain ends at the port error, so a reporter printing it says nothing twice"
        );
    }

    #[tokio::test]
    async fn access_denied_names_the_missing_permission() {
        let port = get_item_port_error(|| {
            crate::test_support::json_error(
                400,
                "AccessDeniedException",
                "User: arn:aws:sts::1:assumed-role/x is not authorized to perform: dynamodb:GetItem",
            )
        })
        .await;
        assert_eq!(port.kind, FailureKind::Access);
        assert_eq!(port.class, ErrorClass::Permanent);
        let line = port.to_string();
        assert_eq!(occurrences(&line, "AccessDeniedException"), 1, "{line}");
        assert!(
            port.hint()
                .is_some_and(|h| h.contains("IAM permission dynamodb:GetItem")),
            "{line}"
        );
    }

    #[tokio::test]
    async fn rejected_credentials_say_to_check_them() {
        let port = get_item_port_error(|| {
            crate::test_support::json_error(
                400,
                "UnrecognizedClientException",
                "The security token included in the request is invalid.",
            )
        })
        .await;
        assert_eq!(port.kind, FailureKind::Access);
        assert!(
            port.to_string().contains("check the AWS credentials"),
            "{port}"
        );
    }

    #[tokio::test]
    async fn validation_and_throttling_keep_code_and_message_once() {
        let port = get_item_port_error(|| {
            crate::test_support::json_error(
                400,
                "ValidationException",
                "1 validation error detected",
            )
        })
        .await;
        let line = port.to_string();
        assert_eq!(occurrences(&line, "ValidationException"), 1, "{line}");
        assert_eq!(
            occurrences(&line, "1 validation error detected"),
            1,
            "{line}"
        );
        assert_eq!(port.kind, FailureKind::Aws);

        let port = get_item_port_error(|| {
            crate::test_support::json_error(400, "ThrottlingException", "Rate exceeded")
        })
        .await;
        assert_eq!(port.class, ErrorClass::Retryable);
        assert_eq!(port.code(), Some("ThrottlingException"));
        assert!(
            port.to_string()
                .contains("ThrottlingException: Rate exceeded; transient"),
            "{port}"
        );
    }

    /// A DynamoDB client with the real HTTP stack, pointed at a closed local port.
    fn unconfigured_client(region: bool, credentials: bool) -> aws_sdk_dynamodb::Client {
        use aws_sdk_dynamodb::config::{BehaviorVersion, Credentials, Region};
        let mut config = aws_sdk_dynamodb::Config::builder()
            .behavior_version(BehaviorVersion::latest())
            .endpoint_url("http://127.0.0.1:1")
            .retry_config(aws_sdk_dynamodb::config::retry::RetryConfig::disabled());
        if region {
            config = config.region(Region::new("us-east-1"));
        }
        if credentials {
            config =
                config.credentials_provider(Credentials::new("test", "test", None, None, "test"));
        }
        aws_sdk_dynamodb::Client::from_conf(config.build())
    }

    async fn get_item_from(client: aws_sdk_dynamodb::Client) -> PortError {
        let err = client.get_item().table_name("t").send().await.unwrap_err();
        port_error("read the current plan from table t", err)
    }

    #[tokio::test]
    async fn no_region_is_a_permanent_config_error_saying_set_aws_region() {
        let port = get_item_from(unconfigured_client(false, true)).await;
        assert_eq!(port.kind, FailureKind::Config, "{port}");
        assert_eq!(port.class, ErrorClass::Permanent);
        assert!(port.to_string().contains("set AWS_REGION"), "{port}");
        assert!(!port.to_string().contains("dispatch failure"), "{port}");
    }

    #[tokio::test]
    async fn no_credentials_say_to_check_them() {
        let port = get_item_from(unconfigured_client(true, false)).await;
        assert_eq!(port.kind, FailureKind::Config, "{port}");
        assert!(
            port.to_string().contains("check the AWS credentials"),
            "{port}"
        );
    }

    #[tokio::test]
    async fn a_refused_connection_is_unreachable_and_says_so_once() {
        let port = get_item_from(unconfigured_client(true, true)).await;
        assert_eq!(port.kind, FailureKind::Unreachable, "{port}");
        assert_eq!(port.class, ErrorClass::Retryable);
        let line = port.to_string();
        assert!(line.contains("Connection refused"), "{line}");
        assert!(!line.contains("dispatch failure"), "{line}");
        assert!(line.contains("AWS_ENDPOINT_URL"), "{line}");
    }

    #[tokio::test]
    async fn an_unmodeled_throttling_code_is_retryable() {
        // AAS answers ThrottlingException with HTTP 400; DescribeScalableTargets does not model it.
        let rule = mock!(aws_sdk_applicationautoscaling::Client::describe_scalable_targets)
            .then_http_response(|| json_error(400, "ThrottlingException"));
        let client = aas_client(&[&rule]);
        let err = client.describe_scalable_targets().send().await.unwrap_err();
        assert_eq!(class_of(&err), ErrorClass::Retryable, "{err:?}");
    }

    #[tokio::test]
    async fn server_errors_are_retryable() {
        for status in [500, 502, 503] {
            let rule = mock!(aws_sdk_dynamodb::Client::get_item).then_http_response(move || {
                aws_smithy_runtime_api::client::orchestrator::HttpResponse::new(
                    status.try_into().expect("valid status"),
                    aws_smithy_types::body::SdkBody::from("<html>bad gateway</html>"),
                )
            });
            let client = dynamo_client(&[&rule]);
            let err = client.get_item().table_name("t").send().await.unwrap_err();
            assert_eq!(
                class_of(&err),
                ErrorClass::Retryable,
                "HTTP {status}: {err:?}"
            );
        }
    }

    #[tokio::test]
    async fn validation_and_missing_resources_are_permanent() {
        let rule = mock!(aws_sdk_applicationautoscaling::Client::describe_scalable_targets)
            .then_error(|| {
                DescribeScalableTargetsError::ValidationException(
                    AasValidation::builder().message("bad dimension").build(),
                )
            });
        let client = aas_client(&[&rule]);
        let err = client.describe_scalable_targets().send().await.unwrap_err();
        assert_eq!(class_of(&err), ErrorClass::Permanent);

        let rule = mock!(aws_sdk_dynamodb::Client::get_item).then_http_response(|| {
            json_error(
                400,
                "com.amazonaws.dynamodb.v20120810#ResourceNotFoundException",
            )
        });
        let client = dynamo_client(&[&rule]);
        let err = client.get_item().table_name("t").send().await.unwrap_err();
        assert!(
            err.as_service_error()
                .is_some_and(|e| e.is_resource_not_found_exception()),
            "{err:?}"
        );
        assert_eq!(class_of(&err), ErrorClass::Permanent);

        let rule = mock!(aws_sdk_dynamodb::Client::get_item)
            .then_http_response(|| json_error(400, "AccessDeniedException"));
        let client = dynamo_client(&[&rule]);
        let err = client.get_item().table_name("t").send().await.unwrap_err();
        assert_eq!(class_of(&err), ErrorClass::Permanent);
    }
}
