//! Announced peaks: the `headroom.peak/v1` events an operator's own systems send (a campaign
//! calendar, a batch scheduler, a deployment pipeline) before load they know is coming. The world
//! file lists them with the moment each reaches headroom, and the headroom strategy applies
//! them on the tick Lambda's path (`invoke::peak`). That lets an operator ask what
//! wiring such a system to headroom would buy before doing it.
//!
//! ```toml
//! [[announcement]]
//! target = "endpoint/chat-api/variant/AllTraffic"
//! name = "spring-campaign"
//! sent = "2026-03-02T15:45:00Z"     # when the event reaches headroom
//! starts = "2026-03-02T16:00:00Z"
//! duration = "30m"
//! floor = 20
//! suspend_scale_in = false          # optional
//! ```

use chrono::{DateTime, Utc};
use headroom_core::peaks::PeakRequest;
use headroom_core::{ScalableTargetId, Span};
use serde::Deserialize;

use crate::world::TargetWorld;

/// One `[[announcement]]`, as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct AnnouncementFile {
    target: String,
    name: String,
    sent: String,
    starts: String,
    duration: Span,
    floor: u32,
    #[serde(default)]
    suspend_scale_in: bool,
}

/// A checked announcement.
#[derive(Debug, Clone, PartialEq)]
pub struct Announcement {
    /// When the event reaches headroom (Unix seconds).
    pub sent: i64,
    /// The event's content, as the tick Lambda parses it.
    pub request: PeakRequest,
}

/// Checks one announcement: every problem as (field under `at`, what is wrong).
pub(crate) fn check(
    at: &str,
    a: &AnnouncementFile,
    targets: &[TargetWorld],
) -> Result<Announcement, Vec<(String, String)>> {
    let mut issues = Vec::new();
    let target = match a.target.parse::<ScalableTargetId>() {
        Ok(id) if targets.iter().any(|t| t.id == id) => Some(id),
        Ok(id) => {
            issues.push((
                format!("{at}.target"),
                format!("{id} is not a [[target]] of this world"),
            ));
            None
        }
        Err(e) => {
            issues.push((format!("{at}.target"), e.to_string()));
            None
        }
    };
    let mut instant = |field: &str, text: &str| match DateTime::parse_from_rfc3339(text) {
        Ok(t) => Some(t.with_timezone(&Utc)),
        Err(e) => {
            issues.push((
                format!("{at}.{field}"),
                format!("{text:?} is not RFC 3339 ({e})"),
            ));
            None
        }
    };
    let sent = instant("sent", &a.sent);
    let starts = instant("starts", &a.starts);
    if a.name.trim().is_empty() {
        issues.push((format!("{at}.name"), "must not be empty".to_owned()));
    }
    if a.duration.as_secs() <= 0 {
        issues.push((
            format!("{at}.duration"),
            "must be longer than zero".to_owned(),
        ));
    }
    if a.floor == 0 {
        issues.push((format!("{at}.floor"), "must be at least 1".to_owned()));
    }
    match (target, sent, starts) {
        (Some(target), Some(sent), Some(starts)) if issues.is_empty() => Ok(Announcement {
            sent: sent.timestamp(),
            request: PeakRequest {
                target,
                name: a.name.clone(),
                floor: a.floor,
                starts_at: starts,
                ends_at: starts + a.duration.to_chrono(),
                suspend_scale_in: a.suspend_scale_in,
                id: None,
            },
        }),
        _ => Err(issues),
    }
}
