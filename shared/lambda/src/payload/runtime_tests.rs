//! The payload through lambda_runtime itself: a Runtime API on localhost hands the runtime the
//! events, one invocation each, and keeps what the runtime answers. With `LambdaEvent<Value>`
//! the unreadable events are invocation errors (Lambda retries them); with
//! `LambdaEvent<RawEvent>` they are answered `rejected`.

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{mpsc, Arc, Mutex};

use lambda_runtime::{service_fn, LambdaEvent};
use serde_json::{json, Value};

use super::tests::{unreadable, NORMAL};
use super::RawEvent;
use crate::{respond, Caller};

/// What the runtime posted for one invocation.
#[derive(Debug)]
struct Answer {
    request_id: String,
    /// `response` or `error`: the last segment of the path it posted to.
    kind: String,
    body: Value,
}

/// A Runtime API on localhost serving `events` in order (request ids `r0`, `r1`, ...); a poll
/// after the last one is never answered. Returns its `host:port` and the runtime's answers.
fn runtime_api(events: Vec<String>) -> (String, mpsc::Receiver<Answer>) {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind a local port");
    let address = listener.local_addr().expect("local address").to_string();
    let queue: Arc<Mutex<VecDeque<(String, String)>>> = Arc::new(Mutex::new(
        events
            .into_iter()
            .enumerate()
            .map(|(i, e)| (format!("r{i}"), e))
            .collect(),
    ));
    let (answers, received) = mpsc::channel();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let (queue, answers) = (queue.clone(), answers.clone());
            std::thread::spawn(move || serve(stream, &queue, &answers));
        }
    });
    (address, received)
}

/// One HTTP/1.1 connection of the runtime's client: requests until it closes.
fn serve(
    stream: TcpStream,
    queue: &Mutex<VecDeque<(String, String)>>,
    answers: &mpsc::Sender<Answer>,
) {
    let mut reader = BufReader::new(stream.try_clone().expect("clone the stream"));
    let mut writer = stream;
    loop {
        let mut request_line = String::new();
        if reader.read_line(&mut request_line).unwrap_or(0) == 0 {
            return;
        }
        let mut parts = request_line.split_whitespace();
        let (method, path) = (
            parts.next().unwrap_or_default().to_owned(),
            parts.next().unwrap_or_default().to_owned(),
        );
        let body = read_body(&mut reader);
        let reply = if method == "GET" && path.ends_with("/runtime/invocation/next") {
            let Some((id, event)) = queue.lock().expect("queue").pop_front() else {
                // No more events: leave the runtime waiting, as Lambda does between invocations.
                std::thread::park();
                return;
            };
            format!(
                "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n\
                 lambda-runtime-aws-request-id: {id}\r\nlambda-runtime-deadline-ms: 4102444800000\r\n\
                 lambda-runtime-invoked-function-arn: arn:aws:lambda:us-east-1:123456789012:function:headroom-test\r\n\
                 lambda-runtime-trace-id: Root=1-00000000-000000000000000000000000\r\n\
                 content-length: {}\r\n\r\n{event}",
                event.len()
            )
        } else if method == "POST" {
            // /2018-06-01/runtime/invocation/{id}/response or /error
            let segments: Vec<&str> = path.rsplit('/').collect();
            let answer = Answer {
                kind: segments.first().copied().unwrap_or_default().to_owned(),
                request_id: segments.get(1).copied().unwrap_or_default().to_owned(),
                body: serde_json::from_slice(&body).unwrap_or(Value::Null),
            };
            answers.send(answer).ok();
            "HTTP/1.1 202 Accepted\r\ncontent-length: 0\r\n\r\n".to_owned()
        } else {
            "HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n".to_owned()
        };
        if writer.write_all(reply.as_bytes()).is_err() {
            return;
        }
    }
}

/// The headers, then the body as `content-length` or chunked encoding says.
fn read_body(reader: &mut BufReader<TcpStream>) -> Vec<u8> {
    let (mut length, mut chunked) = (0, false);
    loop {
        let mut header = String::new();
        if reader.read_line(&mut header).unwrap_or(0) == 0 || header == "\r\n" {
            break;
        }
        let lower = header.to_ascii_lowercase();
        if let Some(value) = lower.strip_prefix("content-length:") {
            length = value.trim().parse().unwrap_or(0);
        }
        chunked |= lower.starts_with("transfer-encoding:") && lower.contains("chunked");
    }
    let mut body = Vec::new();
    if !chunked {
        body.resize(length, 0);
        reader.read_exact(&mut body).ok();
        return body;
    }
    loop {
        let mut size = String::new();
        reader.read_line(&mut size).ok();
        let size = usize::from_str_radix(size.trim(), 16).unwrap_or(0);
        let mut chunk = vec![0; size + 2]; // the chunk and its CRLF
        reader.read_exact(&mut chunk).ok();
        if size == 0 {
            return body;
        }
        body.extend_from_slice(&chunk[..size]);
    }
}

/// Serves `events` to the runtime that `run` starts, until each event has its answer.
async fn invoke_all<Run>(events: Vec<String>, run: impl FnOnce() -> Run) -> Vec<Answer>
where
    Run: std::future::Future<Output = Result<(), lambda_runtime::Error>>,
{
    let count = events.len();
    let (address, received) = runtime_api(events);
    // lambda_runtime reads its configuration from the environment when it starts; this is the
    // only test in the crate that sets these variables, and it runs its runtimes one at a time.
    for (name, value) in [
        ("AWS_LAMBDA_FUNCTION_NAME", "headroom-test"),
        ("AWS_LAMBDA_FUNCTION_MEMORY_SIZE", "128"),
        ("AWS_LAMBDA_FUNCTION_VERSION", "$LATEST"),
        ("AWS_LAMBDA_RUNTIME_API", address.as_str()),
    ] {
        std::env::set_var(name, value);
    }
    let collect = tokio::task::spawn_blocking(move || {
        (0..count)
            .map(|_| {
                received
                    .recv_timeout(std::time::Duration::from_secs(30))
                    .expect("an answer from the runtime within 30 s")
            })
            .collect::<Vec<_>>()
    });
    tokio::select! {
        ended = run() => panic!("the runtime stopped: {ended:?}"),
        answers = collect => answers.expect("the answers"),
    }
}

fn events() -> Vec<String> {
    let mut events: Vec<String> = unreadable().into_iter().map(|(_, json, _)| json).collect();
    events.push(NORMAL.to_owned());
    events
}

#[tokio::test]
async fn unreadable_events_fail_a_value_invocation_and_are_rejected_by_a_raw_one() {
    // GIVEN three unreadable events and a normal one
    let what: Vec<&str> = unreadable().iter().map(|(what, _, _)| *what).collect();

    // WHEN a function that takes a `Value` gets them, THEN the runtime fails each unreadable
    // invocation (Lambda retries those) before the handler runs
    let answers = invoke_all(events(), || {
        lambda_runtime::run(service_fn(|event: LambdaEvent<Value>| async move {
            Ok::<_, lambda_runtime::Error>(json!({ "echo": event.payload }))
        }))
    })
    .await;
    let kinds: Vec<&str> = answers.iter().map(|a| a.kind.as_str()).collect();
    assert_eq!(
        kinds,
        ["error", "error", "error", "response"],
        "{what:?}: {answers:?}"
    );

    // WHEN a function that takes a `RawEvent` gets them, THEN each is answered, unreadable
    // ones `rejected` with what is wrong, the normal one as its handler says
    let answers = invoke_all(events(), || {
        lambda_runtime::run(service_fn(|event: LambdaEvent<RawEvent>| async move {
            let (raw, context) = event.into_parts();
            match raw.into_value() {
                Ok(payload) => Ok(json!({ "echo": payload })),
                Err(unreadable) => {
                    respond::<(), _>(Err(unreadable), &context.request_id, Caller::Asynchronous)
                }
            }
        }))
    })
    .await;
    for (i, answer) in answers.iter().enumerate() {
        assert_eq!(answer.request_id, format!("r{i}"), "{answers:?}");
        assert_eq!(answer.kind, "response", "{answer:?}");
    }
    for (answer, what) in answers.iter().zip(&what) {
        assert_eq!(answer.body["handled"], "rejected", "{what}: {answer:?}");
        let error = answer.body["error"].as_str().unwrap_or_default();
        assert!(error.starts_with("unreadable event ("), "{what}: {error}");
    }
    assert_eq!(answers[3].body["echo"]["detail-type"], "Scheduled Event");
}
