#!/usr/bin/env python3
"""The Python client's grant round trip: one participant alone on a coordinator loops
sleep_until(now + 1 ms). Prints "rtt_us <mean microseconds per grant>" (bench/python)."""

import sys
import time

import fieldproof
from fieldproof.time import milliseconds


def main() -> int:
    endpoint, n, warmup = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    p = fieldproof.connect(name=sys.argv[4] if len(sys.argv) > 4 else "py_rtt", endpoint=endpoint)
    step = milliseconds(1)
    for _ in range(warmup):
        p.sleep_until(p.now() + step)
    t0 = time.perf_counter()
    for _ in range(n):
        p.sleep_until(p.now() + step)
    dt = time.perf_counter() - t0
    p.leave()
    print(f"rtt_us {dt / n * 1e6:.3f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
