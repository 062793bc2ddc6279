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
use headroom_core::ports::{ErrorClass, PortError};

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

/// The modeled errors of one operation that a retry can cure.
pub trait Transient {
    fn is_transient(&self) -> bool;
}

/// Implements [`Transient`] for an operation error from the names of its retryable variants'
/// `is_*` helpers (`[]`: the operation models none).
macro_rules! transient {
    ($($error:ty => [$($is:ident),* $(,)?];)+) => {
        $(impl Transient for $error {
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
        PutItemError => [
            is_provisioned_throughput_exceeded_exception,
            is_request_limit_exceeded,
            is_throttling_exception,
            is_internal_server_error,
            is_transaction_conflict_exception,
            is_replicated_write_conflict_exception,
        ];
        GetItemError => [
            is_provisioned_throughput_exceeded_exception,
            is_request_limit_exceeded,
            is_throttling_exception,
            is_internal_server_error,
        ];
        BatchGetItemError => [
            is_provisioned_throughput_exceeded_exception,
            is_request_limit_exceeded,
            is_throttling_exception,
            is_internal_server_error,
        ];
        QueryError => [
            is_provisioned_throughput_exceeded_exception,
            is_request_limit_exceeded,
            is_throttling_exception,
            is_internal_server_error,
        ];
        TransactWriteItemsError => [
            is_provisioned_throughput_exceeded_exception,
            is_request_limit_exceeded,
            is_throttling_exception,
            is_internal_server_error,
            is_transaction_in_progress_exception,
        ];
        CreateTableError => [is_internal_server_error, is_limit_exceeded_exception];
        DescribeTableError => [is_internal_server_error];
        UpdateTimeToLiveError => [is_internal_server_error, is_limit_exceeded_exception];
        DescribeTimeToLiveError => [is_internal_server_error];
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
        DescribeScalableTargetsError => [is_concurrent_update_exception, is_internal_service_exception];
        RegisterScalableTargetError => [is_concurrent_update_exception, is_internal_service_exception];
        DescribeScalingPoliciesError => [is_concurrent_update_exception, is_internal_service_exception];
        DescribeScalingActivitiesError => [is_concurrent_update_exception, is_internal_service_exception];
    }
}

mod cloudwatch_errors {
    use super::Transient;
    use aws_sdk_cloudwatch::operation::get_metric_data::GetMetricDataError;

    // GetMetricData models only InvalidNextToken (permanent); throttling and server faults are
    // recognised by code and HTTP status in `class_of`.
    transient! {
        GetMetricDataError => [];
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
        DescribeEndpointError => [];
        DescribeInferenceComponentError => [];
        DescribeEndpointConfigError => [];
        DescribeModelError => [];
        AddTagsError => [];
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

/// Classifies `err` and wraps it, naming the operation ("describe the scalable targets").
pub fn port_error<E>(operation: impl Into<String>, err: SdkError<E, HttpResponse>) -> PortError
where
    E: ProvideErrorMetadata + Transient + StdError + Send + Sync + 'static,
{
    let class = class_of(&err);
    PortError::new(operation, class, err)
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
        let source = port
            .source
            .downcast_ref::<SdkError<GetItemError, HttpResponse>>();
        assert!(
            source.is_some_and(|e| e
                .as_service_error()
                .is_some_and(|s| s.is_provisioned_throughput_exceeded_exception())),
            "the SDK error must stay the source: {:?}",
            port.source
        );
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
