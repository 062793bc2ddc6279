//! The tick (EventBridge scheduled rule, or EventBridge Scheduler without an input) and the
//! explicit peak event (EventBridge Scheduler with headroom's JSON as its input, delivered
//! verbatim with no envelope).

use chrono::{DateTime, Utc};
use headroom_core::plan::{valid_claim_name, LONGEST_HOLD};
use headroom_core::text::cut;
use headroom_core::ScalableTargetId;
use serde::Deserialize;

use crate::envelope;
use crate::EventError;

pub const SCHEDULED_DETAIL_TYPE: &str = "Scheduled Event";
/// `kind` of the explicit peak payload, version 1.
pub const PEAK_KIND: &str = "headroom.peak/v1";

pub use headroom_core::trigger::tick::Tick;

/// An explicit peak: the core's domain type, parsed here from headroom's JSON payload.
pub use headroom_core::peaks::PeakRequest as PeakEvent;

/// Reads the envelope's `time` (kept here for callers of `schedule::envelope_time`).
pub use crate::envelope::envelope_time;

const TICK: &str = "scheduled event";

/// A scheduled rule's event or EventBridge Scheduler's without an input, read with
/// `aws_lambda_events`' `EventBridgeEvent`. Scheduler's `detail` is the string `"{}"`, not an
/// object: the envelope's `detail` type accepts any JSON, as no tick reads it.
pub fn parse_tick(event: &serde_json::Value) -> Result<Tick, EventError> {
    let envelope = envelope::eventbridge(TICK, event)?;
    Ok(Tick {
        at: envelope.time,
        id: envelope.id,
    })
}

/// headroom's explicit peak, EventBridge Scheduler's custom input. Scheduler delivers that input
/// verbatim, with no envelope, so `aws_lambda_events` has no type for it (its `EventBridgeEvent`
/// refuses it for want of `detail-type` and `source`; `crate_fit` tests it). headroom owns the
/// format, so it is strict: an unknown field is refused by name.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PeakPayload {
    #[allow(dead_code)]
    kind: String,
    target: String,
    name: String,
    floor: u32,
    starts_at: String,
    ends_at: String,
    #[serde(default)]
    suspend_scale_in: bool,
    #[serde(default)]
    id: Option<String>,
}

const PEAK: &str = "peak event";
/// The longest `id` a peak event may carry.
const MAX_PEAK_ID: usize = 256;

fn instant(field: &str, text: &str) -> Result<DateTime<Utc>, EventError> {
    DateTime::parse_from_rfc3339(text)
        .map(|t| t.with_timezone(&Utc))
        .map_err(|e| {
            EventError::malformed(
                PEAK,
                field,
                format!("{:?} is not RFC 3339 ({e})", cut(text)),
            )
        })
}

pub fn parse_peak(event: &serde_json::Value) -> Result<PeakEvent, EventError> {
    let p: PeakPayload = serde_json::from_value(event.clone())
        .map_err(|e| EventError::malformed(PEAK, "(payload)", cut(&e.to_string())))?;
    let target: ScalableTargetId = p.target.parse().map_err(|e: headroom_core::IdError| {
        EventError::malformed(PEAK, "target", e.to_string())
    })?;
    if !valid_claim_name(&p.name) {
        return Err(EventError::malformed(
            PEAK,
            "name",
            format!(
                "{:?} must be 1-64 letters, digits, '-' or '_'",
                cut(&p.name)
            ),
        ));
    }
    if p.floor == 0 {
        return Err(EventError::malformed(PEAK, "floor", "must be at least 1"));
    }
    // The id goes into log records; Scheduler's execution ids are UUID-sized.
    if p.id
        .as_ref()
        .is_some_and(|id| id.chars().count() > MAX_PEAK_ID)
    {
        return Err(EventError::malformed(
            PEAK,
            "id",
            format!(
                "{:?} is longer than {MAX_PEAK_ID} characters",
                cut(p.id.as_deref().unwrap_or_default())
            ),
        ));
    }
    let starts_at = instant("starts_at", &p.starts_at)?;
    let ends_at = instant("ends_at", &p.ends_at)?;
    if ends_at <= starts_at {
        return Err(EventError::malformed(
            PEAK,
            "ends_at",
            "must be after starts_at",
        ));
    }
    if (ends_at - starts_at).num_seconds() > LONGEST_HOLD.as_secs() {
        return Err(EventError::malformed(
            PEAK,
            "ends_at",
            format!("the peak may last at most {LONGEST_HOLD}"),
        ));
    }
    Ok(PeakEvent {
        target,
        name: p.name,
        floor: p.floor,
        starts_at,
        ends_at,
        suspend_scale_in: p.suspend_scale_in,
        id: p.id,
    })
}

#[cfg(test)]
mod size_tests {
    use super::*;

    fn peak(name: &str, id: &str, target: &str) -> serde_json::Value {
        serde_json::json!({
            "kind": "headroom.peak/v1",
            "target": target,
            "name": name,
            "floor": 2,
            "starts_at": "2026-11-27T14:00:00Z",
            "ends_at": "2026-11-27T22:00:00Z",
            "id": id,
        })
    }

    #[test]
    fn over_long_peak_fields_are_refused_and_quoted_cut() {
        let huge = "z".repeat(5 * 1024 * 1024);
        let target = "endpoint/chat-prod/variant/AllTraffic";
        for (event, field) in [
            (peak(&huge, "e-1", target), "name"),
            (peak("promo", &huge, target), "id"),
            (peak("promo", "e-1", &huge), "target"),
        ] {
            let err = parse_peak(&event).unwrap_err().to_string();
            assert!(err.contains(field), "{}", cut(&err));
            assert!(
                err.len() < 1_000,
                "{field}: the message is {} bytes",
                err.len()
            );
        }
        assert!(parse_peak(&peak("promo", "e-1", target)).is_ok());
    }
}
