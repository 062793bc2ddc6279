//! The tick function's handler against memory ports.
#![allow(clippy::unwrap_used)] // a failed unwrap is a failed test

use std::sync::atomic::{AtomicBool, Ordering};

use headroom_core::memory::{MemoryScalingTargets, MemoryStateStore};
use headroom_core::model::{Observed, Suspended};
use headroom_core::ports::{ErrorClass, FailureKind, PortError};

use chrono::{DateTime, Utc};
use headroom_core::ports::ScalingTargets;
use headroom_core::usecase::Ports;
use headroom_core::{ScalableTargetId, TargetPlan};
use headroom_tick::{handle, Outcome};

/// AAS in memory whose RegisterScalableTarget is denied while `deny` is set.
#[derive(Default)]
struct DenyingAas {
    inner: MemoryScalingTargets,
    deny: AtomicBool,
}

impl ScalingTargets for DenyingAas {
    async fn describe(
        &self,
        ids: &[ScalableTargetId],
    ) -> Result<Vec<Observed>, headroom_core::ports::PortError> {
        self.inner.describe(ids).await
    }

    async fn register(
        &self,
        id: &ScalableTargetId,
        min: u32,
        max: u32,
        suspended: Suspended,
    ) -> Result<(), PortError> {
        if self.deny.load(Ordering::SeqCst) {
            return Err(PortError::new(
                format!("register the scalable target {id}"),
                ErrorClass::Permanent,
                "denied",
            )
            .with_answer(
                FailureKind::Access,
                Some("AccessDeniedException".into()),
                "not authorized to perform: application-autoscaling:RegisterScalableTarget",
            ));
        }
        self.inner.register(id, min, max, suspended).await
    }
}

fn t(s: &str) -> DateTime<Utc> {
    s.parse().unwrap()
}

#[tokio::test]
async fn a_failing_target_records_its_error_and_since_when_until_it_converges() {
    // GIVEN a managed target whose registration AAS denies
    let id: ScalableTargetId = "endpoint/chat/variant/AllTraffic".parse().unwrap();
    let plan = TargetPlan::test(&id.to_string()).bounds(2, 6).plan();
    let store = MemoryStateStore::default().with_plan(&plan.text());
    let aas = DenyingAas::default();
    aas.deny.store(true, Ordering::SeqCst);
    let tick = serde_json::from_str::<serde_json::Value>(include_str!(
        "../../../events/schedule/tick-rule.json"
    ))
    .unwrap();

    // WHEN two ticks fail the same way
    for at in ["2026-03-14T09:00:00Z", "2026-03-14T09:01:00Z"] {
        let out = handle(Ports::new(&aas, &store), &tick, t(at))
            .await
            .unwrap();
        assert!(matches!(out, Outcome::Tick(ref r) if r.errors.len() == 1));
    }
    // THEN the state holds the error once, since the first tick
    let state = store.state(&id);
    let error = state.last_error.clone().expect("the failure is recorded");
    assert_eq!(error.since, t("2026-03-14T09:00:00Z"));
    assert!(error.message.contains("AccessDeniedException"), "{error:?}");
    assert_eq!(error.code.as_deref(), Some("AccessDeniedException"));
    assert!(!error.retryable);

    // WHEN AAS accepts again THEN the next tick converges, and the one after finds AAS in
    // step and clears the error (the state is written before AAS is called, so the tick that
    // registers cannot know yet that the register will succeed)
    aas.deny.store(false, Ordering::SeqCst);
    handle(Ports::new(&aas, &store), &tick, t("2026-03-14T09:02:00Z"))
        .await
        .unwrap();
    assert_eq!(aas.inner.get(&id).map(|o| o.min), Some(2));
    handle(Ports::new(&aas, &store), &tick, t("2026-03-14T09:03:00Z"))
        .await
        .unwrap();
    assert_eq!(store.state(&id).last_error, None);
}
