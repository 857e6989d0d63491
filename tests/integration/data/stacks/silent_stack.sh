#!/bin/sh
# A stack program that never connects to the coordinator (the engine gives up at its ready bound).
exec sleep 300
