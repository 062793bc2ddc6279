//! Reading infra/template.yaml: functions, their roles' policy statements, environment and
//! event rules. CloudFormation's short-form tags (`!Ref`, `!GetAtt`, `!Sub`, `!If`, ...) arrive
//! from serde_yaml as tagged values; the long forms (`Fn::GetAtt`, `Ref`) are read too.

use std::collections::{BTreeMap, BTreeSet};

use serde_yaml::Value;

#[derive(Debug, Clone)]
pub struct Template {
    pub text: String,
    pub doc: Value,
}

/// One `AWS::Serverless::Function`.
#[derive(Debug, Clone)]
pub struct Function {
    pub logical_id: String,
    pub binary: Option<String>,
    pub role: Option<String>,
    pub env: BTreeSet<String>,
    pub events: Vec<Event>,
}

#[derive(Debug, Clone)]
pub struct Event {
    pub name: String,
    pub kind: String,
    pub properties: Value,
}

/// One IAM policy statement, where it sits, and what it says.
#[derive(Debug, Clone)]
pub struct Statement {
    pub resource: String,
    pub policy: String,
    pub effect: String,
    pub actions: Vec<String>,
    pub resources: Vec<Value>,
    pub condition: Option<Value>,
}

impl Template {
    pub fn parse(text: &str) -> Result<Self, String> {
        let doc: Value = serde_yaml::from_str(text)
            .map_err(|e| format!("infra/template.yaml does not parse: {e}"))?;
        Ok(Self {
            text: text.to_owned(),
            doc,
        })
    }

    pub fn resources(&self) -> Vec<(String, &Value)> {
        self.doc
            .get("Resources")
            .and_then(Value::as_mapping)
            .map(|m| {
                m.iter()
                    .filter_map(|(k, v)| Some((k.as_str()?.to_owned(), v)))
                    .collect()
            })
            .unwrap_or_default()
    }

    pub fn resource(&self, id: &str) -> Option<&Value> {
        self.doc.get("Resources")?.get(id)
    }

    pub fn resource_type(&self, id: &str) -> Option<&str> {
        self.resource(id)?.get("Type")?.as_str()
    }

    pub fn functions(&self) -> Vec<Function> {
        let global_env = env_names(self.doc.get("Globals").and_then(|g| g.get("Function")));
        self.resources()
            .into_iter()
            .filter(|(_, r)| {
                r.get("Type").and_then(Value::as_str) == Some("AWS::Serverless::Function")
            })
            .map(|(id, r)| {
                let props = r.get("Properties");
                let mut env = global_env.clone();
                env.extend(env_names(props));
                let events = props
                    .and_then(|p| p.get("Events"))
                    .and_then(Value::as_mapping)
                    .map(|m| {
                        m.iter()
                            .map(|(k, v)| Event {
                                name: k.as_str().unwrap_or_default().to_owned(),
                                kind: v
                                    .get("Type")
                                    .and_then(Value::as_str)
                                    .unwrap_or_default()
                                    .to_owned(),
                                properties: v.get("Properties").cloned().unwrap_or(Value::Null),
                            })
                            .collect()
                    })
                    .unwrap_or_default();
                Function {
                    binary: r
                        .get("Metadata")
                        .and_then(|m| m.get("BuildProperties"))
                        .and_then(|b| b.get("Binary"))
                        .and_then(Value::as_str)
                        .map(str::to_owned),
                    role: props.and_then(|p| p.get("Role")).and_then(get_att_resource),
                    logical_id: id,
                    env,
                    events,
                }
            })
            .collect()
    }

    /// Every statement of every IAM role's inline policies, and of every other resource-based
    /// policy document in the template (queue policies).
    pub fn statements(&self) -> Vec<Statement> {
        let mut out = Vec::new();
        for (id, r) in self.resources() {
            let props = r.get("Properties");
            let mut documents: Vec<(String, &Value)> = Vec::new();
            if let Some(policies) = props
                .and_then(|p| p.get("Policies"))
                .and_then(Value::as_sequence)
            {
                for p in policies {
                    let name = p
                        .get("PolicyName")
                        .and_then(Value::as_str)
                        .unwrap_or("?")
                        .to_owned();
                    if let Some(doc) = p.get("PolicyDocument") {
                        documents.push((name, doc));
                    }
                }
            }
            if let Some(doc) = props.and_then(|p| p.get("PolicyDocument")) {
                documents.push(("PolicyDocument".to_owned(), doc));
            }
            for (policy, doc) in documents {
                let statements = match doc.get("Statement") {
                    Some(Value::Sequence(s)) => s.clone(),
                    Some(one) => vec![one.clone()],
                    None => Vec::new(),
                };
                for s in statements {
                    out.push(Statement {
                        resource: id.clone(),
                        policy: policy.clone(),
                        effect: s
                            .get("Effect")
                            .and_then(Value::as_str)
                            .unwrap_or_default()
                            .to_owned(),
                        actions: strings(s.get("Action")),
                        resources: match s.get("Resource") {
                            Some(Value::Sequence(v)) => v.clone(),
                            Some(v) => vec![v.clone()],
                            None => Vec::new(),
                        },
                        condition: s.get("Condition").cloned(),
                    });
                }
            }
        }
        out
    }

    /// Managed policies attached to a role (they cannot be checked here, so none is allowed).
    pub fn managed_policies(&self, role: &str) -> Vec<String> {
        self.resource(role)
            .and_then(|r| r.get("Properties"))
            .map(|p| strings(p.get("ManagedPolicyArns")))
            .unwrap_or_default()
    }

    pub fn parameter_default(&self, name: &str) -> Option<String> {
        let d = self.doc.get("Parameters")?.get(name)?.get("Default")?;
        scalar(d)
    }
}

fn env_names(holder: Option<&Value>) -> BTreeSet<String> {
    holder
        .and_then(|h| h.get("Environment"))
        .and_then(|e| e.get("Variables"))
        .and_then(Value::as_mapping)
        .map(|m| {
            m.keys()
                .filter_map(|k| k.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

/// A string, or the strings of a list.
pub fn strings(v: Option<&Value>) -> Vec<String> {
    match v {
        Some(Value::String(s)) => vec![s.clone()],
        Some(Value::Sequence(items)) => items
            .iter()
            .filter_map(|i| i.as_str().map(str::to_owned))
            .collect(),
        _ => Vec::new(),
    }
}

pub fn scalar(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

/// The short or long form of an intrinsic function: `!Name arg` or `{"Fn::Name": arg}` /
/// `{"Ref": arg}`.
pub fn intrinsic<'a>(v: &'a Value, name: &str) -> Option<&'a Value> {
    if let Value::Tagged(t) = v {
        if t.tag == name {
            return Some(&t.value);
        }
    }
    let long = if name == "Ref" {
        "Ref".to_owned()
    } else {
        format!("Fn::{name}")
    };
    let m = v.as_mapping()?;
    if m.len() == 1 {
        return m.get(long.as_str());
    }
    None
}

/// `!GetAtt Role.Arn` / `{"Fn::GetAtt": [Role, Arn]}` -> `Role`.
pub fn get_att_resource(v: &Value) -> Option<String> {
    match intrinsic(v, "GetAtt")? {
        Value::String(s) => s.split('.').next().map(str::to_owned),
        Value::Sequence(parts) => parts.first().and_then(Value::as_str).map(str::to_owned),
        _ => None,
    }
}

/// Resolves `!Ref` to parameters and `!If` to conditions, with the given parameter values (the
/// defaults otherwise): enough to evaluate event patterns.
pub struct Resolver<'a> {
    pub template: &'a Template,
    pub params: BTreeMap<String, String>,
}

impl Resolver<'_> {
    pub fn param(&self, name: &str) -> Option<String> {
        self.params
            .get(name)
            .cloned()
            .or_else(|| self.template.parameter_default(name))
    }

    pub fn resolve(&self, v: &Value) -> Result<Value, String> {
        if let Some(arg) = intrinsic(v, "Ref") {
            let name = arg.as_str().ok_or("!Ref of a non-string")?;
            return self
                .param(name)
                .map(Value::String)
                .ok_or_else(|| format!("!Ref {name}: no value for it"));
        }
        if let Some(arg) = intrinsic(v, "If") {
            let parts = arg
                .as_sequence()
                .filter(|p| p.len() == 3)
                .ok_or("!If needs [condition, then, else]")?;
            let cond = parts[0].as_str().ok_or("!If condition must be a name")?;
            let branch = if self.condition(cond)? {
                &parts[1]
            } else {
                &parts[2]
            };
            return self.resolve(branch);
        }
        match v {
            Value::Sequence(items) => Ok(Value::Sequence(
                items
                    .iter()
                    .map(|i| self.resolve(i))
                    .collect::<Result<_, _>>()?,
            )),
            Value::Mapping(m) => {
                let mut out = serde_yaml::Mapping::new();
                for (k, v) in m {
                    out.insert(k.clone(), self.resolve(v)?);
                }
                Ok(Value::Mapping(out))
            }
            Value::Tagged(t) => Err(format!("cannot evaluate {} here", t.tag)),
            other => Ok(other.clone()),
        }
    }

    pub fn condition(&self, name: &str) -> Result<bool, String> {
        let c = self
            .template
            .doc
            .get("Conditions")
            .and_then(|c| c.get(name))
            .ok_or_else(|| format!("no condition {name}"))?;
        self.eval(c)
    }

    fn eval(&self, v: &Value) -> Result<bool, String> {
        if let Some(arg) = intrinsic(v, "Not") {
            let inner = arg
                .as_sequence()
                .and_then(|s| s.first())
                .ok_or("!Not needs [x]")?;
            return Ok(!self.eval(inner)?);
        }
        if let Some(arg) = intrinsic(v, "Equals") {
            let parts = arg
                .as_sequence()
                .filter(|p| p.len() == 2)
                .ok_or("!Equals needs [a, b]")?;
            let a = self.resolve(&parts[0])?;
            let b = self.resolve(&parts[1])?;
            return Ok(scalar(&a) == scalar(&b));
        }
        if let Some(arg) = intrinsic(v, "Condition") {
            return self.condition(arg.as_str().ok_or("Condition of a non-string")?);
        }
        Err(format!("cannot evaluate condition {v:?}"))
    }
}

/// EventBridge content filtering, for the forms headroom's rules use: literal values, `prefix`
/// (optionally `equals-ignore-case`), `equals-ignore-case` and `exists`.
pub fn pattern_matches(
    pattern: &serde_json::Value,
    event: &serde_json::Value,
) -> Result<bool, String> {
    let serde_json::Value::Object(fields) = pattern else {
        return Err(format!("a pattern level must be an object: {pattern}"));
    };
    for (key, want) in fields {
        let got = event.get(key);
        let ok = match want {
            serde_json::Value::Object(_) => match got {
                Some(inner) => pattern_matches(want, inner)?,
                None => false,
            },
            serde_json::Value::Array(options) => {
                let mut any = false;
                for option in options {
                    if value_matches(option, got)? {
                        any = true;
                    }
                }
                any
            }
            other => {
                return Err(format!(
                    "pattern field {key} must be a list or an object, not {other}"
                ))
            }
        };
        if !ok {
            return Ok(false);
        }
    }
    Ok(true)
}

fn value_matches(
    option: &serde_json::Value,
    got: Option<&serde_json::Value>,
) -> Result<bool, String> {
    use serde_json::Value as J;
    // An array in the event matches when any element does.
    if let Some(J::Array(items)) = got {
        for item in items {
            if value_matches(option, Some(item))? {
                return Ok(true);
            }
        }
        return Ok(false);
    }
    match option {
        J::Object(filter) => {
            let (name, arg) = filter.iter().next().ok_or("empty filter")?;
            let text = got.and_then(J::as_str);
            match (name.as_str(), arg) {
                ("exists", J::Bool(b)) => Ok(got.is_some() == *b),
                ("prefix", J::String(p)) => Ok(text.is_some_and(|t| t.starts_with(p.as_str()))),
                ("prefix", J::Object(inner)) => match inner.get("equals-ignore-case") {
                    Some(J::String(p)) => {
                        Ok(text.is_some_and(|t| t.to_lowercase().starts_with(&p.to_lowercase())))
                    }
                    _ => Err(format!("unsupported prefix filter {arg}")),
                },
                ("equals-ignore-case", J::String(p)) => {
                    Ok(text.is_some_and(|t| t.eq_ignore_ascii_case(p)))
                }
                _ => Err(format!("unsupported filter {name}: {arg}")),
            }
        }
        literal => Ok(got == Some(literal)),
    }
}

/// serde_yaml -> serde_json (after intrinsics are resolved).
pub fn to_json(v: &Value) -> Result<serde_json::Value, String> {
    serde_json::to_value(v).map_err(|e| format!("pattern does not convert to JSON: {e}"))
}
