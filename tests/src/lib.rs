//! Helpers for the tests that talk to moto's AWS server over HTTP with the real SDK clients.
//!
//! - [`moto()`]: the endpoint. `AWS_ENDPOINT_URL` when set (tests/run.sh starts one moto for the
//!   whole run), else a `moto_server` this test process starts once on a free port and that dies
//!   with it.
//! - [`sdk_config()`]: test credentials, us-east-1, one attempt (an unimplemented call would cost
//!   seconds of retries otherwise), bounded timeouts.
//! - [`unique()`]: names per test, so tests run in parallel against one moto without resets.
//! - [`CallCounter`]: an SDK interceptor counting calls per operation, to assert how many AWS
//!   calls a step makes; `CallCounter::aas_client` and friends build clients it counts.
//! - [`raw_scalable_target()`]: what moto's AAS holds, read past the adapter under test.
//! - [`table_with_plan()`]: a fresh headroom table holding a test plan.
//! - [`t()`]: an RFC 3339 instant.
//! - [`fault_proxy`]: a fault-injecting HTTP proxy between the SDK clients and moto (the fault
//!   suite, tests/tests/fault_suite.rs).
//! - [`cbor_bridge`]: CloudWatch's RPC v2 CBOR protocol onto moto's JSON one, so the real
//!   CloudWatch client and adapter run against moto; [`cloudwatch`]: a client through it and
//!   PutMetricData of a target's `Invocations`.

pub mod cbor_bridge;
pub mod cloudwatch;
pub mod fault_proxy;

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use aws_config::{Region, SdkConfig};
use aws_sdk_dynamodb::config::Credentials;
use aws_smithy_runtime_api::box_error::BoxError;
use aws_smithy_runtime_api::client::interceptors::context::BeforeSerializationInterceptorContextRef;
use aws_smithy_runtime_api::client::interceptors::Intercept;
use aws_smithy_runtime_api::client::orchestrator::Metadata;
use aws_smithy_runtime_api::client::runtime_components::RuntimeComponents;
use aws_smithy_types::config_bag::ConfigBag;
use chrono::{DateTime, Utc};
use headroom_adapters::{create_table, AwsSettings, DynamoStateStore};
use headroom_core::plan::{parse_plan, Plan};
use headroom_core::ports::{SaveOutcome, StateStore, StoredPlan};

/// How long a moto we start may take to answer (a loaded 2-core machine needs a few seconds).
const MOTO_STARTUP: Duration = Duration::from_secs(60);

static ENDPOINT: OnceLock<String> = OnceLock::new();

/// moto's endpoint URL, starting a server for this test process if none is configured.
///
/// # Panics
/// If `moto_server` is not installed or does not answer: the message says how to fix it.
pub fn moto() -> &'static str {
    ENDPOINT.get_or_init(|| match std::env::var("AWS_ENDPOINT_URL") {
        Ok(url) if !url.trim().is_empty() => url.trim().trim_end_matches('/').to_owned(),
        _ => start_moto(),
    })
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("no free TCP port on 127.0.0.1")
}

/// Starts `moto_server` under a small shell watchdog that kills it once this test process is
/// gone (Rust runs no destructors for statics at exit, and a panicking test may abort).
fn start_moto() -> String {
    let mut last_error = String::new();
    // The free port may be taken between our probe and moto's bind: try a few.
    for _ in 0..3 {
        let port = free_port();
        let log = std::env::temp_dir().join(format!("headroom-moto-{port}.log"));
        let watchdog = r#"moto_server -H 127.0.0.1 -p "$1" >"$2" 2>&1 & m=$!
while kill -0 "$3" 2>/dev/null && kill -0 "$m" 2>/dev/null; do sleep 1; done
kill "$m" 2>/dev/null"#;
        let spawned = Command::new("sh")
            .args(["-c", watchdog, "moto-watchdog"])
            .arg(port.to_string())
            .arg(&log)
            .arg(std::process::id().to_string())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn();
        if let Err(e) = spawned {
            panic!("cannot run sh to start moto_server: {e}");
        }
        let addr = SocketAddr::from(([127, 0, 0, 1], port));
        let deadline = Instant::now() + MOTO_STARTUP;
        while Instant::now() < deadline {
            if moto_answers(addr) {
                eprintln!(
                    "headroom-tests: started moto_server on 127.0.0.1:{port} (log {})",
                    log.display()
                );
                return format!("http://127.0.0.1:{port}");
            }
            let log_text = std::fs::read_to_string(&log).unwrap_or_default();
            if log_text.contains("not found") || log_text.contains("Address already in use") {
                break;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        last_error = std::fs::read_to_string(&log).unwrap_or_default();
    }
    panic!(
        "moto_server did not answer on 127.0.0.1: install it with `python3 -m pip install \"moto[server]\"`, \
         or run the tests through tests/run.sh (which starts one and sets AWS_ENDPOINT_URL). Its log:\n{last_error}"
    );
}

/// Whether `GET /moto-api/` answers 200 (moto's own dashboard: up once the server serves).
pub fn moto_answers(addr: SocketAddr) -> bool {
    let Ok(mut stream) = TcpStream::connect_timeout(&addr, Duration::from_millis(300)) else {
        return false;
    };
    let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
    if stream
        .write_all(format!("GET /moto-api/ HTTP/1.0\r\nHost: {addr}\r\n\r\n").as_bytes())
        .is_err()
    {
        return false;
    }
    let mut head = [0u8; 16];
    let mut read = 0;
    while read < head.len() {
        match stream.read(&mut head[read..]) {
            Ok(0) | Err(_) => break,
            Ok(k) => read += k,
        }
    }
    let head = String::from_utf8_lossy(&head[..read]);
    head.starts_with("HTTP/1.") && head.contains(" 200")
}

/// Retries and timeouts for tests: one attempt, and bounds that only a hung call reaches.
pub fn test_settings() -> AwsSettings {
    AwsSettings {
        max_attempts: 1,
        adaptive: false,
        attempt_timeout: Duration::from_secs(15),
        operation_timeout: Duration::from_secs(15),
        connect_timeout: Duration::from_secs(5),
    }
}

/// The SDK configuration for moto: its endpoint, test credentials, us-east-1.
pub async fn sdk_config() -> SdkConfig {
    test_settings()
        .loader()
        .endpoint_url(moto())
        .region(Region::new("us-east-1"))
        .credentials_provider(Credentials::new(
            "testing",
            "testing",
            None,
            None,
            "headroom-tests",
        ))
        .load()
        .await
}

/// A name no other test (in this or another process, this run or an earlier one against the
/// same moto) uses: letters, digits and hyphens, at most 40 characters, valid for SageMaker
/// endpoints and DynamoDB tables alike.
pub fn unique(prefix: &str) -> String {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    let n = NEXT.fetch_add(1, Ordering::SeqCst);
    let prefix: String = prefix.chars().take(12).collect();
    format!(
        "{prefix}-{:x}-{:x}-{n}",
        std::process::id(),
        nanos % 0xffff_ffff_ffff
    )
}

/// An instant written in RFC 3339.
///
/// # Panics
/// If `s` is not RFC 3339.
pub fn t(s: &str) -> DateTime<Utc> {
    s.parse().expect("test timestamps are RFC 3339")
}

/// A fresh headroom table in moto (a unique name) whose stored plan (version 1) is `plan_text`,
/// checked to parse first so that a broken test plan fails here. Returns the store over the
/// table (`store.table()` names it) and the parsed plan.
///
/// # Panics
/// If the plan does not parse or moto refuses the table or the write.
pub async fn table_with_plan(
    dynamo: &aws_sdk_dynamodb::Client,
    source_name: &str,
    plan_text: &str,
    applied_at: DateTime<Utc>,
) -> (DynamoStateStore, Plan) {
    let plan = parse_plan(source_name, plan_text).expect("the test plan is valid");
    let table = unique("headroom");
    create_table(dynamo, &table)
        .await
        .expect("create the table");
    let store = DynamoStateStore::new(dynamo.clone(), table);
    let stored = StoredPlan {
        version: 0,
        text: plan_text.to_owned(),
        source_name: source_name.to_owned(),
        applied_at,
    };
    assert_eq!(
        store.save_plan(&stored, 0).await.expect("store the plan"),
        SaveOutcome::Saved
    );
    (store, plan)
}

/// Creates a SageMaker model, endpoint config (one `AllTraffic` variant on ml.m5.large, an
/// instance type moto accepts) and endpoint named `endpoint` in moto.
pub async fn create_endpoint(
    sagemaker: &aws_sdk_sagemaker::Client,
    endpoint: &str,
    instances: i32,
) -> Result<(), BoxError> {
    use aws_sdk_sagemaker::types::ProductionVariantInstanceType;
    create_endpoint_with(sagemaker, endpoint, |variant| {
        variant
            .initial_instance_count(instances)
            .instance_type(ProductionVariantInstanceType::MlM5Large)
    })
    .await
}

/// Creates a SageMaker model, endpoint config (one serverless `AllTraffic` variant: 2 GB,
/// MaxConcurrency 20, `provisioned` concurrency) and endpoint named `endpoint` in moto. moto keeps
/// the serverless config and answers DescribeEndpoint with `CurrentServerlessConfig` and
/// `DesiredServerlessConfig`; its Application Auto Scaling refuses the
/// `sagemaker:variant:DesiredProvisionedConcurrency` dimension (moto 5.2.1), so AAS calls on such
/// a target are tested with aws-smithy-mocks (shared/adapters/src/aas.rs).
pub async fn create_serverless_endpoint(
    sagemaker: &aws_sdk_sagemaker::Client,
    endpoint: &str,
    provisioned: i32,
) -> Result<(), BoxError> {
    use aws_sdk_sagemaker::types::ProductionVariantServerlessConfig;
    create_endpoint_with(sagemaker, endpoint, |variant| {
        variant.serverless_config(
            ProductionVariantServerlessConfig::builder()
                .memory_size_in_mb(2048)
                .max_concurrency(20)
                .provisioned_concurrency(provisioned)
                .build(),
        )
    })
    .await
}

/// The model, the endpoint config with one `AllTraffic` variant as `variant` completes it, and
/// the endpoint, all named after `endpoint`.
async fn create_endpoint_with(
    sagemaker: &aws_sdk_sagemaker::Client,
    endpoint: &str,
    variant: impl FnOnce(
        aws_sdk_sagemaker::types::builders::ProductionVariantBuilder,
    ) -> aws_sdk_sagemaker::types::builders::ProductionVariantBuilder,
) -> Result<(), BoxError> {
    use aws_sdk_sagemaker::types::{ContainerDefinition, ProductionVariant};
    let model = format!("{endpoint}-model");
    let config = format!("{endpoint}-config");
    sagemaker
        .create_model()
        .model_name(&model)
        .execution_role_arn("arn:aws:iam::123456789012:role/sagemaker")
        .primary_container(
            ContainerDefinition::builder()
                .image("123456789012.dkr.ecr.us-east-1.amazonaws.com/model:latest")
                .build(),
        )
        .send()
        .await?;
    sagemaker
        .create_endpoint_config()
        .endpoint_config_name(&config)
        .production_variants(
            variant(
                ProductionVariant::builder()
                    .variant_name("AllTraffic")
                    .model_name(&model),
            )
            .build(),
        )
        .send()
        .await?;
    sagemaker
        .create_endpoint()
        .endpoint_name(endpoint)
        .endpoint_config_name(&config)
        .send()
        .await?;
    Ok(())
}

/// Counts SDK calls per operation name ("DescribeScalableTargets", "PutItem", ...). Build a
/// counted client with [`CallCounter::aas_client`] (and the DynamoDB and SageMaker ones), or add
/// it with `aws_sdk_x::config::Builder::from(&sdk_config).interceptor(counter.clone())`.
/// It counts calls, not HTTP attempts (tests run with one attempt, so they are the same).
#[derive(Debug, Clone, Default)]
pub struct CallCounter {
    calls: Arc<Mutex<BTreeMap<String, usize>>>,
}

impl CallCounter {
    pub fn get(&self, operation: &str) -> usize {
        self.snapshot().get(operation).copied().unwrap_or(0)
    }

    pub fn snapshot(&self) -> BTreeMap<String, usize> {
        self.calls
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    pub fn reset(&self) {
        self.calls
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clear();
    }

    /// An Application Auto Scaling client for `config` whose calls this counter counts.
    pub fn aas_client(&self, config: &SdkConfig) -> aws_sdk_applicationautoscaling::Client {
        aws_sdk_applicationautoscaling::Client::from_conf(
            aws_sdk_applicationautoscaling::config::Builder::from(config)
                .interceptor(self.clone())
                .build(),
        )
    }

    /// A DynamoDB client for `config` whose calls this counter counts.
    pub fn dynamo_client(&self, config: &SdkConfig) -> aws_sdk_dynamodb::Client {
        aws_sdk_dynamodb::Client::from_conf(
            aws_sdk_dynamodb::config::Builder::from(config)
                .interceptor(self.clone())
                .build(),
        )
    }

    /// A SageMaker client for `config` whose calls this counter counts.
    pub fn sagemaker_client(&self, config: &SdkConfig) -> aws_sdk_sagemaker::Client {
        aws_sdk_sagemaker::Client::from_conf(
            aws_sdk_sagemaker::config::Builder::from(config)
                .interceptor(self.clone())
                .build(),
        )
    }
}

/// What moto's AAS holds for the SageMaker variant `resource_id`, read with a raw
/// DescribeScalableTargets call rather than through the adapter under test.
///
/// # Panics
/// If the call fails or AAS holds no such target.
pub async fn raw_scalable_target(
    client: &aws_sdk_applicationautoscaling::Client,
    resource_id: &str,
) -> aws_sdk_applicationautoscaling::types::ScalableTarget {
    use aws_sdk_applicationautoscaling::types::{ScalableDimension, ServiceNamespace};
    let out = client
        .describe_scalable_targets()
        .service_namespace(ServiceNamespace::Sagemaker)
        .resource_ids(resource_id)
        .scalable_dimension(ScalableDimension::SageMakerVariantDesiredInstanceCount)
        .send()
        .await
        .expect("raw DescribeScalableTargets");
    out.scalable_targets()
        .first()
        .cloned()
        .unwrap_or_else(|| panic!("AAS holds no scalable target {resource_id}"))
}

impl Intercept for CallCounter {
    fn name(&self) -> &'static str {
        "headroom-tests::CallCounter"
    }

    // Not `read_before_execution`: a client-level interceptor sees that hook before the
    // operation's own configuration (which holds its name) is loaded.
    fn read_before_serialization(
        &self,
        _context: &BeforeSerializationInterceptorContextRef<'_>,
        _runtime_components: &RuntimeComponents,
        cfg: &mut ConfigBag,
    ) -> Result<(), BoxError> {
        let name = cfg
            .load::<Metadata>()
            .map_or("unknown", |m| m.name())
            .to_owned();
        *self
            .calls
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .entry(name)
            .or_default() += 1;
        Ok(())
    }
}
