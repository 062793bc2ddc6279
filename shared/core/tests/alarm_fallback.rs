//! Decision tables for what a guard or wake does when its alarm goes from ALARM to
//! INSUFFICIENT_DATA (`on_insufficient_data`: `keep_current`, the default, `hold` or `release`,
//! with `keep_for`): the pure rules first, then transitions applied to a state, then the alarm
//! and the tick use cases over the memory ports. GIVEN a plan and the transitions applied, WHEN
//! the claim is derived (or decided at a later instant, with no event in between), THEN it is as
//! listed.

mod common;

use chrono::Duration;
use common::at;
use headroom_core::alarms::{
    alarm_hold, apply_transition, held_floor, AlarmRole, AlarmTransition, Reading, RoleTiming,
};
use headroom_core::decide::decide;
use headroom_core::memory::{block_on, MemoryCapacity, MemoryScalingTargets, MemoryStateStore};
use headroom_core::model::AlarmState;
use headroom_core::plan::{Fallback, FallbackMode, TargetPlan};
use headroom_core::state::{AlarmMark, TargetState};
use headroom_core::usecase::alarm::{alarm_with_plan, Origin};
use headroom_core::usecase::tick::tick_with_plan;
use headroom_core::usecase::Ports;
use headroom_core::{ClaimSource, Span};

use AlarmState::{Alarm, InsufficientData as NoData, Ok as Clear};
use FallbackMode::{Hold, KeepCurrent, Release};

const CHAT: &str = "endpoint/chat/variant/AllTraffic";
const ASYNC: &str = "endpoint/summarize/variant/AllTraffic";

fn tr(name: &str, state: AlarmState, previous: AlarmState, hm: &str) -> AlarmTransition {
    AlarmTransition::new(name, state, at(hm)).with_previous(previous)
}

/// A guard on `burst` with `floor` (`current` holds the count when it fired, so the fallback's
/// count can differ from the claim's own floor): hold 20m, halving every 10m, max 6h; the
/// fallback as given.
fn guard_with(floor: &str, mode: &str) -> TargetPlan {
    TargetPlan::test(CHAT)
        .bounds(1, 12)
        .section(&format!(
            "[target.guard]\nalarms = [\"burst\"]\nfloor = {floor:?}\nhold = \"20m\"\n\
             step_down = {{ step = \"10m\", keep_percent = 50 }}\n",
        ))
        .on_insufficient_data(mode, (mode != "release").then_some("30m"))
        .build()
}

fn guard(mode: &str) -> TargetPlan {
    guard_with("current", mode)
}

/// A wake of 1 on `backlog`, quiet period 15m, max 2h; the fallback as given.
fn wake(mode: &str) -> TargetPlan {
    TargetPlan::test(ASYNC)
        .bounds(0, 4)
        .section("[target.wake]\nalarms = [\"backlog\"]\ncapacity = 1\nquiet_period = \"15m\"\nmax_duration = \"2h\"\n")
        .on_insufficient_data(mode, (mode != "release").then_some("30m"))
        .build()
}

fn timing(mode: FallbackMode, keep_for: Span) -> RoleTiming {
    RoleTiming {
        max_duration: Duration::hours(6),
        after_clear: Duration::minutes(20),
        after_clear_without_forecast: Duration::minutes(20),
        forecast_span: None,
        fallback: Fallback { mode, keep_for },
    }
}

#[test]
fn how_one_alarm_mark_reads_under_each_fallback() {
    let thirty = Span::minutes(30);
    // (mark state, mark at, last known in ALARM, fallback, keep_for, expected reading and end)
    type Row<'a> = (
        AlarmState,
        &'a str,
        Option<&'a str>,
        FallbackMode,
        Span,
        Option<(Reading, &'a str)>,
    );
    let table: Vec<Row> = vec![
        // In ALARM: the hard bound, whatever the fallback.
        (
            Alarm,
            "09:00",
            Some("09:00"),
            KeepCurrent,
            thirty,
            Some((Reading::Firing, "15:00")),
        ),
        (
            Alarm,
            "09:00",
            None,
            Release,
            thirty,
            Some((Reading::Firing, "15:00")),
        ),
        // Straight out of ALARM into INSUFFICIENT_DATA (the mark proves ALARM until its time):
        // keep_for, then the hold.
        (
            NoData,
            "09:30",
            Some("09:30"),
            KeepCurrent,
            thirty,
            Some((Reading::NoData(KeepCurrent), "10:20")),
        ),
        (
            NoData,
            "09:30",
            Some("09:30"),
            Hold,
            thirty,
            Some((Reading::NoData(Hold), "10:20")),
        ),
        (
            NoData,
            "09:30",
            Some("09:30"),
            Release,
            thirty,
            Some((Reading::Cleared, "09:50")),
        ),
        // keep_for may reach max_duration, never beyond (validation): still bounded.
        (
            NoData,
            "09:30",
            Some("09:30"),
            Hold,
            Span::hours(6),
            Some((Reading::NoData(Hold), "15:50")),
        ),
        // INSUFFICIENT_DATA after an OK: the burst was already over; it reads as OK.
        (
            NoData,
            "09:40",
            Some("09:30"),
            KeepCurrent,
            thirty,
            Some((Reading::Cleared, "10:00")),
        ),
        // An OK out of ALARM: the hold, whatever the fallback.
        (
            Clear,
            "09:30",
            Some("09:30"),
            KeepCurrent,
            thirty,
            Some((Reading::Cleared, "09:50")),
        ),
        // No ALARM known, or the last one beyond max_duration: nothing.
        (NoData, "09:30", None, KeepCurrent, thirty, None),
        (NoData, "15:30", Some("09:00"), Hold, thirty, None),
    ];
    for (state, m, last, mode, keep_for, want) in table {
        let mark = AlarmMark { state, at: at(m) };
        let got = alarm_hold(&mark, last.map(at), &timing(mode, keep_for));
        assert_eq!(
            got,
            want.map(|(r, u)| (r, at(u))),
            "{state} at {m}, last ALARM {last:?}, {mode}"
        );
    }
}

#[test]
fn only_keep_current_raises_the_floor_to_the_count_seen_when_the_data_stopped() {
    // (own floor, reading, count seen, expected floor)
    let table = [
        (5, Reading::NoData(KeepCurrent), Some(9), 9),
        // Never below the claim's own floor.
        (5, Reading::NoData(KeepCurrent), Some(3), 5),
        // No count seen (capacity unknown): the own floor.
        (5, Reading::NoData(KeepCurrent), None, 5),
        (5, Reading::NoData(Hold), Some(9), 5),
        (5, Reading::Cleared, Some(9), 5),
        (5, Reading::Firing, Some(9), 5),
    ];
    for (own, reading, seen, want) in table {
        assert_eq!(held_floor(own, reading, seen), want, "{reading:?} {seen:?}");
    }
}

/// Applies `seq` ((transition, desired count seen)) to a fresh state, in order.
fn apply_all(target: &TargetPlan, role: AlarmRole, seq: &[(AlarmTransition, u32)]) -> TargetState {
    let mut s = TargetState::default();
    for (t, desired) in seq {
        apply_transition(target, role, t, Some(*desired), &mut s);
    }
    s
}

/// The MinCapacity decide sets at each instant (no event in between: level-triggered).
fn mins_at(target: &TargetPlan, s: &TargetState, instants: &[&str]) -> Vec<u32> {
    instants
        .iter()
        .map(|hm| {
            decide(target, None, s, Span::minutes(15), at(hm))
                .desired
                .min
        })
        .collect()
}

#[test]
fn a_guard_whose_metric_stops_keeps_holds_or_releases_and_the_tick_lets_go_on_time() {
    // GIVEN a burst that fired at 09:00 with 5 desired, AAS since at 9, and the metric stopping
    // at 09:30 (INSUFFICIENT_DATA, previous ALARM)
    let seq = [
        (tr("burst", Alarm, Clear, "09:00"), 5),
        (tr("burst", NoData, Alarm, "09:30"), 9),
    ];
    let instants = ["09:31", "10:19", "10:20", "10:30", "10:40", "10:50"];
    // (fallback, expected claim floor and full hold end, MinCapacity at each instant)
    let table = [
        // The default: the 9 running when the data stopped, for 30m + the 20m hold, then halving.
        ("keep_current", (9, "10:20"), vec![9, 9, 4, 2, 1, 1]),
        ("hold", (5, "10:20"), vec![5, 5, 2, 1, 1, 1]),
        // As OK at 09:30: the hold ends at 09:50, and by 10:20 the ramp is done.
        ("release", (5, "09:50"), vec![5, 1, 1, 1, 1, 1]),
    ];
    for (mode, (floor, until), mins) in table {
        let target = guard(mode);
        let s = apply_all(&target, AlarmRole::Guard, &seq);
        let g = s.claim(&ClaimSource::Guard).expect("a guard claim");
        assert_eq!((g.floor, g.full_until), (floor, at(until)), "{mode}");
        assert!(
            g.reason.contains("INSUFFICIENT_DATA") == (mode != "release"),
            "{mode}: {}",
            g.reason
        );
        assert_eq!(mins_at(&target, &s, &instants), mins, "{mode}");
    }
}

#[test]
fn a_wake_whose_backlog_metric_stops_keeps_what_runs_for_keep_for_and_the_quiet_period() {
    // GIVEN a backlog that woke the endpoint at 06:00 and target tracking since at 3, and the
    // metric stopping at 06:20
    let seq = [
        (tr("backlog", Alarm, Clear, "06:00"), 0),
        (tr("backlog", NoData, Alarm, "06:20"), 3),
    ];
    let instants = ["06:21", "07:04", "07:05"];
    let table = [
        ("keep_current", (3, "07:05"), vec![3, 3, 0]),
        ("hold", (1, "07:05"), vec![1, 1, 0]),
        ("release", (1, "06:35"), vec![1, 0, 0]),
    ];
    for (mode, (floor, until), mins) in table {
        let target = wake(mode);
        let s = apply_all(&target, AlarmRole::Wake, &seq);
        let w = s.claim(&ClaimSource::Wake).expect("a wake claim");
        assert_eq!(
            (w.floor, w.full_until, w.expires_at),
            (floor, at(until), at(until)),
            "{mode}"
        );
        assert_eq!(mins_at(&target, &s, &instants), mins, "{mode}");
    }
}

#[test]
fn data_that_comes_back_replaces_the_fallback_as_any_newer_mark_does() {
    let target = guard("keep_current");
    let base = [
        (tr("burst", Alarm, Clear, "09:00"), 5),
        (tr("burst", NoData, Alarm, "09:30"), 9),
    ];
    // (what follows, expected guard floor and full hold end)
    let table = [
        // OK: the burst is over; the hold runs from the OK with the claim's own floor.
        (tr("burst", Clear, NoData, "09:40"), (5, "10:00")),
        // ALARM again: firing, bounded from the new ALARM.
        (tr("burst", Alarm, NoData, "09:40"), (5, "15:40")),
    ];
    for (next, (floor, until)) in table {
        let mut seq = base.to_vec();
        seq.push((next.clone(), 9));
        let s = apply_all(&target, AlarmRole::Guard, &seq);
        let g = s.claim(&ClaimSource::Guard).expect("guard");
        assert_eq!((g.floor, g.full_until), (floor, at(until)), "{next:?}");
    }
}

#[test]
fn duplicated_and_reordered_deliveries_end_in_the_same_fallback() {
    // The high-water floor: the one whose facts only move forward whatever the order.
    let target = guard_with("high_water", "keep_current");
    let alarm = (tr("burst", Alarm, Clear, "09:00"), 5);
    let no_data = (tr("burst", NoData, Alarm, "09:30"), 9);
    // The same INSUFFICIENT_DATA delivered again later, when a lower count is desired.
    let again = (tr("burst", NoData, Alarm, "09:30"), 7);
    let orders: [Vec<&(AlarmTransition, u32)>; 4] = [
        vec![&alarm, &no_data, &again],
        vec![&no_data, &alarm, &again],
        vec![&again, &no_data, &alarm],
        vec![&no_data, &again, &alarm, &no_data],
    ];
    let want = apply_all(&target, AlarmRole::Guard, &[alarm.clone(), no_data.clone()]);
    for order in orders {
        let seq: Vec<(AlarmTransition, u32)> = order.into_iter().cloned().collect();
        let s = apply_all(&target, AlarmRole::Guard, &seq);
        assert_eq!(s.claims, want.claims, "{seq:?}");
        assert_eq!(s.alarm_facts, want.alarm_facts, "{seq:?}");
        assert_eq!(s.claim(&ClaimSource::Guard).map(|g| g.floor), Some(9));
    }

    // A stale INSUFFICIENT_DATA arriving after the OK that followed it revives nothing.
    let ok = (tr("burst", Clear, NoData, "09:40"), 5);
    let settled = apply_all(
        &target,
        AlarmRole::Guard,
        &[alarm.clone(), no_data.clone(), ok.clone()],
    );
    let late = apply_all(&target, AlarmRole::Guard, &[alarm, ok, no_data]);
    assert_eq!(late.claims, settled.claims);
    assert_eq!(
        late.claim(&ClaimSource::Guard)
            .map(|g| (g.floor, g.full_until)),
        Some((9, at("10:00"))),
        "the hold after the OK, at the high-water mark"
    );
}

#[test]
fn an_insufficient_data_whose_alarm_was_lost_still_proves_the_burst() {
    // The ALARM never arrived; the INSUFFICIENT_DATA says its previous state was ALARM.
    let target = guard("hold");
    let s = apply_all(
        &target,
        AlarmRole::Guard,
        &[(tr("burst", NoData, Alarm, "09:30"), 6)],
    );
    let g = s.claim(&ClaimSource::Guard).expect("guard");
    assert_eq!((g.floor, g.full_until), (6, at("10:20")));
}

#[test]
fn a_count_that_only_echoes_headrooms_own_floor_is_not_kept() {
    // GIVEN a burst guard holding the 5 desired when it fired, and since then a peak that made
    // headroom apply MinCapacity 8
    let target = guard("keep_current");
    let mut s = TargetState::default();
    apply_transition(
        &target,
        AlarmRole::Guard,
        &tr("burst", Alarm, Clear, "09:00"),
        Some(5),
        &mut s,
    );
    let peak_floor = headroom_core::model::Bounds {
        min: 8,
        max: 12,
        suspend_scale_in: true,
    };
    s.last_applied = Some(peak_floor);
    // WHEN the data stops while AAS desires just that 8
    apply_transition(
        &target,
        AlarmRole::Guard,
        &tr("burst", NoData, Alarm, "09:30"),
        Some(8),
        &mut s,
    );
    // THEN the fallback keeps the guard's own floor: the peak's floor ends with the peak
    let g = s.claim(&ClaimSource::Guard).expect("guard");
    assert_eq!((g.floor, g.full_until), (5, at("10:20")));
    assert!(s.alarm_facts.no_data_count.is_empty());
}

#[test]
fn through_the_use_cases_the_tick_releases_a_fallback_without_another_alarm_event() {
    // GIVEN the default fallback on a burst guard, through the alarm use case and memory ports
    let plan = TargetPlan::test(CHAT)
        .bounds(2, 12)
        .section("[target.guard]\nalarms = [\"burst\"]\nhold = \"20m\"\n")
        .plan()
        .build();
    let id = common::target_id(CHAT);
    let aas = MemoryScalingTargets::default().with_target(id.clone(), 2, 12);
    let store = MemoryStateStore::default();
    let capacity = MemoryCapacity::default().with(id.clone(), 6, 6);
    let ports = || Ports::new(&aas, &store).with_capacity(&capacity);
    block_on(alarm_with_plan(
        ports(),
        &plan,
        &tr("burst", Alarm, Clear, "09:00"),
        Origin::Anywhere,
        at("09:00"),
    ))
    .expect("alarm");
    assert_eq!(aas.get(&id).map(|o| o.min), Some(6));

    // WHEN AAS has scaled to 8 and the metric stops at 09:30
    capacity.set(id.clone(), 8, 8);
    let report = block_on(alarm_with_plan(
        ports(),
        &plan,
        &tr("burst", NoData, Alarm, "09:30"),
        Origin::Anywhere,
        at("09:30"),
    ))
    .expect("alarm");
    assert_eq!(report.targets[0].min, 8, "the count running is kept");
    let g = store
        .state(&id)
        .claim(&ClaimSource::Guard)
        .cloned()
        .expect("guard");
    assert_eq!(g.full_until, at("10:20"), "30m keep_for + 20m hold");

    // THEN the ticks alone hold it, then step it down (halving every 10m) to the plan minimum
    for (hm, min) in [
        ("10:00", 8),
        ("10:19", 8),
        ("10:20", 4),
        ("10:30", 2),
        ("11:00", 2),
    ] {
        block_on(tick_with_plan(ports(), &plan, 1, at(hm)));
        assert_eq!(aas.get(&id).map(|o| o.min), Some(min), "at {hm}");
    }
    assert!(
        store.state(&id).claim(&ClaimSource::Guard).is_none(),
        "expired and pruned"
    );
}
