//! A CloudWatch protocol bridge in front of moto, so the real CloudWatch client and adapter run
//! against moto's CloudWatch.
//!
//! aws-sdk-cloudwatch speaks only Smithy RPC v2 CBOR (`POST /service/GraniteServiceVersion20100801
//! /operation/<Op>`, CBOR bodies); moto (5.2.1 and 5.2.5, the newest on PyPI when this was
//! written) serves CloudWatch over the Query and AWS JSON 1.0 protocols only and answers the CBOR
//! route with an HTML 404 (getmoto/moto#9195). The bridge rewrites each request into AWS JSON 1.0
//! (`POST /`, `X-Amz-Target: GraniteServiceVersion20100801.<Op>`, the same members as JSON) and
//! each answer back into CBOR. Everything else is moto's own: what PutMetricData stores, how
//! GetMetricData aggregates it, its validation errors (passed on with their status and `__type`).
//!
//! The two encodings carry the same members under the same names; only timestamps differ in
//! shape (CBOR tag 1 around epoch seconds, a plain number in JSON). Requests: a tag 1 becomes
//! its number. Answers: the numbers of the members in [`TIMESTAMP_MEMBERS`] get tag 1 back (the
//! timestamps in the answers headroom's tests read are GetMetricData's `Timestamps` and
//! DescribeAlarms' update times), the members in [`INTEGER_MEMBERS`] stay integers, every
//! other number becomes a double. Blobs do not occur in
//! these operations and are refused.
//!
//! Point a CloudWatch client at [`CborBridge::url`] (in process: `endpoint_url`; a `headroom`
//! process: `AWS_ENDPOINT_URL_CLOUDWATCH`). It runs on its own thread and stops when dropped.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, PoisonError};

use ciborium::Value as Cbor;
use serde_json::Value as Json;
use tokio::io::AsyncWriteExt;
use tokio::net::{TcpListener, TcpStream};

use crate::fault_proxy::{frame, read_message, Message};

/// CloudWatch's service name in both protocols' routing.
const SERVICE: &str = "GraniteServiceVersion20100801";
/// Answer members whose numbers are timestamps.
pub const TIMESTAMP_MEMBERS: &[&str] = &[
    "Timestamps",
    "Timestamp",
    "StartTime",
    "EndTime",
    // DescribeAlarms
    "AlarmConfigurationUpdatedTimestamp",
    "StateUpdatedTimestamp",
    "StateTransitionedTimestamp",
];
/// Answer members that are integers (DescribeAlarms' MetricAlarm), sent as CBOR integers: the
/// SDK's decoder refuses a double where its model says integer.
pub const INTEGER_MEMBERS: &[&str] = &["Period", "EvaluationPeriods", "DatapointsToAlarm"];

/// The running bridge.
pub struct CborBridge {
    addr: SocketAddr,
    calls: Arc<Mutex<BTreeMap<String, usize>>>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
}

impl CborBridge {
    /// Starts a bridge on 127.0.0.1 (a free port) in front of `upstream` (moto's
    /// `http://IP:port`).
    ///
    /// # Panics
    /// If `upstream` is not an `http://IP:port` URL or no port is free: a test setup error.
    pub fn start(upstream: &str) -> Self {
        let upstream: SocketAddr = upstream
            .trim_start_matches("http://")
            .trim_end_matches('/')
            .replace("localhost", "127.0.0.1")
            .parse()
            .unwrap_or_else(|e| {
                panic!("the CloudWatch bridge needs moto's endpoint as http://IP:PORT, not {upstream:?}: {e}")
            });
        let listener = std::net::TcpListener::bind("127.0.0.1:0")
            .expect("the CloudWatch bridge cannot bind a port on 127.0.0.1");
        listener
            .set_nonblocking(true)
            .expect("a non-blocking listener");
        let addr = listener.local_addr().expect("the bridge's address");
        let calls = Arc::new(Mutex::new(BTreeMap::new()));
        let counting = calls.clone();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        std::thread::Builder::new()
            .name(format!("cbor-bridge-{}", addr.port()))
            .spawn(move || {
                let runtime = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .expect("the CloudWatch bridge's runtime");
                runtime.block_on(async move {
                    let listener =
                        TcpListener::from_std(listener).expect("a tokio listener for the bridge");
                    tokio::select! {
                        _ = stopped => {}
                        () = accept_loop(listener, upstream, counting) => {}
                    }
                });
            })
            .expect("spawn the CloudWatch bridge's thread");
        Self {
            addr,
            calls,
            stop: Some(stop),
        }
    }

    /// The endpoint URL for CloudWatch clients.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Requests of `operation` ("GetMetricData", ...) the bridge passed to moto so far.
    pub fn calls(&self, operation: &str) -> usize {
        self.calls
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(operation)
            .copied()
            .unwrap_or(0)
    }
}

impl Drop for CborBridge {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

async fn accept_loop(
    listener: TcpListener,
    upstream: SocketAddr,
    calls: Arc<Mutex<BTreeMap<String, usize>>>,
) {
    loop {
        let Ok((client, _)) = listener.accept().await else {
            continue;
        };
        let _ = client.set_nodelay(true);
        tokio::spawn(serve(client, upstream, calls.clone()));
    }
}

/// Serves one client connection (the SDK keeps it alive for several requests).
async fn serve(
    mut client: TcpStream,
    upstream: SocketAddr,
    calls: Arc<Mutex<BTreeMap<String, usize>>>,
) {
    let mut buf = Vec::new();
    loop {
        let request = match read_message(&mut client, &mut buf, false).await {
            Ok(Some(r)) => r,
            Ok(None) | Err(_) => return,
        };
        let answer = match bridge(upstream, &request, &calls).await {
            Ok(a) => a,
            Err(problem) => error_answer(&problem),
        };
        if client.write_all(&answer).await.is_err() {
            return;
        }
    }
}

/// One CBOR request through moto's JSON protocol, as a framed CBOR answer.
async fn bridge(
    upstream: SocketAddr,
    request: &Message,
    calls: &Mutex<BTreeMap<String, usize>>,
) -> Result<Vec<u8>, String> {
    let path = request
        .head
        .lines()
        .next()
        .and_then(|l| l.split_whitespace().nth(1))
        .unwrap_or("");
    let operation = path
        .strip_prefix(&format!("/service/{SERVICE}/operation/"))
        .ok_or_else(|| format!("not a CloudWatch RPC v2 request: {path:?}"))?;
    // The SDK gzips large PutMetricData bodies (CloudWatch's request compression), as AWS accepts.
    let raw = if request
        .header("content-encoding")
        .is_some_and(|e| e.eq_ignore_ascii_case("gzip"))
    {
        let mut out = Vec::new();
        std::io::Read::read_to_end(
            &mut flate2::read::GzDecoder::new(request.body.as_slice()),
            &mut out,
        )
        .map_err(|e| format!("the gzip request body does not decompress: {e}"))?;
        out
    } else {
        request.body.clone()
    };
    let body: Cbor = if raw.is_empty() {
        Cbor::Map(Vec::new())
    } else {
        ciborium::from_reader(raw.as_slice())
            .map_err(|e| format!("the request body is not CBOR: {e}"))?
    };
    let json = serde_json::to_vec(&to_json(body)?).map_err(|e| e.to_string())?;
    // The SDK's own headers (Authorization: moto reads the region from it) minus the protocol's.
    let kept: Vec<&str> = request
        .head
        .lines()
        .skip(1)
        .filter(|l| {
            let name = l.split_once(':').map_or("", |(k, _)| k.trim());
            ![
                "content-type",
                "content-encoding",
                "accept",
                "smithy-protocol",
                "host",
            ]
            .iter()
            .any(|h| name.eq_ignore_ascii_case(h))
        })
        .collect();
    let head = format!(
        "POST / HTTP/1.1\r\nHost: {upstream}\r\nContent-Type: application/x-amz-json-1.0\r\nX-Amz-Target: {SERVICE}.{operation}\r\n{}",
        kept.join("\r\n")
    );
    *calls
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .entry(operation.to_owned())
        .or_default() += 1;
    let mut moto = TcpStream::connect(upstream)
        .await
        .map_err(|e| format!("cannot reach moto at {upstream}: {e}"))?;
    moto.write_all(&frame(head.trim_end(), &json, "close"))
        .await
        .map_err(|e| format!("cannot send to moto: {e}"))?;
    let mut buf = Vec::new();
    let answer = read_message(&mut moto, &mut buf, true)
        .await
        .map_err(|e| format!("moto's answer did not arrive: {e}"))?
        .ok_or("moto closed the connection without answering")?;
    let status = answer
        .head
        .lines()
        .next()
        .unwrap_or("HTTP/1.1 500 Bad Gateway");
    // Not JSON (an HTML error page): passed on as it is, so the SDK's error shows what moto said.
    let Ok(json) = serde_json::from_slice::<Json>(&answer.body) else {
        return Ok(frame(&answer.head, &answer.body, "keep-alive"));
    };
    let mut cbor = Vec::new();
    ciborium::into_writer(&to_cbor(json, false), &mut cbor).map_err(|e| e.to_string())?;
    let request_id = answer.header("x-amzn-requestid").unwrap_or("cbor-bridge");
    let head = format!(
        "{status}\r\nContent-Type: application/cbor\r\nsmithy-protocol: rpc-v2-cbor\r\nx-amzn-RequestId: {request_id}"
    );
    Ok(frame(&head, &cbor, "keep-alive"))
}

/// A request member as JSON: tag 1 (epoch seconds) becomes its number.
fn to_json(v: Cbor) -> Result<Json, String> {
    Ok(match v {
        Cbor::Null => Json::Null,
        Cbor::Bool(b) => Json::Bool(b),
        Cbor::Text(s) => Json::String(s),
        Cbor::Integer(i) => {
            let i = i128::from(i);
            i64::try_from(i)
                .map(Json::from)
                .map_err(|_| format!("integer {i} out of range"))?
        }
        Cbor::Float(f) => serde_json::Number::from_f64(f)
            .map(Json::Number)
            .ok_or_else(|| format!("{f} has no JSON form"))?,
        Cbor::Tag(1, inner) => to_json(*inner)?,
        Cbor::Array(items) => {
            Json::Array(items.into_iter().map(to_json).collect::<Result<_, _>>()?)
        }
        Cbor::Map(entries) => Json::Object(
            entries
                .into_iter()
                .map(|(k, v)| match k {
                    Cbor::Text(k) => Ok((k, to_json(v)?)),
                    other => Err(format!("a map key that is not text: {other:?}")),
                })
                .collect::<Result<_, String>>()?,
        ),
        other => {
            return Err(format!(
                "no JSON form for {other:?} in a CloudWatch request"
            ))
        }
    })
}

/// An answer member as CBOR; `timestamp`: the member is one of [`TIMESTAMP_MEMBERS`] (its numbers,
/// or the numbers of its list, get tag 1).
fn to_cbor(v: Json, timestamp: bool) -> Cbor {
    match v {
        Json::Null => Cbor::Null,
        Json::Bool(b) => Cbor::Bool(b),
        Json::String(s) => Cbor::Text(s),
        // JSON does not say integer or double, and the SDK's decoder is strict: the integer
        // members are [`INTEGER_MEMBERS`] (GetMetricData's numbers are its `Values`, doubles).
        Json::Number(n) if timestamp => Cbor::Tag(
            1,
            Box::new(match n.as_i64() {
                Some(i) => Cbor::Integer(i.into()),
                None => Cbor::Float(n.as_f64().unwrap_or(f64::NAN)),
            }),
        ),
        Json::Number(n) => Cbor::Float(n.as_f64().unwrap_or(f64::NAN)),
        Json::Array(items) => {
            Cbor::Array(items.into_iter().map(|i| to_cbor(i, timestamp)).collect())
        }
        Json::Object(members) => Cbor::Map(
            members
                .into_iter()
                .map(|(k, v)| {
                    let stamp = TIMESTAMP_MEMBERS.contains(&k.as_str());
                    let value = match (&v, INTEGER_MEMBERS.contains(&k.as_str())) {
                        (Json::Number(n), true) if n.as_i64().is_some() => {
                            Cbor::Integer(n.as_i64().unwrap_or_default().into())
                        }
                        _ => to_cbor(v, stamp),
                    };
                    (Cbor::Text(k), value)
                })
                .collect(),
        ),
    }
}

/// The bridge's own failure, as a CBOR error the SDK reads (`__type`, `message`).
fn error_answer(problem: &str) -> Vec<u8> {
    let body = Cbor::Map(vec![
        (
            Cbor::Text("__type".into()),
            Cbor::Text("CborBridgeFailure".into()),
        ),
        (Cbor::Text("message".into()), Cbor::Text(problem.to_owned())),
    ]);
    let mut cbor = Vec::new();
    let _ = ciborium::into_writer(&body, &mut cbor);
    frame(
        "HTTP/1.1 502 Bad Gateway\r\nContent-Type: application/cbor\r\nsmithy-protocol: rpc-v2-cbor",
        &cbor,
        "keep-alive",
    )
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // a failed unwrap is a failed test
mod tests {
    use super::*;

    #[test]
    fn a_request_timestamp_loses_its_tag_and_an_answer_timestamp_gets_it_back() {
        let request = Cbor::Map(vec![
            (
                Cbor::Text("StartTime".into()),
                Cbor::Tag(1, Box::new(Cbor::Float(1_700_000_000.0))),
            ),
            (Cbor::Text("Period".into()), Cbor::Integer(300.into())),
        ]);
        assert_eq!(
            to_json(request).unwrap(),
            serde_json::json!({"StartTime": 1_700_000_000.0, "Period": 300})
        );
        let answer = to_cbor(
            serde_json::json!({"MetricDataResults": [{"Id": "t0", "Timestamps": [1_700_000_000], "Values": [3.0]}]}),
            false,
        );
        let Cbor::Map(top) = answer else {
            panic!("a map")
        };
        let Cbor::Array(results) = &top[0].1 else {
            panic!("a list")
        };
        let Cbor::Map(result) = &results[0] else {
            panic!("a map")
        };
        let stamps = &result
            .iter()
            .find(|(k, _)| k == &Cbor::Text("Timestamps".into()))
            .unwrap()
            .1;
        assert_eq!(
            stamps,
            &Cbor::Array(vec![Cbor::Tag(
                1,
                Box::new(Cbor::Integer(1_700_000_000.into()))
            )])
        );
        let values = &result
            .iter()
            .find(|(k, _)| k == &Cbor::Text("Values".into()))
            .unwrap()
            .1;
        assert_eq!(values, &Cbor::Array(vec![Cbor::Float(3.0)]));
        // An integral JSON number that is not a timestamp is still a double for the SDK.
        assert_eq!(to_cbor(serde_json::json!(12), false), Cbor::Float(12.0));
    }
}
