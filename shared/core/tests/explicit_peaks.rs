//! Explicit peaks (`headroom.peak/v1`) with one name (issue 11, item 4): each window is its own
//! claim, so two `promo` peaks for 15:00 and 18:00 both hold, whichever arrives first.

mod common;

use chrono::{DateTime, Utc};
use common::{t, target};
use headroom_core::decide::live_claims;
use headroom_core::peaks::{apply_peak_request, PeakRequest, MAX_EXPLICIT_PEAKS};
use headroom_core::state::TargetState;
use headroom_core::{ScalableTargetId, Span, TargetPlan};

fn promo(start: &str, end: &str, floor: u32) -> PeakRequest {
    PeakRequest {
        target: "endpoint/chat/variant/AllTraffic"
            .parse::<ScalableTargetId>()
            .expect("valid id"),
        name: "promo".into(),
        floor,
        starts_at: t(start),
        ends_at: t(end),
        suspend_scale_in: false,
        id: None,
    }
}

fn plan_target() -> TargetPlan {
    target(1, 12, "")
}

fn deliver(requests: &[PeakRequest], now: DateTime<Utc>) -> TargetState {
    let target = plan_target();
    let mut state = TargetState::default();
    for r in requests {
        apply_peak_request(&target, r, Span::minutes(25), &mut state, now);
    }
    state
}

/// The floor in force at `at`.
fn floor_at(state: &TargetState, at: &str) -> u32 {
    live_claims(&plan_target(), &state.claims, Span::minutes(25), t(at))
        .iter()
        .map(|c| c.floor)
        .max()
        .unwrap_or(0)
}

#[test]
fn two_windows_of_one_name_both_hold_whatever_the_delivery_order() {
    let now = t("2026-11-27T10:00:00Z");
    let afternoon = promo("2026-11-27T15:00:00Z", "2026-11-27T16:00:00Z", 6);
    let evening = promo("2026-11-27T18:00:00Z", "2026-11-27T19:00:00Z", 8);
    let one = deliver(&[afternoon.clone(), evening.clone()], now);
    let other = deliver(&[evening, afternoon], now);
    assert_eq!(
        one.claims, other.claims,
        "delivery order changed the result"
    );
    for state in [&one, &other] {
        assert_eq!(floor_at(state, "2026-11-27T15:30:00Z"), 6);
        assert_eq!(floor_at(state, "2026-11-27T18:30:00Z"), 8);
    }
}

#[test]
fn two_deliveries_of_one_window_keep_the_larger_ask_in_either_order() {
    let now = t("2026-11-27T10:00:00Z");
    let short = promo("2026-11-27T15:00:00Z", "2026-11-27T16:00:00Z", 6);
    let long = promo("2026-11-27T15:00:00Z", "2026-11-27T17:00:00Z", 4);
    let one = deliver(&[short.clone(), long.clone()], now);
    let other = deliver(&[long, short], now);
    assert_eq!(one.claims, other.claims);
    assert_eq!(one.claims.len(), 1, "one window, one claim");
    assert_eq!(floor_at(&one, "2026-11-27T15:30:00Z"), 6);
    assert_eq!(
        floor_at(&one, "2026-11-27T16:30:00Z"),
        6,
        "until the later end"
    );
}

#[test]
fn the_number_of_windows_is_bounded_and_the_earliest_ones_are_kept_in_any_order() {
    let now = t("2026-11-01T00:00:00Z");
    let many: Vec<PeakRequest> = (0..(MAX_EXPLICIT_PEAKS + 10))
        .map(|d| {
            let day = format!("2026-11-{:02}", d % 28 + 1);
            let hour = d / 28 + 10;
            promo(
                &format!("{day}T{hour}:00:00Z"),
                &format!("{day}T{hour}:30:00Z"),
                3,
            )
        })
        .collect();
    let forward = deliver(&many, now);
    let mut reversed = many.clone();
    reversed.reverse();
    let backward = deliver(&reversed, now);
    assert_eq!(forward.claims.len(), MAX_EXPLICIT_PEAKS);
    assert_eq!(forward.claims, backward.claims);
    let latest_kept = forward.claims.iter().map(|c| c.full_until).max().unwrap();
    let earliest_dropped = many
        .iter()
        .map(|r| r.ends_at)
        .filter(|e| *e > latest_kept)
        .min()
        .unwrap();
    assert!(latest_kept < earliest_dropped);
}
