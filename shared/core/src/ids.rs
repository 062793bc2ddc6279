//! Names parsed at the edge. The domain never handles raw strings for AWS identifiers: every
//! newtype here validates on construction and says what is wrong and how to fix it.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Why an identifier was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum IdError {
    #[error("{kind} {value:?} is invalid: {why}")]
    Invalid {
        kind: &'static str,
        value: String,
        why: &'static str,
    },
    #[error(
        "scalable target {0:?} is not a SageMaker resource id: expected \
         `endpoint/<endpoint>/variant/<variant>` or `inference-component/<name>`"
    )]
    UnknownResourceId(String),
}

/// SageMaker's name rule for endpoints, variants and inference components:
/// `^[a-zA-Z0-9](-*[a-zA-Z0-9]){0,62}`, i.e. 1 to 63 characters of letters, digits and hyphens,
/// starting and ending with a letter or digit.
fn check_sagemaker_name(kind: &'static str, value: &str) -> Result<(), IdError> {
    let invalid = |why| IdError::Invalid {
        kind,
        value: crate::text::cut(value).into_owned(),
        why,
    };
    if value.is_empty() {
        return Err(invalid("it is empty"));
    }
    if value.len() > 63 {
        return Err(invalid("it is longer than 63 characters"));
    }
    if !value.chars().all(|c| c.is_ascii_alphanumeric() || c == '-') {
        return Err(invalid("only letters, digits and hyphens are allowed"));
    }
    if value.starts_with('-') || value.ends_with('-') {
        return Err(invalid("it must start and end with a letter or digit"));
    }
    Ok(())
}

macro_rules! sagemaker_name {
    ($(#[$doc:meta])* $name:ident, $kind:literal) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub struct $name(String);

        impl $name {
            pub fn parse(value: impl Into<String>) -> Result<Self, IdError> {
                let value = value.into();
                check_sagemaker_name($kind, &value)?;
                Ok(Self(value))
            }

            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl Serialize for $name {
            fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.serialize_str(&self.0)
            }
        }

        /// Deserializing validates, as parsing does.
        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                Self::parse(String::deserialize(deserializer)?).map_err(serde::de::Error::custom)
            }
        }
    };
}

sagemaker_name!(
    /// A SageMaker endpoint name.
    EndpointName,
    "endpoint name"
);
sagemaker_name!(
    /// A production variant name inside an endpoint.
    VariantName,
    "variant name"
);
sagemaker_name!(
    /// A SageMaker inference component name.
    ComponentName,
    "inference component name"
);

/// The kind of AAS scalable dimension a target uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Dimension {
    #[serde(rename = "sagemaker:variant:DesiredInstanceCount")]
    VariantInstances,
    #[serde(rename = "sagemaker:inference-component:DesiredCopyCount")]
    ComponentCopies,
}

impl Dimension {
    pub fn as_str(self) -> &'static str {
        match self {
            Dimension::VariantInstances => "sagemaker:variant:DesiredInstanceCount",
            Dimension::ComponentCopies => "sagemaker:inference-component:DesiredCopyCount",
        }
    }
}

/// An Application Auto Scaling scalable target headroom can manage: a SageMaker production variant
/// or an inference component. Its string form is AAS's resource id.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ScalableTargetId {
    Variant {
        endpoint: EndpointName,
        variant: VariantName,
    },
    InferenceComponent(ComponentName),
}

impl ScalableTargetId {
    pub fn variant(endpoint: &str, variant: &str) -> Result<Self, IdError> {
        Ok(Self::Variant {
            endpoint: EndpointName::parse(endpoint)?,
            variant: VariantName::parse(variant)?,
        })
    }

    pub fn component(name: &str) -> Result<Self, IdError> {
        Ok(Self::InferenceComponent(ComponentName::parse(name)?))
    }

    pub fn dimension(&self) -> Dimension {
        match self {
            Self::Variant { .. } => Dimension::VariantInstances,
            Self::InferenceComponent(_) => Dimension::ComponentCopies,
        }
    }

    /// The endpoint behind a variant target (an inference component names its endpoint only in
    /// SageMaker's own description of it).
    pub fn endpoint(&self) -> Option<&EndpointName> {
        match self {
            Self::Variant { endpoint, .. } => Some(endpoint),
            Self::InferenceComponent(_) => None,
        }
    }

    pub fn resource_id(&self) -> String {
        self.to_string()
    }
}

impl fmt::Display for ScalableTargetId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Variant { endpoint, variant } => {
                write!(f, "endpoint/{endpoint}/variant/{variant}")
            }
            Self::InferenceComponent(name) => write!(f, "inference-component/{name}"),
        }
    }
}

impl FromStr for ScalableTargetId {
    type Err = IdError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let parts: Vec<&str> = s.split('/').collect();
        match parts.as_slice() {
            ["endpoint", endpoint, "variant", variant] => Self::variant(endpoint, variant),
            ["inference-component", name] => Self::component(name),
            // Quoted cut: the id may be any size an event carried.
            _ => Err(IdError::UnknownResourceId(crate::text::cut(s).into_owned())),
        }
    }
}

impl Serialize for ScalableTargetId {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for ScalableTargetId {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let raw = String::deserialize(deserializer)?;
        raw.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_variant_and_component_resource_ids() {
        let v: ScalableTargetId = "endpoint/chat-prod/variant/AllTraffic".parse().unwrap();
        assert_eq!(v.dimension(), Dimension::VariantInstances);
        assert_eq!(v.endpoint().unwrap().as_str(), "chat-prod");
        assert_eq!(v.to_string(), "endpoint/chat-prod/variant/AllTraffic");
        let c: ScalableTargetId = "inference-component/ic-llama".parse().unwrap();
        assert_eq!(c.dimension(), Dimension::ComponentCopies);
        assert!(c.endpoint().is_none());
    }

    #[test]
    fn refuses_malformed_ids_with_the_expected_form() {
        let err = "endpoint/chat".parse::<ScalableTargetId>().unwrap_err();
        assert!(err
            .to_string()
            .contains("endpoint/<endpoint>/variant/<variant>"));
        let err = "endpoint/-bad/variant/v"
            .parse::<ScalableTargetId>()
            .unwrap_err();
        assert!(err.to_string().contains("start and end"));
        let long = "a".repeat(64);
        assert!(EndpointName::parse(long).is_err());
        assert!(VariantName::parse("has_underscore").is_err());
        assert!(EndpointName::parse("").is_err());
    }
}
