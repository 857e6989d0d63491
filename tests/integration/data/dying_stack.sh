#!/bin/sh
# The real stack process ($REAL_UGV_NAV), killed once the drive has started (the engine logged
# the timeline's action.start, 1 s of simulated time in): a stack that crashes in the middle of
# a run (dying_stack_lockstep.yaml runs it). However slow the machine, it dies mid-run.
"$REAL_UGV_NAV" "$@" &
child=$!
log="$FIELDPROOF_RUN_DIR/engine.log"
tries=0
until grep -q '"event":"action.start"' "$log" 2>/dev/null; do
  tries=$((tries + 1))
  if [ "$tries" -gt 1200 ]; then
    echo "dying_stack.sh: no action.start in $log within 60 s" >&2
    break
  fi
  sleep 0.05
done
kill -9 "$child"
wait "$child"
exit 9
