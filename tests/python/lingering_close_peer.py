"""A program that closes a Link the way libzmq 4.3.4 cannot survive if the socket lingers.

A raw ZMTP 3.0 server (AF_UNIX, NULL mechanism, a ROUTER by its READY) completes the handshake
and never reads what the client sends, so the client's frames stay queued. Once the client has
called close(), the server writes one message and closes its end: data and the peer's close
then reach the client's connection in one wake. A socket still lingering at that moment stops
reading, and its heartbeat timer then asserts ("!_io_error", stream_engine_base.cpp:331) and
aborts the process. Exits 0 (printing "closed") when the close survives.

  lingering_close_peer.py        (PYTHONPATH holds the fieldproof package)"""

import os
import shutil
import socket
import struct
import sys
import tempfile
import threading
import time

import zmq

from fieldproof.transport import Link


def recv_exact(conn, n):
    data = b""
    while len(data) < n:
        chunk = conn.recv(n - len(data))
        if not chunk:
            raise EOFError("the client closed during the handshake")
        data += chunk
    return data


def main() -> int:
    base = tempfile.mkdtemp(prefix="linger-")
    try:
        return close_while_the_peer_closes(os.path.join(base, "s.sock"))
    finally:
        shutil.rmtree(base, ignore_errors=True)


def close_while_the_peer_closes(path: str) -> int:
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    srv.bind(path)
    srv.listen(1)
    handshaken = threading.Event()
    closing = threading.Event()

    def serve():
        conn, _ = srv.accept()
        conn.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        conn.sendall(b"\xff" + b"\0" * 8 + b"\x7f" + b"\x03\x00" + b"NULL".ljust(20, b"\0")
                     + b"\0" * 32)
        recv_exact(conn, 64)  # the client's greeting
        ready = b"\x05READY" + b"\x0bSocket-Type" + struct.pack(">I", 6) + b"ROUTER"
        conn.sendall(bytes([0x04, len(ready)]) + ready)
        _, size = recv_exact(conn, 2)  # the client's READY: flags, size, body
        recv_exact(conn, size)
        handshaken.set()
        closing.wait()
        # zmq_close returns at once and hands the socket to libzmq's threads: this lets them
        # start its termination first (what the abort needs; nothing here can be awaited).
        time.sleep(0.05)
        conn.sendall(bytes([0x00, 5]) + b"hello")
        conn.close()

    server = threading.Thread(target=serve, daemon=True)
    server.start()
    link = Link("ipc://" + path, heartbeat_interval=0.01, linger=2.0)
    if not handshaken.wait(10):
        print("no handshake within 10 s", file=sys.stderr)
        return 1
    # The link learns of the handshake from its monitor, which it reads while receiving.
    deadline = time.monotonic() + 10
    while not link._connected and time.monotonic() < deadline:
        link.receive(0.01)
    for _ in range(200):
        link.send_bytes(b"x" * 100_000)  # 20 MB the server never reads
    closing.set()
    link.close()
    server.join(10)
    # Waits for every socket's lingering to end: an engine left reading nothing aborts here.
    zmq.Context.instance().term()
    print("closed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
