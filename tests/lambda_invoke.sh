#!/usr/bin/env bash
# Every event file in events/ through the real local Lambda runtime: `cargo lambda watch` serving
# the three functions, `cargo lambda invoke <function> --data-file <file>` for each file, against
# moto, set up as the README's walkthrough ("Running a function locally") sets it up: a table made
# and events/plans/local.toml applied with the headroom CLI, nothing else created in moto.
#
#   bash tests/lambda_invoke.sh
#
# tests/run.sh runs it in its full mode, with its moto: AWS_ENDPOINT_URL must point at a running
# moto (the script refuses anything else: it creates a table). Installs cargo-lambda from PyPI
# into the virtualenv infra/build.sh uses when it is missing. Builds the function binaries and
# the CLI first (the same `cargo` selection `cargo lambda watch` runs, so watch finds them fresh),
# in $CARGO_TARGET_DIR like the rest of the suite. Every wait is bounded; the script stops the
# watch process group it started, and exits non-zero when any answer is not the expected one.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

log() { printf 'tests/lambda_invoke: %s\n' "$*" >&2; }

# --- The files and what each must answer -----------------------------------------------------
# One row per invocation: file, function, expected answer, a text the answer must contain (its
# JSON with no spaces), and why. Every JSON file under events/ needs at least one row.
#   answered  the function handled it (not `rejected`, no `errors`, no rejected targets) and
#             the event was for this plan (`not_ours` is not true)
#   not-ours  answered, and the plan listens to none of it: no target touched
#   rejected  the answer is `"handled":"rejected"` with the error named (no crash, no retry)
# The world is the walkthrough's: local.toml's two endpoint variants, registered by the first
# tick; no SageMaker endpoint exists in moto, so the deploy function finds chat-prod absent.
# local.toml leaves out example.toml's inference component (moto has no inference-component
# API); the one file about it must be answered as not-ours, since headroom never touches a
# target the plan does not manage.
invocations=(
    'events/schedule/tick-rule.json|headroom-tick|answered|"handled":"tick"|the EventBridge rule tick reconciles both targets'
    'events/schedule/tick-scheduler-no-input.json|headroom-tick|answered|"handled":"tick"|the Scheduler tick (detail "{}") too'
    'events/schedule/peak.json|headroom-tick|answered|before the event arrived: ignored|a fixed-date sample (2026-11-27) now past: a peak that ended before it arrives is ignored; the live one is generated below, as the README does'
    'events/alarms/eventbridge-burst-alarm.json|headroom-alarm|answered|"roles":["guard"]|burst alarm -> guard claim on chat-prod'
    'events/alarms/direct-action-burst-alarm.json|headroom-alarm|answered|"roles":["guard"]|the same through the alarm action'
    'events/alarms/eventbridge-metric-math-alarm.json|headroom-alarm|answered|"roles":["guard"]|metric-math burst alarm'
    'events/alarms/eventbridge-composite-alarm.json|headroom-alarm|answered|"roles":["guard"]|composite burst alarm, named by ARN'
    'events/alarms/eventbridge-burst-ok.json|headroom-alarm|answered|"roles":["guard"]|burst OK -> hold, then step down'
    'events/alarms/eventbridge-burst-insufficient-data.json|headroom-alarm|answered|"roles":["guard"]|burst metric stopped mid-burst -> the guard keeps the current count for keep_for (on_insufficient_data)'
    'events/alarms/eventbridge-backlog-alarm.json|headroom-alarm|answered|"roles":["wake"]|backlog alarm -> wake claim on summarize-async'
    'events/alarms/direct-action-backlog-ok.json|headroom-alarm|answered|"roles":["wake"]|backlog OK -> quiet period'
    'events/alarms/eventbridge-ic-no-capacity-alarm.json|headroom-alarm|not-ours|"targets":[]|its alarm wakes inference-component/llama-8b-ic, which local.toml does not manage (moto has no inference-component API)'
    'events/alarms/eventbridge-unknown-alarm.json|headroom-alarm|not-ours|"targets":[]|a billing alarm no plan names'
    'events/sagemaker/endpoint-updating-tags-list.json|headroom-deploy|answered|"change":"absent"|chat-prod does not exist in moto'
    'events/sagemaker/endpoint-config-created.json|headroom-deploy|answered|"outcome":"ignored"|no managed endpoint uses chat-prod-config-v8 yet'
    'events/sagemaker/deployment-blue-green-baking.json|headroom-deploy|answered|"change":"absent"|chat-prod does not exist in moto'
    'events/sagemaker/endpoint-in-service-v8-a.json|headroom-deploy|answered|"change":"absent"|chat-prod does not exist in moto'
    'events/sagemaker/endpoint-in-service-v8-b.json|headroom-deploy|answered|"change":"absent"|the same with tags as a list'
    'events/sagemaker/endpoint-in-service-docs.json|headroom-deploy|answered|"change":"absent"|the AWS documentation sample'
    'events/sagemaker/deployment-capacity-scaling-out.json|headroom-deploy|answered|"change":"absent"|a scale-out, not a deployment'
    'events/sagemaker/endpoint-rolling-back.json|headroom-deploy|answered|"change":"absent"|chat-prod does not exist in moto'
    'events/sagemaker/endpoint-in-service-foreign-account.json|headroom-deploy|rejected|headroom acts only on its own account|the same endpoint name from account 999999999999, as a forwarding bus delivers it: refused, nothing read or written'
    'events/sagemaker/model-package-approved.json|headroom-deploy|answered|"outcome":"ignored"|no managed target serves model package group chat-llama (no stored model identity names a package of it)'
    'events/sagemaker/model-package-rejected.json|headroom-deploy|answered|"outcome":"ignored"|chat-llama/9 rejected: no managed target has a pending review of it to withdraw'
    'events/pipeline/check.json|headroom-deploy|answered|"review":"clear"|a pipeline check: no review open'
    'events/pipeline/deployed.json|headroom-deploy|answered|"change":"absent"|a pipeline deployed hook'
    'events/invalid/peak-bad-target.json|headroom-tick|rejected|is not a SageMaker resource id|a peak for a target that is no variant'
    'events/invalid/peak-floor-zero.json|headroom-tick|rejected|must be at least 1|a peak with floor 0'
    'events/invalid/unknown-shape.json|headroom-tick|rejected|unrecognised event|no headroom event shape'
    'events/invalid/unknown-shape.json|headroom-alarm|rejected|unrecognised event|no headroom event shape'
    'events/invalid/unknown-shape.json|headroom-deploy|rejected|unrecognised event|no headroom event shape'
)

# Every JSON file under events/ has a row, and every row's file exists.
listed="$(printf '%s\n' "${invocations[@]}" | cut -d'|' -f1 | sort -u)"
missing="$(comm -23 <(find events -name '*.json' | sort) <(printf '%s\n' "$listed"))"
if [[ -n "$missing" ]]; then
    log "these event files have no row in tests/lambda_invoke.sh's table (add one: function, expected answer):"
    printf '  %s\n' $missing >&2
    exit 1
fi
for f in $listed; do
    [[ -f "$f" ]] || { log "the table names $f, which does not exist"; exit 1; }
done

# --- Tools and environment -------------------------------------------------------------------
if [[ -z "${AWS_ENDPOINT_URL:-}" ]] || ! python3 -c "import urllib.request, sys; urllib.request.urlopen(sys.argv[1] + '/moto-api/', timeout=2)" "$AWS_ENDPOINT_URL" 2>/dev/null; then
    log "AWS_ENDPOINT_URL (${AWS_ENDPOINT_URL:-unset}) is not a running moto: run this from tests/run.sh, or start moto_server and export AWS_ENDPOINT_URL"
    exit 1
fi
venv="${HEADROOM_INFRA_VENV:-$HOME/.cache/headroom-infra-venv}"
if [[ ! -x "$venv/bin/cargo-lambda" ]]; then
    [[ -x "$venv/bin/python" ]] || { log "creating $venv"; python3 -m venv "$venv"; }
    log "installing cargo-lambda from PyPI into $venv"
    "$venv/bin/pip" install --quiet --disable-pip-version-check cargo-lambda
fi
export PATH="$venv/bin:$PATH"

work="$(mktemp -d "${TMPDIR:-/tmp}/headroom-lambda-invoke.XXXXXX")"
table="headroom-invoke-$(date +%s)-$$"
export AWS_ACCESS_KEY_ID="${AWS_ACCESS_KEY_ID:-testing}" AWS_SECRET_ACCESS_KEY="${AWS_SECRET_ACCESS_KEY:-testing}"
export AWS_REGION="${AWS_REGION:-us-east-1}" HEADROOM_TABLE="$table"
# `cargo lambda watch` sends the placeholder ARN `function-arn`: the alarm function takes its
# account and region from this instead (the fixtures' own, 123456789012).
export HEADROOM_FUNCTION_ARN="arn:aws:lambda:$AWS_REGION:123456789012:function:headroom-alarm"

watch_pid=""
stop() {
    # Exactly the process group started below (watch, its `cargo run`s and the function
    # processes), never a broad match.
    if [[ -n "$watch_pid" ]]; then
        kill -- -"$watch_pid" 2>/dev/null || true
        wait "$watch_pid" 2>/dev/null || true
        for _ in $(seq 50); do
            kill -0 -- -"$watch_pid" 2>/dev/null || break
            sleep 0.1
        done
        kill -KILL -- -"$watch_pid" 2>/dev/null || true
    fi
    rm -rf "$work"
}
trap stop EXIT

# --- Build, table, plan ----------------------------------------------------------------------
# `cargo lambda watch` starts a function with `cargo run --manifest-path Cargo.toml --bin <name>`
# (no -p: the workspace's feature set). Built with the same selection here, watch finds the
# binaries fresh and compiles nothing while invocations wait.
log "building the functions and the CLI"
cargo build --quiet --bin headroom-tick --bin headroom-alarm --bin headroom-deploy --bin headroom
cli="${CARGO_TARGET_DIR:-$PWD/target}/debug/headroom"
"$cli" plan init-table >&2
"$cli" plan apply events/plans/local.toml >&2

# --- cargo lambda watch ----------------------------------------------------------------------
port="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
# Its own process group (setsid), so stop() ends it and everything it spawned, and nothing else.
setsid cargo lambda watch -A 127.0.0.1 -P "$port" --ignore-changes >"$work/watch.log" 2>&1 &
watch_pid=$!
watch_answers() {
    # Any HTTP answer (watch says 404 to GET /) means it is serving.
    python3 - "$port" <<'PY' 2>/dev/null
import sys, urllib.request, urllib.error
try:
    urllib.request.urlopen(f"http://127.0.0.1:{sys.argv[1]}/", timeout=2)
except urllib.error.HTTPError:
    pass
PY
}
# Bounded wait: watch serves within a second or two; 60 s allows for a loaded machine.
for _ in $(seq 120); do
    watch_answers && break
    if ! kill -0 "$watch_pid" 2>/dev/null; then
        log "cargo lambda watch exited while starting; its log:"
        cat "$work/watch.log" >&2
        exit 1
    fi
    sleep 0.5
done
if ! watch_answers; then
    log "cargo lambda watch did not answer on 127.0.0.1:$port within 60 s; its log:"
    cat "$work/watch.log" >&2
    exit 1
fi
log "cargo lambda watch is up on 127.0.0.1:$port (table $table, plan events/plans/local.toml)"

# --- Invoke ----------------------------------------------------------------------------------
failed=0
# check FILE FUNCTION EXPECT NEEDLE WHY: one invocation, one verdict line.
check() {
    local file="$1" function="$2" expect="$3" needle="$4" why="$5" out="$work/answer.json" rc=0
    # Bounded: a function's first invocation includes watch's `cargo run` (nothing to compile)
    # and the function's init; 120 s is far beyond both.
    timeout 120 cargo lambda invoke "$function" -A 127.0.0.1 -P "$port" --data-file "$file" \
        -o json >"$out" 2>"$work/invoke.err" || rc=$?
    if ((rc != 0)); then
        log "FAIL $file -> $function: cargo lambda invoke exited $rc ($why):"
        cat "$work/invoke.err" "$out" >&2
        failed=1
        return
    fi
    local verdict
    verdict="$(python3 - "$out" "$expect" "$needle" <<'PY'
import json, sys
path, expect, needle = sys.argv[1:4]
try:
    a = json.load(open(path))
except ValueError as e:
    print(f"the answer is not JSON ({e})")
    sys.exit()
text = json.dumps(a, separators=(",", ":"))
problems = []
if not isinstance(a, dict):
    problems.append("the answer is not a JSON object")
    a = {}
rejected = a.get("handled") == "rejected"
if expect == "rejected":
    if not rejected:
        problems.append("expected `handled: rejected`")
else:
    if rejected:
        problems.append(f"rejected: {a.get('error')}")
    if a.get("errors"):
        problems.append(f"errors: {a['errors']}")
    if a.get("rejected"):
        problems.append(f"rejected targets: {a['rejected']}")
    ours = a.get("not_ours") is not True
    if expect == "answered" and not ours:
        problems.append("the plan listens to none of it (`not_ours`)")
    if expect == "not-ours" and ours:
        problems.append("expected `not_ours: true`")
if needle not in text:
    problems.append(f"the answer does not contain {needle}")
print("; ".join(problems) if problems else "ok")
PY
)"
    if [[ "$verdict" == ok ]]; then
        log "ok   $file -> $function: $expect ($why)"
    else
        log "FAIL $file -> $function: $verdict ($why); the answer:"
        cat "$out" >&2
        failed=1
    fi
}

for row in "${invocations[@]}"; do
    IFS='|' read -r file function expect needle why <<<"$row"
    check "$file" "$function" "$expect" "$needle" "$why"
done

# The README's live peak: generated relative to now (20 min ahead, inside chat-prod's 25 min
# lead time), so its floor applies at once.
"$cli" events peak --target endpoint/chat-prod/variant/AllTraffic --in 20m --floor 8 >"$work/peak-now.json"
check "$work/peak-now.json" headroom-tick answered '"min":8' 'the README walkthrough: `headroom events peak --in 20m --floor 8`'
if ! "$cli" status | grep -q 'floor 8'; then
    log "FAIL headroom status does not show the generated peak's floor 8:"
    "$cli" status >&2 || true
    failed=1
fi

if grep -q '^ *Compiling ' "$work/watch.log"; then
    log "note: cargo lambda watch compiled something: the build above no longer matches what it runs"
fi
if ((failed)); then
    log "some invocations did not answer as expected; cargo lambda watch's log (functions' logs included):"
    tail -50 "$work/watch.log" >&2
    exit 1
fi
log "all ${#invocations[@]} invocations and the live peak answered as expected"
