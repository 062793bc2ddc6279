//! Decision tables for the pure core: arbitration, peak windows (DST, midnight), ramp-down,
//! pause, drift, registration and idempotency. GIVEN a plan, stored state and what AAS reports,
//! WHEN decide runs at an instant, THEN the bounds and action are as listed.

mod common;

use common::*;
use headroom_core::decide::{decide, Action, Decision};
use headroom_core::plan::TargetPlan;
use headroom_core::state::{Pause, TargetState};
use headroom_core::{Bounds, Span};

const LEAD: Span = Span::minutes(25);

/// The decision for a target with no stored state, AAS holding `min..max`, at `now` (RFC 3339).
fn decide_fresh(target: &TargetPlan, (min, max): (u32, u32), now: &str) -> Decision {
    decide(
        target,
        Some(&observed(min, max)),
        &TargetState::default(),
        LEAD,
        t(now),
    )
}

fn state_with(claims: Vec<headroom_core::Claim>) -> TargetState {
    TargetState {
        claims,
        ..TargetState::default()
    }
}

#[test]
fn arbitration_takes_the_largest_live_claim_within_the_plan_bounds() {
    let now = "2026-06-01T12:00:00Z";
    // (base min, max, claims [(source, floor, suspend)], expected min, expected suspend, winner)
    type Row<'a> = (
        u32,
        u32,
        Vec<(&'a str, u32, bool)>,
        u32,
        bool,
        Option<&'a str>,
    );
    let table: Vec<Row> = vec![
        (1, 8, vec![], 1, false, None),
        (1, 8, vec![("guard", 4, false)], 4, false, Some("guard")),
        (
            1,
            8,
            vec![("guard", 4, false), ("peak:a", 6, false)],
            6,
            false,
            Some("peak:a"),
        ),
        (1, 8, vec![("wake", 1, false)], 1, false, None),
        (3, 8, vec![("wake", 2, true)], 3, true, None),
        (1, 8, vec![("manual", 20, false)], 8, false, Some("manual")),
        (
            0,
            4,
            vec![("wake", 1, false), ("guard", 0, true)],
            1,
            true,
            Some("wake"),
        ),
    ];
    for (min, max, claims, want_min, want_suspend, want_winner) in table {
        let target = target(min, max, "");
        let stored = claims
            .iter()
            .map(|(s, f, susp)| {
                claim(s, *f, "2026-06-01T11:00:00Z", "2026-06-01T13:00:00Z")
                    .suspending_scale_in(*susp)
            })
            .collect();
        let d = decide(
            &target,
            Some(&observed(min, max)),
            &state_with(stored),
            LEAD,
            t(now),
        );
        assert_eq!(d.desired.min, want_min, "claims {claims:?}");
        assert_eq!(d.desired.max, max);
        assert_eq!(
            d.desired.suspend_scale_in, want_suspend,
            "claims {claims:?}"
        );
        assert_eq!(
            d.winner.map(|w| w.to_string()).as_deref(),
            want_winner,
            "claims {claims:?}"
        );
    }
}

#[test]
fn expired_and_future_claims_are_ignored_and_expired_ones_pruned() {
    let target = target(1, 8, "");
    let state = state_with(vec![
        claim("guard", 5, "2026-06-01T08:00:00Z", "2026-06-01T09:00:00Z"),
        claim(
            "peak:later",
            7,
            "2026-06-01T13:00:00Z",
            "2026-06-01T14:00:00Z",
        ),
    ]);
    let d = decide(
        &target,
        Some(&observed(1, 8)),
        &state,
        LEAD,
        t("2026-06-01T12:00:00Z"),
    );
    assert_eq!(d.desired.min, 1);
    assert_eq!(d.action, Action::None);
    assert_eq!(
        d.next_state.claims.len(),
        1,
        "the expired guard is pruned, the future peak kept"
    );
}

const MORNING: &str = r#"
  [[target.peak]]
  name = "morning"
  cron = "30 8 * * MON-FRI"
  timezone = "Europe/Berlin"
  duration = "3h"
  floor = 6
"#;

#[test]
fn a_recurring_peak_is_live_from_start_minus_lead_time_in_summer_and_winter() {
    let target = target(2, 12, MORNING);
    // (instant, expected min). 08:30 Berlin is 06:30Z in summer (CEST), 07:30Z in winter (CET).
    let table = [
        // Friday 2026-03-27 (CET): start 07:30Z, live from 07:05Z.
        ("2026-03-27T07:04:59Z", 2),
        ("2026-03-27T07:05:00Z", 6),
        ("2026-03-27T10:29:59Z", 6),
        // Clocks go forward on Sunday 2026-03-29. Monday 2026-03-30 (CEST): start 06:30Z.
        ("2026-03-30T06:04:59Z", 2),
        ("2026-03-30T06:05:00Z", 6),
        // Ramp-down after 09:30Z: 3 at once, 1 (below base 2) after 20 minutes.
        ("2026-03-30T09:30:00Z", 3),
        ("2026-03-30T09:45:00Z", 2),
        // Weekend: nothing.
        ("2026-03-28T07:30:00Z", 2),
    ];
    for (now, want) in table {
        assert_eq!(
            decide_fresh(&target, (2, 12), now).desired.min,
            want,
            "at {now}"
        );
    }
}

#[test]
fn a_peak_across_midnight_stays_live_the_next_day() {
    let target = target(
        1,
        8,
        "[[target.peak]]\nname = \"late\"\ncron = \"30 23 * * *\"\nduration = \"2h\"\nfloor = 5\n",
    );
    let d = decide_fresh(&target, (1, 8), "2026-06-02T01:00:00Z");
    assert_eq!(d.desired.min, 5);
    assert!(
        d.reasons[0].contains("peak late starts 2026-06-01T23:30Z"),
        "{:?}",
        d.reasons
    );
}

#[test]
fn a_one_time_peak_then_its_ramp_down_in_steps() {
    let target = target(1, 12, "[[target.peak]]\nname = \"launch\"\nat = \"2026-12-03T17:00:00Z\"\nduration = \"4h\"\nfloor = 10\n");
    let table = [
        ("2026-12-03T16:34:00Z", 1),
        ("2026-12-03T16:35:00Z", 10),
        ("2026-12-03T20:59:00Z", 10),
        ("2026-12-03T21:00:00Z", 5),
        ("2026-12-03T21:10:00Z", 2),
        ("2026-12-03T21:20:00Z", 1),
        ("2026-12-04T09:00:00Z", 1),
    ];
    for (now, want) in table {
        assert_eq!(
            decide_fresh(&target, (1, 12), now).desired.min,
            want,
            "at {now}"
        );
    }
    // The reason says which phase: holding through the window, then each ramp step and its end.
    let reason = |now: &str| decide_fresh(&target, (1, 12), now).reasons[0].clone();
    assert_eq!(
        reason("2026-12-03T20:59:00Z"),
        "min 10 from peak:launch: peak launch starts 2026-12-03T17:00Z for 4h (lead time 25m)"
    );
    assert_eq!(
        reason("2026-12-03T21:00:00Z"),
        "min 5 from peak:launch (ramping down, this step until 2026-12-03T21:10Z): peak launch starts 2026-12-03T17:00Z for 4h (lead time 25m)"
    );
}

#[test]
fn overlapping_peaks_take_the_larger_floor() {
    let target = target(
        1,
        12,
        "[[target.peak]]\nname = \"a\"\nat = \"2026-12-03T17:00:00Z\"\nduration = \"4h\"\nfloor = 4\n[[target.peak]]\nname = \"b\"\nat = \"2026-12-03T18:00:00Z\"\nduration = \"1h\"\nfloor = 9\n",
    );
    let at = |s| decide_fresh(&target, (1, 12), s);
    assert_eq!(at("2026-12-03T17:00:00Z").desired.min, 4);
    let both = at("2026-12-03T18:00:00Z");
    assert_eq!(both.desired.min, 9);
    assert_eq!(
        both.claims.len(),
        2,
        "both claims are listed with their reasons"
    );
    assert_eq!(
        at("2026-12-03T20:00:00Z").desired.min,
        4,
        "b ramps below a: a wins again"
    );
}

#[test]
fn a_paused_target_is_left_alone() {
    let target = target(1, 8, "");
    let mut state = state_with(vec![claim(
        "manual",
        6,
        "2026-06-01T11:00:00Z",
        "2026-06-01T13:00:00Z",
    )]);
    state.pause = Some(Pause {
        until: t("2026-06-01T12:30:00Z"),
        reason: "load test".into(),
    });
    let d = decide(
        &target,
        Some(&observed(1, 8)),
        &state,
        LEAD,
        t("2026-06-01T12:00:00Z"),
    );
    assert!(matches!(d.action, Action::Paused { .. }));
    assert!(d.reasons.iter().any(|r| r.contains("load test")));
    // After the pause ends, headroom steers again.
    let d = decide(
        &target,
        Some(&observed(1, 8)),
        &state,
        LEAD,
        t("2026-06-01T12:30:00Z"),
    );
    assert!(matches!(d.action, Action::Register { min: 6, .. }));
    assert!(d.next_state.pause.is_none());
}

#[test]
fn a_hand_edit_is_recorded_as_drift_and_restored() {
    let target = target(2, 8, "");
    let state = TargetState {
        last_applied: Some(Bounds {
            min: 2,
            max: 8,
            suspend_scale_in: false,
        }),
        ..TargetState::default()
    };
    // Someone set min 5 in the console.
    let d = decide(
        &target,
        Some(&observed(5, 8)),
        &state,
        LEAD,
        t("2026-06-01T12:00:00Z"),
    );
    let drift = d.drift.clone().expect("drift recorded");
    assert_eq!((drift.observed.min, drift.expected.min), (5, 2));
    assert!(matches!(d.action, Action::Register { min: 2, max: 8, .. }));
    assert!(d.worth_logging());
    assert!(d.next_state.drift.is_some(), "status shows the drift");
    // Our own change (observed == last applied) is not drift.
    let d = decide(
        &target,
        Some(&observed(2, 8)),
        &state,
        LEAD,
        t("2026-06-01T12:00:00Z"),
    );
    assert!(d.drift.is_none());
}

#[test]
fn an_unregistered_target_is_registered_with_the_desired_bounds() {
    let target = target(1, 8, "");
    let d = decide(
        &target,
        None,
        &TargetState::default(),
        LEAD,
        t("2026-06-01T12:00:00Z"),
    );
    assert!(matches!(d.action, Action::Register { min: 1, max: 8, .. }));
    assert!(d.reasons.iter().any(|r| r.contains("not registered")));
}

#[test]
fn deciding_again_after_applying_changes_nothing() {
    let target = target(1, 8, MORNING);
    let now = t("2026-03-30T07:00:00Z");
    let d1 = decide(
        &target,
        Some(&observed(1, 8)),
        &TargetState::default(),
        LEAD,
        now,
    );
    let Action::Register { min, max, .. } = d1.action else {
        panic!("the first decision raises the floor: {:?}", d1.action)
    };
    let d2 = decide(
        &target,
        Some(&observed(min, max)),
        &d1.next_state,
        LEAD,
        now,
    );
    assert_eq!(d2.action, Action::None);
    assert!(!d2.state_changed(&d1.next_state));
    assert!(!d2.worth_logging());
}

#[test]
fn scale_in_suspension_passes_other_flags_through() {
    let target = target(1, 8, "");
    let state = state_with(vec![claim(
        "guard",
        3,
        "2026-06-01T11:00:00Z",
        "2026-06-01T13:00:00Z",
    )
    .suspending_scale_in(true)]);
    let mut seen = observed(1, 8);
    seen.suspended.scheduled = true;
    let d = decide(
        &target,
        Some(&seen),
        &state,
        LEAD,
        t("2026-06-01T12:00:00Z"),
    );
    match d.action {
        Action::Register { min, suspended, .. } => {
            assert_eq!(min, 3);
            assert!(suspended.dynamic_in && suspended.scheduled && !suspended.dynamic_out);
        }
        other => panic!("expected a register, got {other:?}"),
    }
}

#[test]
fn a_ramped_claim_lowers_its_floor_step_by_step() {
    let target = target(1, 16, "");
    let state = state_with(vec![ramped(
        "guard",
        16,
        "2026-06-01T10:00:00Z",
        "2026-06-01T12:00:00Z",
    )]);
    let mins: Vec<u32> = ["11:59", "12:00", "12:10", "12:20", "12:30", "12:40"]
        .iter()
        .map(|hm| {
            decide(
                &target,
                Some(&observed(1, 16)),
                &state,
                LEAD,
                t(&format!("2026-06-01T{hm}:00Z")),
            )
            .desired
            .min
        })
        .collect();
    assert_eq!(mins, vec![16, 8, 4, 2, 1, 1]);
}
