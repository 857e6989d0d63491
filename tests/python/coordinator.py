"""Test helpers: a real `fieldproof coordinator` on a fresh ipc endpoint per test."""

import os
import select
import shutil
import signal
import subprocess
import tempfile
import time

BIN_DIR = os.environ.get("FIELDPROOF_BIN_DIR", "")
FIELDPROOF = os.path.join(BIN_DIR, "fieldproof") if BIN_DIR else shutil.which("fieldproof") or ""


def have_fieldproof() -> bool:
    return bool(FIELDPROOF) and os.access(FIELDPROOF, os.X_OK)


def temp_dir(prefix: str) -> str:
    base = os.environ.get("FIELDPROOF_TEST_TMP") or tempfile.gettempdir()
    os.makedirs(base, exist_ok=True)
    d = tempfile.mkdtemp(prefix=prefix, dir=base)
    # ipc paths must stay below 108 bytes: fall back to /tmp when the build tree is deep.
    if len(d) > 80:
        shutil.rmtree(d)
        d = tempfile.mkdtemp(prefix=prefix)
    return d


class Coordinator:
    """Starts `fieldproof coordinator --bind ipc://DIR/c.sock ARGS...`, waits for `ready`."""

    def __init__(self, *args: str, timeout: float = 20.0):
        self.dir = temp_dir("coord-")
        self.endpoint = f"ipc://{self.dir}/c.sock"
        self.err_path = os.path.join(self.dir, "coordinator.err")
        self._err = open(self.err_path, "w")
        self.proc = subprocess.Popen([FIELDPROOF, "coordinator", "--bind", self.endpoint, *args],
                                     stdout=subprocess.PIPE, stderr=self._err,
                                     start_new_session=True)
        # Raw reads (select and a buffered readline do not mix: a second line would wait in the
        # buffer while select waits on the empty pipe).
        fd = self.proc.stdout.fileno()
        text = b""
        deadline = time.monotonic() + timeout
        while b"ready\n" not in text:
            left = deadline - time.monotonic()
            if left <= 0:
                self.stop()
                raise RuntimeError(f"the coordinator printed no 'ready' within {timeout} s")
            r, _, _ = select.select([fd], [], [], left)
            if not r:
                continue
            chunk = os.read(fd, 4096)
            if not chunk:
                self.stop()
                raise RuntimeError("the coordinator exited before 'ready': " + self.stderr())
            text += chunk
        self.lines = text.decode().splitlines()

    def stderr(self) -> str:
        self._err.flush()
        with open(self.err_path) as f:
            return f.read()

    def terminate(self) -> int:
        """SIGTERM and wait: the coordinator ends its run (Error shutdown to everyone)."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        return self.proc.wait(timeout=10)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc.stdout.close()
        self._err.close()
        shutil.rmtree(self.dir, ignore_errors=True)
