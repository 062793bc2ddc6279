#!/usr/bin/env bash
# Benchmark of headroom's three Lambda functions: a measurement, not a test (CI does not run it).
#
#   bash infra/bench.sh            # 10 cold starts x 6 events per function
#   BENCH_STARTS=20 BENCH_EVENTS=11 bash infra/bench.sh
#
# 1. builds the arm64 zips (their sizes are what deploys) and x86_64 binaries (what this machine
#    can run) with infra/build.sh;
# 2. starts moto on 127.0.0.1:$BENCH_MOTO_PORT (default 5105), builds the world of
#    events/plans/local.toml in it (infra/bench/seed.py), and creates the table and applies that
#    plan with the headroom CLI. local.toml is events/plans/example.toml without its
#    inference-component target: moto has no inference-component API, so that target is not
#    benchmarked (the script says so when it runs);
# 3. runs each function binary under a local Lambda Runtime API (infra/bench/runtime_api.py):
#    BENCH_STARTS processes, each getting BENCH_EVENTS events made fresh from a fixture:
#      tick   events/schedule/tick-rule.json               (reconciles every managed target)
#      alarm  events/alarms/eventbridge-burst-alarm.json   (guard claim on chat-prod)
#      deploy events/sagemaker/endpoint-in-service-v8-a.json (identity check of chat-prod)
# 4. prints per function: cold init (spawn -> first request for work), first-event and
#    warm-event latency, peak memory (VmHWM), zip and binary size; the raw samples go to
#    $BENCH_OUT (default $CARGO_TARGET_DIR/bench/results.json).
#
# The functions run with HEADROOM_AWS_MAX_ATTEMPTS=1: moto answers DescribeScalingActivities
# (which the deploy function calls) with HTTP 500, and the SDK's retries with backoff would then
# measure moto's gap rather than headroom. Everything else is the deployed configuration.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
root="$PWD"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/headroom-target}"
port="${BENCH_MOTO_PORT:-5105}"
starts="${BENCH_STARTS:-10}"
events="${BENCH_EVENTS:-6}"
out="${BENCH_OUT:-$CARGO_TARGET_DIR/bench/results.json}"
work="$(mktemp -d "${TMPDIR:-/tmp}/headroom-bench.XXXXXX")"
table=headroom-bench

log() { printf 'infra/bench: %s\n' "$*" >&2; }

moto_pid=""
cleanup() {
    # Exactly the moto started below, never a broad match.
    if [[ -n "$moto_pid" ]]; then
        kill "$moto_pid" 2>/dev/null || true
        wait "$moto_pid" 2>/dev/null || true
    fi
    rm -rf "$work"
}
trap cleanup EXIT

# --- 1. build ----------------------------------------------------------------------------------
# BENCH_SKIP_BUILD=1 reuses the zips of the last build (for repeated runs); BENCH_RUN_DIR runs the
# x86_64 zips of another build (e.g. one with other profile settings) instead.
run_dir="${BENCH_RUN_DIR:-$CARGO_TARGET_DIR/lambda-x86_64}"
if [[ "${BENCH_SKIP_BUILD:-0}" != 1 ]]; then
    bash infra/build.sh
    bash infra/build.sh --x86-64
fi
log "building the headroom CLI (debug) to create the table and apply the plan"
cargo build -q -p headroom-cli
cli="$CARGO_TARGET_DIR/debug/headroom"
for f in headroom-tick headroom-alarm headroom-deploy; do
    mkdir -p "$work/$f"
    python3 -c 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])' \
        "$run_dir/$f/bootstrap.zip" "$work/$f"
    chmod +x "$work/$f/bootstrap"
done

# --- 2. moto and the world ---------------------------------------------------------------------
if ! command -v moto_server >/dev/null 2>&1; then
    log 'installing moto[server] from PyPI'
    python3 -m pip install --quiet "moto[server]"
fi
if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
    log "port $port is busy: set BENCH_MOTO_PORT to a free port"
    exit 1
fi
moto_server -H 127.0.0.1 -p "$port" >"$work/moto.log" 2>&1 &
moto_pid=$!
for _ in $(seq 600); do
    python3 -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:$port/moto-api/', timeout=2)" 2>/dev/null && break
    sleep 0.1
done
export AWS_ENDPOINT_URL="http://127.0.0.1:$port" AWS_ACCESS_KEY_ID=testing AWS_SECRET_ACCESS_KEY=testing
export AWS_REGION=us-east-1 AWS_DEFAULT_REGION=us-east-1
unset AWS_PROFILE AWS_SESSION_TOKEN
# Not example.toml: its inference-component target would only measure moto's HTTP 500s (moto
# implements no inference-component call). local.toml is the same plan without it (a test keeps
# the two in step), as in the README's walkthrough.
plan=events/plans/local.toml
log "plan $plan: events/plans/example.toml without inference-component/llama-8b-ic (moto has no inference-component API: that target is not benchmarked)"
python3 infra/bench/seed.py "$plan"
"$cli" plan init-table --table "$table" >&2
"$cli" plan apply "$plan" --table "$table" >&2

# --- 3. run ------------------------------------------------------------------------------------
mkdir -p "$(dirname "$out")"
declare -A fixture=(
    [headroom-tick]=events/schedule/tick-rule.json
    [headroom-alarm]=events/alarms/eventbridge-burst-alarm.json
    [headroom-deploy]=events/sagemaker/endpoint-in-service-v8-a.json
)
status=0
: >"$work/results.jsonl"
for f in headroom-tick headroom-alarm headroom-deploy; do
    log "running $f: $starts cold starts x $events events"
    python3 infra/bench/runtime_api.py --binary "$work/$f/bootstrap" --name "$f" \
        --event "${fixture[$f]}" --starts "$starts" --events "$events" --memory 256 \
        --log "$work/$f.log" \
        --env "HEADROOM_TABLE=$table" --env RUST_LOG=info \
        --env HEADROOM_AWS_MAX_ATTEMPTS=1 --env HEADROOM_AWS_ATTEMPT_TIMEOUT_MS=5000 \
        --env HEADROOM_AWS_OPERATION_TIMEOUT_MS=20000 --env HEADROOM_AWS_RETRY_MODE=standard \
        --env "AWS_ENDPOINT_URL=$AWS_ENDPOINT_URL" --env AWS_ACCESS_KEY_ID=testing \
        --env AWS_SECRET_ACCESS_KEY=testing --env AWS_REGION=us-east-1 \
        >>"$work/results.jsonl" || { status=1; log "$f: some invocations failed (see $out and the log below)"; tail -5 "$work/$f.log" >&2; }
done

# --- 4. report ---------------------------------------------------------------------------------
python3 - "$work/results.jsonl" "$CARGO_TARGET_DIR" "$out" "$run_dir" <<'PY'
import json, statistics, sys, zipfile, os
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
target = sys.argv[2]
json.dump(rows, open(sys.argv[3], "w"), indent=1)

def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))] if xs else float("nan")

def size(arch, f):
    d = sys.argv[4] if arch == "x86_64" else os.path.join(target, f"lambda-{arch}")
    z = os.path.join(d, f, "bootstrap.zip")
    info = zipfile.ZipFile(z).infolist()
    return os.path.getsize(z) / 2**20, sum(i.file_size for i in info) / 2**20

print(f"{'function':16} {'init ms p50/p90':>16} {'1st event ms p50':>17} {'warm ms p50/p90':>16} {'VmHWM MB max':>13} {'anon/file MB':>13} {'zip MB arm64':>13} {'bin MB arm64/x86':>17}  errors")
for r in rows:
    runs = r["runs"]
    init = [x["init_ms"] for x in runs if x["init_ms"] is not None]
    first = [x["latencies_ms"][0] for x in runs if x["latencies_ms"]]
    warm = [l for x in runs for l in x["latencies_ms"][1:]]
    hwm = [x["vm_hwm_kb"] / 1024 for x in runs if x["vm_hwm_kb"]]
    anon = [x.get("rss_anon_kb") / 1024 for x in runs if x.get("rss_anon_kb")]
    file_ = [x.get("rss_file_kb") / 1024 for x in runs if x.get("rss_file_kb")]
    errors = sum(1 for x in runs if x["error"])
    za, ba = size("arm64", r["function"])
    _, bx = size("x86_64", r["function"])
    print(f"{r['function']:16} {pct(init,50):7.1f} /{pct(init,90):6.1f} {pct(first,50):17.1f} {pct(warm,50):7.1f} /{pct(warm,90):6.1f} {max(hwm) if hwm else float('nan'):13.1f} {statistics.median(anon) if anon else float('nan'):6.1f} /{statistics.median(file_) if file_ else float('nan'):5.1f} {za:13.2f} {ba:8.2f} /{bx:6.2f}  {errors}")
    for x in runs:
        if x["error"]:
            print(f"    error: {x['error']}")
            break
print(f"(samples: {sys.argv[3]}; load average now: {open('/proc/loadavg').read().split()[:3]}, on {os.cpu_count()} cores)")
PY
exit "$status"
