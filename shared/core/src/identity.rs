//! The model identity behind a managed target, and how headroom tells that it changed.
//!
//! The identity is what serves: for each container the image, the model data location and the
//! model package. Its fingerprint is a stable hash of exactly those, so renaming a model or an
//! endpoint config without changing what they serve is not a change (no review), while a new
//! image, new weights or a new package version is. The model name, the endpoint config, the
//! instance type and a pipeline's version label are kept with the identity for operators, not
//! hashed.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::model::ModelFingerprint;

/// Fingerprint scheme version, the prefix of every fingerprint. Bump it if the hashed fields
/// change, so old and new fingerprints never compare equal by accident.
const FINGERPRINT_SCHEME: &str = "m1";

/// One container of a model (or an inference component's own container).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ContainerIdentity {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image: Option<String>,
    /// `ModelDataUrl`, `ModelDataSource.S3DataSource.S3Uri` or an inference component's
    /// `ArtifactUrl`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_data: Option<String>,
    /// The model package name or (versioned) ARN, when the model was deployed from one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_package: Option<String>,
}

impl ContainerIdentity {
    /// The version of a versioned model package ARN (`.../model-package/group/3` -> 3).
    pub fn model_package_version(&self) -> Option<u32> {
        let pkg = self.model_package.as_deref()?;
        if !pkg.starts_with("arn:") {
            return None;
        }
        pkg.rsplit('/').next()?.parse().ok()
    }
}

/// What a managed target serves, as read from SageMaker.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelIdentity {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub endpoint: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub endpoint_config: Option<String>,
    /// Set for inference-component targets.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inference_component: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_arn: Option<String>,
    #[serde(default)]
    pub containers: Vec<ContainerIdentity>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instance_type: Option<String>,
    /// A deployment pipeline's own label for this rollout (`model_version` in its hook).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version_label: Option<String>,
    pub observed_at: DateTime<Utc>,
}

impl ModelIdentity {
    /// A stable fingerprint of what serves: `m1-<16 hex digits>`. Equal identities give equal
    /// fingerprints in every build and on every machine (FNV-1a over a canonical text).
    pub fn fingerprint(&self) -> ModelFingerprint {
        let mut canon = String::new();
        let hashed: Vec<&ContainerIdentity> = self
            .containers
            .iter()
            .filter(|c| c.image.is_some() || c.model_data.is_some() || c.model_package.is_some())
            .collect();
        if hashed.is_empty() {
            // Nothing but a name to go by (a model whose containers SageMaker did not describe).
            canon.push_str("name=");
            canon.push_str(self.model_name.as_deref().unwrap_or("-"));
            canon.push('\n');
        }
        for c in hashed {
            for (k, v) in [
                ("image", &c.image),
                ("data", &c.model_data),
                ("package", &c.model_package),
            ] {
                canon.push_str(k);
                canon.push('=');
                canon.push_str(v.as_deref().unwrap_or("-"));
                canon.push('\n');
            }
            canon.push_str("--\n");
        }
        ModelFingerprint::from(format!(
            "{FINGERPRINT_SCHEME}-{:016x}",
            fnv1a(canon.as_bytes())
        ))
    }

    /// A one-line description for logs, tables and review records.
    pub fn summary(&self) -> String {
        let mut parts = Vec::new();
        if let Some(label) = &self.version_label {
            parts.push(format!("version {label}"));
        }
        if let Some(m) = &self.model_name {
            parts.push(format!("model {m}"));
        }
        if let Some(c) = self.containers.first() {
            if let Some(img) = &c.image {
                parts.push(format!("image {}", img.rsplit('/').next().unwrap_or(img)));
            }
            if let Some(v) = c.model_package_version() {
                parts.push(format!("package v{v}"));
            }
        }
        if parts.is_empty() {
            parts.push(self.fingerprint().into());
        }
        parts.join(", ")
    }
}

/// A stable 64-bit hash (FNV-1a).
pub fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// What an observation means against what headroom remembered.
#[derive(Debug, Clone, PartialEq)]
pub enum IdentityChange {
    /// First sighting: recorded as the baseline, no review.
    Baseline,
    /// Same fingerprint as remembered.
    Unchanged,
    /// A different model serves now: a review is due.
    Changed {
        previous_fingerprint: ModelFingerprint,
    },
}

/// Compares the observed identity with the fingerprint in force (the target state's `model`).
pub fn assess(
    previous_fingerprint: Option<&ModelFingerprint>,
    observed: &ModelIdentity,
) -> IdentityChange {
    match previous_fingerprint {
        None => IdentityChange::Baseline,
        Some(prev) if *prev == observed.fingerprint() => IdentityChange::Unchanged,
        Some(prev) => IdentityChange::Changed {
            previous_fingerprint: prev.clone(),
        },
    }
}

/// Whether the stored MODEL item needs rewriting: the fingerprint moved, or the same model got a
/// (new) pipeline label, or nothing was stored yet. A later observation without a label keeps
/// the stored label (SageMaker never reports one).
pub fn merge_for_storage(
    stored: Option<&ModelIdentity>,
    observed: &ModelIdentity,
) -> Option<ModelIdentity> {
    match stored {
        None => Some(observed.clone()),
        Some(s) if s.fingerprint() != observed.fingerprint() => Some(observed.clone()),
        Some(s) => match &observed.version_label {
            Some(label) if s.version_label.as_ref() != Some(label) => {
                let mut merged = s.clone();
                merged.version_label = Some(label.clone());
                Some(merged)
            }
            _ => None,
        },
    }
}

/// Which fingerprint was in force from when: newest last, bounded. Kept in the target state
/// (`TargetState::deploy`), so that a scale-out measured late (AAS activities are read after the fact) is
/// attributed to the model that served when it happened.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ModelHistory {
    pub entries: Vec<ModelEra>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ModelEra {
    pub fingerprint: ModelFingerprint,
    pub since: DateTime<Utc>,
}

const MODEL_HISTORY_KEPT: usize = 20;

impl ModelHistory {
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Records that `fingerprint` serves from `since` (no-op when it already is the newest).
    pub fn record(&mut self, fingerprint: &ModelFingerprint, since: DateTime<Utc>) {
        if self
            .entries
            .last()
            .is_some_and(|e| e.fingerprint == *fingerprint)
        {
            return;
        }
        self.entries.push(ModelEra {
            fingerprint: fingerprint.clone(),
            since,
        });
        self.entries.sort_by_key(|e| e.since);
        crate::newest::keep_newest(&mut self.entries, MODEL_HISTORY_KEPT);
    }

    /// The fingerprint in force at `at`. Before the first known era, the first (the baseline
    /// stands for the time before headroom watched).
    pub fn at(&self, at: DateTime<Utc>) -> Option<&ModelFingerprint> {
        self.entries
            .iter()
            .rev()
            .find(|e| e.since <= at)
            .or_else(|| self.entries.first())
            .map(|e| &e.fingerprint)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // a test that cannot unwrap has failed
mod tests {
    use super::*;

    fn t(s: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(s).unwrap().with_timezone(&Utc)
    }

    pub(crate) fn identity(image: &str, data: &str) -> ModelIdentity {
        ModelIdentity {
            endpoint: Some("chat-prod".into()),
            endpoint_config: Some("cfg-v7".into()),
            inference_component: None,
            model_name: Some("chat-v7".into()),
            model_arn: None,
            containers: vec![ContainerIdentity {
                image: Some(image.into()),
                model_data: Some(data.into()),
                model_package: None,
            }],
            instance_type: Some("ml.g4dn.xlarge".into()),
            version_label: None,
            observed_at: t("2026-03-14T09:00:00Z"),
        }
    }

    #[test]
    fn fingerprint_is_stable_and_hashes_only_what_serves() {
        let a = identity("123.dkr.ecr/llm:1", "s3://m/v7.tar.gz");
        assert_eq!(a.fingerprint(), a.clone().fingerprint());
        assert!(
            a.fingerprint().starts_with("m1-") && a.fingerprint().len() == 19,
            "{}",
            a.fingerprint()
        );
        // Renamed model, new config, new label, other time: same thing serves, same fingerprint.
        let mut renamed = a.clone();
        renamed.model_name = Some("chat-v7-copy".into());
        renamed.endpoint_config = Some("cfg-v7b".into());
        renamed.version_label = Some("release-7".into());
        renamed.observed_at = t("2026-03-15T00:00:00Z");
        assert_eq!(a.fingerprint(), renamed.fingerprint());
        // New weights or a new image: a different fingerprint.
        assert_ne!(
            a.fingerprint(),
            identity("123.dkr.ecr/llm:1", "s3://m/v8.tar.gz").fingerprint()
        );
        assert_ne!(
            a.fingerprint(),
            identity("123.dkr.ecr/llm:2", "s3://m/v7.tar.gz").fingerprint()
        );
        // A value moving between fields is not the same identity.
        assert_ne!(
            identity("x", "y").fingerprint(),
            identity("y", "x").fingerprint()
        );
    }

    #[test]
    fn a_model_without_described_containers_falls_back_to_its_name() {
        let mut a = identity("i", "d");
        a.containers.clear();
        let mut b = a.clone();
        b.model_name = Some("other".into());
        assert_ne!(a.fingerprint(), b.fingerprint());
    }

    #[test]
    fn decision_table_baseline_unchanged_changed() {
        let v7 = identity("img", "s3://v7");
        let v8 = identity("img", "s3://v8");
        assert_eq!(assess(None, &v7), IdentityChange::Baseline);
        assert_eq!(
            assess(Some(&v7.fingerprint()), &v7),
            IdentityChange::Unchanged
        );
        assert_eq!(
            assess(Some(&v7.fingerprint()), &v8),
            IdentityChange::Changed {
                previous_fingerprint: v7.fingerprint()
            }
        );
    }

    #[test]
    fn storage_keeps_a_pipeline_label_that_sagemaker_never_reports() {
        let mut labelled = identity("img", "s3://v8");
        labelled.version_label = Some("8.0.1".into());
        let observed = identity("img", "s3://v8");
        assert_eq!(
            merge_for_storage(Some(&labelled), &observed),
            None,
            "same model, no label: keep the stored one"
        );
        let mut relabelled = observed.clone();
        relabelled.version_label = Some("8.0.2".into());
        let merged = merge_for_storage(Some(&labelled), &relabelled).expect("new label is stored");
        assert_eq!(merged.version_label.as_deref(), Some("8.0.2"));
        assert_eq!(merge_for_storage(None, &observed), Some(observed.clone()));
        let v9 = identity("img", "s3://v9");
        assert_eq!(merge_for_storage(Some(&labelled), &v9), Some(v9));
    }

    #[test]
    fn model_package_version_comes_from_a_versioned_arn_only() {
        let mut c = ContainerIdentity {
            model_package: Some(
                "arn:aws:sagemaker:us-east-1:123:model-package/chat-models/12".into(),
            ),
            ..ContainerIdentity::default()
        };
        assert_eq!(c.model_package_version(), Some(12));
        c.model_package = Some("chat-models".into());
        assert_eq!(c.model_package_version(), None);
    }

    #[test]
    fn history_attributes_instants_to_the_model_then_in_force() {
        let mut h = ModelHistory::default();
        h.record(&"m1-a".into(), t("2026-03-01T00:00:00Z"));
        h.record(&"m1-a".into(), t("2026-03-05T00:00:00Z"));
        h.record(&"m1-b".into(), t("2026-03-10T00:00:00Z"));
        assert_eq!(h.entries.len(), 2, "recording the newest again is a no-op");
        assert_eq!(
            h.at(t("2026-02-01T00:00:00Z")).map(|f| f.as_str()),
            Some("m1-a"),
            "before the baseline counts as the baseline"
        );
        assert_eq!(
            h.at(t("2026-03-09T23:59:59Z")).map(|f| f.as_str()),
            Some("m1-a")
        );
        assert_eq!(
            h.at(t("2026-03-10T00:00:00Z")).map(|f| f.as_str()),
            Some("m1-b")
        );
        let stored = serde_json::to_value(&h).unwrap();
        assert_eq!(serde_json::from_value::<ModelHistory>(stored).unwrap(), h);
        assert_eq!(ModelHistory::default().at(t("2026-03-10T00:00:00Z")), None);
    }
}
