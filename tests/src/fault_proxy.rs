//! A fault-injecting HTTP/1.1 proxy between headroom's SDK clients and moto.
//!
//! The clients point at the proxy (their endpoint URL); the proxy forwards each request to moto
//! on a fresh connection, or instead, decided per request by a seeded random generator:
//!
//! - **throttle**: answers `400 ThrottlingException` in the service's own JSON error shape, without
//!   forwarding;
//! - **storm**: throttling or 5xx for the next [`FaultConfig::storm_len`] requests of one
//!   operation (throttling comes in bursts): long enough to outlast the SDK's own attempts, so
//!   the invocation fails at that step and Lambda's retry has to finish the job. A storm lasts
//!   seconds, Lambda retries a minute or two later: [`FaultProxy::storms`] turns them off for
//!   the retries;
//! - **5xx**: answers `500 InternalServerError` or `503 ServiceUnavailable`, without forwarding;
//! - **latency**: forwards after a pause (up to [`FaultConfig::latency_max`]);
//! - **hang**: holds the request unanswered for [`FaultConfig::hang_for`], then closes: the SDK's
//!   attempt timeout is what ends it on the client's side;
//! - **reset after write**: for mutating operations only (PutItem, RegisterScalableTarget,
//!   AddTags, ...), forwards the request, lets moto apply it, then closes the connection without
//!   answering (with SO_LINGER 0: a TCP reset). The ambiguous write: the client cannot tell
//!   whether its write landed.
//!
//! All three services headroom uses speak AWS JSON (an `X-Amz-Target: Service.Operation` header),
//! so the operation of every request is known; the proxy counts per operation what reached moto
//! (mutations included, for "zero AWS mutations" checks) and every fault it injected.
//! `DescribeScalingActivities`, which moto lacks (HTTP 500 with an HTML page), is answered by
//! the proxy itself with an empty list, so that the deployment watcher's reads succeed.
//!
//! The proxy runs on its own thread and runtime, so a hung request holds nothing in the test's
//! runtime. It stops when dropped.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// Operations that change something in AWS (the ones "zero AWS mutations" counts).
pub const MUTATING: &[&str] = &[
    "PutItem",
    "UpdateItem",
    "DeleteItem",
    "BatchWriteItem",
    "TransactWriteItems",
    "CreateTable",
    "RegisterScalableTarget",
    "DeregisterScalableTarget",
    "PutScalingPolicy",
    "DeleteScalingPolicy",
    "PutScheduledAction",
    "AddTags",
    "DeleteTags",
    "UpdateEndpointWeightsAndCapacities",
    "UpdateEndpoint",
    "UpdateInferenceComponentRuntimeConfig",
];

/// A bound on one HTTP message head: a request or answer beyond it is refused.
const MAX_HEAD: usize = 64 * 1024;
/// A bound on one HTTP message body (headroom's largest is a state item, under 400 KB).
const MAX_BODY: usize = 16 * 1024 * 1024;

/// How often each fault happens, per request (probabilities, checked in this order).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FaultConfig {
    pub seed: u64,
    /// Starts a storm on the request's operation.
    pub storm: f64,
    pub storm_len: usize,
    pub throttle: f64,
    pub server_error: f64,
    pub hang: f64,
    /// Of mutating requests only.
    pub reset_after_write: f64,
    pub latency: f64,
    pub latency_max: Duration,
    pub hang_for: Duration,
}

impl FaultConfig {
    /// No fault: a plain forwarder.
    pub fn none(seed: u64) -> Self {
        Self {
            seed,
            storm: 0.0,
            storm_len: 0,
            throttle: 0.0,
            server_error: 0.0,
            hang: 0.0,
            reset_after_write: 0.0,
            latency: 0.0,
            latency_max: Duration::from_millis(1),
            hang_for: Duration::from_millis(1),
        }
    }

    /// Every fault on: about one request in four is disturbed, one mutating request in six is
    /// reset after it landed, and one request in twenty-five starts a storm that outlasts the
    /// SDK's three attempts.
    pub fn all(seed: u64) -> Self {
        Self {
            seed,
            storm: 0.04,
            storm_len: 3,
            throttle: 0.07,
            server_error: 0.05,
            hang: 0.015,
            reset_after_write: 0.16,
            latency: 0.12,
            latency_max: Duration::from_millis(120),
            hang_for: Duration::from_millis(2500),
        }
    }
}

/// What the proxy saw and did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Stats {
    /// Requests received from the clients.
    pub requests: usize,
    /// Requests that reached moto, per operation.
    pub forwarded: BTreeMap<String, usize>,
    /// Faults injected, per kind ("storm", "throttle", "5xx", "latency", "hang",
    /// "reset-after-write"); a storm counts each request it fails.
    pub faults: BTreeMap<&'static str, usize>,
    /// Requests the proxy answered itself for an API moto lacks.
    pub stubbed: BTreeMap<String, usize>,
}

impl Stats {
    /// Requests of mutating operations that reached moto.
    pub fn mutations(&self) -> usize {
        self.forwarded
            .iter()
            .filter(|(op, _)| MUTATING.contains(&op.as_str()))
            .map(|(_, n)| n)
            .sum()
    }

    pub fn faults_total(&self) -> usize {
        self.faults.values().sum()
    }

    pub fn forwarded_of(&self, op: &str) -> usize {
        self.forwarded.get(op).copied().unwrap_or(0)
    }

    /// What happened between `earlier` and `self` (both from the same proxy).
    pub fn since(&self, earlier: &Stats) -> Stats {
        fn diff<K: Ord + Clone>(
            a: &BTreeMap<K, usize>,
            b: &BTreeMap<K, usize>,
        ) -> BTreeMap<K, usize> {
            a.iter()
                .filter_map(|(k, v)| {
                    let d = v - b.get(k).copied().unwrap_or(0);
                    (d > 0).then(|| (k.clone(), d))
                })
                .collect()
        }
        Stats {
            requests: self.requests - earlier.requests,
            forwarded: diff(&self.forwarded, &earlier.forwarded),
            faults: diff(&self.faults, &earlier.faults),
            stubbed: diff(&self.stubbed, &earlier.stubbed),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Fault {
    None,
    Throttle,
    ServerError { unavailable: bool },
    Hang,
    ResetAfterWrite,
    Latency(Duration),
}

/// The fault config, its random sequence, what was seen, and the storms under way (operation ->
/// requests left, and the fault they get).
type State = (
    FaultConfig,
    SmallRng,
    Stats,
    BTreeMap<String, (usize, Fault)>,
    bool,
);

struct Shared {
    upstream: SocketAddr,
    state: Mutex<State>,
}

impl Shared {
    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Draws this request's fault and counts the request.
    fn decide(&self, operation: &str) -> Fault {
        let mut guard = self.lock();
        let (config, rng, stats, storms, storms_on) = &mut *guard;
        stats.requests += 1;
        let mutating = MUTATING.contains(&operation);
        if let Some((left, fault)) = storms.get_mut(operation) {
            let fault = *fault;
            *left -= 1;
            if *left == 0 {
                storms.remove(operation);
            }
            *stats.faults.entry("storm").or_default() += 1;
            return fault;
        }
        if !*storms_on {
            storms.clear();
        }
        let storm_draw: f64 = rng.random();
        if *storms_on && config.storm_len > 0 && storm_draw < config.storm {
            let fault = if rng.random_bool(0.5) {
                Fault::Throttle
            } else {
                Fault::ServerError {
                    unavailable: rng.random_bool(0.5),
                }
            };
            if config.storm_len > 1 {
                storms.insert(operation.to_owned(), (config.storm_len - 1, fault));
            }
            *stats.faults.entry("storm").or_default() += 1;
            return fault;
        }
        let u: f64 = rng.random();
        let throttle = config.throttle;
        let server_error = throttle + config.server_error;
        let hang = server_error + config.hang;
        let fault = if u < throttle {
            Fault::Throttle
        } else if u < server_error {
            Fault::ServerError {
                unavailable: rng.random_bool(0.5),
            }
        } else if u < hang {
            Fault::Hang
        } else if mutating && rng.random::<f64>() < config.reset_after_write {
            Fault::ResetAfterWrite
        } else if rng.random::<f64>() < config.latency {
            let max = u64::try_from(config.latency_max.as_millis())
                .unwrap_or(u64::MAX)
                .max(2);
            Fault::Latency(Duration::from_millis(rng.random_range(1..max)))
        } else {
            Fault::None
        };
        let kind = match fault {
            Fault::None => None,
            Fault::Throttle => Some("throttle"),
            Fault::ServerError { .. } => Some("5xx"),
            Fault::Hang => Some("hang"),
            Fault::ResetAfterWrite => Some("reset-after-write"),
            Fault::Latency(_) => Some("latency"),
        };
        if let Some(kind) = kind {
            *stats.faults.entry(kind).or_default() += 1;
        }
        fault
    }

    fn forwarded(&self, operation: &str) {
        *self
            .lock()
            .2
            .forwarded
            .entry(operation.to_owned())
            .or_default() += 1;
    }

    fn stubbed(&self, operation: &str) {
        *self
            .lock()
            .2
            .stubbed
            .entry(operation.to_owned())
            .or_default() += 1;
    }
}

/// The running proxy. Its [`FaultProxy::url`] is the endpoint URL for the clients under test.
pub struct FaultProxy {
    addr: SocketAddr,
    shared: Arc<Shared>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
}

impl FaultProxy {
    /// Starts a proxy on 127.0.0.1 (a free port) in front of `upstream` (an `http://host:port`
    /// URL, moto's).
    ///
    /// # Panics
    /// If `upstream` is not an `http://IP:port` URL or no port is free: a test setup error.
    pub fn start(upstream: &str, config: FaultConfig) -> Self {
        let upstream: SocketAddr = upstream
            .trim_start_matches("http://")
            .trim_end_matches('/')
            .replace("localhost", "127.0.0.1")
            .parse()
            .unwrap_or_else(|e| {
                panic!("the fault proxy needs moto's endpoint as http://IP:PORT, not {upstream:?}: {e}")
            });
        let shared = Arc::new(Shared {
            upstream,
            state: Mutex::new((
                config,
                SmallRng::seed_from_u64(config.seed),
                Stats::default(),
                BTreeMap::new(),
                true,
            )),
        });
        let listener = std::net::TcpListener::bind("127.0.0.1:0")
            .expect("the fault proxy cannot bind a port on 127.0.0.1");
        listener
            .set_nonblocking(true)
            .expect("a non-blocking listener");
        let addr = listener.local_addr().expect("the proxy's address");
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let serving = shared.clone();
        std::thread::Builder::new()
            .name(format!("fault-proxy-{}", addr.port()))
            .spawn(move || {
                let runtime = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .expect("the fault proxy's runtime");
                runtime.block_on(async move {
                    let listener =
                        TcpListener::from_std(listener).expect("a tokio listener for the proxy");
                    tokio::select! {
                        _ = stopped => {}
                        () = accept_loop(listener, serving) => {}
                    }
                });
            })
            .expect("spawn the fault proxy's thread");
        Self {
            addr,
            shared,
            stop: Some(stop),
        }
    }

    /// The endpoint URL clients use to go through the proxy.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Changes the faults from the next request on (the random sequence restarts from `seed`).
    pub fn set_faults(&self, config: FaultConfig) {
        let mut guard = self.shared.lock();
        guard.0 = config;
        guard.1 = SmallRng::seed_from_u64(config.seed);
        guard.3.clear();
    }

    /// Whether storms may start (and go on): on for a first delivery, off for Lambda's retries
    /// (a minute or two later, the burst is over). Other faults are not affected.
    pub fn storms(&self, on: bool) {
        let mut guard = self.shared.lock();
        guard.4 = on;
        if !on {
            guard.3.clear();
        }
    }

    pub fn stats(&self) -> Stats {
        self.shared.lock().2.clone()
    }
}

impl Drop for FaultProxy {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

async fn accept_loop(listener: TcpListener, shared: Arc<Shared>) {
    loop {
        let Ok((client, _)) = listener.accept().await else {
            continue;
        };
        let _ = client.set_nodelay(true);
        tokio::spawn(serve(client, shared.clone()));
    }
}

/// One HTTP/1.1 message: its head (start line and headers, without the blank line) and body.
/// (Crate-visible: the CloudWatch bridge, `cbor_bridge.rs`, reads and frames messages the same way.)
pub(crate) struct Message {
    pub(crate) head: String,
    pub(crate) body: Vec<u8>,
}

impl Message {
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.head.lines().skip(1).find_map(|line| {
            let (k, v) = line.split_once(':')?;
            k.trim().eq_ignore_ascii_case(name).then(|| v.trim())
        })
    }

    /// `X-Amz-Target: DynamoDB_20120810.PutItem` -> ("DynamoDB_20120810", "PutItem").
    fn target(&self) -> (String, String) {
        let target = self.header("x-amz-target").unwrap_or("unknown.unknown");
        let (service, op) = target.rsplit_once('.').unwrap_or(("unknown", target));
        (service.to_owned(), op.to_owned())
    }
}

/// Reads one message from `stream` (`buf` keeps what was read past it). `None`: the peer closed
/// before a new message began. A response without a length is read to the end of the stream.
pub(crate) async fn read_message<R: AsyncRead + Unpin>(
    stream: &mut R,
    buf: &mut Vec<u8>,
    response: bool,
) -> std::io::Result<Option<Message>> {
    let head_end = loop {
        if let Some(i) = find(buf, b"\r\n\r\n") {
            break i;
        }
        if buf.len() > MAX_HEAD {
            return Err(std::io::Error::other("HTTP head too long"));
        }
        let mut chunk = [0u8; 16 * 1024];
        let n = stream.read(&mut chunk).await?;
        if n == 0 {
            if buf.is_empty() {
                return Ok(None);
            }
            return Err(std::io::Error::other(
                "connection closed inside an HTTP head",
            ));
        }
        buf.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
    buf.drain(..head_end + 4);
    let mut message = Message {
        head,
        body: Vec::new(),
    };
    let chunked = message
        .header("transfer-encoding")
        .is_some_and(|v| v.to_ascii_lowercase().contains("chunked"));
    let length = message
        .header("content-length")
        .and_then(|v| v.parse::<usize>().ok());
    if chunked {
        message.body = read_chunked(stream, buf).await?;
    } else if let Some(length) = length {
        if length > MAX_BODY {
            return Err(std::io::Error::other("HTTP body too long"));
        }
        fill(stream, buf, length).await?;
        message.body = buf.drain(..length).collect();
    } else if response {
        stream.read_to_end(buf).await?;
        message.body = std::mem::take(buf);
    }
    Ok(Some(message))
}

/// Reads until `buf` holds at least `n` bytes.
async fn fill<R: AsyncRead + Unpin>(
    stream: &mut R,
    buf: &mut Vec<u8>,
    n: usize,
) -> std::io::Result<()> {
    while buf.len() < n {
        let mut chunk = [0u8; 16 * 1024];
        let k = stream.read(&mut chunk).await?;
        if k == 0 {
            return Err(std::io::Error::other(
                "connection closed inside an HTTP body",
            ));
        }
        buf.extend_from_slice(&chunk[..k]);
    }
    Ok(())
}

async fn read_chunked<R: AsyncRead + Unpin>(
    stream: &mut R,
    buf: &mut Vec<u8>,
) -> std::io::Result<Vec<u8>> {
    let mut body = Vec::new();
    loop {
        let line_end = loop {
            if let Some(i) = find(buf, b"\r\n") {
                break i;
            }
            let have = buf.len();
            fill(stream, buf, have + 1).await?;
        };
        let size_text = String::from_utf8_lossy(&buf[..line_end]).into_owned();
        let size = usize::from_str_radix(size_text.split(';').next().unwrap_or("").trim(), 16)
            .map_err(|_| std::io::Error::other("bad chunk size"))?;
        buf.drain(..line_end + 2);
        if body.len() + size > MAX_BODY {
            return Err(std::io::Error::other("HTTP body too long"));
        }
        fill(stream, buf, size + 2).await?;
        body.extend(buf.drain(..size));
        buf.drain(..2);
        if size == 0 {
            // Trailers are not used by the SDK or moto; the final CRLF was consumed above.
            return Ok(body);
        }
    }
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// The head without hop-by-hop and framing headers, for re-framing.
fn strip_framing(head: &str) -> String {
    head.lines()
        .enumerate()
        .filter(|(i, line)| {
            *i == 0
                || ![
                    "connection",
                    "content-length",
                    "transfer-encoding",
                    "keep-alive",
                ]
                .iter()
                .any(|h| {
                    line.split_once(':')
                        .is_some_and(|(k, _)| k.trim().eq_ignore_ascii_case(h))
                })
        })
        .map(|(_, l)| l)
        .collect::<Vec<_>>()
        .join("\r\n")
}

pub(crate) fn frame(head: &str, body: &[u8], connection: &str) -> Vec<u8> {
    let mut out = format!(
        "{}\r\nContent-Length: {}\r\nConnection: {connection}\r\n\r\n",
        strip_framing(head),
        body.len()
    )
    .into_bytes();
    out.extend_from_slice(body);
    out
}

/// An error answer in the AWS JSON shape of `service` (`DynamoDB_20120810`: JSON 1.0; AAS and
/// SageMaker: JSON 1.1).
fn error_answer(service: &str, status: u16, reason: &str, code: &str, message: &str) -> Vec<u8> {
    let (content_type, type_name) = if service.starts_with("DynamoDB") {
        (
            "application/x-amz-json-1.0",
            format!("com.amazonaws.dynamodb.v20120810#{code}"),
        )
    } else {
        ("application/x-amz-json-1.1", code.to_owned())
    };
    let body = format!(r#"{{"__type":"{type_name}","message":"{message}"}}"#);
    let head = format!(
        "HTTP/1.1 {status} {reason}\r\nContent-Type: {content_type}\r\nx-amzn-RequestId: fault-proxy\r\nx-amzn-ErrorType: {code}"
    );
    frame(&head, body.as_bytes(), "keep-alive")
}

async fn forward(upstream: SocketAddr, request: &Message) -> std::io::Result<Message> {
    let mut moto = TcpStream::connect(upstream).await?;
    let _ = moto.set_nodelay(true);
    moto.write_all(&frame(&request.head, &request.body, "close"))
        .await?;
    let mut buf = Vec::new();
    read_message(&mut moto, &mut buf, true)
        .await?
        .ok_or_else(|| std::io::Error::other("moto closed the connection without answering"))
}

/// Serves one client connection (the SDK keeps connections alive: several requests in turn).
async fn serve(mut client: TcpStream, shared: Arc<Shared>) {
    let mut buf = Vec::new();
    loop {
        let request = match read_message(&mut client, &mut buf, false).await {
            Ok(Some(r)) => r,
            Ok(None) | Err(_) => return,
        };
        let (service, operation) = request.target();
        if operation == "DescribeScalingActivities" {
            shared.stubbed(&operation);
            let head = "HTTP/1.1 200 OK\r\nContent-Type: application/x-amz-json-1.1\r\nx-amzn-RequestId: fault-proxy-stub";
            if client
                .write_all(&frame(head, br#"{"ScalingActivities":[]}"#, "keep-alive"))
                .await
                .is_err()
            {
                return;
            }
            continue;
        }
        let answer = match shared.decide(&operation) {
            Fault::Throttle => error_answer(
                &service,
                400,
                "Bad Request",
                "ThrottlingException",
                "Rate exceeded (injected by the fault proxy)",
            ),
            Fault::ServerError { unavailable: false } => error_answer(
                &service,
                500,
                "Internal Server Error",
                if service.starts_with("DynamoDB") {
                    "InternalServerError"
                } else {
                    "InternalFailure"
                },
                "Internal failure (injected by the fault proxy)",
            ),
            Fault::ServerError { unavailable: true } => error_answer(
                &service,
                503,
                "Service Unavailable",
                "ServiceUnavailable",
                "Service unavailable (injected by the fault proxy)",
            ),
            Fault::Hang => {
                let hold = shared.lock().0.hang_for;
                tokio::time::sleep(hold).await;
                return;
            }
            Fault::ResetAfterWrite => {
                shared.forwarded(&operation);
                let _ = forward(shared.upstream, &request).await;
                // The write landed; the client never hears of it.
                reset(client);
                return;
            }
            Fault::Latency(pause) => {
                tokio::time::sleep(pause).await;
                match pass(&shared, &operation, &request).await {
                    Some(a) => a,
                    None => return,
                }
            }
            Fault::None => match pass(&shared, &operation, &request).await {
                Some(a) => a,
                None => return,
            },
        };
        if client.write_all(&answer).await.is_err() {
            return;
        }
    }
}

/// Forwards a request and frames moto's answer for the client; `None` if moto failed (the
/// client then sees its connection closed).
async fn pass(shared: &Shared, operation: &str, request: &Message) -> Option<Vec<u8>> {
    shared.forwarded(operation);
    let answer = forward(shared.upstream, request).await.ok()?;
    Some(frame(&answer.head, &answer.body, "keep-alive"))
}

/// Closes with a TCP reset (SO_LINGER 0) rather than an orderly FIN.
#[allow(deprecated)] // set_linger is deprecated only because a non-zero linger blocks on drop.
fn reset(client: TcpStream) {
    let _ = client.set_linger(Some(Duration::ZERO));
    drop(client);
}
