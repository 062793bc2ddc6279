//! Application Auto Scaling: the [`ScalingTargets`] port over the SDK.
//!
//! `describe` makes ONE DescribeScalableTargets call per page of up to 50 resource ids, without a
//! ScalableDimension filter: the filter is optional and takes one dimension, so a page may mix
//! variant instance counts, serverless variants' provisioned concurrency and inference
//! components and still cost one call. Results are matched back on (resource id, dimension): a
//! variant's resource id is the same on both of its dimensions, so a target registered on the
//! other one is ignored. Every call names the target's own dimension (`ScalableTargetId::dimension`).

use std::collections::HashMap;

use aws_sdk_applicationautoscaling::types::{
    ScalableDimension, ScalableTarget, ServiceNamespace, SuspendedState,
};
use aws_sdk_applicationautoscaling::Client;
use headroom_core::ids::ScalableTargetId;
use headroom_core::ports::{PortError, ScalingTargets, DESCRIBE_PAGE};
use headroom_core::{Observed, Suspended};

use crate::error::{permanent, port_error};

/// AAS for SageMaker targets.
#[derive(Debug, Clone)]
pub struct AasScalingTargets {
    client: Client,
}

impl AasScalingTargets {
    /// The AWS operations this adapter's methods call, as IAM names them: the functions'
    /// `operations.rs` and the template's IAM policies are checked against this list, and this
    /// list against the calls in this file (tests/tests/infra_consistency.rs).
    pub const OPERATIONS: &'static [&'static str] = &[
        "application-autoscaling:DescribeScalableTargets",
        "application-autoscaling:RegisterScalableTarget",
    ];

    pub fn new(client: Client) -> Self {
        Self { client }
    }

    pub fn client(&self) -> &Client {
        &self.client
    }

    /// One page: one call, plus one per NextToken (AAS pages at 50, so 50 ids never need a second).
    async fn describe_page(&self, ids: &[ScalableTargetId]) -> Result<Vec<Observed>, PortError> {
        let wanted: HashMap<String, &ScalableTargetId> =
            ids.iter().map(|id| (id.resource_id(), id)).collect();
        let mut found = Vec::with_capacity(ids.len());
        let mut next_token: Option<String> = None;
        loop {
            let out = self
                .client
                .describe_scalable_targets()
                .service_namespace(ServiceNamespace::Sagemaker)
                .set_resource_ids(Some(wanted.keys().cloned().collect()))
                .max_results(DESCRIBE_PAGE as i32)
                .set_next_token(next_token.take())
                .send()
                .await
                .map_err(|e| port_error(format!("describe {} scalable targets", ids.len()), e))?;
            for target in out.scalable_targets() {
                let Some(id) = wanted.get(target.resource_id()) else {
                    continue;
                };
                if target.scalable_dimension().as_str() != id.dimension().as_str() {
                    continue;
                }
                found.push(observed((*id).clone(), target)?);
            }
            match out.next_token() {
                Some(token) if !token.is_empty() => next_token = Some(token.to_owned()),
                _ => break,
            }
        }
        Ok(found)
    }
}

/// AAS's view of one target, with absent suspension flags read as "not suspended" (AAS and moto
/// omit flags that were never set).
fn observed(id: ScalableTargetId, target: &ScalableTarget) -> Result<Observed, PortError> {
    let capacity = |value: i32, what: &str| {
        u32::try_from(value).map_err(|_| {
            permanent(
                format!("read the scalable target {id}"),
                format!("AAS reports a negative {what} ({value})"),
            )
        })
    };
    let flags = target.suspended_state();
    let flag = |get: fn(&SuspendedState) -> Option<bool>| flags.and_then(get).unwrap_or(false);
    Ok(Observed {
        min: capacity(target.min_capacity(), "MinCapacity")?,
        max: capacity(target.max_capacity(), "MaxCapacity")?,
        suspended: Suspended {
            dynamic_in: flag(SuspendedState::dynamic_scaling_in_suspended),
            dynamic_out: flag(SuspendedState::dynamic_scaling_out_suspended),
            scheduled: flag(SuspendedState::scheduled_scaling_suspended),
        },
        id,
    })
}

fn capacity_i32(id: &ScalableTargetId, value: u32, what: &str) -> Result<i32, PortError> {
    i32::try_from(value).map_err(|_| {
        permanent(
            format!("register the scalable target {id}"),
            format!("{what} {value} is larger than AAS accepts"),
        )
    })
}

impl ScalingTargets for AasScalingTargets {
    async fn describe(&self, ids: &[ScalableTargetId]) -> Result<Vec<Observed>, PortError> {
        // The port promises pages of at most 50; a larger slice still costs one call per 50.
        let mut all = Vec::with_capacity(ids.len());
        for page in ids.chunks(DESCRIBE_PAGE) {
            all.extend(self.describe_page(page).await?);
        }
        Ok(all)
    }

    async fn register(
        &self,
        id: &ScalableTargetId,
        min: u32,
        max: u32,
        suspended: Suspended,
    ) -> Result<(), PortError> {
        // All three flags go explicitly: an omitted flag is left as it was by AAS, and comes back
        // absent from moto, so sending them all makes the call say exactly what headroom wants.
        let state = SuspendedState::builder()
            .dynamic_scaling_in_suspended(suspended.dynamic_in)
            .dynamic_scaling_out_suspended(suspended.dynamic_out)
            .scheduled_scaling_suspended(suspended.scheduled)
            .build();
        self.client
            .register_scalable_target()
            .service_namespace(ServiceNamespace::Sagemaker)
            .resource_id(id.resource_id())
            .scalable_dimension(ScalableDimension::from(id.dimension().as_str()))
            .min_capacity(capacity_i32(id, min, "MinCapacity")?)
            .max_capacity(capacity_i32(id, max, "MaxCapacity")?)
            .suspended_state(state)
            .send()
            .await
            .map_err(|e| {
                port_error(
                    format!("register the scalable target {id} (min {min}, max {max})"),
                    e,
                )
            })?;
        tracing::debug!(target_id = %id, min, max, ?suspended, "registered scalable target");
        Ok(())
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // a failed unwrap is a failed test
mod tests {
    use super::*;
    use crate::test_support::aas_client;
    use aws_sdk_applicationautoscaling::operation::describe_scalable_targets::DescribeScalableTargetsOutput;
    use aws_sdk_applicationautoscaling::operation::register_scalable_target::{
        RegisterScalableTargetError, RegisterScalableTargetOutput,
    };
    use aws_sdk_applicationautoscaling::types::error::ConcurrentUpdateException;
    use aws_smithy_mocks::mock;

    fn variant(i: usize) -> ScalableTargetId {
        ScalableTargetId::variant(&format!("ep-{i}"), "AllTraffic").unwrap()
    }

    fn target(
        resource_id: &str,
        dimension: &str,
        min: i32,
        max: i32,
        state: Option<SuspendedState>,
    ) -> ScalableTarget {
        ScalableTarget::builder()
            .service_namespace(ServiceNamespace::Sagemaker)
            .resource_id(resource_id)
            .scalable_dimension(ScalableDimension::from(dimension))
            .min_capacity(min)
            .max_capacity(max)
            .role_arn("arn:aws:iam::123456789012:role/aas")
            .creation_time(aws_smithy_types::DateTime::from_secs(0))
            .set_suspended_state(state)
            .build()
            .unwrap()
    }

    #[tokio::test]
    async fn describe_makes_one_call_per_page_of_50_and_mixes_dimensions() {
        // GIVEN 120 targets, variants and inference components mixed
        let ids: Vec<ScalableTargetId> = (0..120)
            .map(|i| {
                if i % 3 == 0 {
                    ScalableTargetId::component(&format!("ic-{i}")).unwrap()
                } else {
                    variant(i)
                }
            })
            .collect();
        let rule = mock!(aws_sdk_applicationautoscaling::Client::describe_scalable_targets)
            .match_requests(|r| r.scalable_dimension().is_none() && r.resource_ids().len() <= 50)
            .then_compute_output(|r| {
                let targets = r
                    .resource_ids()
                    .iter()
                    .map(|rid| {
                        let dim = if rid.starts_with("inference-component/") {
                            "sagemaker:inference-component:DesiredCopyCount"
                        } else {
                            "sagemaker:variant:DesiredInstanceCount"
                        };
                        target(rid, dim, 1, 4, None)
                    })
                    .collect();
                DescribeScalableTargetsOutput::builder()
                    .set_scalable_targets(Some(targets))
                    .build()
            });
        let aas = AasScalingTargets::new(aas_client(&[&rule]));
        // WHEN the tick describes them page by page
        let mut seen = Vec::new();
        for page in ids.chunks(DESCRIBE_PAGE) {
            seen.extend(aas.describe(page).await.unwrap());
        }
        // THEN ceil(120/50) = 3 calls, every target found, absent flags read as false
        assert_eq!(rule.num_calls(), 3);
        assert_eq!(seen.len(), 120);
        assert!(seen
            .iter()
            .all(|o| o.suspended == Suspended::default() && o.min == 1 && o.max == 4));
    }

    #[tokio::test]
    async fn describe_follows_next_token_and_ignores_foreign_dimensions() {
        let ids = vec![variant(1), variant(2)];
        let rule = mock!(aws_sdk_applicationautoscaling::Client::describe_scalable_targets)
            .sequence()
            .output(|| {
                DescribeScalableTargetsOutput::builder()
                    .scalable_targets(target(
                        "endpoint/ep-1/variant/AllTraffic",
                        "sagemaker:variant:DesiredInstanceCount",
                        2,
                        6,
                        Some(
                            SuspendedState::builder()
                                .dynamic_scaling_in_suspended(true)
                                .build(),
                        ),
                    ))
                    .next_token("page-2")
                    .build()
            })
            .output(|| {
                DescribeScalableTargetsOutput::builder()
                    .scalable_targets(target(
                        "endpoint/ep-2/variant/AllTraffic",
                        "sagemaker:inference-component:DesiredCopyCount",
                        1,
                        1,
                        None,
                    ))
                    .build()
            })
            .build();
        let aas = AasScalingTargets::new(aas_client(&[&rule]));
        let seen = aas.describe(&ids).await.unwrap();
        assert_eq!(rule.num_calls(), 2);
        assert_eq!(
            seen.len(),
            1,
            "the foreign dimension is not ep-2's target: {seen:?}"
        );
        assert_eq!(seen[0].id, ids[0]);
        assert!(seen[0].suspended.dynamic_in);
        assert!(!seen[0].suspended.dynamic_out && !seen[0].suspended.scheduled);
    }

    #[tokio::test]
    async fn register_sends_all_three_flags_and_the_dimension() {
        let rule = mock!(aws_sdk_applicationautoscaling::Client::register_scalable_target)
            .match_requests(|r| {
                let s = r.suspended_state();
                r.resource_id() == Some("inference-component/ic-a")
                    && r.scalable_dimension().map(|d| d.as_str())
                        == Some("sagemaker:inference-component:DesiredCopyCount")
                    && r.min_capacity() == Some(3)
                    && r.max_capacity() == Some(9)
                    && s.is_some_and(|s| {
                        s.dynamic_scaling_in_suspended() == Some(true)
                            && s.dynamic_scaling_out_suspended() == Some(false)
                            && s.scheduled_scaling_suspended() == Some(false)
                    })
            })
            .then_output(|| RegisterScalableTargetOutput::builder().build());
        let aas = AasScalingTargets::new(aas_client(&[&rule]));
        let id = ScalableTargetId::component("ic-a").unwrap();
        let suspended = Suspended {
            dynamic_in: true,
            ..Suspended::default()
        };
        aas.register(&id, 3, 9, suspended).await.unwrap();
        assert_eq!(rule.num_calls(), 1);
    }

    #[tokio::test]
    async fn provisioned_concurrency_is_registered_and_read_on_its_own_dimension() {
        // GIVEN a serverless variant's provisioned-concurrency target
        let pc = ScalableTargetId::provisioned_concurrency("faq-bot", "AllTraffic").unwrap();
        let register = mock!(aws_sdk_applicationautoscaling::Client::register_scalable_target)
            .match_requests(|r| {
                r.resource_id() == Some("endpoint/faq-bot/variant/AllTraffic")
                    && r.scalable_dimension().map(|d| d.as_str())
                        == Some("sagemaker:variant:DesiredProvisionedConcurrency")
                    && r.min_capacity() == Some(4)
                    && r.max_capacity() == Some(20)
            })
            .then_output(|| RegisterScalableTargetOutput::builder().build());
        // AAS answers with the same resource id on both dimensions (as if someone registered
        // the instance count too): only the provisioned concurrency is this target
        let describe = mock!(aws_sdk_applicationautoscaling::Client::describe_scalable_targets)
            .then_output(|| {
                DescribeScalableTargetsOutput::builder()
                    .scalable_targets(target(
                        "endpoint/faq-bot/variant/AllTraffic",
                        "sagemaker:variant:DesiredInstanceCount",
                        1,
                        1,
                        None,
                    ))
                    .scalable_targets(target(
                        "endpoint/faq-bot/variant/AllTraffic",
                        "sagemaker:variant:DesiredProvisionedConcurrency",
                        4,
                        20,
                        None,
                    ))
                    .build()
            });
        let aas = AasScalingTargets::new(aas_client(&[&register, &describe]));
        // WHEN headroom raises its floor and reads it back
        aas.register(&pc, 4, 20, Suspended::default())
            .await
            .unwrap();
        let seen = aas.describe(std::slice::from_ref(&pc)).await.unwrap();
        // THEN RegisterScalableTarget named sagemaker:variant:DesiredProvisionedConcurrency
        assert_eq!(register.num_calls(), 1, "the dimension was not the PC one");
        assert_eq!(seen.len(), 1, "{seen:?}");
        assert_eq!(seen[0].id, pc);
        assert_eq!((seen[0].min, seen[0].max), (4, 20));
    }

    #[tokio::test]
    async fn a_concurrent_update_is_retryable_and_names_the_target() {
        let rule = mock!(aws_sdk_applicationautoscaling::Client::register_scalable_target)
            .then_error(|| {
                RegisterScalableTargetError::ConcurrentUpdateException(
                    ConcurrentUpdateException::builder().message("busy").build(),
                )
            });
        let aas = AasScalingTargets::new(aas_client(&[&rule]));
        let err = aas
            .register(&variant(7), 1, 2, Suspended::default())
            .await
            .unwrap_err();
        assert!(err.is_retryable());
        assert!(
            err.to_string().contains("endpoint/ep-7/variant/AllTraffic"),
            "{err}"
        );
    }
}
