//! The fault suite (issue 11): the three functions' real handler code, with real SDK clients
//! built as their `main` builds them, against moto through a fault-injecting proxy
//! (`headroom_tests::fault_proxy`: throttling, 5xx, latency, hung requests, connection resets
//! after a write landed).
//!
//! - **Sequence**: a seeded, realistic stretch of two hours (ticks around a planned peak, guard
//!   and wake alarms in both envelopes, duplicates, a stale and a reordered transition, explicit
//!   peaks on time and late, a pipeline hook, a model change seen through SageMaker events) is
//!   delivered to two worlds: one fault-free, one with every fault on. Each delivery is one cold
//!   start (fresh clients, as a new Lambda sandbox) and, like Lambda's asynchronous retries, a
//!   failed invocation is retried up to [`LAMBDA_RETRIES`] times. The end states are compared:
//!   claims, MinCapacity/MaxCapacity, suspension, model fingerprint, decision-log records,
//!   reviews, the endpoint's review tag; then up to two further (fault-free) ticks show whether
//!   the faulted world converges.
//! - **Concurrency**: 85 invocations on one target at once (ticks, explicit peaks, one guard
//!   transition delivered twenty times through both envelopes, pipeline hooks), with faults on.
//! - **Mutation**: random mutations of the sample events in events/ (per function) and of
//!   events/plans/example.toml: no panic, a clear error, and zero AWS mutations (counted in the
//!   proxy) for everything refused.
//!
//! What moto lacks stays out: inference components (the example plan's one is cut from the
//! mutation test's stored plan), and DescribeScalingActivities, which the proxy answers with an
//! empty list (the watcher's lead-time measurement from scaling activities is not exercised).
//!
//! The figures are printed (eprintln, `cargo test -- --nocapture` shows them). Checks that fail
//! today only because of a defect issue 11 lists are reported as EXPECTED FAILURE with the item;
//! `fault_suite_strict` (ignored) asserts every check: switch it on once those items land.
//!
//! Runs only against moto: set HEADROOM_MOTO=1 and AWS_ENDPOINT_URL (tests/run.sh does both);
//! otherwise each test says it is skipped. `HEADROOM_FAULT_SEED` overrides the seed.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration as StdDuration, Instant};

use aws_config::{Region, SdkConfig};
use aws_sdk_dynamodb::config::Credentials;
use aws_sdk_sagemaker::types::{
    ContainerDefinition, DesiredWeightAndCapacity, ProductionVariant, ProductionVariantInstanceType,
};
use aws_smithy_runtime::client::retries::RetryPartition;
use chrono::{DateTime, Duration, SecondsFormat, Utc};
use headroom_adapters::aas_history::AasHistory;
use headroom_adapters::dynamo_reviews::DynamoReviews;
use headroom_adapters::env::ENV_TABLE;
use headroom_adapters::sagemaker_models::SageMakerModels;
use headroom_adapters::{
    AasScalingTargets, Clients, DynamoStateStore, FunctionEnv, SageMakerCapacity,
};
use headroom_core::deploy_ports::ReviewStore;
use headroom_core::ids::ScalableTargetId;
use headroom_core::plan::parse_plan;
use headroom_core::ports::{SaveOutcome, ScalingTargets, StateStore, StoredPlan};
use headroom_core::state::TargetState;
use headroom_core::usecase::Ports;
use headroom_core::Suspended;
use headroom_lambda::Classified as _;
use headroom_lambda::{respond, Caller};
use headroom_tests::fault_proxy::{FaultConfig, FaultProxy, Stats};
use headroom_tests::{moto, raw_scalable_target, sdk_config, t, table_with_plan, unique};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use serde_json::{json, Value};

/// Lambda retries a failed asynchronous invocation at most twice.
const LAMBDA_RETRIES: usize = 2;
/// Seed 1: its faulted run loses decision-log records today (issue 11, item 3), as most seeds do.
const DEFAULT_SEED: u64 = 1;
/// Mutations per function, and of the plan.
const EVENT_MUTATIONS: usize = 200;
const PLAN_MUTATIONS: usize = 200;
/// An error message longer than this quotes too much of its input (issue 11, item 12).
const ERROR_BOUND: usize = 4096;

const TICK: &str = include_str!("../../events/schedule/tick-rule.json");
const PEAK: &str = include_str!("../../events/schedule/peak.json");
const BURST_EB: &str = include_str!("../../events/alarms/eventbridge-burst-alarm.json");
const BURST_DIRECT: &str = include_str!("../../events/alarms/direct-action-burst-alarm.json");
const BACKLOG_EB: &str = include_str!("../../events/alarms/eventbridge-backlog-alarm.json");
const BACKLOG_DIRECT: &str = include_str!("../../events/alarms/direct-action-backlog-ok.json");
const DEPLOYED: &str = include_str!("../../events/pipeline/deployed.json");
const CHECK: &str = include_str!("../../events/pipeline/check.json");
const IN_SERVICE: &str = include_str!("../../events/sagemaker/endpoint-in-service-v8-a.json");
const EXAMPLE_PLAN: &str = include_str!("../../events/plans/example.toml");

fn moto_enabled(test: &str) -> bool {
    if std::env::var_os("HEADROOM_MOTO").is_none() {
        eprintln!(
            "fault_suite::{test}: SKIPPED: HEADROOM_MOTO is not set. Run tests/run.sh (it starts moto and sets \
             HEADROOM_MOTO=1 and AWS_ENDPOINT_URL), or set both yourself."
        );
        return false;
    }
    true
}

fn seed() -> u64 {
    std::env::var("HEADROOM_FAULT_SEED")
        .ok()
        .and_then(|s| {
            let s = s.trim();
            s.strip_prefix("0x")
                .map_or_else(|| s.parse().ok(), |h| u64::from_str_radix(h, 16).ok())
        })
        .unwrap_or(DEFAULT_SEED)
}

fn json(text: &str) -> Value {
    serde_json::from_str(text).expect("the sample events are JSON")
}

fn rfc3339(at: DateTime<Utc>) -> String {
    at.to_rfc3339_opts(SecondsFormat::Secs, true)
}

/// CloudWatch's own timestamp form: milliseconds and `+0000`.
fn alarm_time(at: DateTime<Utc>) -> String {
    at.format("%Y-%m-%dT%H:%M:%S%.3f+0000").to_string()
}

// ------------------------------------------------------------------------------------------------
// A world: its own endpoints, scalable targets, table and plan in moto, and a proxy in front
// ------------------------------------------------------------------------------------------------

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Function {
    Tick,
    Alarm,
    Deploy,
}

/// How one invocation ended.
#[derive(Debug, Clone)]
enum Answer {
    /// The function returned (a rejection included: `{"handled": "rejected", ...}`).
    Ok(Value),
    /// The invocation failed: Lambda retries it (a retryable error), or, for a direct caller,
    /// a permanent error is the answer.
    Failed {
        error: String,
        retryable: bool,
    },
    Panicked(String),
}

impl Answer {
    fn rejection(&self) -> Option<String> {
        match self {
            Answer::Ok(v) if v["handled"] == "rejected" => {
                Some(v["error"].as_str().unwrap_or_default().to_owned())
            }
            _ => None,
        }
    }
}

struct World {
    label: &'static str,
    proxy: FaultProxy,
    /// Straight to moto, for setup and inspection (never through the proxy).
    direct: SdkConfig,
    table: String,
    chat: String,
    batch: String,
    chat_id: ScalableTargetId,
    batch_id: ScalableTargetId,
    store: DynamoStateStore,
    cold_starts: AtomicUsize,
}

/// The plan both worlds store: a real-time endpoint with a planned peak, a guard and reviews,
/// and an async endpoint that wakes from zero.
fn plan_text(chat: &str, batch: &str, t0: DateTime<Utc>) -> String {
    let launch = rfc3339(t0 + Duration::minutes(40));
    format!(
        r#"version = 1
[defaults]
lead_time = "15m"
ramp_down = {{ step = "10m", keep_percent = 50 }}

[[target]]
resource_id = "endpoint/{chat}/variant/AllTraffic"
min_capacity = 2
max_capacity = 12
lead_time = "25m"

  [[target.peak]]
  name = "launch"
  at = "{launch}"
  duration = "1h"
  floor = 6

  [target.guard]
  alarms = ["headroom-{chat}-burst"]
  hold = "20m"
  max_duration = "6h"
  suspend_scale_in = true
  floor = "high_water"
  step_down = {{ step = "10m", keep_percent = 50 }}

  [target.review]
  enabled = true
  tag_endpoint = true

[[target]]
resource_id = "endpoint/{batch}/variant/AllTraffic"
min_capacity = 0
max_capacity = 4

  [target.wake]
  alarms = ["headroom-{batch}-backlog"]
  capacity = 1
  quiet_period = "15m"
  max_duration = "2h"
"#
    )
}

/// A model and endpoint config named `<endpoint>-<version>`. The artifacts do not name the
/// endpoint, so both worlds see the same model fingerprints.
async fn model_and_config(sagemaker: &aws_sdk_sagemaker::Client, endpoint: &str, version: &str) {
    let name = format!("{endpoint}-{version}");
    sagemaker
        .create_model()
        .model_name(&name)
        .execution_role_arn("arn:aws:iam::123456789012:role/sagemaker")
        .primary_container(
            ContainerDefinition::builder()
                .image("123456789012.dkr.ecr.us-east-1.amazonaws.com/llm-server:2.4")
                .model_data_url(format!("s3://models/fault-suite/{version}/model.tar.gz"))
                .build(),
        )
        .send()
        .await
        .expect("create the model in moto");
    sagemaker
        .create_endpoint_config()
        .endpoint_config_name(&name)
        .production_variants(
            ProductionVariant::builder()
                .variant_name("AllTraffic")
                .model_name(&name)
                .initial_instance_count(2)
                .instance_type(ProductionVariantInstanceType::MlG4DnXlarge)
                .build(),
        )
        .send()
        .await
        .expect("create the endpoint config in moto");
}

impl World {
    async fn new(label: &'static str, faults: FaultConfig, t0: DateTime<Utc>) -> Arc<Self> {
        let direct = sdk_config().await;
        let sagemaker = aws_sdk_sagemaker::Client::new(&direct);
        let aas = AasScalingTargets::new(aws_sdk_applicationautoscaling::Client::new(&direct));
        let dynamo = aws_sdk_dynamodb::Client::new(&direct);
        let chat = unique("fs-chat");
        let batch = unique("fs-batch");
        for (endpoint, versions) in [(&chat, ["v1", "v2"].as_slice()), (&batch, &["v1"])] {
            for v in versions {
                model_and_config(&sagemaker, endpoint, v).await;
            }
            sagemaker
                .create_endpoint()
                .endpoint_name(endpoint.as_str())
                .endpoint_config_name(format!("{endpoint}-v1"))
                .send()
                .await
                .expect("create the endpoint in moto");
        }
        let chat_id = ScalableTargetId::variant(&chat, "AllTraffic").expect("valid id");
        let batch_id = ScalableTargetId::variant(&batch, "AllTraffic").expect("valid id");
        aas.register(&chat_id, 2, 12, Suspended::default())
            .await
            .expect("register the chat target");
        aas.register(&batch_id, 0, 4, Suspended::default())
            .await
            .expect("register the batch target");
        let (store, _) = table_with_plan(
            &dynamo,
            "fault-suite.toml",
            &plan_text(&chat, &batch, t0),
            t0 - Duration::days(1),
        )
        .await;
        let world = Arc::new(Self {
            label,
            proxy: FaultProxy::start(moto(), faults),
            direct,
            table: store.table().to_owned(),
            chat,
            batch,
            chat_id,
            batch_id,
            store,
            cold_starts: AtomicUsize::new(0),
        });
        world.set_instances(true, 2).await;
        world.set_instances(false, 0).await;
        world
    }

    /// The clients of one cold start, built as the functions' `main` builds them
    /// (`FunctionEnv` -> `AwsSettings` -> `Clients`), pointed at the proxy. Two settings differ
    /// from production, to keep the suite short: a 1 s attempt timeout (5 s in production: what
    /// ends a hung request) and a 20 ms initial retry backoff (1 s). Each cold start gets its own
    /// retry partition (token bucket), as a new Lambda sandbox would.
    async fn cold_start(&self) -> Clients {
        let table = self.table.clone();
        let env = FunctionEnv::from_lookup(move |name| match name {
            ENV_TABLE => Some(table.clone()),
            "HEADROOM_AWS_ATTEMPT_TIMEOUT_MS" => Some("1000".to_owned()),
            "HEADROOM_AWS_OPERATION_TIMEOUT_MS" => Some("8000".to_owned()),
            _ => None,
        })
        .expect("the function environment");
        let settings = env.aws;
        let config = settings
            .loader()
            .retry_config(
                settings
                    .retry_config()
                    .with_initial_backoff(StdDuration::from_millis(20)),
            )
            .endpoint_url(self.proxy.url())
            .region(Region::new("us-east-1"))
            .credentials_provider(Credentials::new(
                "testing",
                "testing",
                None,
                None,
                "fault-suite",
            ))
            .load()
            .await;
        let n = self.cold_starts.fetch_add(1, Ordering::Relaxed);
        let partition = RetryPartition::new(format!("fault-suite-{}-{n}", self.table));
        Clients {
            aas: aws_sdk_applicationautoscaling::Client::from_conf(
                aws_sdk_applicationautoscaling::config::Builder::from(&config)
                    .retry_partition(partition.clone())
                    .build(),
            ),
            dynamo: aws_sdk_dynamodb::Client::from_conf(
                aws_sdk_dynamodb::config::Builder::from(&config)
                    .retry_partition(partition.clone())
                    .build(),
            ),
            sagemaker: aws_sdk_sagemaker::Client::from_conf(
                aws_sdk_sagemaker::config::Builder::from(&config)
                    .retry_partition(partition)
                    .build(),
            ),
            // The suite's tick runs without forecasts (moto cannot serve the CBOR protocol).
            cloudwatch: aws_sdk_cloudwatch::Client::new(&config),
        }
    }

    /// One invocation, as the function's `main` serves it: the handler over the adapters, its
    /// result through `headroom_lambda::respond` with the same caller kind. Run as its own task,
    /// so that a panic is caught and reported.
    async fn invoke_once(&self, function: Function, event: &Value, now: DateTime<Utc>) -> Answer {
        let clients = self.cold_start().await;
        let table = self.table.clone();
        let event = event.clone();
        let request_id = unique("request");
        let task = tokio::spawn(async move {
            let result = match function {
                Function::Tick => {
                    let aas = AasScalingTargets::new(clients.aas.clone());
                    let store = DynamoStateStore::new(clients.dynamo.clone(), table);
                    let capacity = SageMakerCapacity::new(clients.sagemaker.clone());
                    let r = headroom_tick::handle(
                        Ports::new(&aas, &store).with_capacity(&capacity),
                        &event,
                        now,
                    )
                    .await;
                    let retryable = r.as_ref().err().is_some_and(|e| e.is_retryable());
                    (respond(r, &request_id, Caller::Asynchronous), retryable)
                }
                Function::Alarm => {
                    let aas = AasScalingTargets::new(clients.aas.clone());
                    let store = DynamoStateStore::new(clients.dynamo.clone(), table);
                    let capacity = SageMakerCapacity::new(clients.sagemaker.clone());
                    let r = headroom_alarm::handle(
                        Ports::new(&aas, &store).with_capacity(&capacity),
                        &event,
                        headroom_alarm::Origin::Anywhere,
                        now,
                    )
                    .await;
                    let retryable = r.as_ref().err().is_some_and(|e| e.is_retryable());
                    (respond(r, &request_id, Caller::Asynchronous), retryable)
                }
                Function::Deploy => {
                    let endpoints = SageMakerModels::new(clients.sagemaker.clone());
                    let history = AasHistory::new(clients.aas.clone());
                    let reviews = DynamoReviews::new(clients.dynamo.clone(), table.clone());
                    let aas = AasScalingTargets::new(clients.aas.clone());
                    let store = DynamoStateStore::new(clients.dynamo.clone(), table);
                    let deploy = Ports::new(&aas, &store)
                        .with_history(&history)
                        .with_endpoints(&endpoints)
                        .with_reviews(&reviews);
                    let caller = if event.get("kind").is_some() {
                        Caller::Direct
                    } else {
                        Caller::Asynchronous
                    };
                    let r = headroom_deploy::handle(deploy, &event, now).await;
                    let retryable = r.as_ref().err().is_some_and(|e| e.is_retryable());
                    (respond(r, &request_id, caller), retryable)
                }
            };
            let (result, retryable) = result;
            result.map_err(|e| (e.to_string(), retryable))
        });
        match task.await {
            Ok(Ok(value)) => Answer::Ok(value),
            Ok(Err((error, retryable))) => Answer::Failed { error, retryable },
            Err(join) if join.is_panic() => {
                let payload = join.into_panic();
                let message = payload
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| payload.downcast_ref::<&str>().map(|s| (*s).to_owned()))
                    .unwrap_or_else(|| "(no message)".to_owned());
                Answer::Panicked(message)
            }
            Err(join) => Answer::Failed {
                error: format!("the invocation's task was cancelled: {join}"),
                retryable: true,
            },
        }
    }

    /// A delivery with Lambda's retries: the failed invocation is retried (a new cold start)
    /// up to [`LAMBDA_RETRIES`] times, with the same `now` (headroom's decisions depend on it;
    /// the retry's minute of delay would only shift them) and without storms (they last
    /// seconds, Lambda retries a minute later). Returns every attempt's answer.
    async fn deliver(&self, function: Function, event: &Value, now: DateTime<Utc>) -> Vec<Answer> {
        let mut answers = Vec::new();
        for attempt in 0..=LAMBDA_RETRIES {
            self.proxy.storms(attempt == 0);
            let answer = self.invoke_once(function, event, now).await;
            let failed = matches!(answer, Answer::Failed { .. });
            answers.push(answer);
            if !failed {
                break;
            }
        }
        answers
    }

    /// The variant's instance count, changed outside headroom (moto sets current = desired).
    async fn set_instances(&self, chat: bool, n: i32) {
        let endpoint = if chat { &self.chat } else { &self.batch };
        aws_sdk_sagemaker::Client::new(&self.direct)
            .update_endpoint_weights_and_capacities()
            .endpoint_name(endpoint)
            .desired_weights_and_capacities(
                DesiredWeightAndCapacity::builder()
                    .variant_name("AllTraffic")
                    .desired_instance_count(n)
                    .build(),
            )
            .send()
            .await
            .expect("update the instance count in moto");
    }

    /// A rollout of model v2 on the chat endpoint, the way moto supports it (it has no
    /// UpdateEndpoint): the endpoint deleted and created again with the v2 config.
    async fn roll_out_v2(&self) {
        let sagemaker = aws_sdk_sagemaker::Client::new(&self.direct);
        sagemaker
            .delete_endpoint()
            .endpoint_name(&self.chat)
            .send()
            .await
            .expect("delete the endpoint in moto");
        sagemaker
            .create_endpoint()
            .endpoint_name(&self.chat)
            .endpoint_config_name(format!("{}-v2", self.chat))
            .send()
            .await
            .expect("create the endpoint again in moto");
    }

    /// World-specific names replaced by placeholders, so two worlds' records compare.
    fn normalize(&self, text: &str) -> String {
        text.replace(&self.chat, "{chat}")
            .replace(&self.batch, "{batch}")
    }

    async fn state(&self, id: &ScalableTargetId) -> TargetState {
        let mut states = self
            .store
            .load_states(std::slice::from_ref(id))
            .await
            .expect("read the target state from moto");
        headroom_core::state::take_state(&mut states, id)
    }

    async fn snapshot(&self) -> Snapshot {
        let aas = aws_sdk_applicationautoscaling::Client::new(&self.direct);
        let reviews = DynamoReviews::new(
            aws_sdk_dynamodb::Client::new(&self.direct),
            self.table.clone(),
        );
        let mut targets = BTreeMap::new();
        for (name, id) in [("chat", &self.chat_id), ("batch", &self.batch_id)] {
            let raw = raw_scalable_target(&aas, &id.resource_id()).await;
            let suspended = raw
                .suspended_state()
                .and_then(|s| s.dynamic_scaling_in_suspended())
                .unwrap_or(false);
            let state = self.state(id).await;
            let claims = state
                .claims
                .iter()
                .map(|c| {
                    let source = serde_json::to_string(&c.source).unwrap_or_default();
                    let body = serde_json::to_string(c).unwrap_or_default();
                    (self.normalize(&source), self.normalize(&body))
                })
                .collect();
            let log = self
                .store
                .recent_log(id, 1000)
                .await
                .expect("read the decision log from moto")
                .into_iter()
                .map(|e| e.body)
                .collect::<Vec<_>>()
                .iter()
                .map(|r| LogKey {
                    trigger: self.normalize(r["trigger"].as_str().unwrap_or_default()),
                    desired: r["desired"].to_string(),
                    registered: r["action"].get("register").is_some()
                        || r["action"].to_string().contains("register"),
                    drift: !r["drift"].is_null(),
                })
                .collect();
            let mut reviews: Vec<String> = reviews
                .reviews(id)
                .await
                .expect("read the reviews from moto")
                .iter()
                .map(|r| {
                    format!(
                        "{:?} {} -> {} x{}",
                        r.status, r.previous_fingerprint, r.fingerprint, r.occurrences
                    )
                })
                .collect();
            reviews.sort();
            targets.insert(
                name,
                TargetSnapshot {
                    bounds: (raw.min_capacity(), raw.max_capacity(), suspended),
                    claims,
                    model: state.model.clone(),
                    log,
                    reviews,
                },
            );
        }
        Snapshot {
            targets,
            tag: self.review_tag().await,
        }
    }

    /// The chat endpoint's `headroom:policy-review` tag (moto appends a repeated key where AWS
    /// overwrites: the last one counts).
    async fn review_tag(&self) -> Option<String> {
        let sagemaker = aws_sdk_sagemaker::Client::new(&self.direct);
        let arn = sagemaker
            .describe_endpoint()
            .endpoint_name(&self.chat)
            .send()
            .await
            .expect("describe the endpoint in moto")
            .endpoint_arn()
            .unwrap_or_default()
            .to_owned();
        let tags = sagemaker
            .list_tags()
            .resource_arn(arn)
            .send()
            .await
            .expect("list the endpoint's tags in moto");
        tags.tags()
            .iter()
            .filter(|t| t.key() == Some("headroom:policy-review"))
            .filter_map(|t| t.value().map(str::to_owned))
            .next_back()
    }
}

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct LogKey {
    trigger: String,
    desired: String,
    registered: bool,
    drift: bool,
}

#[derive(Debug, Clone, PartialEq)]
struct TargetSnapshot {
    /// (MinCapacity, MaxCapacity, dynamic scale-in suspended) in AAS.
    bounds: (i32, i32, bool),
    /// (source, the whole claim), names normalized.
    claims: Vec<(String, String)>,
    model: Option<headroom_core::ModelFingerprint>,
    log: Vec<LogKey>,
    reviews: Vec<String>,
}

#[derive(Debug, Clone, PartialEq)]
struct Snapshot {
    targets: BTreeMap<&'static str, TargetSnapshot>,
    tag: Option<String>,
}

impl Snapshot {
    /// Everything but the decision log (which further ticks cannot repair).
    fn converged_with(&self, other: &Snapshot) -> bool {
        self.tag == other.tag
            && self.targets.iter().all(|(name, a)| {
                other.targets.get(name).is_some_and(|b| {
                    a.bounds == b.bounds
                        && a.claims == b.claims
                        && a.model == b.model
                        && a.reviews == b.reviews
                })
            })
    }
}

// ------------------------------------------------------------------------------------------------
// The sequence
// ------------------------------------------------------------------------------------------------

#[derive(Debug, Clone)]
enum Step {
    Deliver {
        function: Function,
        event: Value,
        at: DateTime<Utc>,
        what: String,
    },
    SetInstances {
        chat: bool,
        n: i32,
    },
    RollOutV2,
}

/// The events of one world, built from the sample events in events/ with its names.
struct Events<'a> {
    w: &'a World,
}

impl Events<'_> {
    fn tick(&self, id: &str, at: DateTime<Utc>) -> Value {
        let mut e = json(TICK);
        e["id"] = json!(id);
        e["time"] = json!(rfc3339(at));
        e
    }

    fn peak(
        &self,
        name: &str,
        id: &str,
        floor: u32,
        starts: DateTime<Utc>,
        ends: DateTime<Utc>,
    ) -> Value {
        let mut e = json(PEAK);
        e["target"] = json!(self.w.chat_id.to_string());
        e["name"] = json!(name);
        e["id"] = json!(id);
        e["floor"] = json!(floor);
        e["starts_at"] = json!(rfc3339(starts));
        e["ends_at"] = json!(rfc3339(ends));
        e
    }

    /// A burst transition through the EventBridge rule (`direct: false`) or the alarm's own
    /// Lambda action.
    fn burst(&self, direct: bool, id: &str, state: &str, at: DateTime<Utc>) -> Value {
        let name = format!("headroom-{}-burst", self.w.chat);
        let arn = format!("arn:aws:cloudwatch:us-east-1:123456789012:alarm:{name}");
        let mut e = json(if direct { BURST_DIRECT } else { BURST_EB });
        let data = if direct {
            e["alarmArn"] = json!(arn);
            e["time"] = json!(alarm_time(at));
            &mut e["alarmData"]
        } else {
            e["id"] = json!(id);
            e["time"] = json!(rfc3339(at));
            e["resources"] = json!([arn]);
            &mut e["detail"]
        };
        data["alarmName"] = json!(name);
        data["state"]["value"] = json!(state);
        data["state"]["timestamp"] = json!(alarm_time(at));
        data["configuration"]["metrics"][0]["metricStat"]["metric"]["dimensions"]["EndpointName"] =
            json!(self.w.chat);
        e
    }

    fn backlog(&self, direct: bool, id: &str, state: &str, at: DateTime<Utc>) -> Value {
        let name = format!("headroom-{}-backlog", self.w.batch);
        let arn = format!("arn:aws:cloudwatch:us-east-1:123456789012:alarm:{name}");
        let mut e = json(if direct { BACKLOG_DIRECT } else { BACKLOG_EB });
        let data = if direct {
            e["alarmArn"] = json!(arn);
            e["time"] = json!(alarm_time(at));
            &mut e["alarmData"]
        } else {
            e["id"] = json!(id);
            e["time"] = json!(rfc3339(at));
            e["resources"] = json!([arn]);
            &mut e["detail"]
        };
        data["alarmName"] = json!(name);
        data["state"]["value"] = json!(state);
        data["state"]["timestamp"] = json!(alarm_time(at));
        data["configuration"]["metrics"][0]["metricStat"]["metric"]["dimensions"]["EndpointName"] =
            json!(self.w.batch);
        e
    }

    fn deployed(&self, run: &str, version: &str) -> Value {
        let mut e = json(DEPLOYED);
        e["endpoint"] = json!(self.w.chat);
        e["pipeline_run_id"] = json!(run);
        e["model_version"] = json!(version);
        e
    }

    fn check(&self, run: &str) -> Value {
        let mut e = json(CHECK);
        e["endpoint"] = json!(self.w.chat);
        e["pipeline_run_id"] = json!(run);
        e
    }

    fn in_service(&self, id: &str, at: DateTime<Utc>) -> Value {
        let mut e = json(IN_SERVICE);
        e["id"] = json!(id);
        e["time"] = json!(rfc3339(at));
        let chat = &self.w.chat;
        e["detail"]["EndpointName"] = json!(chat);
        e["detail"]["EndpointArn"] = json!(format!(
            "arn:aws:sagemaker:us-east-1:123456789012:endpoint/{chat}"
        ));
        e["detail"]["EndpointConfigName"] = json!(format!("{chat}-v2"));
        e
    }
}

/// One delivery of the sequence.
fn d(function: Function, event: Value, at: DateTime<Utc>, what: &str) -> Step {
    Step::Deliver {
        function,
        event,
        at,
        what: what.to_owned(),
    }
}

/// The two hours from `t0`: what each world receives, in order.
fn sequence(w: &World, t0: DateTime<Utc>) -> Vec<Step> {
    use Function::{Alarm, Deploy, Tick};
    let ev = Events { w };
    let m = |minutes: i64| t0 + Duration::minutes(minutes);
    let s = |minutes: i64, seconds: i64| m(minutes) + Duration::seconds(seconds);
    let tick = |minute: i64, what: &str| {
        d(
            Tick,
            ev.tick(&format!("tick-{minute}"), m(minute)),
            m(minute),
            what,
        )
    };
    let promo = ev.peak("promo", "sched-promo", 8, m(60), m(90));
    let flash = ev.peak("flash", "sched-flash", 9, m(65), m(100));
    let mut steps = vec![
        tick(0, "tick"),
        d(
            Deploy,
            ev.deployed("run-1", "v1"),
            m(1),
            "pipeline deployed (baseline)",
        ),
        tick(5, "tick"),
        d(Tick, promo.clone(), m(8), "explicit peak promo"),
        d(Tick, promo.clone(), m(9), "explicit peak promo, duplicate"),
        tick(10, "tick"),
        d(
            Tick,
            ev.tick("tick-10", m(10)),
            s(10, 20),
            "tick, duplicate delivery",
        ),
        tick(15, "tick (launch claim live)"),
        Step::SetInstances { chat: true, n: 7 },
        d(
            Alarm,
            ev.burst(false, "burst-alarm-1", "ALARM", s(17, 58)),
            m(18),
            "burst ALARM",
        ),
        d(
            Alarm,
            ev.burst(true, "", "ALARM", s(17, 58)),
            s(18, 5),
            "burst ALARM, direct envelope",
        ),
        tick(20, "tick (high water)"),
        d(
            Alarm,
            ev.burst(false, "burst-ok-stale", "OK", m(10)),
            m(22),
            "stale burst OK",
        ),
        d(
            Alarm,
            ev.backlog(false, "backlog-1", "ALARM", s(23, 30)),
            m(24),
            "backlog ALARM",
        ),
        d(
            Alarm,
            ev.backlog(false, "backlog-1", "ALARM", s(23, 30)),
            s(24, 10),
            "backlog ALARM, duplicate",
        ),
        tick(25, "tick (wake)"),
        Step::SetInstances { chat: false, n: 1 },
        tick(30, "tick (wake capacity in service)"),
        d(
            Alarm,
            ev.burst(true, "", "OK", m(31)),
            m(32),
            "burst OK, direct envelope",
        ),
        d(
            Alarm,
            ev.burst(false, "burst-alarm-late", "ALARM", m(26)),
            m(33),
            "burst ALARM delivered after its OK",
        ),
        tick(35, "tick"),
        d(
            Alarm,
            ev.backlog(true, "", "OK", m(37)),
            m(38),
            "backlog OK, direct envelope",
        ),
        tick(40, "tick (planned peak)"),
        tick(41, "tick (planned peak)"),
        tick(42, "tick (planned peak)"),
        Step::RollOutV2,
        d(
            Deploy,
            ev.in_service("sm-event-a", m(43)),
            m(43),
            "SageMaker IN_SERVICE (v2)",
        ),
        d(
            Deploy,
            ev.in_service("sm-event-b", m(43)),
            s(43, 30),
            "SageMaker IN_SERVICE (v2), second event",
        ),
        d(Deploy, ev.check("promote-1"), m(44), "pipeline check"),
    ];
    for minute in [44, 45, 50, 55, 60, 65] {
        steps.push(tick(minute, "tick"));
    }
    steps.push(d(Tick, flash.clone(), m(70), "explicit peak flash, late"));
    steps.push(d(Tick, flash, s(70, 40), "explicit peak flash, duplicate"));
    for minute in [75, 80, 85, 90, 95] {
        steps.push(tick(minute, "tick"));
    }
    steps.push(d(
        Tick,
        promo,
        m(96),
        "explicit peak promo, stale redelivery",
    ));
    for minute in [100, 101, 102, 103, 105, 110] {
        steps.push(tick(minute, "tick (after the peak)"));
    }
    steps.push(d(
        Deploy,
        ev.deployed("run-1", "v1"),
        m(111),
        "pipeline deployed, retried by the pipeline",
    ));
    for minute in [115, 120] {
        steps.push(tick(minute, "tick"));
    }
    steps
}

fn t0() -> DateTime<Utc> {
    t("2026-12-03T15:00:00Z")
}

/// What a run delivered.
#[derive(Debug, Default)]
struct RunReport {
    events: usize,
    invocations: usize,
    retried: usize,
    dead_lettered: Vec<String>,
    panics: Vec<String>,
    last_at: Option<DateTime<Utc>>,
}

async fn run_sequence(w: &World, t0: DateTime<Utc>) -> RunReport {
    let mut report = RunReport::default();
    for step in sequence(w, t0) {
        match step {
            Step::Deliver {
                function,
                event,
                at,
                what,
            } => {
                report.events += 1;
                report.last_at = Some(at);
                let answers = w.deliver(function, &event, at).await;
                report.invocations += answers.len();
                report.retried += answers.len() - 1;
                for a in &answers {
                    if let Answer::Panicked(p) = a {
                        report.panics.push(format!("{what}: {p}"));
                    }
                }
                if let Some(Answer::Failed { error: e, .. }) = answers.last() {
                    report
                        .dead_lettered
                        .push(format!("{what} at {at}: {}", w.normalize(e)));
                }
            }
            Step::SetInstances { chat, n } => w.set_instances(chat, n).await,
            Step::RollOutV2 => w.roll_out_v2().await,
        }
    }
    report
}

// ------------------------------------------------------------------------------------------------
// Comparing two worlds
// ------------------------------------------------------------------------------------------------

/// Multiset difference: how many of `a`'s items `b` lacks.
fn missing<T: Ord + Clone>(a: &[T], b: &[T]) -> usize {
    let mut counts: BTreeMap<T, isize> = BTreeMap::new();
    for x in a {
        *counts.entry(x.clone()).or_default() += 1;
    }
    for x in b {
        *counts.entry(x.clone()).or_default() -= 1;
    }
    counts
        .values()
        .filter(|v| **v > 0)
        .map(|v| *v as usize)
        .sum()
}

#[derive(Debug, Default)]
struct Comparison {
    lost_claims: usize,
    doubled_effects: usize,
    lost_log_records: usize,
    extra_log_records: usize,
    self_reported_drift: usize,
    wrong_bounds: usize,
    model_lost: usize,
    reviews_differ: usize,
    tag_differs: bool,
    details: Vec<String>,
}

fn compare(clean: &Snapshot, faulted: &Snapshot) -> Comparison {
    let mut c = Comparison::default();
    for (name, a) in &clean.targets {
        let Some(b) = faulted.targets.get(name) else {
            continue;
        };
        let lost = missing(&a.claims, &b.claims);
        if lost > 0 {
            c.details.push(format!(
                "{name}: claims differ:\n    clean:   {:?}\n    faulted: {:?}",
                a.claims, b.claims
            ));
        }
        c.lost_claims += lost;
        let sources_a: Vec<&String> = a.claims.iter().map(|(s, _)| s).collect();
        let sources_b: Vec<&String> = b.claims.iter().map(|(s, _)| s).collect();
        let doubled_claims = missing(&sources_b, &sources_a);
        let log_a: Vec<LogKey> = a.log.iter().filter(|k| !k.drift).cloned().collect();
        let log_b: Vec<LogKey> = b.log.iter().filter(|k| !k.drift).cloned().collect();
        let lost_log = missing(&log_a, &log_b);
        let extra_log = missing(&log_b, &log_a);
        // A record the clean run has and the faulted run has more often is a doubled effect.
        let count = |log: &[LogKey]| {
            let mut m: BTreeMap<LogKey, usize> = BTreeMap::new();
            for k in log {
                *m.entry(k.clone()).or_default() += 1;
            }
            m
        };
        let (count_a, count_b) = (count(&log_a), count(&log_b));
        let doubled_log: usize = count_b
            .iter()
            .filter_map(|(k, nb)| count_a.get(k).map(|na| nb.saturating_sub(*na)))
            .sum();
        let doubled_reviews = b.reviews.len().saturating_sub(a.reviews.len());
        c.doubled_effects += doubled_claims + doubled_log + doubled_reviews;
        c.lost_log_records += lost_log;
        c.extra_log_records += extra_log;
        if lost_log + extra_log > 0 {
            c.details.push(format!(
                "{name}: decision-log records lost {lost_log}: {:?}; extra {extra_log}: {:?}",
                difference(&log_a, &log_b),
                difference(&log_b, &log_a)
            ));
        }
        let drift_a = a.log.iter().filter(|k| k.drift).count();
        let drift_b = b.log.iter().filter(|k| k.drift).count();
        c.self_reported_drift += drift_b.saturating_sub(drift_a);
        if a.bounds != b.bounds {
            c.wrong_bounds += 1;
            c.details.push(format!(
                "{name}: AAS (min, max, scale-in suspended) clean {:?}, faulted {:?}",
                a.bounds, b.bounds
            ));
        }
        if a.model != b.model {
            c.model_lost += 1;
            c.details.push(format!(
                "{name}: model fingerprint clean {:?}, faulted {:?}",
                a.model, b.model
            ));
        }
        if a.reviews != b.reviews {
            c.reviews_differ += 1;
            c.details.push(format!(
                "{name}: reviews clean {:?}, faulted {:?}",
                a.reviews, b.reviews
            ));
        }
    }
    if clean.tag != faulted.tag {
        c.tag_differs = true;
        c.details.push(format!(
            "review tag clean {:?}, faulted {:?}",
            clean.tag, faulted.tag
        ));
    }
    c
}

fn difference(a: &[LogKey], b: &[LogKey]) -> Vec<String> {
    let mut rest: Vec<LogKey> = b.to_vec();
    let mut out = Vec::new();
    for x in a {
        if let Some(i) = rest.iter().position(|y| y == x) {
            rest.remove(i);
        } else {
            out.push(format!("{} {}", x.trigger, x.desired));
        }
    }
    out
}

/// One check of the suite: its name, whether it held, and the issue 11 item that makes it fail
/// today (if it does fail and a known defect explains it).
struct Check {
    name: String,
    passed: bool,
    known: Option<&'static str>,
}

fn check(name: impl Into<String>, passed: bool, known: Option<&'static str>) -> Check {
    // Issue 11's items 1, 2, 3 and 12 have landed: no defect is known any more, so every check
    // fails the suite. The item names stay at the call sites as the reason each check exists.
    let _ = known;
    Check {
        name: name.into(),
        passed,
        known: None,
    }
}

/// Prints the checks; returns the ones that fail without a known defect to explain them (all
/// failures when `strict`).
fn verdict(suite: &str, checks: &[Check], strict: bool) -> Vec<String> {
    let mut unexplained = Vec::new();
    for c in checks {
        let line = match (c.passed, c.known) {
            (true, None) => format!("ok       {}", c.name),
            (true, Some(item)) => format!(
                "ok       {} (marked as failing until issue 11 {item}; it held this run: once that item \
                 has landed, drop the mark)",
                c.name
            ),
            (false, Some(item)) => format!(
                "EXPECTED FAILURE {} (until issue 11 {item} lands; fault_suite_strict asserts it)",
                c.name
            ),
            (false, None) => format!("FAILED   {}", c.name),
        };
        eprintln!("  {suite}: {line}");
        if !c.passed && (strict || c.known.is_none()) {
            unexplained.push(c.name.clone());
        }
    }
    unexplained
}

fn faults_line(stats: &Stats) -> String {
    let kinds: Vec<String> = stats
        .faults
        .iter()
        .map(|(k, v)| format!("{k} {v}"))
        .collect();
    format!(
        "requests through the proxy {}, faults injected {} ({})",
        stats.requests,
        stats.faults_total(),
        kinds.join(", ")
    )
}

// ------------------------------------------------------------------------------------------------
// The sequence, fault-free and with every fault on
// ------------------------------------------------------------------------------------------------

async fn sequence_suite(strict: bool) {
    let started = Instant::now();
    let seed = seed();
    let t0 = t0();
    let clean = World::new("clean", FaultConfig::none(seed), t0).await;
    let faulted = World::new("faulted", FaultConfig::all(seed), t0).await;
    let clean_run = run_sequence(&clean, t0).await;
    let faulted_run = run_sequence(&faulted, t0).await;
    let stats = faulted.proxy.stats();
    let mut clean_snap = clean.snapshot().await;
    let mut faulted_snap = faulted.snapshot().await;
    let comparison = compare(&clean_snap, &faulted_snap);

    // Up to two further ticks, fault-free in both worlds, a minute apart.
    faulted.proxy.set_faults(FaultConfig::none(seed));
    let end = faulted_run.last_at.unwrap_or(t0);
    let mut converged_after = faulted_snap.converged_with(&clean_snap).then_some(0);
    for k in 1..=2 {
        if converged_after.is_some() {
            break;
        }
        let at = end + Duration::minutes(k);
        for w in [&clean, &faulted] {
            let ev = Events { w }.tick(&format!("tick-further-{k}"), at);
            let answers = w.deliver(Function::Tick, &ev, at).await;
            assert!(
                matches!(answers.last(), Some(Answer::Ok(_))),
                "the {} world's fault-free tick {k} after the sequence failed: {answers:?}",
                w.label
            );
        }
        clean_snap = clean.snapshot().await;
        faulted_snap = faulted.snapshot().await;
        if faulted_snap.converged_with(&clean_snap) {
            converged_after = Some(k as usize);
        }
    }

    eprintln!(
        "fault suite, sequence (seed {seed:#x}, every fault on; {:.1} s):",
        started.elapsed().as_secs_f64()
    );
    eprintln!(
        "  events sent {} (clean run: {} invocations); faulted run: {} invocations, {} Lambda-style retries, {} dead-lettered",
        faulted_run.events,
        clean_run.invocations,
        faulted_run.invocations,
        faulted_run.retried,
        faulted_run.dead_lettered.len()
    );
    eprintln!("  {}", faults_line(&stats));
    eprintln!(
        "  lost claims {}, doubled effects {}, lost log records {}, extra log records {} (of which self-reported drift {}), \
         wrong bounds {}, model fingerprints lost {}, reviews differing {}, review tag differs {}",
        comparison.lost_claims,
        comparison.doubled_effects,
        comparison.lost_log_records,
        comparison.extra_log_records + comparison.self_reported_drift,
        comparison.self_reported_drift,
        comparison.wrong_bounds,
        comparison.model_lost,
        comparison.reviews_differ,
        comparison.tag_differs
    );
    eprintln!(
        "  converged: {}",
        match converged_after {
            Some(0) => "yes, at the end of the sequence".to_owned(),
            Some(k) => format!("yes, after {k} further tick(s)"),
            None => "NO, not within two further ticks".to_owned(),
        }
    );
    for d in &comparison.details {
        eprintln!("  difference: {d}");
    }
    for d in &faulted_run.dead_lettered {
        eprintln!("  dead-lettered: {d}");
    }

    let checks = vec![
        check(
            "the fault-free run fails no delivery",
            clean_run.dead_lettered.is_empty(),
            None,
        ),
        check(
            "no invocation panics",
            clean_run.panics.is_empty() && faulted_run.panics.is_empty(),
            None,
        ),
        check(
            "faults were injected (storm, throttle, 5xx, hang, reset-after-write, latency)",
            [
                "storm",
                "throttle",
                "5xx",
                "hang",
                "reset-after-write",
                "latency",
            ]
            .iter()
            .all(|k| stats.faults.get(k).copied().unwrap_or(0) > 0),
            None,
        ),
        check(
            "no delivery is dead-lettered after Lambda's retries",
            faulted_run.dead_lettered.is_empty(),
            None,
        ),
        check("lost claims = 0", comparison.lost_claims == 0, None),
        check("doubled effects = 0", comparison.doubled_effects == 0, None),
        check(
            "lost log records = 0",
            comparison.lost_log_records == 0,
            Some("item 3 (log records lost when a retry finds nothing to do)"),
        ),
        check(
            "headroom reports none of its own writes as drift",
            comparison.self_reported_drift == 0,
            Some("item 1 (AAS written before the state)"),
        ),
        check("wrong bounds = 0", comparison.wrong_bounds == 0, None),
        check(
            "the model fingerprint is kept",
            comparison.model_lost == 0,
            Some("item 2 (model identity saved before the state)"),
        ),
        check(
            "reviews and the review tag match",
            comparison.reviews_differ == 0 && !comparison.tag_differs,
            None,
        ),
        check(
            "converged within two further ticks",
            converged_after.is_some(),
            Some("item 2 (model identity saved before the state)"),
        ),
    ];
    let failed = verdict("sequence", &checks, strict);
    assert!(
        failed.is_empty(),
        "fault suite (sequence, seed {seed:#x}): failed checks {failed:?}; differences:\n{}",
        comparison.details.join("\n")
    );
}

#[tokio::test]
async fn fault_suite_sequence_matches_a_fault_free_run() {
    if !moto_enabled("fault_suite_sequence_matches_a_fault_free_run") {
        return;
    }
    sequence_suite(false).await;
}

#[tokio::test]
async fn fault_suite_strict() {
    if !moto_enabled("fault_suite_strict") {
        return;
    }
    sequence_suite(true).await;
    concurrency_suite(true).await;
}

// ------------------------------------------------------------------------------------------------
// Concurrency: many invocations on one target at once
// ------------------------------------------------------------------------------------------------

const PEAKS_AT_ONCE: usize = 20;

async fn concurrency_suite(strict: bool) {
    let started = Instant::now();
    let seed = seed() ^ 0xc0c0;
    let t0 = t0();
    // Every fault on, storms rarer than in the sequence: 85 invocations at once already lose
    // write races to each other.
    let faults = FaultConfig {
        storm: 0.02,
        ..FaultConfig::all(seed)
    };
    let world = World::new("concurrent", faults, t0).await;
    let now = t0 + Duration::minutes(20);
    world.set_instances(true, 5).await;
    let ev = Events { w: &world };
    let mut deliveries: Vec<(Function, Value)> = Vec::new();
    for i in 0..40 {
        deliveries.push((Function::Tick, ev.tick(&format!("tick-c{i}"), now)));
    }
    for i in 0..PEAKS_AT_ONCE {
        let floor = 3 + u32::try_from(i % 6).unwrap_or(0);
        let starts = now + Duration::minutes(30 + 5 * i64::try_from(i).unwrap_or(0));
        deliveries.push((
            Function::Tick,
            ev.peak(
                &format!("p{i}"),
                &format!("sched-p{i}"),
                floor,
                starts,
                starts + Duration::hours(1),
            ),
        ));
    }
    for i in 0..20 {
        deliveries.push((
            Function::Alarm,
            ev.burst(i % 2 == 1, "burst-c", "ALARM", now - Duration::seconds(30)),
        ));
    }
    for _ in 0..5 {
        deliveries.push((Function::Deploy, ev.deployed("run-c", "v1")));
    }
    // Interleave the kinds, seeded.
    let mut rng = SmallRng::seed_from_u64(seed);
    for i in (1..deliveries.len()).rev() {
        let j = rng.random_range(0..=i);
        deliveries.swap(i, j);
    }
    let total = deliveries.len();
    // All at once; then, as Lambda retries a failed asynchronous invocation a minute or two
    // later, the failed ones again (fewer, and together), up to LAMBDA_RETRIES times.
    let mut pending: Vec<(Function, Value)> = deliveries;
    let mut invocations = 0;
    let mut dead = Vec::new();
    let mut dead_peaks = BTreeSet::new();
    let mut panics = Vec::new();
    for round in 0..=LAMBDA_RETRIES {
        world.proxy.storms(round == 0);
        let handles: Vec<_> = pending
            .iter()
            .cloned()
            .map(|(function, event)| {
                let world = world.clone();
                tokio::spawn(async move {
                    let answer = world.invoke_once(function, &event, now).await;
                    (function, event, answer)
                })
            })
            .collect();
        let mut failed = Vec::new();
        for h in handles {
            let (function, event, answer) = h.await.expect("a delivery task");
            invocations += 1;
            match answer {
                Answer::Panicked(p) => panics.push(p),
                Answer::Failed { error, .. } if round == LAMBDA_RETRIES => {
                    dead_peaks.extend(event["name"].as_str().map(str::to_owned));
                    dead.push(world.normalize(&error));
                }
                Answer::Failed { .. } => failed.push((function, event)),
                Answer::Ok(_) => {}
            }
        }
        pending = failed;
    }
    let stats = world.proxy.stats();
    world.proxy.set_faults(FaultConfig::none(seed));

    // Then, fault-free: the state holds every claim once, and a tick finds nothing to change.
    let state = world.state(&world.chat_id).await;
    let sources: Vec<String> = state.claims.iter().map(|c| c.source.to_string()).collect();
    // A delivery that failed every retry is not lost: it waits in the failed-events queue.
    let peaks_expected = PEAKS_AT_ONCE - dead_peaks.len();
    let peaks_held = (0..PEAKS_AT_ONCE)
        .filter(|i| !dead_peaks.contains(&format!("p{i}")))
        .filter(|i| {
            sources
                .iter()
                // Each explicit window is its own claim, `peak:NAME@<start>` (issue 11, item 4).
                .filter(|s| s.starts_with(&format!("peak:p{i}@")))
                .count()
                == 1
        })
        .count();
    let guard_claims = sources.iter().filter(|s| *s == "guard").count();
    let doubled = sources.len() - sources.iter().collect::<BTreeSet<_>>().len();
    let log = world
        .store
        .recent_log(&world.chat_id, 1000)
        .await
        .expect("read the decision log from moto")
        .into_iter()
        .map(|e| e.body)
        .collect::<Vec<_>>();
    let records: Vec<usize> = (0..PEAKS_AT_ONCE)
        .filter(|i| !dead_peaks.contains(&format!("p{i}")))
        .map(|i| {
            log.iter()
                .filter(|r| r["trigger"].as_str() == Some(&format!("peak-event:sched-p{i}")))
                .count()
        })
        .collect();
    let peak_records = records.iter().filter(|n| **n == 1).count();
    let peaks_unlogged = records.iter().filter(|n| **n == 0).count();
    let peaks_logged_twice = records.iter().filter(|n| **n > 1).count();
    let drift_records = log.iter().filter(|r| !r["drift"].is_null()).count();
    let aas_before = raw_scalable_target(
        &aws_sdk_applicationautoscaling::Client::new(&world.direct),
        &world.chat_id.resource_id(),
    )
    .await;
    let tick = world
        .deliver(
            Function::Tick,
            &ev.tick("tick-after", now + Duration::seconds(30)),
            now + Duration::seconds(30),
        )
        .await;
    let settled = match tick.last() {
        Some(Answer::Ok(v)) => {
            v["registered"].as_array().is_some_and(Vec::is_empty)
                && v["drifted"].as_array().is_some_and(Vec::is_empty)
        }
        _ => false,
    };
    // The plan's launch peak (floor 6) is live from t0 + 15 min (its lead time is 25 min), and
    // so is every stored claim whose hold has begun.
    let live_floor = state
        .claims
        .iter()
        .filter(|c| c.starts_at <= now && now < c.full_until)
        .map(|c| c.floor)
        .chain([6])
        .max()
        .unwrap_or(6)
        .clamp(2, 12);

    eprintln!(
        "fault suite, concurrency (seed {seed:#x}, every fault on; {:.1} s):",
        started.elapsed().as_secs_f64()
    );
    eprintln!(
        "  {total} deliveries at once on {}: {invocations} invocations, {} dead-lettered (kept in the failed-events queue, \
         not lost{})",
        world.normalize(&world.chat_id.to_string()),
        dead.len(),
        if dead_peaks.is_empty() {
            String::new()
        } else {
            format!("; peaks {dead_peaks:?}")
        }
    );
    eprintln!("  {}", faults_line(&stats));
    eprintln!(
        "  peak claims held once {peaks_held}/{peaks_expected}, guard claims {guard_claims}, doubled claims {doubled}, \
         peak events with exactly one log record {peak_records}/{peaks_expected} (none {peaks_unlogged}, several \
         {peaks_logged_twice}), drift records {drift_records}"
    );
    eprintln!(
        "  AAS after the round: min {} (live floor {live_floor}), scale-in suspended {:?}; the next fault-free tick {}",
        aas_before.min_capacity(),
        aas_before
            .suspended_state()
            .and_then(|s| s.dynamic_scaling_in_suspended()),
        if settled {
            "changed nothing and saw no drift"
        } else {
            "REGISTERED or saw drift"
        }
    );
    for d in &dead {
        eprintln!("  dead-lettered: {d}");
    }
    let checks = vec![
        check("no invocation panics", panics.is_empty(), None),
        check(
            "every explicit peak's claim is held, once (lost claims = 0)",
            peaks_held == peaks_expected,
            None,
        ),
        check("the guard claim is held, once", guard_claims == 1, None),
        check("no claim is doubled", doubled == 0, None),
        check(
            "no explicit peak has two decision-log records (doubled effects = 0)",
            peaks_logged_twice == 0,
            None,
        ),
        check(
            "every explicit peak has a decision-log record (lost log records = 0)",
            peaks_unlogged == 0,
            Some("item 3 (log records lost when a retry finds nothing to do)"),
        ),
        check(
            "AAS holds at least the live floor",
            i64::from(aas_before.min_capacity()) >= i64::from(live_floor),
            Some("item 1 (a losing decision still reaches AAS)"),
        ),
        check(
            "headroom reports none of its own writes as drift",
            drift_records == 0,
            Some("item 1 (a losing decision still reaches AAS)"),
        ),
        check(
            "AAS converged to the newest stored decision (the next tick changes nothing)",
            settled,
            Some("item 1 (a losing decision still reaches AAS)"),
        ),
    ];
    let failed = verdict("concurrency", &checks, strict);
    assert!(
        failed.is_empty(),
        "fault suite (concurrency, seed {seed:#x}): failed checks {failed:?}"
    );
}

#[tokio::test]
async fn fault_suite_concurrent_invocations_on_one_target() {
    if !moto_enabled("fault_suite_concurrent_invocations_on_one_target") {
        return;
    }
    concurrency_suite(false).await;
}

// ------------------------------------------------------------------------------------------------
// Mutations of the sample events and of the example plan
// ------------------------------------------------------------------------------------------------

/// The sample events each function takes (the ones in events/invalid included).
fn samples(function: Function) -> Vec<(String, Value)> {
    let root = std::path::Path::new(
        &std::env::var("CARGO_MANIFEST_DIR")
            .unwrap_or_else(|_| env!("CARGO_MANIFEST_DIR").to_owned()),
    )
    .join("../events");
    let dirs: &[&str] = match function {
        Function::Tick => &["schedule", "invalid"],
        Function::Alarm => &["alarms"],
        Function::Deploy => &["sagemaker", "pipeline"],
    };
    let mut out = Vec::new();
    for dir in dirs {
        let mut files: Vec<_> = std::fs::read_dir(root.join(dir))
            .unwrap_or_else(|e| panic!("events/{dir}: {e}"))
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "json"))
            .collect();
        files.sort();
        for f in files {
            let text = std::fs::read_to_string(&f).expect("a sample event");
            out.push((
                format!(
                    "{dir}/{}",
                    f.file_name().unwrap_or_default().to_string_lossy()
                ),
                serde_json::from_str(&text).expect("the sample events are JSON"),
            ));
        }
    }
    out
}

/// Every path to a value in `v`.
fn paths(v: &Value, at: &mut Vec<String>, out: &mut Vec<Vec<String>>) {
    out.push(at.clone());
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                at.push(k.clone());
                paths(x, at, out);
                at.pop();
            }
        }
        Value::Array(items) => {
            for (i, x) in items.iter().enumerate() {
                at.push(i.to_string());
                paths(x, at, out);
                at.pop();
            }
        }
        _ => {}
    }
}

fn at_path<'a>(v: &'a mut Value, path: &[String]) -> Option<&'a mut Value> {
    let mut cur = v;
    for p in path {
        cur = match cur {
            Value::Object(m) => m.get_mut(p)?,
            Value::Array(items) => items.get_mut(p.parse::<usize>().ok()?)?,
            _ => return None,
        };
    }
    Some(cur)
}

/// A random replacement value: other types, edge numbers, odd and over-long strings.
fn odd_value(rng: &mut SmallRng) -> Value {
    match rng.random_range(0..14) {
        0 => Value::Null,
        1 => json!(true),
        2 => json!(-1),
        3 => json!(0),
        4 => json!(u64::MAX),
        5 => json!(1e300),
        6 => json!(4_294_967_296_u64),
        7 => json!(""),
        8 => json!("x".repeat(70_000)),
        9 => json!("2036-01-01T00:00:00Z"),
        10 => json!("endpoint/other/variant/AllTraffic"),
        11 => json!({}),
        12 => json!([]),
        _ => json!("\u{0}\u{feff}ünï🦀"),
    }
}

fn mutate_event(rng: &mut SmallRng, original: &Value) -> Value {
    let mut e = original.clone();
    for _ in 0..rng.random_range(1..=3) {
        let mut all = Vec::new();
        paths(&e, &mut Vec::new(), &mut all);
        let path = all[rng.random_range(0..all.len())].clone();
        match rng.random_range(0..4) {
            // Remove the field.
            0 if !path.is_empty() => {
                let (last, parent) = path.split_last().expect("non-empty");
                if let Some(p) = at_path(&mut e, parent) {
                    match p {
                        Value::Object(m) => {
                            m.remove(last);
                        }
                        Value::Array(items) => {
                            if let Ok(i) = last.parse::<usize>() {
                                if i < items.len() {
                                    items.remove(i);
                                }
                            }
                        }
                        _ => {}
                    }
                }
            }
            // Add an unknown field.
            1 => {
                if let Some(Value::Object(m)) = at_path(&mut e, &path) {
                    m.insert("unexpected".to_owned(), odd_value(rng));
                }
            }
            // Edit a string in place.
            2 => {
                if let Some(Value::String(s)) = at_path(&mut e, &path) {
                    match rng.random_range(0..3) {
                        0 => s.truncate(s.len() / 2),
                        1 => s.push_str("-mutated"),
                        _ => *s = s.to_uppercase(),
                    }
                }
            }
            // Replace the value.
            _ => {
                let value = odd_value(rng);
                if let Some(slot) = at_path(&mut e, &path) {
                    *slot = value;
                }
            }
        }
    }
    e
}

fn mutate_plan(rng: &mut SmallRng, plan: &str) -> String {
    let mut lines: Vec<String> = plan.lines().map(str::to_owned).collect();
    for _ in 0..rng.random_range(1..=3) {
        let i = rng.random_range(0..lines.len());
        match rng.random_range(0..7) {
            0 => {
                lines.remove(i);
            }
            1 => {
                let copy = lines[i].clone();
                lines.insert(i, copy);
            }
            2 => {
                let j = rng.random_range(0..lines.len());
                lines.swap(i, j);
            }
            3 => {
                // A number in the line replaced by an edge value.
                let edge = [
                    "0",
                    "-1",
                    "4294967295",
                    "3000000000",
                    "99999999999999999999",
                    "1.5",
                ][rng.random_range(0..6)];
                let line = &lines[i];
                if let Some(start) = line.find(|c: char| c.is_ascii_digit()) {
                    let end = line[start..]
                        .find(|c: char| !c.is_ascii_digit())
                        .map_or(line.len(), |e| start + e);
                    lines[i] = format!("{}{edge}{}", &line[..start], &line[end..]);
                }
            }
            4 => {
                // A string value replaced.
                let line = lines[i].clone();
                if let (Some(a), Some(b)) = (line.find('"'), line.rfind('"')) {
                    if b > a {
                        let odd = [
                            "",
                            "30/4294967295 * * * *",
                            "endpoint/x",
                            "25 minutes",
                            "Mars/Olympus",
                            "🦀",
                        ][rng.random_range(0..6)];
                        lines[i] = format!("{}\"{odd}\"{}", &line[..a], &line[b + 1..]);
                    }
                }
            }
            5 => lines.insert(i, "unknown_field = 1".to_owned()),
            _ => {
                let line = &mut lines[i];
                let mut cut = line.len() / 2;
                while !line.is_char_boundary(cut) {
                    cut -= 1;
                }
                line.truncate(cut);
            }
        }
    }
    lines.join("\n")
}

/// The example plan without its inference component (moto has no inference-component API).
fn example_plan_without_components() -> String {
    let cut = EXAMPLE_PLAN.find("# --- An inference component").expect(
        "events/plans/example.toml still has its inference-component section: update this test",
    );
    EXAMPLE_PLAN[..cut].to_owned()
}

#[tokio::test]
async fn fault_suite_mutated_events_and_plans_are_refused_without_aws_mutations() {
    if !moto_enabled("fault_suite_mutated_events_and_plans_are_refused_without_aws_mutations") {
        return;
    }
    let started = Instant::now();
    let seed = seed() ^ 0x5eed;
    let mut rng = SmallRng::seed_from_u64(seed);
    let now = t("2026-03-14T09:45:00Z");
    // A table holding the example plan (the targets the samples name), a proxy without faults.
    let direct = sdk_config().await;
    let (example_store, _) = table_with_plan(
        &aws_sdk_dynamodb::Client::new(&direct),
        "events/plans/example.toml",
        &example_plan_without_components(),
        now - Duration::days(1),
    )
    .await;
    let world = World {
        label: "mutations",
        proxy: FaultProxy::start(moto(), FaultConfig::none(seed)),
        direct,
        table: example_store.table().to_owned(),
        chat: "chat-prod".to_owned(),
        batch: "summarize-async".to_owned(),
        chat_id: ScalableTargetId::variant("chat-prod", "AllTraffic").expect("valid id"),
        batch_id: ScalableTargetId::variant("summarize-async", "AllTraffic").expect("valid id"),
        store: example_store,
        cold_starts: AtomicUsize::new(0),
    };

    let mut per_function = BTreeMap::new();
    let mut panics = Vec::new();
    let mut unclear = Vec::new();
    let mut mutating_rejections = Vec::new();
    let mut long_errors = 0usize;
    for function in [Function::Tick, Function::Alarm, Function::Deploy] {
        let originals = samples(function);
        let (mut refused, mut accepted, mut failed) = (0usize, 0usize, 0usize);
        for n in 0..EVENT_MUTATIONS {
            let (name, original) = &originals[n % originals.len()];
            let event = mutate_event(&mut rng, original);
            let before = world.proxy.stats();
            let answer = world.invoke_once(function, &event, now).await;
            let during = world.proxy.stats().since(&before);
            // A refusal: an asynchronous event answered `rejected`, or a direct caller (the
            // pipeline hook) failed with a permanent error. A retryable failure (throttling, a
            // lost race, moto refusing a target the sample names) is neither.
            let refusal = match &answer {
                Answer::Panicked(p) => {
                    panics.push(format!("{function:?} on a mutation of {name}: {p}"));
                    continue;
                }
                Answer::Ok(_) => answer.rejection(),
                Answer::Failed {
                    error,
                    retryable: false,
                } => Some(error.clone()),
                Answer::Failed {
                    retryable: true, ..
                } => {
                    failed += 1;
                    continue;
                }
            };
            match refusal {
                Some(e) => {
                    refused += 1;
                    if e.trim().is_empty() {
                        unclear.push(format!(
                            "{function:?} on a mutation of {name}: an empty error"
                        ));
                    }
                    if e.len() > ERROR_BOUND {
                        long_errors += 1;
                        eprintln!(
                            "  over {ERROR_BOUND} characters ({}): {}...",
                            e.len(),
                            e.chars().take(300).collect::<String>()
                        );
                    }
                    if during.mutations() > 0 {
                        mutating_rejections.push(format!(
                            "{function:?} refused a mutation of {name} after {} AWS mutation(s) {:?}: {}",
                            during.mutations(),
                            during.forwarded,
                            e.chars().take(300).collect::<String>()
                        ));
                    }
                }
                None => accepted += 1,
            }
        }
        per_function.insert(format!("{function:?}"), (refused, accepted, failed));
    }

    // Plans: a mutated plan either validates, or is refused with an error naming the file; a
    // stored plan that no longer validates (written by an older version, or by hand) makes the
    // tick refuse with no AWS mutation.
    let (mut plans_valid, mut plans_invalid, mut plan_ticks_mutating) =
        (0usize, 0usize, Vec::new());
    let tick = Events { w: &world }.tick("tick-plan", now);
    for n in 0..PLAN_MUTATIONS {
        let text = mutate_plan(&mut rng, EXAMPLE_PLAN);
        let parsed = std::panic::catch_unwind(|| parse_plan("mutated.toml", &text));
        match parsed {
            Err(_) => panics.push(format!("parse_plan panicked on mutated plan {n}:\n{text}")),
            Ok(Ok(_)) => plans_valid += 1,
            Ok(Err(e)) => {
                plans_invalid += 1;
                let message = e.to_string();
                if !message.contains("mutated.toml") {
                    unclear.push(format!("plan error without the file's name: {message}"));
                }
                if message.len() > ERROR_BOUND {
                    long_errors += 1;
                    eprintln!(
                        "  over {ERROR_BOUND} characters ({}): {}...",
                        message.len(),
                        message.chars().take(300).collect::<String>()
                    );
                }
                // Only every fourth invalid plan is stored and ticked over (bounded time).
                if plans_invalid % 4 != 1 {
                    continue;
                }
                let table = world.store.clone();
                let current = table
                    .load_plan()
                    .await
                    .ok()
                    .flatten()
                    .map_or(0, |p| p.version);
                let stored = StoredPlan {
                    version: current,
                    text: text.clone(),
                    source_name: "mutated.toml".to_owned(),
                    applied_at: now,
                };
                assert_eq!(
                    table
                        .save_plan(&stored, current)
                        .await
                        .expect("store the mutated plan directly"),
                    SaveOutcome::Saved
                );
                let before = world.proxy.stats();
                let answer = world.invoke_once(Function::Tick, &tick, now).await;
                let during = world.proxy.stats().since(&before);
                match &answer {
                    Answer::Panicked(p) => {
                        panics.push(format!("tick over an invalid stored plan: {p}"))
                    }
                    _ if during.mutations() > 0 => {
                        plan_ticks_mutating.push(format!("{:?}", during.forwarded))
                    }
                    Answer::Ok(_) if answer.rejection().is_some() => {}
                    other => unclear.push(format!(
                        "a tick over an invalid stored plan answered {other:?}"
                    )),
                }
            }
        }
    }
    let stats = world.proxy.stats();

    eprintln!(
        "fault suite, mutations (seed {seed:#x}; {:.1} s):",
        started.elapsed().as_secs_f64()
    );
    for (f, (refused, accepted, failed)) in &per_function {
        eprintln!(
            "  {f}: {EVENT_MUTATIONS} mutated events: {refused} refused, {accepted} accepted, {failed} failed retryably"
        );
    }
    eprintln!(
        "  plans: {PLAN_MUTATIONS} mutated, {plans_invalid} refused, {plans_valid} valid; invalid plans stored and ticked over: \
         {} with AWS mutations",
        plan_ticks_mutating.len()
    );
    eprintln!(
        "  panics {}, unclear errors {}, refusals after an AWS mutation {}, errors over {ERROR_BOUND} characters {long_errors}; \
         requests through the proxy {}, of them mutations {}",
        panics.len(),
        unclear.len(),
        mutating_rejections.len(),
        stats.requests,
        stats.mutations()
    );
    for p in panics
        .iter()
        .chain(&unclear)
        .chain(&mutating_rejections)
        .take(10)
    {
        eprintln!("  problem: {}", p.chars().take(400).collect::<String>());
    }
    let checks = vec![
        check("no panic", panics.is_empty(), None),
        check(
            "every refusal has a clear error (non-empty; a plan's names its file)",
            unclear.is_empty(),
            None,
        ),
        check(
            "zero AWS mutations for a refused event",
            mutating_rejections.is_empty(),
            None,
        ),
        check(
            "zero AWS mutations for a tick over an invalid stored plan",
            plan_ticks_mutating.is_empty(),
            None,
        ),
        check(
            "error messages quote at most 4 KB of their input",
            long_errors == 0,
            Some("item 12 (inputs have no size bounds; errors quote them whole)"),
        ),
    ];
    let failed = verdict("mutations", &checks, false);
    assert!(
        failed.is_empty(),
        "fault suite (mutations, seed {seed:#x}): failed checks {failed:?}"
    );
}
