//! Builders shared by the core's integration tests.
#![allow(dead_code)]

use chrono::{DateTime, Utc};
use headroom_core::claim::{Claim, ClaimSource, Ramp};
use headroom_core::model::{Observed, Suspended};
use headroom_core::plan::{parse_plan, TargetPlan};
use headroom_core::{ScalableTargetId, Span};

pub fn t(s: &str) -> DateTime<Utc> {
    s.parse().expect("test timestamps are RFC 3339")
}

/// An instant on 2026-03-14 (the day of the alarm fixtures), from "HH:MM".
pub fn at(hm: &str) -> DateTime<Utc> {
    t(&format!("2026-03-14T{hm}:00Z"))
}

pub fn target_id(s: &str) -> ScalableTargetId {
    s.parse().expect("valid id")
}

pub fn id() -> ScalableTargetId {
    "endpoint/chat/variant/AllTraffic"
        .parse()
        .expect("valid id")
}

/// A target with base bounds and the given peak TOML blocks.
pub fn target(min: u32, max: u32, extra: &str) -> TargetPlan {
    let text = format!(
        "version = 1\n[[target]]\nresource_id = \"endpoint/chat/variant/AllTraffic\"\nmin_capacity = {min}\nmax_capacity = {max}\nlead_time = \"25m\"\nramp_down = {{ step = \"10m\", keep_percent = 50 }}\n{extra}"
    );
    parse_plan("test.toml", &text)
        .expect("test plan is valid")
        .targets
        .remove(0)
}

pub fn observed(min: u32, max: u32) -> Observed {
    Observed {
        id: id(),
        min,
        max,
        suspended: Suspended::default(),
    }
}

pub fn claim(source: &str, floor: u32, from: &str, until: &str) -> Claim {
    Claim::new(
        source.parse::<ClaimSource>().expect("valid source"),
        floor,
        t(from),
        t(until),
        None,
        format!("{source} test claim"),
    )
}

pub fn ramped(source: &str, floor: u32, from: &str, until: &str) -> Claim {
    Claim::new(
        source.parse::<ClaimSource>().expect("valid source"),
        floor,
        t(from),
        t(until),
        Some(Ramp {
            step: Span::minutes(10),
            keep_percent: 50,
        }),
        format!("{source} test claim"),
    )
}
