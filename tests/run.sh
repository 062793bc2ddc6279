#!/usr/bin/env bash
# headroom's test command (the one the README gives):
#
#   bash tests/run.sh
#
# 1. installs what the tests need when it is missing (moto's server, from PyPI);
# 2. starts moto on 127.0.0.1 (port $MOTO_PORT, default 5055; another free port if that one is
#    busy), waits until it answers, and points the AWS SDK at it;
# 3. runs every test of the workspace (unit, property, handler, moto-backed, infra);
# 4. runs the further checks: every events/ file through `cargo lambda watch` and
#    `cargo lambda invoke` against this moto (tests/lambda_invoke.sh), then the offline ones;
# 5. stops exactly the moto it started, and exits non-zero if anything failed.
#
#   bash tests/run.sh --fast     (or HEADROOM_TESTS_FAST=1): steps 1-3 and 5 only, no
#                                 cargo lambda invocations, no infra checks and no arm64 release
#                                 build; CI runs everything.
#
# Set CARGO_TARGET_DIR to reuse a build directory outside the clone (.ci/run does).
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

log() { printf 'tests/run.sh: %s\n' "$*" >&2; }

fast="${HEADROOM_TESTS_FAST:-}"
if [[ "${1:-}" == "--fast" ]]; then
    fast=1
fi

# --- 1. Tools ------------------------------------------------------------------------------
if ! command -v cargo >/dev/null 2>&1; then
    log "cargo is not installed: install Rust (https://rustup.rs) and run again"
    exit 1
fi
# pip's user installs land here; make them visible to this script.
export PATH="$HOME/.local/bin:$PATH"
if ! command -v moto_server >/dev/null 2>&1; then
    log 'installing moto[server] from PyPI'
    python3 -m pip install --quiet "moto[server]" \
        || python3 -m pip install --quiet --user "moto[server]" \
        || python3 -m pip install --quiet --user --break-system-packages "moto[server]"
    hash -r
fi
if ! command -v moto_server >/dev/null 2>&1; then
    log 'moto_server is still not on PATH after installing moto[server]: check the pip output above'
    exit 1
fi

# --- 2. moto -------------------------------------------------------------------------------
port_busy() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
answers() {
    if command -v curl >/dev/null 2>&1; then
        curl -sf --max-time 2 "http://127.0.0.1:$1/moto-api/" -o /dev/null
    else
        python3 -c "import urllib.request, sys; urllib.request.urlopen('http://127.0.0.1:$1/moto-api/', timeout=2)" 2>/dev/null
    fi
}

port="${MOTO_PORT:-5055}"
if port_busy "$port"; then
    busy="$port"
    port="$(free_port)"
    log "port $busy is busy: starting moto on $port instead"
fi
moto_log="$(mktemp "${TMPDIR:-/tmp}/headroom-moto.XXXXXX.log")"
moto_server -H 127.0.0.1 -p "$port" >"$moto_log" 2>&1 &
moto_pid=$!
stop_moto() {
    # Exactly the process started above, never a broad match.
    kill "$moto_pid" 2>/dev/null || true
    wait "$moto_pid" 2>/dev/null || true
}
trap stop_moto EXIT

# Bounded wait: 60 s is far beyond moto's usual 1-3 s start, even on a loaded machine.
for _ in $(seq 600); do
    if answers "$port"; then
        break
    fi
    if ! kill -0 "$moto_pid" 2>/dev/null; then
        log "moto_server exited while starting; its log:"
        cat "$moto_log" >&2
        exit 1
    fi
    sleep 0.1
done
if ! answers "$port"; then
    log "moto_server did not answer on 127.0.0.1:$port within 60 s; its log:"
    cat "$moto_log" >&2
    exit 1
fi
log "moto is up on 127.0.0.1:$port (pid $moto_pid, log $moto_log)"

export AWS_ENDPOINT_URL="http://127.0.0.1:$port"
export AWS_ACCESS_KEY_ID=testing
export AWS_SECRET_ACCESS_KEY=testing
export AWS_REGION=us-east-1
export AWS_DEFAULT_REGION=us-east-1
export HEADROOM_MOTO=1
# Never let a developer's real profile or session leak into the tests.
unset AWS_PROFILE AWS_SESSION_TOKEN AWS_DEFAULT_PROFILE

# --- 3. The workspace's tests --------------------------------------------------------------
# --all-targets: libraries, binaries, integration tests, examples and benches (run once, in
# test mode). Doc tests are not part of it: the crates' doc blocks are TOML and JSON examples,
# not Rust, so `--doc` would only compile every crate again for nothing. Add
# `cargo test --workspace --doc` here when a Rust doc example appears.
# --no-fail-fast: report every failing test binary, not only the first.
cargo test --workspace --all-targets --no-fail-fast

# --- 4. Further checks ---------------------------------------------------------------------
if [[ -n "$fast" ]]; then
    log 'all tests passed (--fast: tests/lambda_invoke.sh, infra/check.sh and infra/build.sh skipped)'
    exit 0
fi
# Each must exit non-zero when it fails (set -e stops the run and the exit status says so).
# Add new checks below, one line each.
# rustfmt: the code as `cargo fmt` writes it (rustfmt ships with the toolchain).
if cargo fmt --version > /dev/null 2>&1; then
    cargo fmt --all -- --check
else
    log 'SKIPPED cargo fmt --check: rustfmt is not installed (rustup component add rustfmt)'
fi
# tests/readme_tables.sh: the README's shipped-scenario tables are what the simulator prints.
bash tests/readme_tables.sh
# tests/lambda_invoke.sh: every file in events/ through `cargo lambda watch` + `cargo lambda
# invoke` against the moto above, set up as the README's walkthrough (installs cargo-lambda).
bash tests/lambda_invoke.sh
# infra/check.sh: the SAM template's offline lint and scan (cfn-lint, checkov).
if [[ -f infra/check.sh ]]; then
    bash infra/check.sh
else
    log 'SKIPPED infra/check.sh: not in this checkout'
fi
# infra/build.sh: cargo lambda build --release --arm64 of every function; each zip under 8 MB.
bash infra/build.sh

log 'all tests and checks passed'
