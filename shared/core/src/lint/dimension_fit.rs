//! The plan's dimension fits what serves: a serverless variant has no instances, so its
//! instance count cannot be scaled, only its provisioned concurrency
//! (`sagemaker:variant:DesiredProvisionedConcurrency`); an instance-based variant has no
//! provisioned concurrency. Application Auto Scaling scales SageMaker endpoint variants,
//! provisioned concurrency for serverless endpoints, and inference components (Application Auto
//! Scaling user guide, "Amazon SageMaker AI and Application Auto Scaling"); a target on the
//! other dimension holds bounds that never move anything.

use super::{Facts, Finding, Serving, Severity};
use crate::ids::Dimension;

pub const DIMENSION_FIT: &str = "dimension-fit";

pub fn dimension_fit(f: &Facts<'_>) -> Vec<Finding> {
    let dimension = f.target.id.dimension();
    let (evidence, change) = match (f.serving, dimension) {
        (Serving::Serverless, Dimension::VariantInstances) => (
            "the variant is serverless (ServerlessConfig): it has no instances, and only its \
             provisioned concurrency can be scaled",
            "dimension = \"provisioned_concurrency\" on this [[target]] (bounds 1..200, at most \
             the variant's MaxConcurrency)",
        ),
        (Serving::RealTime | Serving::Async, Dimension::VariantProvisionedConcurrency) => (
            "the variant runs on instances (no ServerlessConfig): it has no provisioned \
             concurrency to scale",
            "remove `dimension` from this [[target]] to manage its instance count",
        ),
        _ => return Vec::new(),
    };
    vec![f.finding(
        DIMENSION_FIT,
        Severity::Error,
        Some(dimension.as_str()),
        evidence.into(),
        change.into(),
    )]
}

#[cfg(test)]
mod tests {
    use super::super::test_facts::*;
    use super::*;

    const PC: &str = "dimension = \"provisioned_concurrency\"";

    #[test]
    fn decision_table() {
        let cases: Vec<(&str, Given, Vec<&str>)> = vec![
            ("real-time instances", Given::variant(), vec![]),
            (
                "async instances",
                Given::variant().plan(0, "").serving(Serving::Async),
                vec![],
            ),
            (
                "serverless provisioned concurrency",
                Given::variant().plan(1, PC).serving(Serving::Serverless),
                vec![],
            ),
            (
                "serverless instances",
                Given::variant().plan(1, "").serving(Serving::Serverless),
                vec!["error"],
            ),
            (
                "real-time provisioned concurrency",
                Given::variant().plan(1, PC),
                vec!["error"],
            ),
            (
                "async provisioned concurrency",
                Given::variant().plan(1, PC).serving(Serving::Async),
                vec!["error"],
            ),
            (
                "unknown serving",
                Given::variant().plan(1, PC).serving(Serving::Unknown),
                vec![],
            ),
            ("component", Given::component(), vec![]),
        ];
        for (case, given, want) in cases {
            let got: Vec<String> = given
                .rule(DIMENSION_FIT)
                .into_iter()
                .map(|(s, _)| s)
                .collect();
            assert_eq!(got, want, "{case}");
        }
    }

    #[test]
    fn the_change_names_the_plan_field() {
        let got = Given::variant()
            .plan(1, "")
            .serving(Serving::Serverless)
            .rule(DIMENSION_FIT);
        assert!(
            got[0].1.contains("dimension = \"provisioned_concurrency\""),
            "{got:?}"
        );
    }
}
