//! Plans for tests, built in a few calls instead of formatted TOML: `TargetPlan::test(id)
//! .bounds(2, 8).with_guard("burst").build()`. The builder writes the plan file a person would
//! write and parses it, so a built plan has passed the same validation as a stored one, and
//! [`PlanBuilder::text`] is what `MemoryStateStore::with_plan` takes. Compiled for tests and with
//! the `memory` feature only.

use std::fmt::Write as _;

use super::{parse_plan, Plan, TargetPlan};

/// One target of a test plan.
#[derive(Debug, Clone)]
pub struct TargetBuilder {
    id: String,
    dimension: Option<String>,
    min: u32,
    max: u32,
    lead_time: String,
    sections: String,
}

impl TargetPlan {
    /// A test target: `id` with bounds 1..8, a 25-minute lead time and no features.
    pub fn test(id: &str) -> TargetBuilder {
        TargetBuilder {
            id: id.to_owned(),
            dimension: None,
            min: 1,
            max: 8,
            lead_time: "25m".to_owned(),
            sections: String::new(),
        }
    }
}

impl TargetBuilder {
    pub fn bounds(mut self, min: u32, max: u32) -> Self {
        self.min = min;
        self.max = max;
        self
    }

    /// The target's `dimension` (`provisioned_concurrency` for a serverless variant).
    pub fn dimension(mut self, plan_name: &str) -> Self {
        self.dimension = Some(plan_name.to_owned());
        self
    }

    pub fn lead_time(mut self, span: &str) -> Self {
        span.clone_into(&mut self.lead_time);
        self
    }

    /// A guard on `alarm` with the plan's defaults (hold, step-down, floor).
    pub fn with_guard(self, alarm: &str) -> Self {
        self.section(&format!("[target.guard]\nalarms = [{alarm:?}]\n"))
    }

    /// A wake on `alarm` to `capacity`.
    pub fn with_wake(self, alarm: &str, capacity: u32) -> Self {
        self.section(&format!(
            "[target.wake]\nalarms = [{alarm:?}]\ncapacity = {capacity}\n"
        ))
    }

    /// The INSUFFICIENT_DATA fallback of the guard or wake section added just before:
    /// `on_insufficient_data = mode`, with `keep_for` when given.
    pub fn on_insufficient_data(self, mode: &str, keep_for: Option<&str>) -> Self {
        let mut toml = format!("on_insufficient_data = {mode:?}\n");
        if let Some(span) = keep_for {
            let _ = writeln!(toml, "keep_for = {span:?}");
        }
        self.section(&toml)
    }

    /// A recurring peak: `cron` (UTC), `duration`, `floor`.
    pub fn with_peak(self, name: &str, cron: &str, duration: &str, floor: u32) -> Self {
        self.section(&format!(
            "[[target.peak]]\nname = {name:?}\ncron = {cron:?}\nduration = {duration:?}\nfloor = {floor}\n"
        ))
    }

    /// A demand forecast at `invocations_per_instance` requests per minute per instance.
    pub fn with_forecast(self, invocations_per_instance: f64) -> Self {
        self.section(&format!(
            "[target.forecast]\ninvocations_per_instance = {invocations_per_instance:?}\n"
        ))
    }

    /// Any other section, as plan TOML (e.g. `[target.review]\nenabled = false\n`).
    pub fn section(mut self, toml: &str) -> Self {
        self.sections.push_str(toml);
        if !toml.ends_with('\n') {
            self.sections.push('\n');
        }
        self
    }

    /// A plan of this target alone.
    pub fn plan(self) -> PlanBuilder {
        PlanBuilder {
            targets: vec![self],
        }
    }

    /// The target, validated as a stored plan is.
    pub fn build(self) -> TargetPlan {
        self.plan().build().targets.remove(0)
    }
}

/// A test plan of several targets.
#[derive(Debug, Clone, Default)]
pub struct PlanBuilder {
    targets: Vec<TargetBuilder>,
}

impl PlanBuilder {
    pub fn with(mut self, target: TargetBuilder) -> Self {
        self.targets.push(target);
        self
    }

    /// The plan file.
    pub fn text(&self) -> String {
        let mut text = String::from("version = 1\n");
        for t in &self.targets {
            let _ = write!(text, "[[target]]\nresource_id = {:?}\n", t.id);
            if let Some(d) = &t.dimension {
                let _ = writeln!(text, "dimension = {d:?}");
            }
            let _ = write!(
                text,
                "min_capacity = {}\nmax_capacity = {}\nlead_time = {:?}\n{}",
                t.min, t.max, t.lead_time, t.sections
            );
        }
        text
    }

    /// The plan, validated as a stored one is. Panics with every problem when it is invalid: a
    /// test that builds an invalid plan is wrong.
    pub fn build(&self) -> Plan {
        let text = self.text();
        parse_plan("test plan", &text).unwrap_or_else(|e| panic!("invalid test plan: {e}\n{text}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ScalableTargetId;

    #[test]
    fn a_built_target_carries_what_was_asked_and_is_validated() {
        let t = TargetPlan::test("endpoint/chat/variant/AllTraffic")
            .bounds(2, 6)
            .with_guard("burst")
            .with_wake("backlog", 1)
            .with_peak("morning", "30 8 * * MON-FRI", "3h", 5)
            .with_forecast(30.0)
            .build();
        assert_eq!(
            t.id,
            "endpoint/chat/variant/AllTraffic"
                .parse::<ScalableTargetId>()
                .expect("id")
        );
        assert_eq!((t.min_capacity, t.max_capacity), (2, 6));
        assert_eq!(t.guard.expect("guard").alarms, ["burst"]);
        assert_eq!(t.wake.expect("wake").capacity, 1);
        assert_eq!(t.peaks[0].floor, 5);
        assert!(t.forecast.is_some());
    }

    #[test]
    #[should_panic(expected = "invalid test plan")]
    fn an_invalid_test_plan_fails_the_test() {
        let _ = TargetPlan::test("endpoint/chat/variant/AllTraffic")
            .bounds(9, 3)
            .build();
    }
}
