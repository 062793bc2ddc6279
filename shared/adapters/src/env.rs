//! What every Lambda function reads from its environment, read once at init. Nothing else in a
//! function reads the environment.

use crate::config::{AwsSettings, SettingsError};

/// The environment variable naming headroom's DynamoDB table.
pub const ENV_TABLE: &str = "HEADROOM_TABLE";

#[derive(Debug, Clone)]
pub struct FunctionEnv {
    pub table: String,
    pub aws: AwsSettings,
}

#[derive(Debug, thiserror::Error)]
pub enum EnvError {
    #[error(
        "environment variable {ENV_TABLE} is not set: set it to headroom's DynamoDB table name"
    )]
    MissingTable,
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
        Ok(Self {
            table,
            aws: AwsSettings::from_lookup(get)?,
        })
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
    }
}
