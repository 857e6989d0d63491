#!/bin/sh
# A stack program that never connects to the coordinator (the engine gives up at its ready bound).
# Its pid goes into the run directory, so the test can check this very process was ended.
echo $$ > "$FIELDPROOF_RUN_DIR/silent_stack.pid"
exec sleep 300
