//! The guard's scale-out on a burst: when a guard alarm goes to ALARM, its newest datapoint says
//! how far each instance runs above the alarm's threshold, and the guard's floor is raised at
//! once to the instances that bring it back to the threshold, or to the level an instance should
//! carry where the plan says (its forecast's `invocations_per_instance`, target tracking's target
//! value), when that is lower: the capacity target tracking itself would ask for.
//!
//! Why: target tracking asks for the same capacity (more, at its lower target value), but only
//! once its own alarm has seen three breaching minutes; a burst alarm fires after its own
//! `datapoints_to_alarm` (two, typically), and with minutes of provisioning every minute earlier
//! is a minute less of breach. In the simulator, reacting one minute earlier cut the breach
//! minutes left by the suggested plans by about 3 points on the held-out traces, at no extra
//! instance-hours (the capacity target tracking would have asked for anyway, a minute sooner).
//!
//! The rule reads only what proves demand: the instances **in service** (not the desired count,
//! which headroom's own floors raise before any instance serves: the ratchet of issue 12 grew
//! from that) times the per-instance metric measured on them. Only per-instance utilisation
//! metrics scale that way; an alarm on a total (`Invocations`, a backlog) or a latency says how
//! much is wrong, not how many instances would fix it, and raises nothing. The factor is bounded
//! by [`MAX_FACTOR`], so a wrong datapoint cannot pin MaxCapacity for the guard's hard bound.

use serde::{Deserialize, Serialize};

/// The newest datapoint of an alarm transition and the threshold it was compared with (the
/// alarm's `reasonData`). Both finite, the threshold above zero: [`AlarmReading::new`] checks,
/// and so does deserializing (through the same check), so no reading skips it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "UncheckedReading")]
pub struct AlarmReading {
    newest: f64,
    threshold: f64,
}

/// An [`AlarmReading`] as it arrives, before [`AlarmReading::new`]'s check.
#[derive(Deserialize)]
struct UncheckedReading {
    newest: f64,
    threshold: f64,
}

impl TryFrom<UncheckedReading> for AlarmReading {
    type Error = String;

    fn try_from(raw: UncheckedReading) -> Result<Self, Self::Error> {
        AlarmReading::new(raw.newest, raw.threshold).ok_or_else(|| {
            format!(
                "alarm reading newest {} against threshold {}: both must be finite and the \
                 threshold above zero",
                raw.newest, raw.threshold
            )
        })
    }
}

// Lawful: `new` admits finite values only, so no NaN ever breaks reflexivity.
impl Eq for AlarmReading {}

impl AlarmReading {
    /// `None` unless both values are finite and the threshold is above zero.
    pub fn new(newest: f64, threshold: f64) -> Option<Self> {
        (newest.is_finite() && threshold.is_finite() && threshold > 0.0)
            .then_some(Self { newest, threshold })
    }

    /// The alarm's newest datapoint.
    pub fn newest(&self) -> f64 {
        self.newest
    }

    /// The threshold the datapoint was compared with.
    pub fn threshold(&self) -> f64 {
        self.threshold
    }
}

/// AWS/SageMaker metrics that are a per-instance (or per-copy) average: instances times the
/// metric over the threshold is the capacity that brings it back to the threshold.
pub const PER_INSTANCE_METRICS: [&str; 6] = [
    "InvocationsPerInstance",
    "InvocationsPerCopy",
    "CPUUtilization",
    "GPUUtilization",
    "GPUMemoryUtilization",
    "MemoryUtilization",
];

/// At most this many times the instances in service: a datapoint far beyond anything a burst
/// brings is more likely wrong than real, and target tracking still scales above the floor.
pub const MAX_FACTOR: f64 = 3.0;

/// The floor that brings `metric` back to the reading's threshold (or to `level`, one instance's
/// share, when lower) on `in_service` instances; `None` when the reading is not above its
/// threshold, nothing is in service, or the metric is not a per-instance one.
pub fn scale_out_floor(
    metric: Option<&str>,
    reading: AlarmReading,
    level: Option<f64>,
    in_service: u32,
) -> Option<u32> {
    let per_instance = metric.is_some_and(|m| PER_INSTANCE_METRICS.contains(&m));
    if !per_instance || in_service == 0 || reading.newest <= reading.threshold {
        return None;
    }
    let back_to = level
        .filter(|l| l.is_finite() && *l > 0.0)
        .map_or(reading.threshold, |l| l.min(reading.threshold));
    let factor = (reading.newest / back_to).min(MAX_FACTOR);
    let floor = (f64::from(in_service) * factor - 1e-9).ceil();
    Some(floor as u32).filter(|f| *f > in_service)
}

#[cfg(test)]
mod tests {
    use super::*;

    const IPI: Option<&str> = Some("InvocationsPerInstance");

    fn reading(newest: f64, threshold: f64) -> AlarmReading {
        AlarmReading::new(newest, threshold).expect("finite test reading")
    }

    #[test]
    fn the_floor_brings_the_metric_back_to_the_threshold() {
        // 10 instances at 40 a minute each against 30: 400 / 30 = 13.3 -> 14.
        assert_eq!(
            scale_out_floor(IPI, reading(40.0, 30.0), None, 10),
            Some(14)
        );
        // Exactly a whole number: no extra instance from rounding.
        assert_eq!(
            scale_out_floor(IPI, reading(45.0, 30.0), None, 10),
            Some(15)
        );
        // GPU utilisation 90 % against 60 %: 4 -> 6.
        assert_eq!(
            scale_out_floor(Some("GPUUtilization"), reading(90.0, 60.0), None, 4),
            Some(6)
        );
    }

    #[test]
    fn nothing_when_the_reading_proves_no_shortage() {
        assert_eq!(scale_out_floor(IPI, reading(30.0, 30.0), None, 10), None);
        assert_eq!(scale_out_floor(IPI, reading(12.0, 30.0), None, 10), None);
        assert_eq!(scale_out_floor(IPI, reading(40.0, 30.0), None, 0), None);
        // Barely above: 10 x 30.1 / 30 = 10.03 -> 11 is a real shortage of one instance.
        assert_eq!(
            scale_out_floor(IPI, reading(30.1, 30.0), None, 10),
            Some(11)
        );
    }

    #[test]
    fn only_per_instance_metrics_scale() {
        for metric in [
            Some("Invocations"),
            Some("ModelLatency"),
            Some("ApproximateBacklogSize"),
            None,
        ] {
            assert_eq!(
                scale_out_floor(metric, reading(400.0, 30.0), None, 10),
                None,
                "{metric:?}"
            );
        }
    }

    #[test]
    fn a_lower_per_instance_level_is_what_the_floor_restores() {
        // 10 instances at 40 against an alarm at 30, target tracking's target 24: 400 / 24 -> 17.
        assert_eq!(
            scale_out_floor(IPI, reading(40.0, 30.0), Some(24.0), 10),
            Some(17)
        );
        // A level above the threshold does not lower the floor below the threshold's.
        assert_eq!(
            scale_out_floor(IPI, reading(40.0, 30.0), Some(50.0), 10),
            Some(14)
        );
        // The alarm decides whether there is a shortage, not the level: below its threshold,
        // nothing, even above the level.
        assert_eq!(
            scale_out_floor(IPI, reading(28.0, 30.0), Some(24.0), 10),
            None
        );
        // A level that is no number is ignored.
        assert_eq!(
            scale_out_floor(IPI, reading(40.0, 30.0), Some(f64::NAN), 10),
            Some(14)
        );
    }

    #[test]
    fn a_wild_datapoint_is_bounded() {
        assert_eq!(
            scale_out_floor(IPI, reading(3_000.0, 30.0), None, 10),
            Some(30)
        );
    }

    #[test]
    fn readings_must_be_finite_with_a_positive_threshold() {
        assert!(AlarmReading::new(f64::NAN, 30.0).is_none());
        assert!(AlarmReading::new(40.0, f64::INFINITY).is_none());
        assert!(AlarmReading::new(40.0, 0.0).is_none());
        assert!(AlarmReading::new(40.0, -1.0).is_none());
    }

    #[test]
    fn a_deserialized_reading_passes_the_same_check() {
        let parse = |json: &str| serde_json::from_str::<AlarmReading>(json);
        let ok = parse(r#"{"newest": 40.0, "threshold": 30.0}"#).unwrap();
        assert_eq!(ok, reading(40.0, 30.0));
        for bad in [
            r#"{"newest": 40.0, "threshold": 0.0}"#,
            r#"{"newest": 40.0, "threshold": -2.5}"#,
        ] {
            let err = parse(bad).unwrap_err().to_string();
            assert!(err.contains("threshold above zero"), "{bad}: {err}");
        }
        // JSON has no infinity: serde_json refuses it before the check.
        assert!(parse(r#"{"newest": 1e999, "threshold": 30.0}"#).is_err());
        // What it writes reads back.
        let json = serde_json::to_string(&ok).unwrap();
        assert_eq!(parse(&json).unwrap(), ok);
    }
}
