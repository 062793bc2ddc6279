//! `[target.lint]`: what `headroom lint` and policy reviews need to know about a target that no
//! AWS API says: the concurrency one instance (or copy) holds at its latency objective, from a
//! load test, and the safety factor applied to the target value derived from it. The section as
//! written, its checked form and its validation, kept together (as `forecast.rs`).

use serde::{Deserialize, Serialize};

/// AWS suggests starting target tracking at half of what one instance sustains ("Load testing
/// your auto scaling configuration", SageMaker developer guide: "apply a safety factor of 0.5").
pub const DEFAULT_SAFETY_FACTOR: f64 = 0.5;

/// The section as written.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct LintFile {
    /// Concurrent requests one instance (or copy) serves within its latency objective.
    pub concurrency_per_instance: Option<f64>,
    /// Share of that capacity the target value aims at (default 0.5).
    pub safety_factor: Option<f64>,
}

/// The checked section (every target has one: absent means "no concurrency known").
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LintPolicy {
    pub concurrency_per_instance: Option<f64>,
    pub safety_factor: f64,
}

impl Default for LintPolicy {
    fn default() -> Self {
        Self {
            concurrency_per_instance: None,
            safety_factor: DEFAULT_SAFETY_FACTOR,
        }
    }
}

/// Checks the section of target `at`; every problem goes to `fail(field, problem)`.
pub fn check_lint(
    at: &str,
    raw: Option<&LintFile>,
    fail: &mut dyn FnMut(String, String),
) -> LintPolicy {
    let Some(raw) = raw else {
        return LintPolicy::default();
    };
    let field = |name: &str| format!("{at}.lint.{name}");
    let concurrency_per_instance = match raw.concurrency_per_instance {
        Some(c) if c.is_finite() && c > 0.0 && c <= 100_000.0 => Some(c),
        Some(c) => {
            fail(
                field("concurrency_per_instance"),
                format!("{c} must be a positive number of concurrent requests (from a load test)"),
            );
            None
        }
        None => None,
    };
    let safety_factor = match raw.safety_factor {
        Some(f) if f.is_finite() && f > 0.0 && f <= 1.0 => f,
        Some(f) => {
            fail(
                field("safety_factor"),
                format!("{f} must be above 0 and at most 1 (AWS suggests 0.5 to start)"),
            );
            DEFAULT_SAFETY_FACTOR
        }
        None => DEFAULT_SAFETY_FACTOR,
    };
    LintPolicy {
        concurrency_per_instance,
        safety_factor,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(raw: Option<LintFile>) -> (LintPolicy, Vec<String>) {
        let mut problems = Vec::new();
        let p = check_lint("target[0]", raw.as_ref(), &mut |f, p| {
            problems.push(format!("{f}: {p}"))
        });
        (p, problems)
    }

    #[test]
    fn absent_means_no_concurrency_and_the_default_factor() {
        assert_eq!(check(None), (LintPolicy::default(), vec![]));
    }

    #[test]
    fn out_of_range_values_name_their_field() {
        let (_, problems) = check(Some(LintFile {
            concurrency_per_instance: Some(0.0),
            safety_factor: Some(1.5),
        }));
        assert_eq!(problems.len(), 2, "{problems:?}");
        assert!(problems[0].starts_with("target[0].lint.concurrency_per_instance"));
        assert!(problems[1].starts_with("target[0].lint.safety_factor"));
    }

    #[test]
    fn valid_values_are_kept() {
        let (p, problems) = check(Some(LintFile {
            concurrency_per_instance: Some(2.0),
            safety_factor: Some(0.6),
        }));
        assert!(problems.is_empty());
        assert_eq!(p.concurrency_per_instance, Some(2.0));
        assert_eq!(p.safety_factor, 0.6);
    }
}
