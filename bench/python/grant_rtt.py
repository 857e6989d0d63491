#!/usr/bin/env python3
"""The Python client's grant round trip: one participant alone on a coordinator loops
sleep_until(now + 1 ms), in chunks. Prints "rtt_us <mean us per grant of the fastest chunk>"
(bench/python: on a shared machine the fastest chunk is the least disturbed one)."""

import sys
import time

import fieldproof
from fieldproof.time import milliseconds


def main() -> int:
    endpoint, n, warmup, chunk = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), 300
    p = fieldproof.connect(name=sys.argv[4] if len(sys.argv) > 4 else "py_rtt", endpoint=endpoint)
    step = milliseconds(1)
    for _ in range(warmup):
        p.sleep_until(p.now() + step)
    best = None
    for _ in range(max(1, n // chunk)):
        t0 = time.perf_counter()
        for _ in range(chunk):
            p.sleep_until(p.now() + step)
        dt = (time.perf_counter() - t0) / chunk
        best = dt if best is None else min(best, dt)
    p.leave()
    print(f"rtt_us {best * 1e6:.3f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
