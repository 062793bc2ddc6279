#!/usr/bin/env bash
# The README's shipped-scenario tables are what the simulator prints today: every table row of
# `cargo run -p headroom-sim --example scenarios` must stand, as printed, in README.md. (A table
# row that a change of the simulator or the core moved fails here, with the row to paste.)
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(cargo run -q -p headroom-sim --example scenarios)
missing=0
while IFS= read -r row; do
    [[ "$row" == "| "* ]] || continue
    if ! grep -qxF -- "$row" README.md; then
        echo "tests/readme_tables.sh: not in README.md (rerun the example and update the table): $row" >&2
        missing=$((missing + 1))
    fi
done <<< "$out"
if (( missing > 0 )); then
    echo "tests/readme_tables.sh: $missing row(s) of --example scenarios differ from README.md" >&2
    exit 1
fi
echo "tests/readme_tables.sh: the README's scenario tables match --example scenarios"
