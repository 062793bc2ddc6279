//! Properties of the decision that must hold for every input.

mod common;

use common::*;
use headroom_core::decide::{arbitrate, decide, live_claims, Action};
use headroom_core::state::TargetState;
use headroom_core::{Claim, ClaimSource, Span};
use proptest::prelude::*;

const SOURCES: [&str; 6] = ["guard", "wake", "manual", "peak:a", "peak:b", "peak:c"];

fn arb_claim() -> impl Strategy<Value = Claim> {
    (
        0usize..SOURCES.len(),
        0u32..40,
        -120i64..120,
        1i64..240,
        any::<bool>(),
        any::<bool>(),
    )
        .prop_map(|(s, floor, start_min, len_min, suspend, ramp)| {
            let start = t("2026-06-01T12:00:00Z") + chrono::Duration::minutes(start_min);
            let end = start + chrono::Duration::minutes(len_min);
            let ramp = ramp.then_some(headroom_core::Ramp {
                step: Span::minutes(5),
                keep_percent: 60,
            });
            Claim::new(
                SOURCES[s].parse::<ClaimSource>().expect("valid"),
                floor,
                start,
                end,
                ramp,
                "p",
            )
            .suspending_scale_in(suspend)
        })
}

fn arb_bounds() -> impl Strategy<Value = (u32, u32)> {
    (0u32..10, 1u32..30).prop_map(|(min, extra)| (min, min + extra))
}

proptest! {
    #[test]
    fn the_floor_stays_within_base_min_and_max(
        (min, max) in arb_bounds(),
        claims in prop::collection::vec(arb_claim(), 0..8),
        minute in -60i64..300,
    ) {
        let target = target(min, max, "");
        let now = t("2026-06-01T12:00:00Z") + chrono::Duration::minutes(minute);
        let state = TargetState { claims, ..TargetState::default() };
        let d = decide(&target, Some(&observed(min, max)), &state, Span::minutes(25), now);
        prop_assert!(d.desired.min >= min);
        prop_assert!(d.desired.min <= max);
        prop_assert_eq!(d.desired.max, max);
    }

    #[test]
    fn claim_order_does_not_matter(
        (min, max) in arb_bounds(),
        claims in prop::collection::vec(arb_claim(), 0..8),
        minute in -60i64..300,
        seed in any::<u64>(),
    ) {
        let target = target(min, max, "");
        let now = t("2026-06-01T12:00:00Z") + chrono::Duration::minutes(minute);
        let mut shuffled = claims.clone();
        // A deterministic shuffle from the seed.
        let n = shuffled.len();
        let mut s = seed;
        for i in (1..n).rev() {
            s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            shuffled.swap(i, (s >> 33) as usize % (i + 1));
        }
        let a = arbitrate(&target, &live_claims(&target, &claims, Span::minutes(25), now));
        let b = arbitrate(&target, &live_claims(&target, &shuffled, Span::minutes(25), now));
        prop_assert_eq!(a, b);
    }

    #[test]
    fn reconcile_is_idempotent(
        (min, max) in arb_bounds(),
        claims in prop::collection::vec(arb_claim(), 0..8),
        minute in -60i64..300,
        seen_min in 0u32..40,
        seen_max in 1u32..40,
        registered in any::<bool>(),
    ) {
        let target = target(min, max, "[[target.peak]]\nname = \"a\"\ncron = \"0 13 * * *\"\nduration = \"1h\"\nfloor = 1\n");
        let now = t("2026-06-01T12:00:00Z") + chrono::Duration::minutes(minute);
        let state = TargetState { claims, ..TargetState::default() };
        let seen = registered.then(|| observed(seen_min, seen_max));
        let first = decide(&target, seen.as_ref(), &state, Span::minutes(25), now);
        // Apply what the first decision asked for, as AAS would.
        let after = match first.action {
            Action::Register { min, max, suspended } => Some(headroom_core::Observed { id: id(), min, max, suspended }),
            _ => seen.clone(),
        };
        let second = decide(&target, after.as_ref(), &first.next_state, Span::minutes(25), now);
        prop_assert_eq!(&second.action, &Action::None);
        prop_assert!(!second.state_changed(&first.next_state));
        prop_assert!(second.drift.is_none());
    }
}
