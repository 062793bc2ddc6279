//! On endpoints that host inference components, SageMaker scales the instances itself:
//! `ManagedInstanceScaling.ScaleInPolicy` releases instances without copies (`IDLE_RELEASE`) or
//! repacks copies onto fewer instances (`CONSOLIDATION`) after `CooldownInMinutes` (default 20;
//! aws-facts.md, "Inference-component endpoints release instances on their own"). Holding
//! copies does not by itself hold instances: the headroom a peak or guard claim keeps at copy
//! level can lose the instances it was meant to keep warm.

use super::{Facts, Finding, Serving, Severity};

pub const INSTANCE_SCALE_IN: &str = "instance-scale-in";

/// SageMaker's default `CooldownInMinutes` when a scale-in policy sets none.
pub const DEFAULT_SCALE_IN_COOLDOWN_MIN: u32 = 20;

pub fn instance_scale_in(f: &Facts<'_>) -> Option<Finding> {
    if f.serving != Serving::Component {
        return None;
    }
    let m = f.instance_scaling.filter(|m| m.enabled)?;
    let strategy = m.scale_in_strategy.as_deref()?;
    let t = f.target;
    let mut holders = Vec::new();
    if let Some(g) = &t.guard {
        holders.push(format!("the guard (holds {})", g.hold));
    }
    let floor = t.peaks.iter().map(|p| p.floor).max();
    if let Some(floor) = floor {
        holders.push(format!("{} peak(s), up to {floor} copies", t.peaks.len()));
    }
    if holders.is_empty() {
        return None;
    }
    let cooldown = m.scale_in_cooldown_minutes.map_or(
        format!("unset ({DEFAULT_SCALE_IN_COOLDOWN_MIN} min, SageMaker's default)"),
        |c| format!("{c} min"),
    );
    let min_instances = m.min_instances.unwrap_or(0);
    let held = floor.unwrap_or(t.min_capacity).max(t.min_capacity);
    Some(f.finding(
        INSTANCE_SCALE_IN,
        Severity::Warn,
        Some("ManagedInstanceScaling.ScaleInPolicy"),
        format!(
            "ScaleInPolicy {strategy} with CooldownInMinutes {cooldown} and MinInstanceCount \
             {min_instances}: SageMaker releases instances the copy-level claims of {} do not \
             hold",
            holders.join(" and ")
        ),
        format!(
            "MinInstanceCount {min_instances} -> the instances {held} copies need (or remove \
             the ScaleInPolicy while claims hold copies)"
        ),
    ))
}

#[cfg(test)]
mod tests {
    use super::super::test_facts::*;
    use super::*;
    use crate::deploy_ports::ManagedInstanceScalingView;

    fn mis(strategy: Option<&str>) -> ManagedInstanceScalingView {
        ManagedInstanceScalingView {
            enabled: true,
            min_instances: Some(0),
            max_instances: Some(4),
            scale_in_strategy: strategy.map(str::to_owned),
            scale_in_cooldown_minutes: None,
        }
    }

    const PEAK: &str = "[[target.peak]]\nname = \"morning\"\ncron = \"0 8 * * MON-FRI\"\ntimezone = \"UTC\"\nduration = \"2h\"\nfloor = 4";
    const GUARD: &str = "[target.guard]\nalarms = [\"busy\"]\nhold = \"30m\"";

    #[test]
    fn decision_table() {
        let cases: Vec<(&str, Given, usize)> = vec![
            (
                "IC, IDLE_RELEASE, a peak",
                Given::component()
                    .plan(1, PEAK)
                    .instance_scaling(mis(Some("IDLE_RELEASE"))),
                1,
            ),
            (
                "IC, CONSOLIDATION, a guard",
                Given::component()
                    .plan(1, GUARD)
                    .instance_scaling(mis(Some("CONSOLIDATION"))),
                1,
            ),
            (
                "IC, no scale-in policy",
                Given::component().plan(1, PEAK).instance_scaling(mis(None)),
                0,
            ),
            (
                "IC, nothing held",
                Given::component().instance_scaling(mis(Some("IDLE_RELEASE"))),
                0,
            ),
            (
                "variant",
                Given::variant()
                    .plan(1, PEAK)
                    .instance_scaling(mis(Some("IDLE_RELEASE"))),
                0,
            ),
            (
                "managed scaling disabled",
                Given::component()
                    .plan(1, PEAK)
                    .instance_scaling(ManagedInstanceScalingView {
                        enabled: false,
                        ..mis(Some("IDLE_RELEASE"))
                    }),
                0,
            ),
        ];
        for (case, given, want) in cases {
            assert_eq!(given.rule(INSTANCE_SCALE_IN).len(), want, "{case}");
        }
    }

    #[test]
    fn the_change_names_the_copies_held() {
        let g = Given::component()
            .plan(1, PEAK)
            .instance_scaling(mis(Some("IDLE_RELEASE")));
        let got = g.rule(INSTANCE_SCALE_IN);
        assert_eq!(got[0].1, "MinInstanceCount 0 -> the instances 4 copies need (or remove the ScaleInPolicy while claims hold copies)");
    }
}
