#!/usr/bin/env python3
"""Runs one test module (or one class of it, MODULE.CLASS) with unittest; exits 77 (CTest's SKIP_RETURN_CODE) when every test in it
was skipped, so a test that cannot run here is counted skipped, never passed."""

import faulthandler
import os
import sys
import unittest


def main() -> int:
    # A fatal signal (a library's abort) prints every thread's Python stack, so a crash in CI
    # says where it happened.
    faulthandler.enable(all_threads=True)
    if len(sys.argv) != 2:
        print("usage: run_tests.py MODULE[.CLASS]", file=sys.stderr)
        return 2
    suite = unittest.defaultTestLoader.loadTestsFromName(sys.argv[1])
    result = unittest.TextTestRunner(verbosity=2).run(suite)
    if not result.wasSuccessful():
        return 1
    if result.testsRun > 0 and len(result.skipped) == result.testsRun:
        for test, why in result.skipped:
            print(f"SKIPPED {test.id()}: {why}")
        return 77
    return 0


if __name__ == "__main__":
    code = main()
    # The verdict is decided and printed: leave without the interpreter's teardown, where a
    # library's background threads (ZeroMQ's I/O threads, a subprocess's pipes) have nothing
    # left to say but can still crash the process and turn a pass into an abort.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
