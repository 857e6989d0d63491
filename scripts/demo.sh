#!/usr/bin/env bash
# The README's `make demo`: the reference UGV drives from the dock to goal_a in examples/worlds/
# depot.sdf (sim mode, the world's own real-time factor, about 50 s), then the verdict is printed,
# and where the run's report.html is. Each run gets a fresh run directory under $build/runs.
# `make demo` builds only the fieldproof executable (and the reference stack it brings) first.
set -euo pipefail
build="${1:-build}"
if [ ! -x "$build/bin/fieldproof" ]; then
  echo "demo: $build/bin/fieldproof is not built (make demo builds it)" >&2
  exit 2
fi
mkdir -p "$build/runs"
marker="$(mktemp)"
trap 'rm -f "$marker"' EXIT
status=0
"$build/bin/fieldproof" run examples/scenarios/ugv_nav_to_goal.yaml --runs-dir "$build/runs" \
  || status=$?
# The run directory this run made: the newest one, made after the marker.
dir="$(find "$build/runs" -mindepth 1 -maxdepth 1 -type d -newer "$marker" -printf '%T@ %p\n' \
  | sort -n | tail -1 | cut -d' ' -f2-)"
if [ -n "$dir" ] && [ -f "$dir/report.html" ]; then
  echo "report: $(cd "$dir" && pwd)/report.html (open it in a browser)"
fi
exit "$status"
