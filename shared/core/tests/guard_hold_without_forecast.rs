//! The guard's `hold_without_forecast`: GIVEN a burst alarm that fired at 09:00 and cleared at
//! 10:00, WHEN the target's forecast does or does not stand, THEN the guard holds its floor
//! until the time listed (the hold counts from the clear).

mod common;

use std::sync::Arc;

use common::at;
use headroom_core::alarms::{apply_transition, AlarmRole, AlarmTransition};
use headroom_core::forecast::{ForecastScore, ForecastSlot, ForecastState};
use headroom_core::model::AlarmState::{Alarm, Ok as Clear};
use headroom_core::plan::{parse_plan, TargetPlan};
use headroom_core::state::TargetState;
use headroom_core::ClaimSource;

const CHAT: &str = "endpoint/chat/variant/AllTraffic";

fn target(guard: &str, forecast: &str) -> TargetPlan {
    TargetPlan::test(CHAT)
        .section(&format!("[target.guard]\nalarms = [\"burst\"]\n{guard}"))
        .section(forecast)
        .build()
}

/// A stored forecast: three 10-minute slots from `from`, or none (what a refresh short of
/// history stores).
fn forecast(from: Option<&str>) -> Arc<ForecastState> {
    let slots: Vec<ForecastSlot> = from
        .map(|hm| {
            (0..3)
                .map(|i| ForecastSlot {
                    start: at(hm) + chrono::Duration::minutes(10 * i),
                    demand: 30.0,
                    floor: 2,
                    level: 1.0,
                    reason: Default::default(),
                })
                .collect()
        })
        .unwrap_or_default();
    Arc::new(ForecastState {
        computed_at: at("08:00"),
        slot_secs: 600,
        history_days: if slots.is_empty() { 1 } else { 3 },
        unavailable: slots
            .is_empty()
            .then(|| "1 day of history, fewer than 2".to_owned()),
        slots,
        unscored: Vec::new(),
        margin: 1.0,
        level: 1.0,
        same_kind: true,
        score: ForecastScore::default(),
        schedule: Vec::new(),
        windows: Vec::new(),
        windows_scored_until: None,
        refresh_failed: None,
    })
}

/// The guard claim's end of full hold and its reason after ALARM at 09:00 and OK at 10:00.
fn held_until(target: &TargetPlan, stored: Option<Arc<ForecastState>>) -> (String, String) {
    let mut state = TargetState {
        forecast: stored,
        ..TargetState::default()
    };
    for (s, prev, hm) in [(Alarm, Clear, "09:00"), (Clear, Alarm, "10:00")] {
        let t = AlarmTransition::new("burst", s, at(hm)).with_previous(prev);
        apply_transition(target, AlarmRole::Guard, &t, Some(6), &mut state);
    }
    let claim = state.claim(&ClaimSource::Guard).expect("guard claim");
    (
        claim.full_until.format("%H:%M").to_string(),
        claim.reason.clone(),
    )
}

const HOLDS: &str = "hold = \"5m\"\nhold_without_forecast = \"30m\"\n";
const ACTIVE: &str = "[target.forecast]\ninvocations_per_instance = 20.0\n";
const FORECAST_ONLY: &str =
    "[target.forecast]\ninvocations_per_instance = 20.0\nmode = \"forecast_only\"\n";

#[test]
fn the_guard_holds_as_the_forecast_covers_the_clear_or_not() {
    const WHY: &str = "for 30m (hold_without_forecast: no active forecast covered the clear)";
    // (guard, forecast section, stored slots from (None: a forecast without slots), held until,
    // what the reason says of the hold)
    type Row<'a> = (&'a str, &'a str, Option<Option<&'a str>>, &'a str, &'a str);
    let rows: [Row; 9] = [
        // An active forecast whose slots cover the clear at 10:00: the short hold.
        (HOLDS, ACTIVE, Some(Some("09:50")), "10:05", "for 5m, then"),
        // Short of history (no slots stored) or never refreshed: the longer hold, said why.
        (HOLDS, ACTIVE, Some(None), "10:30", WHY),
        (HOLDS, ACTIVE, None, "10:30", WHY),
        // Slots gone stale (refreshes failed: the last ended at 08:30), or not yet begun at the
        // clear: the forecast claimed nothing then, so the longer hold.
        (HOLDS, ACTIVE, Some(Some("08:00")), "10:30", WHY),
        (HOLDS, ACTIVE, Some(Some("10:10")), "10:30", WHY),
        // Forecast-only mode claims nothing, so nothing carries the lull: the longer hold.
        (HOLDS, FORECAST_ONLY, Some(Some("09:50")), "10:30", WHY),
        // No forecast section at all: the longer hold too.
        (HOLDS, "", None, "10:30", WHY),
        // Without hold_without_forecast the hold is the same either way, and said as before.
        ("hold = \"5m\"\n", ACTIVE, None, "10:05", "for 5m, then"),
        (
            "hold = \"5m\"\n",
            ACTIVE,
            Some(Some("09:50")),
            "10:05",
            "for 5m, then",
        ),
    ];
    for (guard, section, slots, until, says) in rows {
        let (held, reason) = held_until(&target(guard, section), slots.map(forecast));
        let row = format!("guard {guard:?}, forecast {section:?}, slots {slots:?}");
        assert_eq!(held, until, "{row}");
        assert!(reason.contains(says), "{row}: {reason}");
    }
}

#[test]
fn a_later_delivery_reads_the_forecast_as_stored_then() {
    // GIVEN the clear at 10:00 applied while the forecast covered it (the short hold)
    let target = target(HOLDS, ACTIVE);
    let mut state = TargetState {
        forecast: Some(forecast(Some("09:50"))),
        ..TargetState::default()
    };
    for (s, prev, hm) in [(Alarm, Clear, "09:00"), (Clear, Alarm, "10:00")] {
        let t = AlarmTransition::new("burst", s, at(hm)).with_previous(prev);
        apply_transition(&target, AlarmRole::Guard, &t, Some(6), &mut state);
    }
    // WHEN the ALARM at 09:00 is delivered again, after the forecast moved on to 10:10
    state.forecast = Some(forecast(Some("10:10")));
    let t = AlarmTransition::new("burst", Alarm, at("09:00")).with_previous(Clear);
    apply_transition(&target, AlarmRole::Guard, &t, Some(6), &mut state);
    // THEN the claim is derived again from the same mark; the stored forecast no longer covers
    // 10:00, so it now holds the longer way (the hold follows the forecast as stored)
    let claim = state.claim(&ClaimSource::Guard).expect("guard claim");
    assert_eq!(claim.full_until, at("10:30"));
}

#[test]
fn hold_without_forecast_is_bounded_like_the_hold() {
    let plan = |span: &str| {
        format!(
            "version = 1\n[[target]]\nresource_id = \"{CHAT}\"\nmin_capacity = 1\nmax_capacity = 8\n\
             [target.guard]\nalarms = [\"burst\"]\nhold_without_forecast = \"{span}\"\n"
        )
    };
    let err = parse_plan("p.toml", &plan("30d")).expect_err("too long");
    assert!(
        err.to_string()
            .contains("target[0].guard.hold_without_forecast"),
        "{err}"
    );
    let ok = parse_plan("p.toml", &plan("45m")).expect("valid");
    let guard = ok.targets[0].guard.as_ref().expect("guard");
    assert_eq!(guard.hold_without_forecast.to_string(), "45m");
    // Unset, it is the hold.
    let ok = parse_plan(
        "p.toml",
        &plan("45m").replace("hold_without_forecast", "hold"),
    )
    .expect("valid");
    let guard = ok.targets[0].guard.as_ref().expect("guard");
    assert_eq!(guard.hold_without_forecast, guard.hold);
}

#[test]
fn pruning_keeps_an_alarm_mark_while_the_longer_hold_may_still_use_it() {
    use headroom_core::alarm_prune::prune_alarm_facts;
    // GIVEN a 5-minute hold, 2 hours without a forecast, and no forecast yet
    let target = target(
        "hold = \"5m\"\nhold_without_forecast = \"2h\"\nmax_duration = \"1h\"\n",
        ACTIVE,
    );
    let mut state = TargetState::default();
    for (s, prev, hm) in [(Alarm, Clear, "09:00"), (Clear, Alarm, "09:30")] {
        let t = AlarmTransition::new("burst", s, at(hm)).with_previous(prev);
        apply_transition(&target, AlarmRole::Guard, &t, Some(6), &mut state);
    }
    // WHEN the facts are pruned at 11:20, past what the short hold alone reaches (max_duration,
    // the hold and the step-down from 8: 09:30 + 1h + 5m + 40m)
    prune_alarm_facts(&target, &mut state, at("11:20"));
    // THEN the mark stays: the guard it sets still holds in full until 11:30
    assert!(
        state.alarm_marks.keys().any(|n| n.as_str() == "burst"),
        "{:?}",
        state.alarm_marks
    );
    let held = state.claim(&ClaimSource::Guard).expect("guard claim");
    assert_eq!(held.full_until, at("11:30"));
}
