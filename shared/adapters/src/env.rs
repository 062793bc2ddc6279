//! What every Lambda function reads from its environment, read once at init. Nothing else in a
//! function reads the environment.

use headroom_core::alarms::Home;

use crate::config::{AwsSettings, SettingsError};

/// The environment variable naming headroom's DynamoDB table.
pub const ENV_TABLE: &str = "HEADROOM_TABLE";

/// The environment variable giving the function's ARN for local runtimes that send none:
/// `cargo lambda watch` sends the placeholder `function-arn`, from which the alarm and deploy
/// functions cannot tell their account and region. Lambda always sends the real ARN, and a real ARN wins, so
/// the template does not set it.
pub const ENV_FUNCTION_ARN: &str = "HEADROOM_FUNCTION_ARN";

#[derive(Debug, Clone)]
pub struct FunctionEnv {
    pub table: String,
    pub aws: AwsSettings,
    /// The home `HEADROOM_FUNCTION_ARN` names, when set.
    pub local_home: Option<Home>,
}

#[derive(Debug, thiserror::Error)]
pub enum EnvError {
    #[error(
        "environment variable {ENV_TABLE} is not set: set it to headroom's DynamoDB table name"
    )]
    MissingTable,
    #[error(
        "environment variable {ENV_FUNCTION_ARN} is {0:?}: expected a Lambda function ARN, arn:aws:lambda:<region>:<account>:function:<name>"
    )]
    BadFunctionArn(String),
    #[error(transparent)]
    Settings(#[from] SettingsError),
}

impl FunctionEnv {
    pub fn from_env() -> Result<Self, EnvError> {
        Self::from_lookup(|name| std::env::var(name).ok())
    }

    pub fn from_lookup(get: impl Fn(&str) -> Option<String>) -> Result<Self, EnvError> {
        let table = get(ENV_TABLE)
            .filter(|t| !t.trim().is_empty())
            .ok_or(EnvError::MissingTable)?;
        let local_home = match get(ENV_FUNCTION_ARN).filter(|a| !a.trim().is_empty()) {
            None => None,
            Some(arn) => {
                Some(Home::from_function_arn(arn.trim()).ok_or(EnvError::BadFunctionArn(arn))?)
            }
        };
        Ok(Self {
            table,
            aws: AwsSettings::from_lookup(&get)?,
            local_home,
        })
    }

    /// The function's own account and region for an invocation whose context names
    /// `invoked_arn`: Lambda's ARN wins; `HEADROOM_FUNCTION_ARN` stands in only where the
    /// runtime sends none (`cargo lambda watch` sends `function-arn`).
    pub fn home(&self, invoked_arn: &str) -> Option<Home> {
        Home::from_function_arn(invoked_arn).or_else(|| self.local_home.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_is_required_and_named_in_the_error() {
        let err = FunctionEnv::from_lookup(|_| None).unwrap_err();
        assert!(err.to_string().contains("HEADROOM_TABLE"));
        let env =
            FunctionEnv::from_lookup(|n| (n == ENV_TABLE).then(|| "headroom".to_owned())).unwrap();
        assert_eq!(env.table, "headroom");
        assert_eq!(env.local_home, None);
    }

    #[test]
    fn a_local_function_arn_must_be_a_lambda_arn() {
        let lookup = |arn: &'static str| {
            move |n: &str| match n {
                ENV_TABLE => Some("headroom".to_owned()),
                ENV_FUNCTION_ARN => Some(arn.to_owned()),
                _ => None,
            }
        };
        let env = FunctionEnv::from_lookup(lookup(
            "arn:aws:lambda:eu-west-1:123456789012:function:headroom-alarm",
        ))
        .unwrap();
        let home = env.local_home.clone().expect("a home");
        assert_eq!(
            (home.account.as_str(), home.region.as_str()),
            ("123456789012", "eu-west-1")
        );
        // It stands in for the placeholder ARN only; a real invoked ARN wins.
        assert_eq!(env.home("function-arn"), Some(home));
        let real = env
            .home("arn:aws:lambda:us-east-1:999999999999:function:headroom-deploy")
            .expect("a home");
        assert_eq!(real.account, "999999999999");
        let err = FunctionEnv::from_lookup(lookup("function-arn")).unwrap_err();
        assert!(err.to_string().contains("HEADROOM_FUNCTION_ARN"), "{err}");
    }
}
