//! The plan file as written by operators (TOML). These structs mirror the file one to one and
//! refuse unknown fields, so a typo is an error naming the field instead of a silent default.
//! `validate.rs` turns them into the checked model in `model.rs`.

use serde::{Deserialize, Serialize};

use crate::duration::Span;

#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct PlanFile {
    /// Format version of the file; only 1 exists.
    pub version: u32,
    #[serde(default, skip_serializing_if = "DefaultsFile::is_empty")]
    pub defaults: DefaultsFile,
    #[serde(default, rename = "target")]
    pub targets: Vec<TargetFile>,
}

#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct DefaultsFile {
    pub lead_time: Option<Span>,
    pub ramp_down: Option<RampFile>,
    pub timezone: Option<String>,
}

impl DefaultsFile {
    /// Nothing set: a written plan leaves the section out.
    pub fn is_empty(&self) -> bool {
        self.lead_time.is_none() && self.ramp_down.is_none() && self.timezone.is_none()
    }
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct TargetFile {
    /// AAS resource id: `endpoint/E/variant/V` or `inference-component/IC`.
    pub resource_id: String,
    /// What the target counts: `instance_count` (a variant's default), `provisioned_concurrency`
    /// (a serverless variant) or `copy_count` (an inference component's only one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dimension: Option<String>,
    pub min_capacity: u32,
    pub max_capacity: u32,
    pub lead_time: Option<Span>,
    pub ramp_down: Option<RampFile>,
    #[serde(default, rename = "peak", skip_serializing_if = "Vec::is_empty")]
    pub peaks: Vec<PeakFile>,
    pub lead_time_measured: Option<MeasuredLeadTimeFile>,
    pub guard: Option<GuardFile>,
    pub wake: Option<WakeFile>,
    pub review: Option<ReviewFile>,
    pub forecast: Option<crate::plan::forecast::ForecastFile>,
    /// What `headroom lint` needs to derive a target value (`[target.lint]`).
    pub lint: Option<crate::plan::lint::LintFile>,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RampFile {
    pub step: Span,
    pub keep_percent: u8,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct PeakFile {
    pub name: String,
    /// Recurring: five-field cron in `timezone`.
    pub cron: Option<String>,
    pub timezone: Option<String>,
    /// One-time: an RFC 3339 instant.
    pub at: Option<String>,
    pub duration: Span,
    pub floor: u32,
    #[serde(default)]
    pub suspend_scale_in: bool,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct MeasuredLeadTimeFile {
    pub percentile: Option<u8>,
    pub margin: Option<f64>,
    pub min: Option<Span>,
    pub max: Option<Span>,
    pub min_samples: Option<u32>,
    pub count_previous_models: Option<bool>,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct GuardFile {
    /// Alarms by name or ARN.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub alarms: Vec<String>,
    /// AWS/SageMaker metric names: an alarm on one of them whose dimensions name the target.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub metrics: Vec<String>,
    pub hold: Option<Span>,
    /// The hold after an alarm that clears while no active forecast covers the moment (no
    /// `[target.forecast]`, a forecast-only one, one still short of history, or one gone stale);
    /// default `hold`. When `plan suggest` tunes `hold` shorter it writes the operator's hold
    /// here: the shorter one counts on the forecast's floor to carry the lull after a burst.
    pub hold_without_forecast: Option<Span>,
    pub max_duration: Option<Span>,
    pub suspend_scale_in: Option<bool>,
    pub step_down: Option<RampFile>,
    /// `high_water` (default) or `current`.
    pub floor: Option<String>,
    /// `keep_current` (default), `hold` or `release`: what INSUFFICIENT_DATA out of ALARM does.
    pub on_insufficient_data: Option<String>,
    /// How long `keep_current` and `hold` last (default 30m, at most `max_duration`).
    pub keep_for: Option<Span>,
    /// Raise the floor as the alarm fires, to the instances that bring a per-instance metric back
    /// to its threshold (default false: see `surge.rs` for what it costs).
    pub scale_out: Option<bool>,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct WakeFile {
    /// Alarms by name or ARN.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub alarms: Vec<String>,
    /// AWS/SageMaker metric names: an alarm on one of them whose dimensions name the target.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub metrics: Vec<String>,
    pub capacity: Option<u32>,
    pub quiet_period: Option<Span>,
    pub max_duration: Option<Span>,
    /// As for the guard.
    pub on_insufficient_data: Option<String>,
    pub keep_for: Option<Span>,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ReviewFile {
    pub enabled: Option<bool>,
    pub tag_endpoint: Option<bool>,
}

/// A problem found while reading the file's types: `(field path, what is wrong)`.
pub type TypeIssue = (String, String);

/// How many type errors one read reports at most (each costs one more pass over the plan).
const MAX_TYPE_ISSUES: usize = 50;

/// Reads the file, collecting every type error instead of stopping at the first: each wrong,
/// missing or unknown field is reported with its path (`target[0].peak[0].duration`), then taken
/// out of the way (an unknown field removed, a wrong or missing one given a stand-in value), so
/// that the rest of the plan is still read and validated. Returns the plan as read with the
/// stand-ins and the fields that needed one; the plan is usable only when that list is empty.
/// A TOML syntax error still ends the read: there is no table to go on with.
pub fn read_collecting(text: &str) -> Result<(PlanFile, Vec<TypeIssue>), Vec<TypeIssue>> {
    let mut value = toml::Value::Table(toml::from_str::<toml::Table>(text).map_err(|e| {
        let at = e
            .span()
            .map(|s| {
                let line = text[..s.start.min(text.len())].matches('\n').count() + 1;
                format!("line {line}")
            })
            .unwrap_or_else(|| "file".into());
        vec![(at, e.message().to_owned())]
    })?);
    let mut issues: Vec<TypeIssue> = Vec::new();
    let mut lines: Vec<usize> = Vec::new();
    loop {
        let err = match first_type_error(&value) {
            Ok(plan) => return Ok((plan, in_file_order(issues, &lines))),
            Err(err) => err,
        };
        let (field, problem) = describe(&err);
        let repaired = issues.len() < MAX_TYPE_ISSUES
            && !issues.iter().any(|(f, _)| *f == field)
            && repair(&mut value, &err, &field);
        let line = line_of_field(text, &field);
        let problem = match line {
            Some(line) => format!("{problem} (line {line})"),
            None => problem,
        };
        lines.push(line.unwrap_or(0));
        issues.push((field, problem));
        if !repaired {
            return Err(in_file_order(issues, &lines));
        }
    }
}

/// The issues sorted by their line (serde meets the fields in its own order).
fn in_file_order(issues: Vec<TypeIssue>, lines: &[usize]) -> Vec<TypeIssue> {
    let mut numbered: Vec<(usize, TypeIssue)> = lines.iter().copied().zip(issues).collect();
    numbered.sort_by_key(|(line, _)| *line);
    numbered.into_iter().map(|(_, issue)| issue).collect()
}

type PathError = serde_path_to_error::Error<toml::de::Error>;

fn first_type_error(value: &toml::Value) -> Result<PlanFile, PathError> {
    serde_path_to_error::deserialize(value.clone())
}

/// The error's field path in the validator's notation (`target[0].peak[0].floor`) and message.
fn describe(err: &PathError) -> (String, String) {
    let message = err.inner().message().to_owned();
    let mut path = path_of(err.path());
    // A missing field is reported at the table that lacks it: name the field itself.
    if let Some(name) = quoted_after(&message, "missing field ") {
        path = join(&path, &name);
    }
    if let Some(name) = quoted_after(&message, "unknown field ") {
        if !path.ends_with(&name) {
            path = join(&path, &name);
        }
    }
    (if path.is_empty() { "file".into() } else { path }, message)
}

fn join(path: &str, name: &str) -> String {
    if path.is_empty() {
        name.to_owned()
    } else {
        format!("{path}.{name}")
    }
}

fn path_of(path: &serde_path_to_error::Path) -> String {
    use serde_path_to_error::Segment;
    let mut out = String::new();
    for segment in path.iter() {
        match segment {
            Segment::Seq { index } => out.push_str(&format!("[{index}]")),
            Segment::Map { key } | Segment::Enum { variant: key } => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(key);
            }
            Segment::Unknown => {}
        }
    }
    out
}

/// `name` from "missing field `name`".
fn quoted_after(message: &str, prefix: &str) -> Option<String> {
    let rest = message.strip_prefix(prefix)?.strip_prefix('`')?;
    Some(rest[..rest.find('`')?].to_owned())
}

/// The table at a dotted path with `[i]` indices, and the last key.
fn parent_and_key<'a>(
    root: &'a mut toml::Value,
    field: &str,
) -> Option<(&'a mut toml::Table, String)> {
    let mut parts: Vec<(String, Vec<usize>)> = Vec::new();
    for part in field.split('.') {
        let (name, rest) = part.split_once('[').map_or((part, ""), |(n, r)| (n, r));
        let indices = rest
            .split('[')
            .filter(|s| !s.is_empty())
            .map(|s| s.trim_end_matches(']').parse().ok())
            .collect::<Option<Vec<usize>>>()?;
        parts.push((name.to_owned(), indices));
    }
    let (last, last_indices) = parts.pop()?;
    if !last_indices.is_empty() {
        return None;
    }
    let mut at = root;
    for (name, indices) in parts {
        at = at.as_table_mut()?.get_mut(&name)?;
        for i in indices {
            at = at.as_array_mut()?.get_mut(i)?;
        }
    }
    Some((at.as_table_mut()?, last))
}

/// Stand-ins for a field whose value is wrong or missing, tried in turn until the field reads.
fn stand_ins() -> [toml::Value; 6] {
    use toml::Value;
    [
        Value::Integer(1),
        Value::String("1m".into()),
        Value::Boolean(false),
        Value::Float(1.0),
        Value::Array(Vec::new()),
        Value::Table(toml::Table::new()),
    ]
}

/// Takes the field of `err` out of the way; false when it cannot (then reading stops there).
/// An unknown field is removed; a wrong or missing one gets the first stand-in that reads without
/// an error at or below it (so one wrong value is reported once), or else is removed.
fn repair(value: &mut toml::Value, err: &PathError, field: &str) -> bool {
    let unknown = quoted_after(err.inner().message(), "unknown field ").is_some();
    if unknown {
        return parent_and_key(value, field)
            .is_some_and(|(table, key)| table.remove(&key).is_some());
    }
    // Stand-ins first: a removed required field would only be missed after every other field,
    // so "it reads past" would not prove that removing it was right.
    for stand_in in stand_ins() {
        let Some((table, key)) = parent_and_key(value, field) else {
            return false;
        };
        table.insert(key, stand_in);
        if reads_past(value, field) {
            return true;
        }
    }
    parent_and_key(value, field).is_some_and(|(table, key)| table.remove(&key).is_some())
        && reads_past(value, field)
}

/// Whether the plan reads, or fails only somewhere other than at or below `field`.
fn reads_past(value: &toml::Value, field: &str) -> bool {
    match first_type_error(value) {
        Ok(_) => true,
        Err(e) => {
            let at = describe(&e).0;
            at != field
                && !at.starts_with(&format!("{field}."))
                && !at.starts_with(&format!("{field}["))
        }
    }
}

/// The line of `field` in the text (the key's line, or the nearest enclosing table's when the
/// field is missing), so a type error points where to look.
fn line_of_field(text: &str, field: &str) -> Option<usize> {
    use toml::de::{DeTable, DeValue};
    let root = DeTable::parse(text).ok()?;
    let mut offset = root.span().start;
    let mut at: &DeValue<'_> = &DeValue::Table(root.into_inner());
    for part in field.split('.') {
        let (name, rest) = part.split_once('[').map_or((part, ""), |(n, r)| (n, r));
        let DeValue::Table(table) = at else { break };
        let Some((key, value)) = table.iter().find(|(k, _)| k.get_ref().as_ref() == name) else {
            break;
        };
        offset = key.span().start;
        at = value.get_ref();
        for index in rest.split('[').filter(|s| !s.is_empty()) {
            let Ok(i) = index.trim_end_matches(']').parse::<usize>() else {
                break;
            };
            let DeValue::Array(items) = at else { break };
            let Some(item) = items.get(i) else { break };
            offset = item.span().start;
            at = item.get_ref();
        }
    }
    Some(text[..offset.min(text.len())].matches('\n').count() + 1)
}

#[cfg(test)]
mod tests {
    use crate::plan::parse_plan;

    fn problems(text: &str) -> String {
        match parse_plan("bad.toml", text) {
            Ok(_) => panic!("the plan should be refused"),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn a_written_plan_leaves_out_what_is_empty_and_reads_back_the_same() {
        // GIVEN a plan with no defaults, no peaks, a guard by alarm only and a wake by metric only
        let text = "version = 1\n[[target]]\nresource_id = \"endpoint/e/variant/v\"\nmin_capacity = 0\nmax_capacity = 4\n[target.guard]\nalarms = [\"burst\"]\n[target.wake]\nmetrics = [\"ApproximateBacklogSize\"]\n";
        let file: super::PlanFile = toml::from_str(text).expect("plan");
        // WHEN written (as `plan suggest` writes its plans)
        let written = toml::to_string(&file).expect("written");
        // THEN no empty section or list is printed, and it reads back to the same plan
        for empty in ["[defaults]", "peak = []", "metrics = []", "alarms = []"] {
            assert!(!written.contains(empty), "{empty} in:\n{written}");
        }
        let back: super::PlanFile = toml::from_str(&written).expect("reads back");
        assert_eq!(toml::to_string(&back).expect("written"), written);
        assert!(parse_plan("written.toml", &written).is_ok());
        // AND what is set is kept
        let mut with_zone = file.clone();
        with_zone.defaults.timezone = Some("UTC".into());
        assert!(toml::to_string(&with_zone)
            .expect("written")
            .contains("[defaults]"));
    }

    #[test]
    fn a_type_error_does_not_hide_the_other_problems() {
        // GIVEN a plan with a bad cron, a misspelt time zone, a floor above max and a duration
        // that is no duration (a type error: it stopped the read before)
        let text = "version = 1\n\
            [[target]]\n\
            resource_id = \"endpoint/a/variant/b\"\n\
            min_capacity = 1\n\
            max_capacity = 4\n\
            [[target.peak]]\n\
            name = \"morning\"\n\
            cron = \"61 8 * * *\"\n\
            timezone = \"Europe/Berln\"\n\
            duration = \"3x\"\n\
            floor = 9\n";
        // WHEN it is validated THEN all four are reported, each with its field
        let text = problems(text);
        for needle in [
            "target[0].peak[0].duration",
            "target[0].peak[0].cron",
            "target[0].peak[0].timezone",
            "target[0].peak[0].floor",
        ] {
            assert!(text.contains(needle), "missing {needle:?} in:\n{text}");
        }
        assert!(text.contains("3x"), "{text}");
        assert!(
            text.contains("line 10"),
            "the type error names its line: {text}"
        );
        assert_eq!(text.lines().count(), 5, "four problems, each once:\n{text}");
    }

    #[test]
    fn several_type_errors_missing_and_unknown_fields_are_all_reported() {
        let text = problems(
            "version = 1\n\
             [[target]]\n\
             resource_id = \"endpoint/a/variant/b\"\n\
             min_capacity = \"two\"\n\
             lead_time = 15\n\
             max_capcity = 3\n\
             ramp_down = 5\n",
        );
        for needle in [
            "target[0].min_capacity",
            "target[0].lead_time",
            "target[0].max_capcity: unknown field",
            "target[0].max_capacity: missing field",
            "target[0].ramp_down",
        ] {
            assert!(text.contains(needle), "missing {needle:?} in:\n{text}");
        }
        assert_eq!(text.lines().count(), 6, "five problems, each once:\n{text}");
    }

    #[test]
    fn a_syntax_error_still_names_its_line() {
        let text = problems("version = 1\n[[target]\n");
        assert!(text.contains("line 2"), "{text}");
    }
}
