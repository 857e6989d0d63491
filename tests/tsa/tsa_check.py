#!/usr/bin/env python3
"""The clang thread-safety check of one source file (CTest label tsa, docs/contributing.md).

Compiles FILE with clang++ -fsyntax-only -Wthread-safety -Werror, with the defines, include
paths and language flags of FILE's entry in the build's compile_commands.json (GCC's own
warning and code-generation flags are dropped: only the analysis is asked for).

  tsa_check.py --clang CLANGXX --db compile_commands.json --file SRC
      exit 0: clean; 1: the analysis (or the compile) failed, its diagnostics printed
  tsa_check.py --clang CLANGXX --db compile_commands.json --flags-of SRC --expect-fail PLANT
      compiles PLANT (a tiny source outside the build) with SRC's flags, once as it is (must
      pass) and once with -DFIELDPROOF_TSA_PLANT_VIOLATION (must fail with a thread-safety
      diagnostic): proves the check bites.
Exit 77 (CTest: skipped) with the reason when clang++ is absent.
"""
import argparse
import json
import os
import shlex
import shutil
import subprocess
import sys

SKIP = 77
# Kept from the GCC command: what changes the meaning of the code, not how it is compiled.
KEEP_PREFIXES = ("-D", "-U", "-I", "-std=", "-include")
KEEP_WITH_ARG = ("-isystem", "-iquote", "-include", "-D", "-I", "-U")
TSA_FLAGS = ["-fsyntax-only", "-Wthread-safety", "-Werror", "-ferror-limit=0"]


def entry_args(db_path, src):
    src = os.path.realpath(src)
    with open(db_path, encoding="utf-8") as f:
        db = json.load(f)
    for e in db:
        if os.path.realpath(os.path.join(e["directory"], e["file"])) == src:
            args = e["arguments"] if "arguments" in e else shlex.split(e["command"])
            return e["directory"], args
    sys.exit(f"tsa_check: {src}: not in {db_path} (not compiled by this build?)")


def kept_flags(args):
    out, i = [], 1  # args[0] is the compiler
    while i < len(args):
        a = args[i]
        if a in KEEP_WITH_ARG and i + 1 < len(args):
            out += [a, args[i + 1]]
            i += 2
            continue
        if a.startswith(KEEP_PREFIXES) or a.startswith("-isystem"):
            out.append(a)
        i += 1
    return out


def run(clang, directory, flags, src):
    cmd = [clang] + TSA_FLAGS + flags + [os.path.abspath(src)]
    p = subprocess.run(cmd, cwd=directory, capture_output=True, text=True)
    return p.returncode, p.stdout + p.stderr, cmd


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--clang", required=True)
    ap.add_argument("--db", required=True)
    ap.add_argument("--file")
    ap.add_argument("--flags-of")
    ap.add_argument("--expect-fail")
    a = ap.parse_args()
    clang = shutil.which(a.clang) if a.clang and "NOTFOUND" not in a.clang else None
    if not clang:
        print("SKIPPED: clang++ not found (scripts/install-deps.sh installs Debian's clang); "
              "the thread-safety analysis needs clang")
        return SKIP
    if a.file:
        directory, args = entry_args(a.db, a.file)
        rc, out, cmd = run(clang, directory, kept_flags(args), a.file)
        if rc != 0:
            print(" ".join(shlex.quote(c) for c in cmd))
            print(out)
            print(f"tsa_check: {a.file}: clang -Wthread-safety failed (exit {rc})")
            return 1
        return 0
    directory, args = entry_args(a.db, a.flags_of)
    flags = kept_flags(args)
    rc, out, cmd = run(clang, directory, flags, a.expect_fail)
    if rc != 0:
        print(out)
        print(f"tsa_check: {a.expect_fail}: the correctly locked version must pass, it failed")
        return 1
    rc, out, cmd = run(clang, directory, flags + ["-DFIELDPROOF_TSA_PLANT_VIOLATION"],
                       a.expect_fail)
    if rc == 0 or "-Wthread-safety" not in out:
        print(out)
        print(f"tsa_check: {a.expect_fail}: the planted unguarded read must fail the check with a "
              f"-Wthread-safety diagnostic (exit {rc})")
        return 1
    print("the planted violation is caught:\n" + out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
