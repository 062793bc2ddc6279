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
    #[error(
        "scalable target {target} has no dimension {dimension:?}: a variant takes \
         `instance_count` (the default) or `provisioned_concurrency` (serverless), an inference \
         component `copy_count`; use {expected:?} or leave `dimension` out"
    )]
    WrongDimension {
        target: String,
        dimension: &'static str,
        expected: &'static str,
    },
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

/// The kind of AAS scalable dimension a target uses. A plan names it with [`Dimension::plan_name`]
/// (`dimension = "provisioned_concurrency"`); AAS with [`Dimension::as_str`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Dimension {
    #[serde(rename = "sagemaker:variant:DesiredInstanceCount")]
    VariantInstances,
    /// A serverless variant's provisioned concurrency: a count of concurrent invocations kept
    /// warm, not of instances (Application Auto Scaling user guide, "Amazon SageMaker AI and
    /// Application Auto Scaling"; SageMaker developer guide, "Automatically scale Provisioned
    /// Concurrency for a serverless endpoint").
    #[serde(rename = "sagemaker:variant:DesiredProvisionedConcurrency")]
    VariantProvisionedConcurrency,
    #[serde(rename = "sagemaker:inference-component:DesiredCopyCount")]
    ComponentCopies,
}

impl Dimension {
    pub const ALL: [Dimension; 3] = [
        Dimension::VariantInstances,
        Dimension::VariantProvisionedConcurrency,
        Dimension::ComponentCopies,
    ];

    /// AAS's `ScalableDimension`.
    pub fn as_str(self) -> &'static str {
        match self {
            Dimension::VariantInstances => "sagemaker:variant:DesiredInstanceCount",
            Dimension::VariantProvisionedConcurrency => {
                "sagemaker:variant:DesiredProvisionedConcurrency"
            }
            Dimension::ComponentCopies => "sagemaker:inference-component:DesiredCopyCount",
        }
    }

    /// The plan's spelling (`[[target]] dimension`).
    pub fn plan_name(self) -> &'static str {
        match self {
            Dimension::VariantInstances => "instance_count",
            Dimension::VariantProvisionedConcurrency => "provisioned_concurrency",
            Dimension::ComponentCopies => "copy_count",
        }
    }

    /// The dimension a plan names (`instance_count`, `provisioned_concurrency`, `copy_count`).
    pub fn from_plan_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|d| d.plan_name() == name)
    }

    /// What one unit of capacity is, for messages: "3 instances", "12 concurrent invocations".
    pub fn unit(self, count: u32) -> &'static str {
        match (self, count == 1) {
            (Dimension::VariantInstances, true) => "instance",
            (Dimension::VariantInstances, false) => "instances",
            (Dimension::VariantProvisionedConcurrency, true) => "provisioned concurrent invocation",
            (Dimension::VariantProvisionedConcurrency, false) => {
                "provisioned concurrent invocations"
            }
            (Dimension::ComponentCopies, true) => "copy",
            (Dimension::ComponentCopies, false) => "copies",
        }
    }
}

impl fmt::Display for Dimension {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What a production variant target counts: the variant's instances (real-time and async
/// variants), or a serverless variant's provisioned concurrency. A variant is either
/// instance-based or serverless, never both, so the resource id alone still names one target.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum VariantCapacity {
    #[default]
    Instances,
    ProvisionedConcurrency,
}

/// An Application Auto Scaling scalable target headroom can manage: a SageMaker production
/// variant's instance count or provisioned concurrency, or an inference component's copy count.
/// Its string form is AAS's resource id, which does not say the dimension: an id read from a
/// string (`FromStr`, serde) counts a variant's instances; a plan's id carries what the plan says.
/// `Plan::target` matches on the resource id, so an id from an event or the CLI finds its target,
/// and every AAS call uses the plan's id.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ScalableTargetId {
    Variant {
        endpoint: EndpointName,
        variant: VariantName,
        capacity: VariantCapacity,
    },
    InferenceComponent(ComponentName),
}

impl ScalableTargetId {
    /// A variant's instance count.
    pub fn variant(endpoint: &str, variant: &str) -> Result<Self, IdError> {
        Ok(Self::Variant {
            endpoint: EndpointName::parse(endpoint)?,
            variant: VariantName::parse(variant)?,
            capacity: VariantCapacity::Instances,
        })
    }

    /// A serverless variant's provisioned concurrency.
    pub fn provisioned_concurrency(endpoint: &str, variant: &str) -> Result<Self, IdError> {
        Self::variant(endpoint, variant)?.with_dimension(Dimension::VariantProvisionedConcurrency)
    }

    pub fn component(name: &str) -> Result<Self, IdError> {
        Ok(Self::InferenceComponent(ComponentName::parse(name)?))
    }

    /// The same resource on `dimension`; refused when the resource has no such dimension (an
    /// inference component counts copies only; a variant, instances or provisioned concurrency).
    pub fn with_dimension(self, dimension: Dimension) -> Result<Self, IdError> {
        match (self, dimension) {
            (
                Self::Variant {
                    endpoint, variant, ..
                },
                Dimension::VariantInstances,
            ) => Ok(Self::Variant {
                endpoint,
                variant,
                capacity: VariantCapacity::Instances,
            }),
            (
                Self::Variant {
                    endpoint, variant, ..
                },
                Dimension::VariantProvisionedConcurrency,
            ) => Ok(Self::Variant {
                endpoint,
                variant,
                capacity: VariantCapacity::ProvisionedConcurrency,
            }),
            (id @ Self::InferenceComponent(_), Dimension::ComponentCopies) => Ok(id),
            (id, dimension) => Err(IdError::WrongDimension {
                target: id.to_string(),
                dimension: dimension.plan_name(),
                expected: id.dimension().plan_name(),
            }),
        }
    }

    pub fn dimension(&self) -> Dimension {
        match self {
            Self::Variant {
                capacity: VariantCapacity::Instances,
                ..
            } => Dimension::VariantInstances,
            Self::Variant {
                capacity: VariantCapacity::ProvisionedConcurrency,
                ..
            } => Dimension::VariantProvisionedConcurrency,
            Self::InferenceComponent(_) => Dimension::ComponentCopies,
        }
    }

    /// Whether this is a serverless variant's provisioned concurrency.
    pub fn is_provisioned_concurrency(&self) -> bool {
        self.dimension() == Dimension::VariantProvisionedConcurrency
    }

    /// The endpoint behind a variant target (an inference component names its endpoint only in
    /// SageMaker's own description of it).
    pub fn endpoint(&self) -> Option<&EndpointName> {
        match self {
            Self::Variant { endpoint, .. } => Some(endpoint),
            Self::InferenceComponent(_) => None,
        }
    }

    /// AAS's resource id (the same for both dimensions of a variant).
    pub fn resource_id(&self) -> String {
        self.to_string()
    }

    /// Whether `other` names the same AAS resource, whatever the dimension either carries.
    pub fn same_resource(&self, other: &ScalableTargetId) -> bool {
        match (self, other) {
            (
                Self::Variant {
                    endpoint, variant, ..
                },
                Self::Variant {
                    endpoint: e,
                    variant: v,
                    ..
                },
            ) => endpoint == e && variant == v,
            (Self::InferenceComponent(a), Self::InferenceComponent(b)) => a == b,
            _ => false,
        }
    }
}

impl fmt::Display for ScalableTargetId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Variant {
                endpoint, variant, ..
            } => {
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
    fn a_variant_has_two_dimensions_on_one_resource_id() {
        // GIVEN the same variant as instance count and as provisioned concurrency
        let instances = ScalableTargetId::variant("faq", "AllTraffic").unwrap();
        let concurrency = ScalableTargetId::provisioned_concurrency("faq", "AllTraffic").unwrap();
        // THEN AAS sees one resource id with two dimensions
        assert_eq!(instances.resource_id(), concurrency.resource_id());
        assert_eq!(
            concurrency.dimension().as_str(),
            "sagemaker:variant:DesiredProvisionedConcurrency"
        );
        assert!(
            concurrency.is_provisioned_concurrency() && !instances.is_provisioned_concurrency()
        );
        assert_ne!(instances, concurrency);
        assert!(instances.same_resource(&concurrency));
        // AND a string reads back as the instance count (the plan says otherwise)
        let parsed: ScalableTargetId = concurrency.to_string().parse().unwrap();
        assert_eq!(parsed, instances);
        assert_eq!(
            concurrency.dimension().unit(3),
            "provisioned concurrent invocations"
        );
    }

    #[test]
    fn every_dimension_has_one_plan_name_and_fits_only_its_resource() {
        for d in Dimension::ALL {
            assert_eq!(Dimension::from_plan_name(d.plan_name()), Some(d));
        }
        assert_eq!(
            Dimension::from_plan_name("DesiredProvisionedConcurrency"),
            None
        );
        let c = ScalableTargetId::component("ic-a").unwrap();
        let err = c
            .clone()
            .with_dimension(Dimension::VariantProvisionedConcurrency)
            .unwrap_err();
        assert!(err.to_string().contains("\"copy_count\""), "{err}");
        assert_eq!(c.clone().with_dimension(Dimension::ComponentCopies), Ok(c));
        let v = ScalableTargetId::variant("e", "v").unwrap();
        assert!(v.with_dimension(Dimension::ComponentCopies).is_err());
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
