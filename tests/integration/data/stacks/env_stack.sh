#!/bin/sh
# A stack program that writes what the engine gave it (its environment, working directory,
# arguments and parameters) to $FIELDPROOF_RUN_DIR/stack_env.txt, then becomes the reference
# stack program ($REAL_UGV_NAV), which reads the same variables.
{
  echo "args=$*"
  echo "pwd=$(pwd)"
  env | grep '^FIELDPROOF_\|^MY_' | sort
  echo "params=$(cat "$FIELDPROOF_PARAMS_FILE")"
} > "$FIELDPROOF_RUN_DIR/stack_env.txt"
echo "env_stack: starting $REAL_UGV_NAV"
exec "$REAL_UGV_NAV"
