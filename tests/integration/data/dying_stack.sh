#!/bin/sh
# The real stack process ($REAL_UGV_NAV), killed 2 s of wall time after it started: a stack that
# crashes in the middle of a run (dying_stack_lockstep.yaml runs it).
"$REAL_UGV_NAV" "$@" &
child=$!
sleep 2
kill -9 "$child"
wait "$child"
exit 9
