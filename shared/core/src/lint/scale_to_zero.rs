//! Scale to zero is wired or it is not (aws-facts.md): a real-time variant cannot go below 1; an
//! inference component at zero copies comes back only through an alarm on
//! `NoCapacityInvocationFailures`, an asynchronous endpoint through one on
//! `HasBacklogWithoutCapacity`, each acting through a step policy (AWS's recipe) or headroom's
//! wake. A plan's `[target.wake]` whose alarms do not exist, or watch another metric, never wakes.

use super::{Facts, Finding, Serving, Severity};
use crate::metrics_port::AlarmView;
use crate::plan::AlarmArn;

pub const SCALE_TO_ZERO: &str = "scale-to-zero";

/// The name an alarm of the plan is given by (a name, or the last part of its ARN).
fn alarm_name(configured: &str) -> &str {
    AlarmArn::name_in(configured)
}

pub fn scale_to_zero(f: &Facts<'_>) -> Vec<Finding> {
    let at_zero = f.target.min_capacity == 0;
    let wake_metric = match f.serving {
        Serving::RealTime if at_zero => {
            return vec![f.finding(
                SCALE_TO_ZERO,
                Severity::Error,
                None,
                "the plan's min_capacity is 0 on a real-time variant: SageMaker keeps at least 1 \
                 instance (only endpoints that host inference components reach 0)"
                    .into(),
                "min_capacity 0 -> 1 (or serve the model as an inference component)".into(),
            )];
        }
        Serving::Component => "NoCapacityInvocationFailures",
        Serving::Async => "HasBacklogWithoutCapacity",
        _ => return Vec::new(),
    };
    if !at_zero && f.target.wake.is_none() {
        return Vec::new();
    }
    let Some(alarms) = f.alarms else {
        return vec![f.finding(
            SCALE_TO_ZERO,
            Severity::Info,
            None,
            "the alarms could not be described (DescribeAlarms): whether scale-out from zero \
             is wired is unknown"
                .into(),
            "allow cloudwatch:DescribeAlarms and lint again".into(),
        )];
    };
    let on_metric = |a: &&AlarmView| a.metric.as_deref() == Some(wake_metric);
    let described = |name: &str| alarms.iter().find(|a| a.name == name);
    let mut out = Vec::new();
    let step_wakes = f.policies.iter().any(|p| {
        p.policy_type == "StepScaling"
            && p.step_adjustments.iter().any(|s| s.adjustment > 0)
            && p.alarms
                .iter()
                .filter_map(|n| described(n))
                .any(|a| on_metric(&a))
    });
    let mut wake_works = false;
    if let Some(wake) = &f.target.wake {
        for configured in &wake.alarms {
            let name = alarm_name(configured);
            match described(name) {
                None => out.push(f.finding(
                    SCALE_TO_ZERO,
                    Severity::Error,
                    Some(name),
                    format!("the plan's wake alarm {name} does not exist (DescribeAlarms)"),
                    format!(
                        "create {name} on {wake_metric} (AWS/SageMaker) for this target, or \
                         name an existing alarm in [target.wake] alarms"
                    ),
                )),
                Some(a) if !on_metric(&a) => out.push(f.finding(
                    SCALE_TO_ZERO,
                    Severity::Warn,
                    Some(name),
                    format!(
                        "the plan's wake alarm {name} watches {}, not {wake_metric}",
                        a.metric.as_deref().unwrap_or("a metric-math expression")
                    ),
                    format!("point {name} at {wake_metric}: it is the metric that rises at zero"),
                )),
                Some(_) => wake_works = true,
            }
        }
    }
    if at_zero && !step_wakes && !wake_works {
        let (severity, consequence) = match f.serving {
            Serving::Component => (
                Severity::Error,
                "at zero copies nothing scales out: every invocation fails for lack of capacity",
            ),
            _ => (
                Severity::Warn,
                "at zero instances scale-out waits until the backlog exceeds the tracking target",
            ),
        };
        out.push(f.finding(
            SCALE_TO_ZERO,
            severity,
            None,
            format!(
                "min_capacity is 0 and no step policy or wake alarm acts on {wake_metric}: \
                 {consequence}"
            ),
            format!(
                "add a step policy (+1) on an alarm on {wake_metric} (Maximum, 60 s, >= 1), or a \
                 [target.wake] naming that alarm"
            ),
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::test_facts::*;
    use super::*;

    const NO_CAPACITY: &str = "NoCapacityInvocationFailures";
    const BACKLOG: &str = "HasBacklogWithoutCapacity";
    const WAKE: &str = "[target.wake]\nalarms = [\"chat-ic-wake\"]\ncapacity = 1";

    fn severities(g: Given) -> Vec<String> {
        g.rule(SCALE_TO_ZERO).into_iter().map(|(s, _)| s).collect()
    }

    #[test]
    fn decision_table() {
        let cases: Vec<(&str, Given, Vec<&str>)> = vec![
            ("real-time at 1", Given::variant(), vec![]),
            (
                "real-time at 0",
                Given::variant().plan(0, ""),
                vec!["error"],
            ),
            (
                "serverless at 0",
                Given::variant().plan(0, "").serving(Serving::Serverless),
                vec![],
            ),
            ("component at 1, no wake", Given::component(), vec![]),
            (
                "component at 0, nothing wired",
                Given::component().plan(0, ""),
                vec!["error"],
            ),
            (
                "component at 0, step policy on the right alarm",
                Given::component()
                    .plan(0, "")
                    .with_policy(step("wake", "no-cap", 1))
                    .with_alarm("no-cap", NO_CAPACITY),
                vec![],
            ),
            (
                "component at 0, step policy on another metric",
                Given::component()
                    .plan(0, "")
                    .with_policy(step("wake", "busy", 1))
                    .with_alarm("busy", "Invocations"),
                vec!["error"],
            ),
            (
                "component at 0, headroom's wake on the right alarm",
                Given::component()
                    .plan(0, WAKE)
                    .with_alarm("chat-ic-wake", NO_CAPACITY),
                vec![],
            ),
            (
                "wake alarm missing",
                Given::component().plan(0, WAKE),
                vec!["error", "error"],
            ),
            (
                "wake alarm on another metric, but a step policy wakes",
                Given::component()
                    .plan(0, WAKE)
                    .with_alarm("chat-ic-wake", "Invocations")
                    .with_policy(step("wake", "no-cap", 1))
                    .with_alarm("no-cap", NO_CAPACITY),
                vec!["warn"],
            ),
            (
                "async at 0, nothing wired",
                Given::variant().plan(0, "").serving(Serving::Async),
                vec!["warn"],
            ),
            (
                "async at 0, backlog step policy",
                Given::variant()
                    .plan(0, "")
                    .serving(Serving::Async)
                    .with_policy(step("wake", "backlog", 1))
                    .with_alarm("backlog", BACKLOG),
                vec![],
            ),
            (
                "alarms unreadable",
                Given::component().plan(0, "").alarms_unreadable(),
                vec!["info"],
            ),
        ];
        for (case, given, want) in cases {
            assert_eq!(severities(given), want, "{case}");
        }
    }
}
