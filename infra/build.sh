#!/usr/bin/env bash
# Builds headroom's three Lambda functions as deployable zips with cargo-lambda, and reports
# each zip's size against the 8 MB budget.
#
#   bash infra/build.sh             # arm64, as the template deploys them (the default)
#   bash infra/build.sh --x86-64    # x86_64, to run them on this machine (infra/bench.sh)
#
# Installs cargo-lambda and ziglang (its cross linker) from PyPI into the virtualenv check.sh
# uses (HEADROOM_INFRA_VENV, default ~/.cache/headroom-infra-venv) when missing, and the
# aarch64-unknown-linux-gnu Rust target with rustup when missing. If that target cannot be
# installed (rustup reaches its own download server, which not every machine can), the build
# falls back to x86_64 and says so: the cargo-lambda build is still proven, the arm64 sizes are
# not. Zips land in $CARGO_TARGET_DIR/lambda-<arch>/<binary>/bootstrap.zip.
# Exits non-zero when a build fails or a zip is over budget.
#
# The functions are built for size: opt-level "s" (HEADROOM_LAMBDA_OPT_LEVEL to change it). Their
# peak memory is mostly the binary's own pages, and their time is spent waiting on AWS: measured
# with infra/bench.sh, "s" cut the binary by 28 % and peak memory by 2.5 MB (about 16.5 -> 14 MB)
# at the same init time and latency. Only these builds use it (cargo-lambda builds for an explicit
# target triple, in its own directory), so the workspace's release profile stays as it is for
# the CLI and the simulator.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
venv="${HEADROOM_INFRA_VENV:-$HOME/.cache/headroom-infra-venv}"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/headroom-target}"
budget_bytes=$((8 * 1024 * 1024))
functions=(headroom-tick headroom-alarm headroom-deploy)

log() { printf 'infra/build: %s\n' "$*" >&2; }

arch=arm64
[[ "${1:-}" == "--x86-64" ]] && arch=x86_64

# --- tools ---------------------------------------------------------------------------------
if [[ ! -x "$venv/bin/python" ]]; then
    log "creating $venv"
    python3 -m venv "$venv"
fi
if [[ ! -x "$venv/bin/cargo-lambda" ]] || ! "$venv/bin/python" -c 'import ziglang' 2>/dev/null; then
    log "installing cargo-lambda and ziglang from PyPI into $venv"
    "$venv/bin/pip" install --quiet --disable-pip-version-check cargo-lambda ziglang
fi
# cargo finds `cargo-lambda` on PATH, and cargo-lambda runs zig through this venv's python.
export PATH="$venv/bin:$PATH"

if [[ "$arch" == arm64 ]] && ! rustup target list --installed 2>/dev/null | grep -qx aarch64-unknown-linux-gnu; then
    log "adding the Rust target aarch64-unknown-linux-gnu"
    if ! timeout 300 rustup target add aarch64-unknown-linux-gnu >&2; then
        log "FALLBACK: rustup could not install aarch64-unknown-linux-gnu (no route to its download server?);"
        log "building x86_64 instead: the build is checked, the arm64 zip sizes are not"
        arch=x86_64
    fi
fi

# --- build ---------------------------------------------------------------------------------
flag=--arm64
[[ "$arch" == x86_64 ]] && flag=--x86-64
out="$CARGO_TARGET_DIR/lambda-$arch"
packages=()
for f in "${functions[@]}"; do packages+=(-p "$f"); done
export CARGO_PROFILE_RELEASE_OPT_LEVEL="${HEADROOM_LAMBDA_OPT_LEVEL:-s}"
start=$(date +%s)
cargo lambda build --release "$flag" "${packages[@]}" --output-format zip --lambda-dir "$out" >&2
log "cargo lambda build --release $flag (opt-level $CARGO_PROFILE_RELEASE_OPT_LEVEL): $(($(date +%s) - start)) s"

# --- sizes ---------------------------------------------------------------------------------
failed=0
printf 'infra/build summary (%s, release, opt-level %s):\n' "$arch" "$CARGO_PROFILE_RELEASE_OPT_LEVEL"
for f in "${functions[@]}"; do
    zip="$out/$f/bootstrap.zip"
    if [[ ! -f "$zip" ]]; then
        printf '  %-16s MISSING %s\n' "$f" "$zip"
        failed=1
        continue
    fi
    zip_bytes=$(stat -c %s "$zip")
    bin_bytes=$("$venv/bin/python" -c 'import sys, zipfile; print(sum(i.file_size for i in zipfile.ZipFile(sys.argv[1]).infolist()))' "$zip")
    verdict=ok
    if ((zip_bytes > budget_bytes)); then
        verdict="OVER the 8 MB budget"
        failed=1
    fi
    awk -v f="$f" -v z="$zip_bytes" -v b="$bin_bytes" -v v="$verdict" \
        'BEGIN { printf "  %-16s zip %6.2f MB  binary %6.2f MB  %s\n", f, z / 1048576, b / 1048576, v }'
done
exit "$failed"
