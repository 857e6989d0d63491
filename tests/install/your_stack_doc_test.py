#!/usr/bin/env python3
"""docs/your-stack.md as a user follows it: its Python stack, its C++ stack (with its
CMakeLists.txt, built out of tree against the installed SDK) and its first scenario, taken from the
page itself, each run by the installed fieldproof to a PASS. Usage: your_stack_doc_test.py DOC
PREFIX WORLD WORKDIR"""
import os
import re
import shutil
import subprocess
import sys

doc, prefix, world, work = sys.argv[1:5]
text = open(doc).read()


def block(lang, starts=""):
    for m in re.finditer(r"```" + lang + r"\n(.*?)```", text, re.S):
        if m.group(1).startswith(starts):
            return m.group(1)
    sys.exit(f"your-stack.md has no ```{lang} block starting with {starts!r}")


shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
open(os.path.join(work, "my_stack.py"), "w").write(block("python"))
open(os.path.join(work, "my_stack.cpp"), "w").write(block("cpp"))
open(os.path.join(work, "CMakeLists.txt"), "w").write(block("cmake"))
scenario = block("yaml", "name: my_first_run")
open(os.path.join(work, "my_first_run.yaml"), "w").write(scenario)
shutil.copy(world, os.path.join(work, "depot.sdf"))

env = dict(os.environ)
env["PATH"] = os.path.join(prefix, "bin") + ":/usr/bin:" + env.get("PATH", "")
env["PYTHONPATH"] = os.path.join(prefix, "lib", "python3", "dist-packages")


def run(cmd, **kw):
    r = subprocess.run(cmd, cwd=work, env=env, capture_output=True, text=True, **kw)
    print("$", " ".join(cmd), "->", r.returncode)
    print(r.stdout[-2000:], r.stderr[-2000:])
    return r


failures = 0
r = run(["fieldproof", "validate", "my_first_run.yaml"])
failures += r.returncode != 0
r = run(["fieldproof", "run", "my_first_run.yaml", "--runs-dir", "runs"], timeout=300)
failures += r.returncode != 0 or "PASS" not in r.stdout + r.stderr

r = run(["cmake", "-S", ".", "-B", "build", "-DCMAKE_PREFIX_PATH=" + prefix,
         "-DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF"])
failures += r.returncode != 0
r = run(["cmake", "--build", "build"])
failures += r.returncode != 0
cpp = re.sub(r"stack: \{command: \[python3, my_stack.py\]\}", "stack: {command: [./build/my_stack]}",
             scenario)
if cpp == scenario:
    sys.exit("the scenario's stack line is not the one the page describes")
open(os.path.join(work, "my_first_run_cpp.yaml"), "w").write(cpp)
r = run(["fieldproof", "run", "my_first_run_cpp.yaml", "--runs-dir", "runs"], timeout=300)
failures += r.returncode != 0 or "PASS" not in r.stdout + r.stderr
print(f"{4 - min(failures, 4)} passed, {min(failures, 4)} failed" if failures else "ok")
sys.exit(1 if failures else 0)
