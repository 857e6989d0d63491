#!/usr/bin/env bash
# Runs every benchmark binary of a Release build and ends with the BENCH lines they printed,
# one per figure: BENCH <name> <value> <unit> ratio=<value/baseline> baseline=<what>
set -uo pipefail
build="${1:-build-release}"
log="$build/bench.log"
: > "$log"
status=0
for b in "$build"/bench/*_bench; do
  [ -x "$b" ] || continue
  echo "== $(basename "$b")" | tee -a "$log"
  if ! "$b" 2>&1 | tee -a "$log"; then status=1; echo "bench: $(basename "$b") failed" >&2; fi
done
echo
echo "== figures ($(date -u +%Y-%m-%d), $(nproc) cores)"
grep -h '^BENCH ' "$log" || true
exit $status
