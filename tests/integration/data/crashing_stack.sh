#!/bin/sh
# A stack process that dies at once (crashing_stack_lockstep.yaml runs it).
echo "crashing_stack: giving up" >&2
exit 3
