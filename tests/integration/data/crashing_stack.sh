#!/bin/sh
# A stack process that dies at once (FIELDPROOF_UGV_NAV points here in a test).
echo "crashing_stack: giving up" >&2
exit 3
