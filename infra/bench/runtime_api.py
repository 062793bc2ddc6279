#!/usr/bin/env python3
"""A minimal AWS Lambda Runtime API that runs one function binary and measures it.

Serves the endpoints a custom runtime uses (next invocation, response, error, init error) on
127.0.0.1, starts the function's `bootstrap` binary itself, and measures, per process start:

- init: from just before the process is spawned to its first request for work
  (GET .../invocation/next): what Lambda bills as the init phase;
- first event: from handing the process its first event to its response (connections to AWS,
  here moto, are opened during this call);
- warm events: the same for the following events of that process;
- peak memory: VmHWM from /proc/<pid>/status after the last event.

Each event is a JSON template made fresh per invocation (new `id`, `time` and alarm state
timestamp), so the function sees distinct events, as in production.

Standard library only. Prints one JSON object with every sample; infra/bench.sh summarises.
"""

import argparse
import copy
import datetime as dt
import json
import os
import queue
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PREFIX = "/2018-06-01/runtime"


class Invocation:
    def __init__(self, body):
        self.id = str(uuid.uuid4())
        self.body = body
        self.sent_at = None
        self.done_at = None
        self.outcome = None
        self.payload = None
        self.done = threading.Event()


class State:
    def __init__(self):
        self.pending = queue.Queue()
        self.by_id = {}
        self.next_calls = 0
        self.first_next_at = None
        self.idle = threading.Event()  # set whenever the runtime waits for work
        self.init_error = None
        self.lock = threading.Lock()


def make_handler(state, function_arn):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):  # quiet
            pass

        def setup(self):
            super().setup()
            # Headers and body go out in separate writes; without TCP_NODELAY, Nagle's algorithm
            # holds the body until the client's delayed ACK (40 ms) and the measurement would
            # show this server's latency, not the function's.
            self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

        def _reply(self, code, body=b"", headers=None):
            self.send_response(code)
            for k, v in (headers or {}).items():
                self.send_header(k, v)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if body:
                self.wfile.write(body)
            self.wfile.flush()

        def _body(self):
            n = int(self.headers.get("Content-Length") or 0)
            return self.rfile.read(n) if n else b""

        def do_GET(self):
            if self.path != PREFIX + "/invocation/next":
                self._reply(404)
                return
            now = time.perf_counter()
            with state.lock:
                state.next_calls += 1
                if state.first_next_at is None:
                    state.first_next_at = now
            state.idle.set()
            inv = state.pending.get()
            if inv is None:  # shutting down: the process is killed while it waits
                return
            state.idle.clear()
            body = json.dumps(inv.body).encode()
            deadline = int(time.time() * 1000) + 60_000
            inv.sent_at = time.perf_counter()
            self._reply(
                200,
                body,
                {
                    "Content-Type": "application/json",
                    "Lambda-Runtime-Aws-Request-Id": inv.id,
                    "Lambda-Runtime-Deadline-Ms": str(deadline),
                    "Lambda-Runtime-Invoked-Function-Arn": function_arn,
                    "Lambda-Runtime-Trace-Id": "Root=1-00000000-000000000000000000000000;Sampled=0",
                },
            )

        def do_POST(self):
            now = time.perf_counter()
            body = self._body()
            if self.path == PREFIX + "/init/error":
                state.init_error = body.decode(errors="replace")
                self._reply(202)
                return
            parts = self.path[len(PREFIX) :].strip("/").split("/")
            if len(parts) == 3 and parts[0] == "invocation" and parts[2] in ("response", "error"):
                inv = state.by_id.get(parts[1])
                if inv is None:
                    self._reply(404)
                    return
                inv.done_at = now
                inv.outcome = parts[2]
                try:
                    inv.payload = json.loads(body or b"null")
                except ValueError:
                    inv.payload = body.decode(errors="replace")
                self._reply(202)
                inv.done.set()
                return
            self._reply(404)

    return Handler


def fresh(template, n):
    """A new event from the template: new id, current time, newer alarm state timestamp."""
    ev = copy.deepcopy(template)
    now = dt.datetime.now(dt.timezone.utc) + dt.timedelta(milliseconds=n)
    if isinstance(ev, dict):
        if "id" in ev:
            ev["id"] = str(uuid.uuid4())
        if "time" in ev:
            ev["time"] = now.strftime("%Y-%m-%dT%H:%M:%SZ")
        state = (ev.get("detail") or {}).get("state") if isinstance(ev.get("detail"), dict) else None
        if isinstance(state, dict) and "timestamp" in state:
            state["timestamp"] = now.strftime("%Y-%m-%dT%H:%M:%S.") + f"{now.microsecond // 1000:03d}+0000"
    return ev


def proc_status_kb(pid, *fields):
    """Fields of /proc/<pid>/status in kB (None when absent)."""
    out = dict.fromkeys(fields)
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                key, _, rest = line.partition(":")
                if key in out:
                    out[key] = int(rest.split()[0])
    except OSError:
        pass
    return out


def run_once(binary, env, template, events, counter):
    """One cold start and `events` invocations; returns the measurements of this process."""
    state = State()
    server = ThreadingHTTPServer(("127.0.0.1", 0), make_handler(state, env["_ARN"]))
    server.daemon_threads = True
    port = server.server_address[1]
    threading.Thread(target=server.serve_forever, daemon=True).start()
    child_env = {k: v for k, v in env.items() if not k.startswith("_")}
    child_env["AWS_LAMBDA_RUNTIME_API"] = f"127.0.0.1:{port}"
    out = {"init_ms": None, "latencies_ms": [], "outcomes": [], "vm_hwm_kb": None, "error": None}
    log = open(env["_LOG"], "ab")
    spawned_at = time.perf_counter()
    proc = subprocess.Popen([binary], env=child_env, stdout=log, stderr=log, stdin=subprocess.DEVNULL)
    try:
        if not state.idle.wait(30):
            out["error"] = f"no request for work within 30 s (init error: {state.init_error})"
            return out
        out["init_ms"] = (state.first_next_at - spawned_at) * 1000
        for _ in range(events):
            counter[0] += 1
            inv = Invocation(fresh(template, counter[0]))
            state.by_id[inv.id] = inv
            state.idle.clear()
            state.pending.put(inv)
            if not inv.done.wait(120):
                out["error"] = "no response within 120 s"
                return out
            out["latencies_ms"].append((inv.done_at - inv.sent_at) * 1000)
            out["outcomes"].append(inv.outcome)
            if inv.outcome != "response":
                out["error"] = f"invocation failed: {json.dumps(inv.payload)[:500]}"
            out["last_payload"] = inv.payload
            # Wait until the runtime asks for work again: the event is fully handled.
            if not state.idle.wait(30):
                out["error"] = "the runtime did not ask for more work"
                return out
        # Peak resident memory, and what is resident now: heap and stacks (RssAnon) against
        # pages of the binary itself (RssFile).
        status = proc_status_kb(proc.pid, "VmHWM", "RssAnon", "RssFile")
        out["vm_hwm_kb"] = status["VmHWM"]
        out["rss_anon_kb"] = status["RssAnon"]
        out["rss_file_kb"] = status["RssFile"]
        return out
    finally:
        # Stop exactly the process started above.
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        state.pending.put(None)
        server.shutdown()
        server.server_close()
        log.close()


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--binary", required=True)
    p.add_argument("--name", required=True, help="function name (AWS_LAMBDA_FUNCTION_NAME)")
    p.add_argument("--event", required=True, help="JSON event template")
    p.add_argument("--starts", type=int, default=10, help="cold starts (processes)")
    p.add_argument("--events", type=int, default=6, help="events per process (the first is the cold one)")
    p.add_argument("--memory", default="256")
    p.add_argument("--env", action="append", default=[], help="KEY=VALUE for the function")
    p.add_argument("--log", default="/dev/null", help="where the function's output goes")
    a = p.parse_args()

    with open(a.event) as f:
        template = json.load(f)
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "AWS_LAMBDA_FUNCTION_NAME": a.name,
        "AWS_LAMBDA_FUNCTION_VERSION": "$LATEST",
        "AWS_LAMBDA_FUNCTION_MEMORY_SIZE": a.memory,
        "AWS_LAMBDA_LOG_GROUP_NAME": f"/headroom/bench/{a.name}",
        "AWS_LAMBDA_LOG_STREAM_NAME": "bench",
        "_ARN": f"arn:aws:lambda:us-east-1:123456789012:function:{a.name}",
        "_LOG": a.log,
    }
    for kv in a.env:
        k, _, v = kv.partition("=")
        env[k] = v
    counter = [0]
    runs = [run_once(a.binary, env, template, a.events, counter) for _ in range(a.starts)]
    json.dump({"function": a.name, "binary": a.binary, "runs": runs}, sys.stdout)
    sys.stdout.write("\n")
    return 1 if any(r["error"] for r in runs) else 0


if __name__ == "__main__":
    sys.exit(main())
