//! The AWS SDK configuration, built once per process (Lambda init, CLI start), and the clients
//! made from it.
//!
//! The Rust SDK sets no operation or attempt timeout by default, so a hung connection would block
//! until the Lambda's own timeout: every client built here has both. Retries use the SDK's
//! standard (or adaptive) mode with exponential backoff and jitter. `AWS_ENDPOINT_URL`,
//! `AWS_REGION` and the credential chain are honoured by the SDK itself.

use std::time::Duration;

use aws_config::retry::RetryConfig;
use aws_config::timeout::TimeoutConfig;
use aws_config::{BehaviorVersion, ConfigLoader, SdkConfig};

/// The environment variables [`AwsSettings::from_env`] reads (all optional).
pub const ENV_MAX_ATTEMPTS: &str = "HEADROOM_AWS_MAX_ATTEMPTS";
pub const ENV_ATTEMPT_TIMEOUT_MS: &str = "HEADROOM_AWS_ATTEMPT_TIMEOUT_MS";
pub const ENV_OPERATION_TIMEOUT_MS: &str = "HEADROOM_AWS_OPERATION_TIMEOUT_MS";
pub const ENV_RETRY_MODE: &str = "HEADROOM_AWS_RETRY_MODE";

/// How headroom talks to AWS: retries and timeouts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AwsSettings {
    /// Attempts per call, the first included (1: no retry).
    pub max_attempts: u32,
    /// Adaptive retry adds client-side rate limiting after throttling; standard does not.
    pub adaptive: bool,
    /// Bound on one HTTP attempt (connect, send, read the whole response).
    pub attempt_timeout: Duration,
    /// Bound on a whole call, retries and backoff included.
    pub operation_timeout: Duration,
    pub connect_timeout: Duration,
}

impl Default for AwsSettings {
    /// DynamoDB and AAS answer in tens of milliseconds; 5 s per attempt is far beyond a healthy
    /// call, and 3 attempts within 20 s leave a one-minute tick time to report what failed.
    fn default() -> Self {
        Self {
            max_attempts: 3,
            adaptive: false,
            attempt_timeout: Duration::from_secs(5),
            operation_timeout: Duration::from_secs(20),
            connect_timeout: Duration::from_secs(3),
        }
    }
}

/// A setting in the environment that does not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("environment variable {name}={value:?} is invalid: {expected}")]
pub struct SettingsError {
    pub name: &'static str,
    pub value: String,
    pub expected: &'static str,
}

impl AwsSettings {
    /// The defaults, overridden by `HEADROOM_AWS_MAX_ATTEMPTS`, `HEADROOM_AWS_ATTEMPT_TIMEOUT_MS`,
    /// `HEADROOM_AWS_OPERATION_TIMEOUT_MS` and `HEADROOM_AWS_RETRY_MODE` (`standard`|`adaptive`).
    pub fn from_env() -> Result<Self, SettingsError> {
        Self::from_lookup(|name| std::env::var(name).ok())
    }

    /// [`AwsSettings::from_env`] over any lookup (tests pass a map, not the process environment).
    pub fn from_lookup(get: impl Fn(&str) -> Option<String>) -> Result<Self, SettingsError> {
        let mut s = Self::default();
        let number =
            |name: &'static str, expected: &'static str| -> Result<Option<u64>, SettingsError> {
                match get(name) {
                    None => Ok(None),
                    Some(value) => match value.trim().parse::<u64>() {
                        Ok(n) if n > 0 => Ok(Some(n)),
                        _ => Err(SettingsError {
                            name,
                            value,
                            expected,
                        }),
                    },
                }
            };
        if let Some(n) = number(ENV_MAX_ATTEMPTS, "a whole number of attempts, at least 1")? {
            s.max_attempts = u32::try_from(n).map_err(|_| SettingsError {
                name: ENV_MAX_ATTEMPTS,
                value: n.to_string(),
                expected: "a whole number of attempts, at least 1",
            })?;
        }
        if let Some(ms) = number(ENV_ATTEMPT_TIMEOUT_MS, "milliseconds, at least 1")? {
            s.attempt_timeout = Duration::from_millis(ms);
        }
        if let Some(ms) = number(ENV_OPERATION_TIMEOUT_MS, "milliseconds, at least 1")? {
            s.operation_timeout = Duration::from_millis(ms);
        }
        if let Some(mode) = get(ENV_RETRY_MODE) {
            s.adaptive = match mode.trim() {
                "standard" => false,
                "adaptive" => true,
                _ => {
                    return Err(SettingsError {
                        name: ENV_RETRY_MODE,
                        value: mode,
                        expected: "`standard` or `adaptive`",
                    })
                }
            };
        }
        Ok(s)
    }

    pub fn retry_config(&self) -> RetryConfig {
        let base = if self.adaptive {
            RetryConfig::adaptive()
        } else {
            RetryConfig::standard()
        };
        base.with_max_attempts(self.max_attempts.max(1))
    }

    pub fn timeout_config(&self) -> TimeoutConfig {
        TimeoutConfig::builder()
            .connect_timeout(self.connect_timeout)
            .operation_attempt_timeout(self.attempt_timeout)
            .operation_timeout(self.operation_timeout)
            .build()
    }

    /// The SDK's default loader (region, credentials, `AWS_ENDPOINT_URL` from the environment)
    /// with these retries and timeouts. Tests add an endpoint and test credentials to it.
    pub fn loader(&self) -> ConfigLoader {
        aws_config::defaults(BehaviorVersion::latest())
            .retry_config(self.retry_config())
            .timeout_config(self.timeout_config())
    }

    /// Loads the SDK configuration: once per process.
    pub async fn load(&self) -> SdkConfig {
        self.loader().load().await
    }
}

/// Every AWS client headroom uses, built once from one configuration and cloned cheaply (a
/// client is a reference-counted handle).
#[derive(Debug, Clone)]
pub struct Clients {
    pub aas: aws_sdk_applicationautoscaling::Client,
    pub dynamo: aws_sdk_dynamodb::Client,
    pub sagemaker: aws_sdk_sagemaker::Client,
    pub cloudwatch: aws_sdk_cloudwatch::Client,
}

impl Clients {
    pub fn new(config: &SdkConfig) -> Self {
        Self {
            aas: aws_sdk_applicationautoscaling::Client::new(config),
            dynamo: aws_sdk_dynamodb::Client::new(config),
            sagemaker: aws_sdk_sagemaker::Client::new(config),
            cloudwatch: aws_sdk_cloudwatch::Client::new(config),
        }
    }

    /// Loads the configuration with `settings` and builds the clients.
    pub async fn load(settings: &AwsSettings) -> Self {
        Self::new(&settings.load().await)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // a failed unwrap is a failed test
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn lookup(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let map: HashMap<String, String> = pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        move |name| map.get(name).cloned()
    }

    #[test]
    fn defaults_bound_every_call() {
        let s = AwsSettings::from_lookup(lookup(&[])).unwrap();
        assert_eq!(s, AwsSettings::default());
        let t = s.timeout_config();
        assert_eq!(t.operation_timeout(), Some(Duration::from_secs(20)));
        assert_eq!(t.operation_attempt_timeout(), Some(Duration::from_secs(5)));
        assert_eq!(s.retry_config().max_attempts(), 3);
    }

    #[test]
    fn environment_overrides_and_names_the_bad_variable() {
        let s = AwsSettings::from_lookup(lookup(&[
            (ENV_MAX_ATTEMPTS, "1"),
            (ENV_ATTEMPT_TIMEOUT_MS, "750"),
            (ENV_RETRY_MODE, "adaptive"),
        ]))
        .unwrap();
        assert_eq!(s.max_attempts, 1);
        assert_eq!(s.attempt_timeout, Duration::from_millis(750));
        assert!(s.adaptive);
        assert_eq!(s.retry_config().max_attempts(), 1);

        let err = AwsSettings::from_lookup(lookup(&[(ENV_MAX_ATTEMPTS, "0")])).unwrap_err();
        assert_eq!(err.name, ENV_MAX_ATTEMPTS);
        let err = AwsSettings::from_lookup(lookup(&[(ENV_RETRY_MODE, "legacy")])).unwrap_err();
        assert!(err.to_string().contains("HEADROOM_AWS_RETRY_MODE"), "{err}");
    }
}
