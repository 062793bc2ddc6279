//! Capacity claims: each feature's say on a target's floor. A claim is bounded in time, may hold
//! its floor fully for a while and then step down (a ramp, not a cliff), and always carries the
//! reason an operator will read in the decision log.

use std::fmt;
use std::str::FromStr;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::duration::Span;

/// Which feature made a claim. One claim per source per target: a new claim from the same source
/// replaces the old one.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ClaimSource {
    /// A known peak, by its name in the plan or in an explicit peak event.
    Peak(String),
    /// Scale-in guard after a burst alarm.
    Guard,
    /// Scale out from zero on a backlog alarm.
    Wake,
    /// An operator's claim from the CLI.
    Manual,
    /// The demand forecast (`forecast/`): derived from the stored forecast, never stored.
    Forecast,
}

impl fmt::Display for ClaimSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ClaimSource::Peak(name) => write!(f, "peak:{name}"),
            ClaimSource::Guard => f.write_str("guard"),
            ClaimSource::Wake => f.write_str("wake"),
            ClaimSource::Manual => f.write_str("manual"),
            ClaimSource::Forecast => f.write_str("forecast"),
        }
    }
}

impl FromStr for ClaimSource {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "guard" => Ok(Self::Guard),
            "wake" => Ok(Self::Wake),
            "manual" => Ok(Self::Manual),
            "forecast" => Ok(Self::Forecast),
            _ => match s.strip_prefix("peak:") {
                Some(name) if !name.is_empty() => Ok(Self::Peak(name.to_owned())),
                _ => Err(format!(
                    "claim source {s:?} is unknown: use peak:NAME, guard, wake, forecast or manual"
                )),
            },
        }
    }
}

impl Serialize for ClaimSource {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for ClaimSource {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        String::deserialize(deserializer)?
            .parse()
            .map_err(serde::de::Error::custom)
    }
}

/// How a claim lets go once its full hold ends: every `step`, the floor keeps `keep_percent` of
/// its previous value, rounded down, until it reaches zero. Each step lowers the floor by at least
/// one, so a ramp always ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Ramp {
    pub step: Span,
    pub keep_percent: u8,
}

impl Ramp {
    /// The floor after `steps` steps down from `floor`.
    pub fn floor_after(&self, floor: u32, steps: i64) -> u32 {
        let mut f = floor;
        for _ in 0..steps.max(0) {
            if f == 0 {
                break;
            }
            let next = (u64::from(f) * u64::from(self.keep_percent) / 100) as u32;
            f = next.min(f - 1);
        }
        f
    }

    /// How many steps it takes `floor` to reach zero.
    pub fn steps_to_zero(&self, floor: u32) -> i64 {
        let mut f = floor;
        let mut steps = 0;
        while f > 0 {
            f = self.floor_after(f, 1);
            steps += 1;
        }
        steps
    }

    /// The time from the end of the hold until the floor reaches zero.
    pub fn length(&self, floor: u32) -> chrono::Duration {
        chrono::Duration::seconds(self.step.as_secs() * self.steps_to_zero(floor))
    }
}

/// One feature's claim on one target.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Claim {
    pub source: ClaimSource,
    /// The MinCapacity this claim asks for while it holds fully.
    pub floor: u32,
    /// Ask AAS to suspend dynamic scale-in while the claim holds fully.
    #[serde(default)]
    pub suspend_scale_in: bool,
    pub starts_at: DateTime<Utc>,
    /// The floor holds fully until here; then the ramp (if any) steps it down.
    pub full_until: DateTime<Utc>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ramp: Option<Ramp>,
    /// The hard bound: the claim is ignored from here on, whatever else it says.
    pub expires_at: DateTime<Utc>,
    pub reason: String,
}

/// A claim's phase while it asks its full floor ([`ClaimNow::phase`]).
pub const HOLDING: &str = "holding";
/// A claim's phase past its full hold, stepping down ([`ClaimNow::phase`]).
pub const RAMPING_DOWN: &str = "ramping down";

/// What a claim asks of a target at one instant.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ClaimNow {
    pub source: ClaimSource,
    pub floor: u32,
    pub suspend_scale_in: bool,
    /// [`HOLDING`] or [`RAMPING_DOWN`].
    pub phase: &'static str,
    pub until: DateTime<Utc>,
    pub reason: String,
}

impl Claim {
    /// A claim that holds `floor` from `starts_at` to `full_until`, then ramps down; its expiry is
    /// the end of the ramp (or `full_until` without one).
    pub fn new(
        source: ClaimSource,
        floor: u32,
        starts_at: DateTime<Utc>,
        full_until: DateTime<Utc>,
        ramp: Option<Ramp>,
        reason: impl Into<String>,
    ) -> Self {
        let expires_at = full_until + ramp.map_or(chrono::Duration::zero(), |r| r.length(floor));
        Self {
            source,
            floor,
            suspend_scale_in: false,
            starts_at,
            full_until,
            ramp,
            expires_at,
            reason: reason.into(),
        }
    }

    pub fn suspending_scale_in(mut self, suspend: bool) -> Self {
        self.suspend_scale_in = suspend;
        self
    }

    pub fn is_expired(&self, now: DateTime<Utc>) -> bool {
        now >= self.expires_at
    }

    /// What the claim asks at `now`, or `None` when it is not live (not started, expired, or
    /// ramped down to zero).
    pub fn at(&self, now: DateTime<Utc>) -> Option<ClaimNow> {
        if now < self.starts_at || now >= self.expires_at {
            return None;
        }
        if now < self.full_until {
            return Some(ClaimNow {
                source: self.source.clone(),
                floor: self.floor,
                suspend_scale_in: self.suspend_scale_in,
                phase: HOLDING,
                until: self.full_until,
                reason: self.reason.clone(),
            });
        }
        let ramp = self.ramp?;
        let step = ramp.step.as_secs().max(1);
        let steps = (now - self.full_until).num_seconds() / step + 1;
        let floor = ramp.floor_after(self.floor, steps);
        if floor == 0 {
            return None;
        }
        Some(ClaimNow {
            source: self.source.clone(),
            floor,
            suspend_scale_in: false,
            phase: RAMPING_DOWN,
            until: self.full_until + chrono::Duration::seconds(steps * step),
            reason: self.reason.clone(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: &str) -> DateTime<Utc> {
        s.parse().unwrap()
    }

    #[test]
    fn ramp_halves_then_ends() {
        let ramp = Ramp {
            step: Span::minutes(10),
            keep_percent: 50,
        };
        assert_eq!(ramp.floor_after(8, 1), 4);
        assert_eq!(ramp.floor_after(8, 3), 1);
        assert_eq!(ramp.steps_to_zero(8), 4);
        // A keep of 100 % would never end: every step still lowers by one.
        let slow = Ramp {
            step: Span::minutes(1),
            keep_percent: 100,
        };
        assert_eq!(slow.steps_to_zero(3), 3);
    }

    #[test]
    fn claim_holds_then_ramps_then_expires() {
        let ramp = Ramp {
            step: Span::minutes(10),
            keep_percent: 50,
        };
        let c = Claim::new(
            ClaimSource::Peak("morning".into()),
            8,
            t("2026-01-01T08:35:00Z"),
            t("2026-01-01T11:00:00Z"),
            Some(ramp),
            "peak",
        )
        .suspending_scale_in(true);
        assert_eq!(c.expires_at, t("2026-01-01T11:40:00Z"));
        assert!(c.at(t("2026-01-01T08:34:59Z")).is_none());
        let holding = c.at(t("2026-01-01T09:00:00Z")).unwrap();
        assert_eq!((holding.floor, holding.suspend_scale_in), (8, true));
        let first_step = c.at(t("2026-01-01T11:00:00Z")).unwrap();
        assert_eq!((first_step.floor, first_step.suspend_scale_in), (4, false));
        assert_eq!(c.at(t("2026-01-01T11:25:00Z")).unwrap().floor, 1);
        assert!(c.at(t("2026-01-01T11:40:00Z")).is_none());
    }

    #[test]
    fn claim_sources_round_trip() {
        for s in ["peak:black-friday", "guard", "wake", "manual"] {
            assert_eq!(s.parse::<ClaimSource>().unwrap().to_string(), s);
        }
        assert!("peak:".parse::<ClaimSource>().is_err());
        assert!("boost".parse::<ClaimSource>().is_err());
    }
}
