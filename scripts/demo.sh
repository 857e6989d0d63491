#!/usr/bin/env bash
# The README's `make demo`: runs the example on what is built so far and prints the verdict.
set -euo pipefail
build="${1:-build}"
if [ -x "$build/src/cli/fieldproof" ] && [ -f examples/scenarios/depot_patrol.yaml ]; then
  exec "$build/src/cli/fieldproof" run examples/scenarios/depot_patrol.yaml
fi
exec "$build/examples/kernel_demo"
