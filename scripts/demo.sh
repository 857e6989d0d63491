#!/usr/bin/env bash
# The README's `make demo`: the reference UGV drives from the dock to goal_a in examples/worlds/
# depot.sdf (sim mode, the world's own real-time factor, about 50 s), then the verdict is printed.
# Each run gets a fresh run directory under $build/runs. Falls back to the kernel demo when the
# CLI is not built.
set -euo pipefail
build="${1:-build}"
if [ -x "$build/bin/fieldproof" ]; then
  status=0
  "$build/bin/fieldproof" run examples/scenarios/ugv_nav_to_goal.yaml --runs-dir "$build/runs" \
    || status=$?
  exit "$status"
fi
exec "$build/examples/kernel_demo"
