//! infra/template.yaml against the code: the test fails when they disagree.
//!
//! - Every function crate (functions/*) has a function resource building its binary, and every
//!   function resource builds a crate's binary.
//! - Every environment variable a function's code reads is set on it, and none other.
//! - The AWS operations a function can call are, in one place, `ADAPTERS` in its
//!   `operations.rs` (each adapter's `OPERATIONS`). Checked here: that list names exactly the
//!   adapters the crate uses and makes no SDK call of its own; each adapter's `OPERATIONS` is
//!   exactly the SDK calls in its source; the function's IAM role allows exactly those
//!   operations, plus what Application Auto Scaling checks on a RegisterScalableTarget caller
//!   ([`AAS_CALLER`], only for functions that register) and what the Lambda platform does with
//!   the role ([`PLATFORM`]), each in its own policy.
//! - IAM hygiene anywhere in the template: no wildcard action; `Resource: "*"` only for actions
//!   that support nothing narrower, with a comment saying so; DynamoDB actions only on the state
//!   table; SageMaker actions only on ARNs narrowed by a name-prefix parameter; the service-linked
//!   role only for Application Auto Scaling's SageMaker role. In function roles: table writes only
//!   on target items (`dynamodb:LeadingKeys` `TARGET#*`), no `TransactWriteItems` (only the CLI's
//!   `plan apply` calls it, through `save_plan`, which no function calls), CloudWatch alarm actions
//!   only on scaling policies' `TargetTracking*` alarms.
//! - Explicit peaks: the tick function retries them twice and keeps them an hour, every peak
//!   schedule retries delivery and has a dead-letter queue its role may send to.
//! - Every function resource: provided.al2023, arm64, rust-cargolambda, JSON logs into a log
//!   group with retention, an on-failure destination, an alarm on its Errors.
//! - The example peak schedule's input is a peak event the tick function's parser accepts.
//! - Event routing: each event kind headroom parses reaches the function that handles it, and every
//!   EventBridge fixture in events/ matches its function's rule.
//!
//! The negative tests at the end run the same checks on doctored copies and expect each to fail.

#[path = "infra_consistency/source.rs"]
mod source;
#[path = "infra_consistency/template.rs"]
mod template;

use headroom_core::trigger::Function;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use source::{AdapterScan, Masked};
use template::{intrinsic, pattern_matches, Resolver, Template};

/// What Application Auto Scaling checks on whoever calls RegisterScalableTarget for a SageMaker
/// target (Application Auto Scaling user guide, identity-based policy examples, "SageMaker
/// endpoints"; which of them RegisterScalableTarget alone checks is not documented). headroom's code calls none of them for itself; a
/// function that registers targets must be allowed them, in the policy named
/// [`AAS_CALLER_POLICY`].
const AAS_CALLER: &[&str] = &[
    "sagemaker:DescribeEndpoint",
    "sagemaker:DescribeEndpointConfig",
    "sagemaker:UpdateEndpointWeightsAndCapacities",
    "cloudwatch:PutMetricAlarm",
    "cloudwatch:DescribeAlarms",
    "cloudwatch:DeleteAlarms",
    "iam:CreateServiceLinkedRole",
];
const AAS_CALLER_POLICY: &str = "register-scalable-target-caller";

/// The CloudWatch alarm actions in [`AAS_CALLER`] serve scaling policies' alarms, which headroom
/// never creates: they may only name alarms like these (what AAS's own service-linked role is
/// scoped to), never headroom's guard/wake alarms or the stack's ops-* alarms.
const AAS_ALARM_SCOPE: &str = ":alarm:TargetTracking*";

/// Operations an adapter a function builds can call, but only from a method no function ever
/// calls: `(operation, adapter, method, who calls it)`. Function roles must not allow them.
const KEPT_FROM_FUNCTIONS: &[(&str, &str, &str, &str)] = &[(
    "dynamodb:TransactWriteItems",
    "DynamoStateStore",
    "save_plan",
    "the CLI's `headroom plan apply`",
)];

/// Write actions on the state table: in function roles only on target items, by the partition
/// key prefix below (docs/state-table.md), so that no function can rewrite the plan.
const DYNAMO_WRITES: &[&str] = &[
    "dynamodb:PutItem",
    "dynamodb:UpdateItem",
    "dynamodb:DeleteItem",
    "dynamodb:BatchWriteItem",
];
const TARGET_ITEMS: &str = "TARGET#*";
const REGISTER: &str = "application-autoscaling:RegisterScalableTarget";

/// What the Lambda platform does with a function's role: write its logs to its log group and send
/// a failed asynchronous event to the on-failure destination. In the policy [`PLATFORM_POLICY`].
const PLATFORM: &[&str] = &[
    "logs:CreateLogStream",
    "logs:PutLogEvents",
    "sqs:SendMessage",
];
const PLATFORM_POLICY: &str = "platform";

/// Actions whose service supports no resource-level permission: the only ones allowed on `*`.
const NO_RESOURCE_LEVEL: &[&str] = &[
    "application-autoscaling:DescribeScalableTargets",
    "application-autoscaling:DescribeScalingActivities",
    "application-autoscaling:DescribeScalingPolicies",
    "application-autoscaling:DescribeScheduledActions",
    // CloudWatch's GetMetricData takes no resource ARN at all.
    "cloudwatch:GetMetricData",
];

/// The template parameters that narrow SageMaker ARNs by name.
const SAGEMAKER_PREFIX_PARAMS: &[&str] = &[
    "${EndpointNamePrefix}",
    "${EndpointConfigNamePrefix}",
    "${ModelNamePrefix}",
];

/// The service-linked role AAS creates for SageMaker targets.
const AAS_SAGEMAKER_SERVICE: &str = "sagemaker.application-autoscaling.amazonaws.com";

/// Each function crate's declared adapters. A new function crate needs a line here (and a
/// dev-dependency in tests/Cargo.toml); the test says so when one is missing.
fn declared() -> BTreeMap<&'static str, &'static [(&'static str, &'static [&'static str])]> {
    BTreeMap::from([
        (Function::Tick.name(), headroom_tick::operations::ADAPTERS),
        (Function::Alarm.name(), headroom_alarm::operations::ADAPTERS),
        (
            Function::Deploy.name(),
            headroom_deploy::operations::ADAPTERS,
        ),
    ])
}

/// Which function handles each EventBridge detail-type headroom parses: the code's own routing
/// (`Trigger::function`), read off the fixtures, which must cover every such detail-type.
fn routes(fixtures: &[(PathBuf, serde_json::Value)]) -> Vec<(String, &'static str)> {
    let mut routes: BTreeSet<(String, &'static str)> = BTreeSet::new();
    for (_, event) in fixtures {
        let (Some(detail_type), Ok(trigger)) = (
            event.get("detail-type").and_then(|d| d.as_str()),
            headroom_events::parse_trigger(event),
        ) else {
            continue;
        };
        routes.insert((detail_type.to_owned(), trigger.function().name()));
    }
    routes.into_iter().collect()
}

/// Every EventBridge detail-type headroom parses (each needs a fixture in events/).
const DETAIL_TYPES: [&str; 6] = [
    headroom_events::schedule::SCHEDULED_DETAIL_TYPE,
    headroom_events::alarm::DETAIL_TYPE,
    headroom_events::sagemaker::ENDPOINT_STATE,
    headroom_events::sagemaker::DEPLOYMENT_STATE,
    headroom_events::sagemaker::CONFIG_STATE,
    headroom_events::model_package::MODEL_PACKAGE_STATE,
];

/// This package's directory as cargo gives it when the test runs. The compile-time value would
/// be another clone's when cargo reuses a test binary from a target dir shared between clones.
fn root() -> PathBuf {
    let package = std::env::var("CARGO_MANIFEST_DIR")
        .unwrap_or_else(|_| env!("CARGO_MANIFEST_DIR").to_owned());
    Path::new(&package)
        .parent()
        .expect("tests/ sits in the workspace")
        .to_owned()
}

// ------------------------------------------------------------------------------------------------
// The code's side
// ------------------------------------------------------------------------------------------------

/// One function crate as its source shows it.
#[derive(Debug, Clone)]
struct CodeFunction {
    crate_name: String,
    binary: String,
    /// Declared in operations.rs: adapter -> operations.
    declared: BTreeMap<String, BTreeSet<String>>,
    /// Source files, operations.rs left out.
    files: Vec<Masked>,
    /// Source files of the workspace crates it depends on (shared/*), adapters included.
    dep_files: Vec<Masked>,
}

impl CodeFunction {
    fn operations(&self) -> BTreeSet<String> {
        self.declared.values().flatten().cloned().collect()
    }
}

#[derive(Debug, Clone)]
struct Code {
    functions: Vec<CodeFunction>,
    adapter_files: Vec<Masked>,
    scan: AdapterScan,
    problems: Vec<String>,
}

/// `[package] name` and the `[[bin]] name` of a function crate's Cargo.toml.
fn crate_names(manifest: &str) -> (Option<String>, Option<String>) {
    let mut section = "";
    let (mut package, mut bin) = (None, None);
    for line in manifest.lines().map(str::trim) {
        if line.starts_with('[') {
            section = line;
            continue;
        }
        if let Some(value) = line
            .strip_prefix("name")
            .map(str::trim)
            .and_then(|r| r.strip_prefix('='))
        {
            let value = value.trim().trim_matches('"').to_owned();
            match section {
                "[package]" => package = Some(value),
                "[[bin]]" if bin.is_none() => bin = Some(value),
                _ => {}
            }
        }
    }
    (package, bin)
}

/// The directories of the workspace crates a function's Cargo.toml depends on (`headroom-*`
/// entries of `[dependencies]`, resolved through `[workspace.dependencies]`).
fn workspace_deps(root: &Path, manifest: &str) -> Vec<PathBuf> {
    let workspace = std::fs::read_to_string(root.join("Cargo.toml")).expect("workspace Cargo.toml");
    let paths: BTreeMap<String, String> = workspace
        .lines()
        .filter_map(|l| {
            let (name, rest) = l.split_once('=')?;
            let path = rest.split("path").nth(1)?.split('"').nth(1)?;
            Some((name.trim().to_owned(), path.to_owned()))
        })
        .collect();
    let mut section = "";
    let mut dirs = Vec::new();
    for line in manifest.lines().map(str::trim) {
        if line.starts_with('[') {
            section = line;
            continue;
        }
        let name = line.split(['.', '=', ' ']).next().unwrap_or_default();
        if section == "[dependencies]" && name.starts_with("headroom-") {
            if let Some(path) = paths.get(name) {
                dirs.push(root.join(path));
            }
        }
    }
    dirs
}

fn load_code() -> Code {
    let root = root();
    let sdk = source::sdk_operations(&root);
    let adapter_files = source::rust_files(&root.join("shared/adapters/src"));
    let scan = source::scan_adapters(&adapter_files, &sdk);
    let declared = declared();
    let mut problems = scan.problems.clone();
    let mut functions = Vec::new();
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(root.join("functions"))
        .expect("functions/")
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.join("Cargo.toml").is_file())
        .collect();
    dirs.sort();
    for dir in dirs {
        let manifest = std::fs::read_to_string(dir.join("Cargo.toml")).expect("Cargo.toml");
        let (Some(crate_name), bin) = crate_names(&manifest) else {
            problems.push(format!("{}: no [package] name", dir.display()));
            continue;
        };
        let binary = bin.unwrap_or_else(|| crate_name.clone());
        let Some(adapters) = declared.get(crate_name.as_str()) else {
            problems.push(format!(
                "function crate {crate_name} is not known to tests/tests/infra_consistency.rs: add it to declared() \
                 (and a dev-dependency in tests/Cargo.toml)"
            ));
            continue;
        };
        let dep_files = workspace_deps(&root, &manifest)
            .iter()
            .flat_map(|dir| source::rust_files(&dir.join("src")))
            .collect();
        let files = source::rust_files(&dir.join("src"))
            .into_iter()
            .filter(|m| m.path.file_name().is_none_or(|n| n != "operations.rs"))
            .collect();
        functions.push(CodeFunction {
            crate_name,
            binary,
            declared: adapters
                .iter()
                .map(|(name, ops)| {
                    (
                        (*name).to_owned(),
                        ops.iter().map(|o| (*o).to_owned()).collect(),
                    )
                })
                .collect(),
            files,
            dep_files,
        });
    }
    for name in declared.keys() {
        if !functions.iter().any(|f| f.crate_name == *name) {
            problems.push(format!(
                "declared() names {name}, but functions/ has no such crate"
            ));
        }
    }
    Code {
        functions,
        adapter_files,
        scan,
        problems,
    }
}

/// Each adapter a function declares lists exactly the SDK calls in its source.
fn check_adapters(code: &Code) -> Vec<String> {
    let mut problems = code.problems.clone();
    let mut seen = BTreeSet::new();
    for f in &code.functions {
        for (adapter, declared) in &f.declared {
            if !seen.insert(adapter.clone()) {
                continue;
            }
            let Some(called) = code.scan.types.get(adapter) else {
                problems.push(format!(
                    "{adapter} (declared by {}) makes no AWS SDK call in shared/adapters/src",
                    f.crate_name
                ));
                continue;
            };
            for op in called.difference(declared) {
                problems.push(format!(
                    "{adapter} calls {op}, but its OPERATIONS does not list it: add it there (and to the IAM policy of every \
                     function using {adapter})"
                ));
            }
            for op in declared.difference(called) {
                problems.push(format!("{adapter}::OPERATIONS lists {op}, but no method of {adapter} calls it: remove it"));
            }
        }
    }
    problems
}

/// Each function crate uses exactly the adapters its operations.rs declares, and calls no SDK
/// client itself.
fn check_function_sources(code: &Code) -> Vec<String> {
    let mut problems = Vec::new();
    let adapters: BTreeSet<&String> = code
        .scan
        .types
        .keys()
        .chain(code.scan.free_fns.keys())
        .collect();
    for f in &code.functions {
        let used: BTreeSet<String> = adapters
            .iter()
            .filter(|a| f.files.iter().any(|m| source::has_word(&m.code, a)))
            .map(|a| (*a).clone())
            .collect();
        let declared: BTreeSet<String> = f.declared.keys().cloned().collect();
        for a in used.difference(&declared) {
            problems.push(format!(
                "{} uses {a}, which calls AWS, but its operations.rs does not declare it: add adapter!({a}) to ADAPTERS",
                f.crate_name
            ));
        }
        for a in declared.difference(&used) {
            problems.push(format!(
                "{}'s operations.rs declares {a}, but the crate never uses it: remove it (its permissions would be unused)",
                f.crate_name
            ));
        }
        // Its own files and the non-adapter workspace crates it uses.
        let adapters_dir = root().join("shared/adapters");
        let checked = f.files.iter().chain(
            f.dep_files
                .iter()
                .filter(|m| !m.path.starts_with(&adapters_dir)),
        );
        for m in checked {
            for needle in [".send()", "aws_sdk_"] {
                if m.code.contains(needle) {
                    problems.push(format!(
                        "{} contains `{needle}`: functions call AWS only through adapters (shared/adapters), so that \
                         operations.rs stays the whole list",
                        m.path.display()
                    ));
                }
            }
        }
    }
    problems
}

/// `TransactWriteItems` -> `transact_write_items` (the SDK client's method name).
fn snake(operation: &str) -> String {
    let name = operation.split(':').nth(1).unwrap_or(operation);
    let mut out = String::new();
    for (i, c) in name.chars().enumerate() {
        if c.is_ascii_uppercase() && i > 0 {
            out.push('_');
        }
        out.push(c.to_ascii_lowercase());
    }
    out
}

/// The byte range of the body of `fn name` inside `range` of `code` (brace matched).
fn fn_body(
    code: &str,
    range: std::ops::Range<usize>,
    name: &str,
) -> Option<std::ops::Range<usize>> {
    let at = source::word_positions(&code[range.clone()], name)
        .map(|p| p + range.start)
        .find(|p| code[..*p].trim_end().ends_with("fn"))?;
    let open = at + code[at..].find('{')?;
    let mut depth = 0usize;
    for (i, b) in code.as_bytes()[open..range.end].iter().enumerate() {
        match b {
            b'{' => depth += 1,
            b'}' => {
                depth -= 1;
                if depth == 0 {
                    return Some(open..open + i + 1);
                }
            }
            _ => {}
        }
    }
    None
}

/// The operations kept from functions ([`KEPT_FROM_FUNCTIONS`]) are called only inside their
/// method, and no function (nor a shared crate it builds on, adapters aside) calls that method:
/// their role may then go without them.
fn check_kept_from_functions(code: &Code) -> Vec<String> {
    let mut problems = Vec::new();
    let adapters_dir = root().join("shared/adapters");
    for (op, adapter, method, caller) in KEPT_FROM_FUNCTIONS {
        let call = format!(".{}(", snake(op));
        let mut inside = 0;
        for m in &code.adapter_files {
            for item in source::top_level_items(m) {
                let source::Item::Impl { ty, body } = item else {
                    continue;
                };
                if ty != *adapter {
                    continue;
                }
                let allowed = fn_body(&m.code, body.clone(), method);
                for (at, _) in m.code[body.clone()].match_indices(&call) {
                    let at = at + body.start;
                    if allowed.as_ref().is_some_and(|r| r.contains(&at)) {
                        inside += 1;
                    } else {
                        problems.push(format!(
                            "{}: {adapter} calls {op} outside {method}; function roles do not allow it (only {caller} \
                             may): keep the call in {method} or allow it and drop it from KEPT_FROM_FUNCTIONS",
                            m.path.display()
                        ));
                    }
                }
            }
        }
        if inside == 0 {
            problems.push(format!(
                "KEPT_FROM_FUNCTIONS names {adapter}::{method} calling {op}, but no such call exists: update the list"
            ));
        }
        let method_call = format!(".{method}(");
        for f in &code.functions {
            let checked = f.files.iter().chain(
                f.dep_files
                    .iter()
                    .filter(|m| !m.path.starts_with(&adapters_dir)),
            );
            for m in checked {
                if m.code.contains(&method_call) {
                    problems.push(format!(
                        "{} calls {method}, which needs {op}: its role does not allow that (only {caller} does it)",
                        m.path.display()
                    ));
                }
            }
        }
    }
    problems
}

/// Variables the functions read only when run outside Lambda, so the template must not set them,
/// each with the reason.
const LOCAL_ONLY_ENV: &[(&str, &str)] = &[(
    "HEADROOM_FUNCTION_ARN",
    "stands in for the invocation's function ARN where a local runtime sends none (cargo lambda \
     watch); Lambda always sends the real one, which wins",
)];

/// Environment variables the function's code reads, without those the Lambda runtime sets and
/// the local-only ones.
fn code_env(f: &CodeFunction) -> BTreeSet<String> {
    // The function's own reads and those of the workspace crates it depends on (configuration
    // and logging live in shared crates).
    let mut vars = source::env_vars(&f.files);
    vars.extend(source::env_vars(&f.dep_files));
    vars.retain(|v| !v.starts_with("AWS_") && !v.starts_with('_'));
    vars.retain(|v| !LOCAL_ONLY_ENV.iter().any(|(name, _)| name == v));
    vars
}

// ------------------------------------------------------------------------------------------------
// The template's side
// ------------------------------------------------------------------------------------------------

fn load_template() -> Template {
    let text =
        std::fs::read_to_string(root().join("infra/template.yaml")).expect("infra/template.yaml");
    Template::parse(&text).unwrap_or_else(|e| panic!("{e}"))
}

/// Function crates <-> function resources, environment, and each role's actions.
fn check_template(code: &Code, t: &Template) -> Vec<String> {
    let mut problems = Vec::new();
    let resources = t.functions();
    for f in &code.functions {
        let matching: Vec<_> = resources
            .iter()
            .filter(|r| r.binary.as_deref() == Some(&f.binary))
            .collect();
        let r = match matching.as_slice() {
            [one] => *one,
            [] => {
                problems.push(format!(
                    "function crate {} (binary {}) has no AWS::Serverless::Function with Metadata.BuildProperties.Binary: {}",
                    f.crate_name, f.binary, f.binary
                ));
                continue;
            }
            _ => {
                problems.push(format!(
                    "binary {} is built by several function resources",
                    f.binary
                ));
                continue;
            }
        };
        let id = &r.logical_id;

        // Environment.
        let reads = code_env(f);
        for v in reads.difference(&r.env) {
            problems.push(format!(
                "{} reads {v}, but {id} does not set it",
                f.crate_name
            ));
        }
        for v in r.env.difference(&reads) {
            match LOCAL_ONLY_ENV.iter().find(|(name, _)| name == v) {
                Some((_, why)) => problems.push(format!(
                    "{id} sets {v}, which only a local run may set: it {why}"
                )),
                None => problems.push(format!(
                    "{id} sets {v}, but {} never reads it",
                    f.crate_name
                )),
            }
        }

        // The role: its own, inline policies only.
        let Some(role) = r.role.clone() else {
            problems.push(format!(
                "{id} has no `Role: !GetAtt <role>.Arn`: give each function its own role"
            ));
            continue;
        };
        if t.resource_type(&role) != Some("AWS::IAM::Role") {
            problems.push(format!(
                "{id}'s role {role} is not an AWS::IAM::Role of this template"
            ));
            continue;
        }
        let sharing: Vec<String> = resources
            .iter()
            .filter(|o| o.logical_id != *id && o.role.as_deref() == Some(role.as_str()))
            .map(|o| o.logical_id.clone())
            .collect();
        if !sharing.is_empty() {
            problems.push(format!(
                "{id} shares its role {role} with {sharing:?}: each function gets its own"
            ));
        }
        for arn in t.managed_policies(&role) {
            problems.push(format!("{role} attaches the managed policy {arn}: use inline statements that can be checked"));
        }
        let statements: Vec<_> = t
            .statements()
            .into_iter()
            .filter(|s| s.resource == role)
            .collect();
        let allowed: BTreeSet<String> = statements
            .iter()
            .filter(|s| s.effect == "Allow")
            .flat_map(|s| s.actions.iter().cloned())
            .collect();
        let mut code_ops = f.operations();
        for (op, _, method, caller) in KEPT_FROM_FUNCTIONS {
            if allowed.contains(*op) {
                problems.push(format!(
                    "{id}: {role} allows {op}, which only {caller} calls (through {method}): remove it"
                ));
            }
            code_ops.remove(*op);
        }
        let registers = code_ops.contains(REGISTER);
        let mut expected = code_ops.clone();
        expected.extend(PLATFORM.iter().map(|s| (*s).to_owned()));
        if registers {
            expected.extend(AAS_CALLER.iter().map(|s| (*s).to_owned()));
        }
        for op in expected.difference(&allowed) {
            let why = if code_ops.contains(op) {
                "its code calls it"
            } else if PLATFORM.contains(&op.as_str()) {
                "Lambda needs it for logs and the failure destination"
            } else {
                "Application Auto Scaling requires it of a RegisterScalableTarget caller"
            };
            problems.push(format!("{id}: {role} does not allow {op} ({why})"));
        }
        for op in allowed
            .difference(&expected)
            .filter(|op| !KEPT_FROM_FUNCTIONS.iter().any(|k| k.0 == op.as_str()))
        {
            problems.push(format!(
                "{id}: {role} allows {op}, which {} never calls",
                f.crate_name
            ));
        }
        // Listed apart: the extras sit in their own policies.
        for s in statements.iter().filter(|s| s.effect == "Allow") {
            for a in &s.actions {
                let in_code = code_ops.contains(a);
                if !in_code
                    && registers
                    && AAS_CALLER.contains(&a.as_str())
                    && s.policy != AAS_CALLER_POLICY
                {
                    problems.push(format!(
                        "{role}: {a} belongs in the policy {AAS_CALLER_POLICY}, not {}",
                        s.policy
                    ));
                }
                if !in_code && PLATFORM.contains(&a.as_str()) && s.policy != PLATFORM_POLICY {
                    problems.push(format!(
                        "{role}: {a} belongs in the policy {PLATFORM_POLICY}, not {}",
                        s.policy
                    ));
                }
            }
        }
    }
    for r in &resources {
        if !code
            .functions
            .iter()
            .any(|f| r.binary.as_deref() == Some(f.binary.as_str()))
        {
            problems.push(format!(
                "{} builds {:?}, which no crate under functions/ produces",
                r.logical_id,
                r.binary
                    .as_deref()
                    .unwrap_or("(no Metadata.BuildProperties.Binary)")
            ));
        }
    }
    problems
}

/// What the issue asks of every function resource: runtime, architecture, build method, JSON
/// logs into a log group with retention, an on-failure destination, an alarm on its errors.
fn check_function_settings(t: &Template) -> Vec<String> {
    let mut problems = Vec::new();
    let globals = t.doc.get("Globals").and_then(|g| g.get("Function"));
    for f in t.functions() {
        let id = &f.logical_id;
        let r = t.resource(id).expect("function resource");
        let props = r.get("Properties");
        // A property of the function, or of Globals.Function when the function does not set it.
        let prop = |name: &str| {
            props
                .and_then(|p| p.get(name))
                .or_else(|| globals.and_then(|g| g.get(name)))
        };
        if prop("Runtime").and_then(|v| v.as_str()) != Some("provided.al2023") {
            problems.push(format!("{id}: Runtime must be provided.al2023"));
        }
        if template::strings(prop("Architectures")) != ["arm64"] {
            problems.push(format!("{id}: Architectures must be [arm64]"));
        }
        if r.get("Metadata")
            .and_then(|m| m.get("BuildMethod"))
            .and_then(|v| v.as_str())
            != Some("rust-cargolambda")
        {
            problems.push(format!(
                "{id}: Metadata.BuildMethod must be rust-cargolambda"
            ));
        }
        let logging = prop("LoggingConfig");
        if logging
            .and_then(|l| l.get("LogFormat"))
            .and_then(|v| v.as_str())
            != Some("JSON")
        {
            problems.push(format!("{id}: LoggingConfig.LogFormat must be JSON"));
        }
        let group = logging
            .and_then(|l| l.get("LogGroup"))
            .and_then(|g| intrinsic(g, "Ref"))
            .and_then(|g| g.as_str());
        let retained = group.is_some_and(|g| {
            t.resource_type(g) == Some("AWS::Logs::LogGroup")
                && t.resource(g)
                    .and_then(|r| r.get("Properties"))
                    .and_then(|p| p.get("RetentionInDays"))
                    .is_some()
        });
        if !retained {
            problems.push(format!("{id}: LoggingConfig.LogGroup must !Ref an AWS::Logs::LogGroup with RetentionInDays"));
        }
        let on_failure = prop("EventInvokeConfig")
            .and_then(|c| c.get("DestinationConfig"))
            .and_then(|d| d.get("OnFailure"))
            .and_then(|o| o.get("Destination"));
        let dead_letter = prop("DeadLetterQueue");
        if on_failure.is_none() && dead_letter.is_none() {
            problems.push(format!(
                "{id}: no on-failure destination or dead-letter queue for asynchronous invocations"
            ));
        }
        let alarmed = t.resources().into_iter().any(|(_, a)| {
            let p = a.get("Properties");
            a.get("Type").and_then(|v| v.as_str()) == Some("AWS::CloudWatch::Alarm")
                && p.and_then(|p| p.get("Namespace")).and_then(|v| v.as_str()) == Some("AWS/Lambda")
                && p.and_then(|p| p.get("MetricName")).and_then(|v| v.as_str()) == Some("Errors")
                && p.and_then(|p| p.get("Dimensions"))
                    .and_then(|d| d.as_sequence())
                    .is_some_and(|dims| {
                        dims.iter().any(|d| {
                            d.get("Name").and_then(|v| v.as_str()) == Some("FunctionName")
                                && d.get("Value")
                                    .and_then(|v| intrinsic(v, "Ref"))
                                    .and_then(|v| v.as_str())
                                    == Some(id.as_str())
                        })
                    })
        });
        if !alarmed {
            problems.push(format!(
                "{id}: no AWS::CloudWatch::Alarm on its AWS/Lambda Errors"
            ));
        }
        // A permanent failure fails no invocation (Errors never sees it): its log lines are
        // counted by a metric filter on the function's log group, and that metric is alarmed.
        let counted = group.and_then(|g| {
            t.resources().into_iter().find_map(|(_, m)| {
                let p = m.get("Properties")?;
                let on_group = m.get("Type").and_then(|v| v.as_str())
                    == Some("AWS::Logs::MetricFilter")
                    && p.get("LogGroupName")
                        .and_then(|v| intrinsic(v, "Ref"))
                        .and_then(|v| v.as_str())
                        == Some(g)
                    && p.get("FilterPattern").and_then(|v| v.as_str())
                        == Some(PERMANENT_FAILURE_PATTERN);
                if !on_group {
                    return None;
                }
                let metric = p.get("MetricTransformations")?.as_sequence()?.first()?;
                Some((
                    sub_text(metric.get("MetricNamespace")?)?,
                    metric.get("MetricName")?.as_str()?.to_owned(),
                ))
            })
        });
        let Some((namespace, metric)) = counted else {
            problems.push(format!(
                "{id}: no AWS::Logs::MetricFilter on its log group with FilterPattern {PERMANENT_FAILURE_PATTERN:?}"
            ));
            continue;
        };
        let watched = t.resources().into_iter().any(|(_, a)| {
            let p = a.get("Properties");
            a.get("Type").and_then(|v| v.as_str()) == Some("AWS::CloudWatch::Alarm")
                && p.and_then(|p| p.get("Namespace")).and_then(sub_text) == Some(namespace.clone())
                && p.and_then(|p| p.get("MetricName")).and_then(|v| v.as_str())
                    == Some(metric.as_str())
                && p.and_then(|p| p.get("AlarmActions")).is_some()
        });
        if !watched {
            problems.push(format!(
                "{id}: no AWS::CloudWatch::Alarm (with AlarmActions) on {namespace}/{metric}, the count of its permanent failures"
            ));
        }
    }
    problems
}

/// The log lines of a failure that retrying cannot mend: every `tracing::error!` in the code
/// carries `retryable` (shared/lambda's `event rejected`, the tick's `reconcile failed`, the
/// alarm use case's `alarm rejected for this target`); shared/lambda's tests check the fields.
const PERMANENT_FAILURE_PATTERN: &str = r#"{ ($.level = "ERROR") && ($.retryable IS FALSE) }"#;

fn is_star(v: &serde_yaml::Value) -> bool {
    v.as_str() == Some("*")
}

/// The text of a `!Sub` string (or a plain string).
fn sub_text(v: &serde_yaml::Value) -> Option<String> {
    match intrinsic(v, "Sub") {
        Some(serde_yaml::Value::String(s)) => Some(s.clone()),
        Some(serde_yaml::Value::Sequence(parts)) => {
            parts.first().and_then(|p| p.as_str()).map(str::to_owned)
        }
        Some(_) => None,
        None => v.as_str().map(str::to_owned),
    }
}

/// IAM hygiene over every policy statement in the template.
fn check_iam_hygiene(t: &Template) -> Vec<String> {
    let mut problems = Vec::new();
    for s in t.statements() {
        let at = format!("{} (policy {})", s.resource, s.policy);
        for a in &s.actions {
            if a.contains('*') {
                problems.push(format!("{at}: wildcard action {a}"));
            }
        }
        if s.effect != "Allow" {
            continue;
        }
        if s.resources.iter().any(is_star) {
            for a in s
                .actions
                .iter()
                .filter(|a| !NO_RESOURCE_LEVEL.contains(&a.as_str()))
            {
                problems.push(format!(
                    "{at}: {a} on Resource \"*\", but it supports resource-level permissions"
                ));
            }
        }
        for a in &s.actions {
            if a.starts_with("dynamodb:") {
                let on_table = s.resources.iter().all(|r| {
                    template::get_att_resource(r)
                        .is_some_and(|id| t.resource_type(&id) == Some("AWS::DynamoDB::Table"))
                });
                if !on_table || s.resources.is_empty() {
                    problems.push(format!(
                        "{at}: {a} must be allowed on the state table's ARN (!GetAtt) only"
                    ));
                }
            }
            if a.starts_with("sagemaker:") {
                let narrowed = s.resources.iter().all(|r| {
                    sub_text(r).is_some_and(|text| {
                        SAGEMAKER_PREFIX_PARAMS.iter().any(|p| text.contains(p))
                    })
                });
                if !narrowed || s.resources.is_empty() {
                    problems.push(format!("{at}: {a} must be allowed only on ARNs narrowed by a name-prefix parameter"));
                }
            }
            if a == "iam:CreateServiceLinkedRole" {
                let condition = s
                    .condition
                    .as_ref()
                    .map(|c| serde_yaml::to_string(c).unwrap_or_default())
                    .unwrap_or_default();
                let resource_ok = s.resources.iter().all(|r| {
                    sub_text(r).is_some_and(|text| {
                        text.contains(&format!("aws-service-role/{AAS_SAGEMAKER_SERVICE}/AWSServiceRoleForApplicationAutoScaling_SageMakerEndpoint"))
                    })
                });
                if !condition.contains("iam:AWSServiceName")
                    || !condition.contains(AAS_SAGEMAKER_SERVICE)
                    || !resource_ok
                {
                    problems.push(format!(
                        "{at}: iam:CreateServiceLinkedRole must be limited to {AAS_SAGEMAKER_SERVICE} (its role ARN and an \
                         iam:AWSServiceName condition)"
                    ));
                }
            }
        }
    }
    // Function roles write target items only, and reach no alarm a scaling policy does not own.
    let function_roles: BTreeSet<String> =
        t.functions().into_iter().filter_map(|f| f.role).collect();
    for s in t
        .statements()
        .into_iter()
        .filter(|s| s.effect == "Allow" && function_roles.contains(&s.resource))
    {
        let at = format!("{} (policy {})", s.resource, s.policy);
        for a in s
            .actions
            .iter()
            .filter(|a| DYNAMO_WRITES.contains(&a.as_str()))
        {
            if !writes_target_items_only(s.condition.as_ref()) {
                problems.push(format!(
                    "{at}: {a} must carry the condition ForAllValues:StringLike dynamodb:LeadingKeys [\"{TARGET_ITEMS}\"] \
                     and Null dynamodb:LeadingKeys \"false\" (functions write target items only, never the plan)"
                ));
            }
        }
        // Registration is limited to SageMaker's dimensions, and to every one a plan may name: a
        // dimension missing here is AccessDenied for each target that uses it.
        if s.actions.iter().any(|a| a == REGISTER) {
            let listed: BTreeSet<String> = s
                .condition
                .as_ref()
                .and_then(|c| c.get("StringEquals"))
                .and_then(|c| c.get("application-autoscaling:scalable-dimension"))
                .and_then(|d| d.as_sequence())
                .map(|d| {
                    d.iter()
                        .filter_map(|v| v.as_str().map(str::to_owned))
                        .collect()
                })
                .unwrap_or_default();
            let plans: BTreeSet<String> = headroom_core::ids::Dimension::ALL
                .iter()
                .map(|d| d.as_str().to_owned())
                .collect();
            if listed != plans {
                problems.push(format!(
                    "{at}: {REGISTER} must be conditioned on application-autoscaling:scalable-dimension being exactly \
                     the dimensions a plan may name {plans:?} (the condition lists {listed:?})"
                ));
            }
        }
        // GetMetricData reads metrics, never alarms: the alarm scope does not apply to it.
        for a in s
            .actions
            .iter()
            .filter(|a| a.starts_with("cloudwatch:") && *a != "cloudwatch:GetMetricData")
        {
            let scoped = !s.resources.is_empty()
                && s.resources
                    .iter()
                    .all(|r| sub_text(r).is_some_and(|text| text.ends_with(AAS_ALARM_SCOPE)));
            if !scoped {
                problems.push(format!(
                    "{at}: {a} may only name alarms *{AAS_ALARM_SCOPE} (scaling policies' alarms): never headroom's own \
                     or the ones that watch it"
                ));
            }
        }
    }
    // `Resource: "*"` must carry its reason in a comment right above (or on the same line).
    let lines: Vec<&str> = t.text.lines().collect();
    for (i, line) in lines.iter().enumerate() {
        let code_part = line.split(" #").next().unwrap_or(line).trim();
        let star = ["Resource: \"*\"", "Resource: '*'", "Resource: *"].contains(&code_part);
        if !star {
            continue;
        }
        let commented_here = line.contains(" #");
        let commented_above = i > 0 && lines[i - 1].trim_start().starts_with('#');
        if !commented_here && !commented_above {
            problems.push(format!(
                "infra/template.yaml line {}: Resource \"*\" without a comment saying why nothing narrower is possible",
                i + 1
            ));
        }
    }
    problems
}

/// The condition of a write statement limits it to target items: every leading key (partition
/// key) matches [`TARGET_ITEMS`], and a leading key must be present (ForAllValues alone holds for
/// a request with none).
fn writes_target_items_only(condition: Option<&serde_yaml::Value>) -> bool {
    let Some(c) = condition else {
        return false;
    };
    let like = template::strings(
        c.get("ForAllValues:StringLike")
            .and_then(|m| m.get("dynamodb:LeadingKeys")),
    );
    let present = c
        .get("Null")
        .and_then(|m| m.get("dynamodb:LeadingKeys"))
        .and_then(template::scalar)
        .is_some_and(|v| v == "false");
    !like.is_empty() && like.iter().all(|v| v == TARGET_ITEMS) && present
}

/// Every event kind reaches its function, and the fixtures match the rules.
fn check_events(t: &Template, fixtures: &[(PathBuf, serde_json::Value)]) -> Vec<String> {
    let mut problems = Vec::new();
    let functions = t.functions();
    // The fixtures meet the rules as deployed with the parameters' defaults (AlarmNamePrefix
    // `headroom-`), except EndpointNamePrefix, which has none and which the samples' endpoints
    // (chat-prod, summarize-async, llama-8b-ic) share no prefix of: "" there, so they test the
    // rest of each pattern (source, detail-type and the fields the filters read).
    let mut params = BTreeMap::new();
    params.insert("EndpointNamePrefix".to_owned(), String::new());
    let resolver = Resolver {
        template: t,
        params,
    };
    // binary -> patterns of its EventBridge rules; a SAM Schedule is a rule on scheduled events.
    let mut rules: BTreeMap<String, Vec<serde_json::Value>> = BTreeMap::new();
    for f in &functions {
        let Some(binary) = f.binary.clone() else {
            continue;
        };
        for e in &f.events {
            let pattern = match e.kind.as_str() {
                "EventBridgeRule" => match e.properties.get("Pattern").map(|p| resolver.resolve(p))
                {
                    Some(Ok(p)) => match template::to_json(&p) {
                        Ok(j) => j,
                        Err(err) => {
                            problems.push(format!("{}.{}: {err}", f.logical_id, e.name));
                            continue;
                        }
                    },
                    Some(Err(err)) => {
                        problems.push(format!("{}.{}: {err}", f.logical_id, e.name));
                        continue;
                    }
                    None => {
                        problems.push(format!(
                            "{}.{}: an EventBridgeRule without a Pattern",
                            f.logical_id, e.name
                        ));
                        continue;
                    }
                },
                "Schedule" => {
                    let schedule = e
                        .properties
                        .get("Schedule")
                        .and_then(|s| s.as_str())
                        .unwrap_or_default();
                    if binary == "headroom-tick" && schedule != "rate(1 minute)" {
                        problems.push(format!(
                            "{}.{}: the tick must run every minute, not {schedule:?}",
                            f.logical_id, e.name
                        ));
                    }
                    serde_json::json!({ "source": ["aws.events"], "detail-type": [headroom_events::schedule::SCHEDULED_DETAIL_TYPE] })
                }
                other => {
                    problems.push(format!(
                        "{}.{}: event type {other} is not checked here",
                        f.logical_id, e.name
                    ));
                    continue;
                }
            };
            rules.entry(binary.clone()).or_default().push(pattern);
        }
    }
    let detail_types = |binary: &str| -> BTreeSet<String> {
        rules
            .get(binary)
            .into_iter()
            .flatten()
            .flat_map(|p| {
                p.get("detail-type")
                    .and_then(|d| d.as_array())
                    .cloned()
                    .unwrap_or_default()
            })
            .filter_map(|d| d.as_str().map(str::to_owned))
            .collect()
    };
    // The routes come from the repository's fixtures, whatever `fixtures` is being checked.
    let routes = routes(&self::fixtures());
    for detail_type in DETAIL_TYPES {
        if !routes.iter().any(|(d, _)| d == detail_type) {
            problems.push(format!(
                "no fixture in events/ has detail-type {detail_type:?}"
            ));
        }
    }
    for (detail_type, binary) in &routes {
        let (detail_type, binary) = (detail_type.as_str(), *binary);
        for (other, _) in rules.iter() {
            let has = detail_types(other).contains(detail_type);
            if other == binary && !has {
                problems.push(format!("no rule sends {detail_type:?} events to {binary}"));
            }
            if other != binary && has {
                problems.push(format!(
                    "{detail_type:?} events go to {other}, but {binary} handles them"
                ));
            }
        }
        if !rules.contains_key(binary) {
            problems.push(format!(
                "{binary} has no event source at all (it handles {detail_type:?})"
            ));
        }
    }
    for (path, event) in fixtures {
        let Some(detail_type) = event.get("detail-type").and_then(|d| d.as_str()) else {
            continue;
        };
        // EventBridge Scheduler delivers to its target directly, through no rule.
        if event.get("source").and_then(|s| s.as_str()) == Some("aws.scheduler") {
            continue;
        }
        let Some((_, binary)) = routes.iter().find(|(d, _)| d == detail_type) else {
            continue;
        };
        let mut matched = Vec::new();
        for (b, patterns) in &rules {
            for p in patterns {
                match pattern_matches(p, event) {
                    Ok(true) => matched.push(b.clone()),
                    Ok(false) => {}
                    Err(e) => {
                        problems.push(format!("{b}: a rule pattern headroom cannot evaluate: {e}"))
                    }
                }
            }
        }
        matched.dedup();
        let relative = path.strip_prefix(root()).unwrap_or(path);
        if FILTERED_OUT.iter().any(|f| relative == Path::new(f)) {
            if !matched.is_empty() {
                problems.push(format!(
                    "fixture {} ({detail_type}) reaches {matched:?}, but the rules should filter it out",
                    relative.display()
                ));
            }
            continue;
        }
        if matched != [binary.to_owned()] {
            problems.push(format!(
                "fixture {} ({detail_type}) reaches {matched:?}, but {binary} should get it (exactly once)",
                path.strip_prefix(root()).unwrap_or(path).display()
            ));
        }
    }
    // Direct CloudWatch alarm actions: a resource policy for the alarm service, scoped to this
    // account and to alarms named with the prefix.
    let alarm_fn = functions
        .iter()
        .find(|f| f.binary.as_deref() == Some("headroom-alarm"))
        .map(|f| f.logical_id.clone());
    let permitted = t.resources().into_iter().any(|(_, r)| {
        let p = r.get("Properties");
        r.get("Type").and_then(|v| v.as_str()) == Some("AWS::Lambda::Permission")
            && p.and_then(|p| p.get("Principal")).and_then(|v| v.as_str())
                == Some("lambda.alarms.cloudwatch.amazonaws.com")
            && p.and_then(|p| p.get("FunctionName"))
                .and_then(template::get_att_resource)
                == alarm_fn
            && p.and_then(|p| p.get("SourceAccount")).is_some()
            && p.and_then(|p| p.get("SourceArn"))
                .and_then(sub_text)
                .is_some_and(|a| a.contains(":alarm:${AlarmNamePrefix}"))
    });
    if !permitted {
        problems.push(
            "no AWS::Lambda::Permission lets lambda.alarms.cloudwatch.amazonaws.com invoke the alarm function with \
             SourceAccount and a SourceArn of alarms named ${AlarmNamePrefix}*"
                .to_owned(),
        );
    }
    problems
}

/// Fixtures no rule may deliver: they exist for the functions' own refusal (a direct
/// invocation, a rule widened by hand), and the deployed rules must drop them first.
const FILTERED_OUT: &[&str] = &[
    // An alarm named outside AlarmNamePrefix (default `headroom-`).
    "events/alarms/eventbridge-unknown-alarm.json",
];

/// Every JSON file under events/.
fn fixtures() -> Vec<(PathBuf, serde_json::Value)> {
    let mut out = Vec::new();
    let mut stack = vec![root().join("events")];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in entries.filter_map(Result::ok) {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "json") {
                if let Ok(v) =
                    serde_json::from_str(&std::fs::read_to_string(&p).unwrap_or_default())
                {
                    out.push((p, v));
                }
            }
        }
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

fn all_problems(code: &Code, t: &Template) -> Vec<String> {
    let mut p = check_adapters(code);
    p.extend(check_function_sources(code));
    p.extend(check_kept_from_functions(code));
    p.extend(check_template(code, t));
    p.extend(check_iam_hygiene(t));
    p.extend(check_function_settings(t));
    p.extend(check_peak_schedule(t));
    p.extend(check_peak_delivery(t));
    p.extend(check_events(t, &fixtures()));
    p
}

/// The example Scheduler schedule's input, with the defaults and a target filled in, is a peak
/// event the tick function accepts (its parser refuses unknown fields).
fn check_peak_schedule(t: &Template) -> Vec<String> {
    let mut problems = Vec::new();
    let schedules: Vec<_> = t
        .resources()
        .into_iter()
        .filter(|(_, r)| r.get("Type").and_then(|v| v.as_str()) == Some("AWS::Scheduler::Schedule"))
        .collect();
    if schedules.is_empty() {
        problems.push("no example AWS::Scheduler::Schedule for an explicit peak".to_owned());
    }
    for (id, r) in schedules {
        let target = r.get("Properties").and_then(|p| p.get("Target"));
        let Some(mut input) = target.and_then(|t| t.get("Input")).and_then(sub_text) else {
            problems.push(format!("{id}: Target.Input must be a JSON string (!Sub)"));
            continue;
        };
        let params: Vec<String> = t
            .doc
            .get("Parameters")
            .and_then(|p| p.as_mapping())
            .map(|m| {
                m.keys()
                    .filter_map(|k| k.as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default();
        for name in params {
            let value = if name == "ExamplePeakTarget" {
                "endpoint/chat-prod/variant/AllTraffic".to_owned()
            } else {
                t.parameter_default(&name).unwrap_or_default()
            };
            input = input.replace(&format!("${{{name}}}"), &value);
        }
        let event: serde_json::Value = match serde_json::from_str(&input) {
            Ok(v) => v,
            Err(e) => {
                problems.push(format!(
                    "{id}: Target.Input is not JSON once filled in: {e}"
                ));
                continue;
            }
        };
        match headroom_events::parse_trigger(&event) {
            Ok(headroom_events::Trigger::Peak(_)) => {}
            Ok(_) => problems.push(format!(
                "{id}: Target.Input parses, but not as a peak event"
            )),
            Err(e) => problems.push(format!(
                "{id}: the tick function would refuse Target.Input: {e}"
            )),
        }
        let arn_target = target
            .and_then(|t| t.get("Arn"))
            .and_then(template::get_att_resource);
        let tick = t
            .functions()
            .into_iter()
            .find(|f| f.binary.as_deref() == Some("headroom-tick"))
            .map(|f| f.logical_id);
        if arn_target.is_none() || arn_target != tick {
            problems.push(format!("{id}: the schedule must target the tick function"));
        }
    }
    problems
}

/// Lambda's maximum for asynchronous retries, and the least an explicit peak may wait in the
/// asynchronous queue (throttled) before it counts as failed.
const PEAK_FUNCTION_RETRIES: u64 = 2;
const PEAK_MIN_EVENT_AGE_S: u64 = 3600;
/// The least delivery retries an EventBridge Scheduler peak schedule gets (its maximum is 185).
const PEAK_MIN_SCHEDULER_RETRIES: u64 = 100;

/// Explicit peaks get the retries and the dead-letter queue they need (issue 11, item 5): the
/// tick function, which EventBridge Scheduler invokes asynchronously, retries a failed peak
/// twice and keeps it an hour while throttled, then sends it to its on-failure destination;
/// every schedule retries delivery and names a dead-letter queue its role may send to; the
/// queue's ARN is an output, for schedules of your own.
fn check_peak_delivery(t: &Template) -> Vec<String> {
    let mut problems = Vec::new();
    let number = |v: Option<&serde_yaml::Value>| {
        v.and_then(template::scalar)
            .and_then(|s| s.parse::<u64>().ok())
    };
    let Some(tick) = t
        .functions()
        .into_iter()
        .find(|f| f.binary.as_deref() == Some("headroom-tick"))
    else {
        return vec!["no function builds headroom-tick".to_owned()];
    };
    let invoke = t
        .resource(&tick.logical_id)
        .and_then(|r| r.get("Properties"))
        .and_then(|p| p.get("EventInvokeConfig"));
    let retries = number(invoke.and_then(|c| c.get("MaximumRetryAttempts")));
    if retries != Some(PEAK_FUNCTION_RETRIES) {
        problems.push(format!(
            "{}: EventInvokeConfig.MaximumRetryAttempts is {retries:?}: explicit peaks (invoked asynchronously by the \
             Scheduler) need {PEAK_FUNCTION_RETRIES}, Lambda's maximum",
            tick.logical_id
        ));
    }
    let age = number(invoke.and_then(|c| c.get("MaximumEventAgeInSeconds")));
    if age.is_none_or(|a| a < PEAK_MIN_EVENT_AGE_S) {
        problems.push(format!(
            "{}: EventInvokeConfig.MaximumEventAgeInSeconds is {age:?}: an explicit peak must survive at least \
             {PEAK_MIN_EVENT_AGE_S} s of throttling",
            tick.logical_id
        ));
    }
    let queues: BTreeSet<String> = t
        .resources()
        .into_iter()
        .filter(|(_, r)| r.get("Type").and_then(|v| v.as_str()) == Some("AWS::SQS::Queue"))
        .map(|(id, _)| id)
        .collect();
    let on_failure = invoke
        .and_then(|c| c.get("DestinationConfig"))
        .and_then(|d| d.get("OnFailure"))
        .and_then(|o| o.get("Destination"))
        .and_then(template::get_att_resource);
    if !on_failure.as_ref().is_some_and(|q| queues.contains(q)) {
        problems.push(format!(
            "{}: EventInvokeConfig.DestinationConfig.OnFailure must send failed peaks to an SQS queue of this template",
            tick.logical_id
        ));
    }
    for (id, r) in t
        .resources()
        .into_iter()
        .filter(|(_, r)| r.get("Type").and_then(|v| v.as_str()) == Some("AWS::Scheduler::Schedule"))
    {
        let target = r.get("Properties").and_then(|p| p.get("Target"));
        let retry = target.and_then(|t| t.get("RetryPolicy"));
        let attempts = number(retry.and_then(|p| p.get("MaximumRetryAttempts")));
        if attempts.is_none_or(|a| a < PEAK_MIN_SCHEDULER_RETRIES) {
            problems.push(format!(
                "{id}: Target.RetryPolicy.MaximumRetryAttempts is {attempts:?}: give peak delivery at least \
                 {PEAK_MIN_SCHEDULER_RETRIES} retries (185 at most)"
            ));
        }
        let age = number(retry.and_then(|p| p.get("MaximumEventAgeInSeconds")));
        if age.is_none_or(|a| a < PEAK_MIN_EVENT_AGE_S) {
            problems.push(format!(
                "{id}: Target.RetryPolicy.MaximumEventAgeInSeconds is {age:?}: at least {PEAK_MIN_EVENT_AGE_S}"
            ));
        }
        let dlq = target
            .and_then(|t| t.get("DeadLetterConfig"))
            .and_then(|d| d.get("Arn"))
            .and_then(template::get_att_resource);
        let Some(dlq) = dlq.filter(|q| queues.contains(q)) else {
            problems.push(format!(
                "{id}: Target.DeadLetterConfig.Arn must be !GetAtt <an SQS queue of this template>.Arn: an undeliverable \
                 peak would be lost"
            ));
            continue;
        };
        let role = target
            .and_then(|t| t.get("RoleArn"))
            .and_then(template::get_att_resource);
        let may_send = role.as_ref().is_some_and(|role| {
            t.statements().iter().any(|s| {
                s.resource == *role
                    && s.effect == "Allow"
                    && s.actions.iter().any(|a| a == "sqs:SendMessage")
                    && s.resources
                        .iter()
                        .any(|r| template::get_att_resource(r).as_deref() == Some(dlq.as_str()))
            })
        });
        if !may_send {
            problems.push(format!(
                "{id}: the schedule's role {role:?} may not sqs:SendMessage to its dead-letter queue {dlq}"
            ));
        }
    }
    let dlq_output = t
        .doc
        .get("Outputs")
        .and_then(|o| o.as_mapping())
        .is_some_and(|m| {
            m.values().any(|o| {
                o.get("Value")
                    .and_then(template::get_att_resource)
                    .is_some_and(|q| queues.contains(&q))
            })
        });
    if !dlq_output {
        problems.push(
            "no output gives the failed-events queue's ARN (DeadLetterConfig of your own peak schedules)".to_owned(),
        );
    }
    problems
}

fn report(problems: &[String]) -> String {
    problems
        .iter()
        .map(|p| format!("  - {p}"))
        .collect::<Vec<_>>()
        .join("\n")
}

// ------------------------------------------------------------------------------------------------
// The tests
// ------------------------------------------------------------------------------------------------

#[test]
fn template_and_code_agree() {
    let code = load_code();
    let t = load_template();
    let problems = all_problems(&code, &t);
    let scanned = code
        .scan
        .types
        .iter()
        .map(|(ty, ops)| {
            format!(
                "  {ty}: {}",
                ops.iter().cloned().collect::<Vec<_>>().join(", ")
            )
        })
        .collect::<Vec<_>>()
        .join("\n");
    assert!(
        problems.is_empty(),
        "infra/template.yaml and the code disagree:\n{}\n\nAWS operations found in each adapter's source:\n{scanned}",
        report(&problems)
    );
    // And the check saw what it should: three functions, each with AWS operations.
    assert_eq!(
        code.functions.len(),
        3,
        "{:?}",
        code.functions
            .iter()
            .map(|f| &f.crate_name)
            .collect::<Vec<_>>()
    );
    for f in &code.functions {
        assert!(
            f.operations().iter().any(|o| o.starts_with("dynamodb:")),
            "{} declares no DynamoDB operation",
            f.crate_name
        );
    }
}

#[test]
fn the_adapter_scan_finds_the_sdk_calls() {
    // GIVEN the adapters crate as it is
    let code = load_code();
    // THEN the scan attributes the AAS calls to the AAS adapter and keeps the table-creation
    // helper (CLI only) apart from the adapters the functions build.
    let aas = &code.scan.types["AasScalingTargets"];
    assert!(
        aas.contains("application-autoscaling:DescribeScalableTargets"),
        "{aas:?}"
    );
    assert!(aas.contains(REGISTER), "{aas:?}");
    assert!(code
        .scan
        .free_fns
        .get("create_table")
        .is_some_and(|ops| ops.contains("dynamodb:CreateTable")));
    assert!(!code.scan.types["DynamoStateStore"].contains("dynamodb:CreateTable"));
}

// --- Negative cases: each doctored copy must fail, naming what is wrong. ----------------------

/// The template with `edit` applied to its parsed document.
fn doctored(edit: impl FnOnce(&mut serde_yaml::Value)) -> Template {
    let mut t = load_template();
    edit(&mut t.doc);
    t
}

/// The template text with `from` replaced by `to` (which must occur).
fn doctored_text(from: &str, to: &str) -> Template {
    let t = load_template();
    assert!(
        t.text.contains(from),
        "the template no longer contains {from:?}: update this test"
    );
    Template::parse(&t.text.replacen(from, to, 1)).expect("doctored template parses")
}

fn role_actions<'a>(
    doc: &'a mut serde_yaml::Value,
    role: &str,
    policy: &str,
) -> &'a mut Vec<serde_yaml::Value> {
    let policies = doc["Resources"][role]["Properties"]["Policies"]
        .as_sequence_mut()
        .expect("policies");
    let p = policies
        .iter_mut()
        .find(|p| p["PolicyName"].as_str() == Some(policy))
        .expect("policy");
    let statements = p["PolicyDocument"]["Statement"]
        .as_sequence_mut()
        .expect("statements");
    let s = statements
        .iter_mut()
        .find(|s| s["Action"].is_sequence())
        .expect("a statement with a list of actions");
    s["Action"].as_sequence_mut().expect("actions")
}

fn tick_role(t: &Template) -> String {
    t.functions()
        .into_iter()
        .find(|f| f.binary.as_deref() == Some("headroom-tick"))
        .and_then(|f| f.role)
        .expect("tick role")
}

fn assert_fails(problems: &[String], needles: &[&str]) {
    assert!(
        problems
            .iter()
            .any(|p| needles.iter().all(|n| p.contains(n))),
        "expected a problem mentioning {needles:?}, got:\n{}",
        report(problems)
    );
}

#[test]
fn a_missing_permission_fails() {
    let code = load_code();
    let role = tick_role(&load_template());
    let t = doctored(|doc| {
        role_actions(doc, &role, "code").retain(|a| a.as_str() != Some("dynamodb:Query"))
    });
    assert_fails(
        &check_template(&code, &t),
        &["does not allow dynamodb:Query", "its code calls it"],
    );
}

#[test]
fn a_permission_the_code_never_uses_fails() {
    let code = load_code();
    let role = tick_role(&load_template());
    let t =
        doctored(|doc| role_actions(doc, &role, "code").push("sagemaker:DeleteEndpoint".into()));
    assert_fails(
        &check_template(&code, &t),
        &["allows sagemaker:DeleteEndpoint", "never calls"],
    );
}

#[test]
fn a_missing_caller_requirement_fails_for_a_function_that_registers() {
    let code = load_code();
    let role = tick_role(&load_template());
    let t = doctored(|doc| {
        let policies = doc["Resources"][role.as_str()]["Properties"]["Policies"]
            .as_sequence_mut()
            .expect("policies");
        policies.retain(|p| p["PolicyName"].as_str() != Some(AAS_CALLER_POLICY));
    });
    assert_fails(
        &check_template(&code, &t),
        &[
            "iam:CreateServiceLinkedRole",
            "RegisterScalableTarget caller",
        ],
    );
}

#[test]
fn an_unset_environment_variable_fails() {
    let code = load_code();
    let t = doctored(|doc| {
        doc["Globals"]["Function"]["Environment"]["Variables"]
            .as_mapping_mut()
            .expect("global variables")
            .remove("HEADROOM_TABLE");
    });
    assert_fails(
        &check_template(&code, &t),
        &["reads HEADROOM_TABLE", "does not set it"],
    );
}

#[test]
fn a_stale_environment_variable_fails() {
    let code = load_code();
    let t = doctored(|doc| {
        doc["Globals"]["Function"]["Environment"]["Variables"]
            .as_mapping_mut()
            .expect("global variables")
            .insert("HEADROOM_FORGOTTEN".into(), "1".into());
    });
    assert_fails(
        &check_template(&code, &t),
        &["sets HEADROOM_FORGOTTEN", "never reads it"],
    );
}

#[test]
fn a_function_without_a_crate_and_a_crate_without_a_function_fail() {
    let code = load_code();
    let t = doctored_text("Binary: headroom-tick", "Binary: headroom-tock");
    let problems = check_template(&code, &t);
    assert_fails(
        &problems,
        &["headroom-tick", "has no AWS::Serverless::Function"],
    );
    assert_fails(&problems, &["headroom-tock", "no crate under functions/"]);
}

#[test]
fn a_function_whose_permanent_failures_are_not_counted_fails() {
    let t = doctored_text(
        "      LogGroupName: !Ref AlarmLogGroup\n      FilterPattern: *permanent_failure_lines",
        "      LogGroupName: !Ref AlarmLogGroup\n      FilterPattern: '{ $.level = \"ERROR\" }'",
    );
    assert_fails(
        &check_function_settings(&t),
        &["AlarmFunction: no AWS::Logs::MetricFilter"],
    );
    let t = doctored_text(
        "      MetricName: PermanentFailures\n      Statistic",
        "      MetricName: Other\n      Statistic",
    );
    assert_fails(
        &check_function_settings(&t),
        &[
            "TickFunction: no AWS::CloudWatch::Alarm",
            "PermanentFailures",
        ],
    );
}

#[test]
fn a_wildcard_action_fails() {
    let role = tick_role(&load_template());
    let t = doctored(|doc| role_actions(doc, &role, "code").push("dynamodb:*".into()));
    assert_fails(&check_iam_hygiene(&t), &["wildcard action dynamodb:*"]);
}

#[test]
fn resource_star_without_its_reason_fails() {
    let t = load_template();
    let line = t
        .text
        .lines()
        .position(|l| l.trim() == "Resource: \"*\"")
        .expect("a Resource \"*\" line");
    let lines: Vec<&str> = t.text.lines().collect();
    // Drop the comment block above the first `Resource: "*"`.
    let mut start = line;
    while start > 0 && lines[start - 1].trim_start().starts_with('#') {
        start -= 1;
    }
    assert!(
        start < line,
        "the first Resource \"*\" has no comment to remove"
    );
    let text = [&lines[..start], &lines[line..]].concat().join("\n");
    let problems = check_iam_hygiene(&Template::parse(&text).expect("parses"));
    assert_fails(&problems, &["Resource \"*\" without a comment"]);
}

#[test]
fn a_dimension_missing_from_the_registration_condition_fails() {
    let t = doctored_text(
        "                      - sagemaker:inference-component:DesiredCopyCount\n",
        "",
    );
    assert_fails(
        &check_iam_hygiene(&t),
        &[REGISTER, "sagemaker:inference-component:DesiredCopyCount"],
    );
}

#[test]
fn register_on_star_fails() {
    let role = tick_role(&load_template());
    let t = doctored(|doc| {
        let policies = doc["Resources"][role.as_str()]["Properties"]["Policies"]
            .as_sequence_mut()
            .expect("policies");
        for p in policies.iter_mut() {
            for s in p["PolicyDocument"]["Statement"]
                .as_sequence_mut()
                .expect("statements")
                .iter_mut()
            {
                if s["Action"].as_str() == Some(REGISTER) {
                    s["Resource"] = "*".into();
                }
            }
        }
    });
    assert_fails(&check_iam_hygiene(&t), &[REGISTER, "Resource \"*\""]);
}

#[test]
fn an_sdk_call_missing_from_operations_fails() {
    // GIVEN the DynamoDB adapter with one more SDK call than its OPERATIONS lists
    let mut code = load_code();
    let path = root().join("shared/adapters/src/dynamo.rs");
    let text = std::fs::read_to_string(&path).expect("dynamo.rs");
    let anchor = "impl DynamoStateStore {";
    assert!(text.contains(anchor), "dynamo.rs changed: update this test");
    let doctored = text.replacen(
        anchor,
        &format!("{anchor}\n    async fn forget(&self) {{ let _ = self.client.delete_item().send().await; }}\n"),
        1,
    );
    let sdk = source::sdk_operations(&root());
    for m in code.adapter_files.iter_mut() {
        if m.path == path {
            *m = Masked::from_text(&path, &doctored);
        }
    }
    code.scan = source::scan_adapters(&code.adapter_files, &sdk);
    // THEN the check names the operation and the adapter
    assert_fails(
        &check_adapters(&code),
        &["DynamoStateStore calls dynamodb:DeleteItem"],
    );
}

#[test]
fn an_undeclared_adapter_or_a_direct_sdk_call_in_a_function_fails() {
    let mut code = load_code();
    let tick = code
        .functions
        .iter_mut()
        .find(|f| f.crate_name == "headroom-tick")
        .expect("tick");
    let extra = Masked::from_text(
        Path::new("functions/tick/src/extra.rs"),
        "fn sneak(c: &aws_sdk_sagemaker::Client) { let _ = c.delete_endpoint().send(); }\nfn also(s: &DynamoStateStore) {}\n",
    );
    tick.files.push(extra);
    tick.declared.remove("DynamoStateStore");
    let problems = check_function_sources(&code);
    assert_fails(
        &problems,
        &["headroom-tick uses DynamoStateStore", "does not declare it"],
    );
    assert_fails(&problems, &["extra.rs contains `.send()`"]);
}

#[test]
fn a_rule_with_a_wrong_detail_type_fails() {
    let t = doctored_text(
        "detail-type: [CloudWatch Alarm State Change]",
        "detail-type: [CloudWatch Alarm Status Change]",
    );
    assert_fails(
        &check_events(&t, &fixtures()),
        &["no rule sends \"CloudWatch Alarm State Change\" events to headroom-alarm"],
    );
}

#[test]
fn a_fixture_meant_to_be_filtered_out_that_a_rule_delivers_fails() {
    let path = root().join(FILTERED_OUT[0]);
    let mut event: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).expect("fixture")).expect("json");
    // As shipped, the default alarm prefix drops it.
    assert!(check_events(&load_template(), &[(path.clone(), event.clone())]).is_empty());
    event["detail"]["alarmName"] = "headroom-billing-estimated-charges-high".into();
    assert_fails(
        &check_events(&load_template(), &[(path, event)]),
        &["eventbridge-unknown-alarm.json", "should filter it out"],
    );
}

#[test]
fn a_model_package_status_in_the_documentations_spelling_reaches_deploy() {
    let path = root().join("events/sagemaker/model-package-approved.json");
    let mut event: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).expect("fixture")).expect("json");
    for status in ["APPROVED", "PENDING_MANUAL_APPROVAL", "rejected"] {
        event["detail"]["ModelApprovalStatus"] = status.into();
        let problems = check_events(&load_template(), &[(path.clone(), event.clone())]);
        assert!(problems.is_empty(), "{status}: {problems:?}");
    }
    // ... and a status headroom does not act on reaches nothing.
    event["detail"]["ModelApprovalStatus"] = "Deleted".into();
    assert_fails(
        &check_events(&load_template(), &[(path, event)]),
        &[
            "model-package-approved.json",
            "headroom-deploy should get it",
        ],
    );
}

#[test]
fn a_fixture_the_rules_do_not_match_fails() {
    // An alarm named outside the prefix is not routed: with the prefix set, it reaches nothing.
    let t = load_template();
    let event = serde_json::json!({
        "source": "aws.cloudwatch",
        "detail-type": headroom_events::alarm::DETAIL_TYPE,
        "detail": { "state": { "value": "ALARM" } }
    });
    let problems = check_events(&t, &[(root().join("events/doctored.json"), event)]);
    assert_fails(
        &problems,
        &[
            "fixture events/doctored.json",
            "headroom-alarm should get it",
        ],
    );
}

#[test]
fn a_function_without_its_errors_alarm_or_json_logs_fails() {
    let t = doctored(|doc| {
        let resources = doc["Resources"].as_mapping_mut().expect("resources");
        let alarms: Vec<serde_yaml::Value> = resources
            .iter()
            .filter(|(_, r)| r["Properties"]["MetricName"].as_str() == Some("Errors"))
            .map(|(k, _)| k.clone())
            .collect();
        for k in alarms {
            resources.remove(&k);
        }
        doc["Resources"]["TickFunction"]["Properties"]["LoggingConfig"]["LogFormat"] =
            "Text".into();
    });
    let problems = check_function_settings(&t);
    assert_fails(
        &problems,
        &["TickFunction: no AWS::CloudWatch::Alarm on its AWS/Lambda Errors"],
    );
    assert_fails(
        &problems,
        &["TickFunction: LoggingConfig.LogFormat must be JSON"],
    );
}

#[test]
fn a_peak_schedule_input_the_tick_refuses_fails() {
    let t = doctored_text(
        "\"floor\": ${ExamplePeakFloor},",
        "\"floor\": ${ExamplePeakFloor}, \"priority\": 1,",
    );
    assert_fails(
        &check_peak_schedule(&t),
        &["ExamplePeakSchedule", "would refuse Target.Input"],
    );
}

#[test]
fn explicit_peaks_without_their_retries_or_dead_letter_queue_fail() {
    let t = doctored(|doc| {
        let tick = &mut doc["Resources"]["TickFunction"]["Properties"]["EventInvokeConfig"];
        tick["MaximumRetryAttempts"] = 1.into();
        tick["MaximumEventAgeInSeconds"] = 300.into();
        let target = doc["Resources"]["ExamplePeakSchedule"]["Properties"]["Target"]
            .as_mapping_mut()
            .expect("schedule target");
        target.remove("DeadLetterConfig");
        target.insert(
            "RetryPolicy".into(),
            serde_yaml::from_str("{MaximumRetryAttempts: 10, MaximumEventAgeInSeconds: 3600}")
                .expect("yaml"),
        );
    });
    let problems = check_peak_delivery(&t);
    assert_fails(
        &problems,
        &["TickFunction", "MaximumRetryAttempts is Some(1)"],
    );
    assert_fails(
        &problems,
        &["TickFunction", "MaximumEventAgeInSeconds is Some(300)"],
    );
    assert_fails(&problems, &["ExamplePeakSchedule", "DeadLetterConfig.Arn"]);
    assert_fails(
        &problems,
        &["ExamplePeakSchedule", "MaximumRetryAttempts is Some(10)"],
    );
    // And the template as it is passes.
    let ok = check_peak_delivery(&load_template());
    assert!(ok.is_empty(), "{}", report(&ok));
}

#[test]
fn a_function_allowed_transact_write_items_or_calling_save_plan_fails() {
    // GIVEN the tick role allowed TransactWriteItems again
    let code = load_code();
    let role = tick_role(&load_template());
    let t = doctored(|doc| {
        let policies = doc["Resources"][role.as_str()]["Properties"]["Policies"]
            .as_sequence_mut()
            .expect("policies");
        let code_policy = policies
            .iter_mut()
            .find(|p| p["PolicyName"].as_str() == Some("code"))
            .expect("code policy");
        let read = code_policy["PolicyDocument"]["Statement"]
            .as_sequence_mut()
            .expect("statements")
            .iter_mut()
            .find(|s| s["Sid"].as_str() == Some("ReadState"))
            .expect("the ReadState statement");
        read["Action"]
            .as_sequence_mut()
            .expect("actions")
            .push("dynamodb:TransactWriteItems".into());
    });
    assert_fails(
        &check_template(&code, &t),
        &["allows dynamodb:TransactWriteItems", "headroom plan apply"],
    );
    // AND, apart, a function that stores a plan
    let mut code = load_code();
    let tick = code
        .functions
        .iter_mut()
        .find(|f| f.crate_name == "headroom-tick")
        .expect("tick");
    tick.files.push(Masked::from_text(
        Path::new("functions/tick/src/sneak.rs"),
        "async fn sneak<S: StateStore>(s: &S, p: &StoredPlan) { let _ = s.save_plan(p, 1).await; }\n",
    ));
    assert_fails(
        &check_kept_from_functions(&code),
        &["sneak.rs calls save_plan", "dynamodb:TransactWriteItems"],
    );
    // AND the code as it is passes
    let ok = check_kept_from_functions(&load_code());
    assert!(ok.is_empty(), "{}", report(&ok));
}

#[test]
fn a_put_item_on_the_whole_table_or_alarms_beyond_scaling_policies_fail() {
    let t = doctored_text(
        "                  ForAllValues:StringLike:\n                    dynamodb:LeadingKeys: [\"TARGET#*\"]",
        "                  ForAllValues:StringLike:\n                    dynamodb:LeadingKeys: [\"*\"]",
    );
    assert_fails(
        &check_iam_hygiene(&t),
        &[
            "TickRole",
            "dynamodb:PutItem must carry the condition",
            "LeadingKeys",
        ],
    );
    let t = doctored_text(":alarm:TargetTracking*", ":alarm:*");
    assert_fails(
        &check_iam_hygiene(&t),
        &[
            "cloudwatch:DeleteAlarms may only name alarms",
            "TargetTracking*",
        ],
    );
}

// --- Parameter patterns: what each parameter takes and refuses. ---------------------------------

/// A parameter's name, values its pattern must take, and values it must refuse with why.
type ParameterValues = (
    &'static str,
    &'static [&'static str],
    &'static [(&'static str, &'static str)],
);

/// Values each parameter's `AllowedPattern` must take, and values it must refuse, with why.
/// CloudFormation matches the whole value in Java's regex dialect; the lookaheads these use read
/// the same in fancy-regex.
const PARAMETER_VALUES: &[ParameterValues] = &[
    (
        "TableName",
        &["headroom", "team_a.headroom-2"],
        &[("ab", "DynamoDB's shortest name is 3"), ("a b", "a space")],
    ),
    (
        "EndpointNamePrefix",
        &["chat-prod", "c", "0a"],
        &[
            ("", "no default: every endpoint would match"),
            ("-chat", "a SageMaker name starts with a letter or digit"),
            ("Chat", "ARNs carry the name in lower case"),
        ],
    ),
    (
        "EndpointConfigNamePrefix",
        &["", "chat-"],
        &[("Chat", "lower case, as in ARNs")],
    ),
    (
        "ModelNamePrefix",
        &["", "chat-"],
        &[("chat_", "an underscore")],
    ),
    (
        "AlarmNamePrefix",
        &["headroom-", "h", "team.a:#_-", "o-", "op-", "opsx-", "OPS-"],
        &[
            ("", "every alarm, the stack's own among them"),
            ("ops-", "the stack's own alarms are named ops-*"),
            ("ops-team-", "within the stack's ops-* names"),
            ("o", "a prefix of ops-*"),
            ("op", "a prefix of ops-*"),
            ("ops", "a prefix of ops-*"),
            ("head room", "a space"),
            ("headroom-*", "a wildcard in the alarm function's SourceArn"),
        ],
    ),
    (
        "OpsAlarmTopicArn",
        &["", "arn:aws:sns:eu-west-1:123456789012:ops"],
        &[(
            "arn:aws:sns:eu-west-1:1234:ops",
            "an account id has 12 digits",
        )],
    ),
    (
        "PipelineInvokerArn",
        &["", "arn:aws:iam::123456789012:role/ci/deployer"],
        &[("arn:aws:iam::123456789012:user/ci", "a user, not a role")],
    ),
    (
        "ExamplePeakTarget",
        &[
            "",
            "endpoint/chat-prod/variant/AllTraffic",
            "inference-component/chat-ic",
        ],
        &[("endpoint/chat-prod", "no variant")],
    ),
    (
        "ExamplePeakInvokeAt",
        &["2030-01-07T07:30:00"],
        &[(
            "2030-01-07T07:30:00Z",
            "EventBridge Scheduler's at() takes no zone",
        )],
    ),
    (
        "ExamplePeakStartsAt",
        &["2030-01-07T09:00:00Z"],
        &[
            (
                "2030-01-07T09:00:00",
                "the peak event's times are UTC, with the Z",
            ),
            (
                "2030-01-07T09:00:00+01:00",
                "an offset: the event's times are UTC",
            ),
        ],
    ),
    (
        "ExamplePeakEndsAt",
        &["2030-01-07T12:00:00Z"],
        &[("2030-01-07T12:00Z", "no seconds: not RFC 3339")],
    ),
];

/// Each parameter's AllowedPattern against [`PARAMETER_VALUES`], and the stack's own alarm
/// names against the prefix that AlarmNamePrefix may not take.
fn check_parameter_patterns(t: &Template) -> Vec<String> {
    let Some(params) = t.doc.get("Parameters").and_then(|p| p.as_mapping()) else {
        return vec!["the template has no Parameters".to_owned()];
    };
    let mut problems = Vec::new();
    for (name, spec) in params {
        let name = name.as_str().expect("a parameter name");
        let Some(pattern) = spec.get("AllowedPattern").and_then(|p| p.as_str()) else {
            continue;
        };
        let Some((_, take, refuse)) = PARAMETER_VALUES.iter().find(|(n, _, _)| *n == name) else {
            problems.push(format!(
                "{name}: its AllowedPattern has no row in PARAMETER_VALUES: add the values it must take and refuse"
            ));
            continue;
        };
        // CloudFormation matches the whole value; a search would let an unanchored pattern
        // take here what the stack refuses.
        let re = fancy_regex::Regex::new(&format!("^(?:{pattern})$"))
            .unwrap_or_else(|e| panic!("{name}: AllowedPattern {pattern:?}: {e}"));
        let matches = |v: &str| re.is_match(v).expect("the pattern runs");
        for v in *take {
            if !matches(v) {
                problems.push(format!(
                    "{name}: {pattern:?} refuses {v:?}, which it must take"
                ));
            }
        }
        for (v, why) in *refuse {
            if matches(v) {
                problems.push(format!(
                    "{name}: {pattern:?} takes {v:?}, which it must refuse ({why})"
                ));
            }
        }
        // The stack deploys with its defaults: each must pass its own pattern.
        if let Some(default) = spec.get("Default").and_then(|d| d.as_str()) {
            if !matches(default) {
                problems.push(format!("{name}: the default {default:?} fails {pattern:?}"));
            }
        }
    }
    // A row whose parameter lost its pattern (or is gone) would test nothing: deleting
    // AlarmNamePrefix's pattern is the widest loosening of all.
    for (name, _, _) in PARAMETER_VALUES {
        if params
            .get(*name)
            .and_then(|spec| spec.get("AllowedPattern"))
            .is_none()
        {
            problems.push(format!(
                "{name}: PARAMETER_VALUES has a row but the template has no AllowedPattern for it"
            ));
        }
    }
    // What AlarmNamePrefix refuses is what the stack's own alarms are named: they must never
    // reach the alarm function.
    for (id, r) in t.resources() {
        let kind = r.get("Type").and_then(|v| v.as_str());
        if !matches!(
            kind,
            Some("AWS::CloudWatch::Alarm" | "AWS::CloudWatch::CompositeAlarm")
        ) {
            continue;
        }
        let name = r
            .get("Properties")
            .and_then(|p| p.get("AlarmName"))
            .and_then(sub_text);
        if !name.as_deref().is_some_and(|n| n.starts_with("ops-")) {
            problems.push(format!(
                "{id}: AlarmName {name:?} must start with ops- (reserved from AlarmNamePrefix)"
            ));
        }
    }
    problems
}

#[test]
fn the_parameter_patterns_take_and_refuse_what_they_are_meant_to() {
    let problems = check_parameter_patterns(&load_template());
    assert!(
        problems.is_empty(),
        "parameter patterns:\n{}",
        report(&problems)
    );
}

#[test]
fn a_loosened_or_dropped_alarm_prefix_pattern_or_an_ops_alarm_renamed_fails() {
    let loose = doctored_text(
        r#"AllowedPattern: "^(?!(o|op|ops)$)(?!ops-)[A-Za-z0-9_.:#-]{1,200}$""#,
        r#"AllowedPattern: "^[A-Za-z0-9_.:#-]{0,200}$""#,
    );
    let problems = check_parameter_patterns(&loose);
    for needle in ["takes \"ops-\"", "takes \"ops\"", "takes \"\""] {
        assert_fails(&problems, &["AlarmNamePrefix", needle]);
    }
    let renamed = doctored_text(
        "AlarmName: !Sub ops-${AWS::StackName}-tick-errors",
        "AlarmName: !Sub ${AWS::StackName}-tick-errors",
    );
    assert_fails(
        &check_parameter_patterns(&renamed),
        &["must start with ops-"],
    );
    let dropped = doctored_text(
        r#"    AllowedPattern: "^(?!(o|op|ops)$)(?!ops-)[A-Za-z0-9_.:#-]{1,200}$"
"#,
        "",
    );
    assert_fails(
        &check_parameter_patterns(&dropped),
        &["AlarmNamePrefix", "no AllowedPattern"],
    );
}
