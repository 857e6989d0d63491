"""The Python codec against the C++ codec: the same frames give the same bytes both ways, and bad
bytes are refused with a reason (tests/python/codec_vectors.cpp prints the C++ side)."""

import os
import struct
import subprocess
import unittest

from fieldproof import codec
from fieldproof.codec import (INFINITE, Announce, Control, ControlOp, ControlReply,
                              CoordinatorStatus, DecodeError, Deliver, Error, ErrorCode, Grant,
                              Heartbeat, Hello, Leave, ParticipantStatus, PlayerControl, PlayerOp,
                              PlayerReply, Publish, Role, Subscribe, Unsubscribe, Welcome)

PUB = Publish("ugv1_nav", "/model/ugv1/cmd_vel", 1_500_000_000, 42, "ignition.msgs.Twist",
              b"\x12\x09\x11\x00\xff")

# The same values as codec_vectors.cpp.
FRAMES = {
    "announce": Announce("ugv1_nav", "main", Role.REGULATING, 100_000_000),
    "announce_inf": Announce("ugv1_nav", "main", Role.FOLLOWING, INFINITE),
    "subscribe": Subscribe("ugv1_nav", "main", "/model/ugv1/odometry"),
    "unsubscribe": Unsubscribe("ugv1_nav", "main", "/model/ugv1/scan"),
    "publish": PUB,
    "publish_empty": Publish("p", "t", 0, 1, "", b""),
    "leave": Leave("ugv1_nav", ""),
    "heartbeat": Heartbeat("ugv1_nav"),
    "grant": Grant(123_456_789, 7),
    "deliver": Deliver("main", PUB),
    "error": Error(ErrorCode.DUPLICATE_NAME, "the name ugv1_nav is in use"),
    "control": Control(ControlOp.STEP, 250_000_000, INFINITE, 2.5),
    "control_reply": ControlReply(False, "the run failed", CoordinatorStatus(
        True, 2_000_000_000, 17, 1.5, 0.0, INFINITE,
        [ParticipantStatus("world", "main", Role.REGULATING, 2_100_000_000),
         ParticipantStatus("ugv1_nav", "main", Role.FOLLOWING, INFINITE)])),
    "hello": Hello(2, "fieldproof-python 0.2.0"),
    "welcome": Welcome(2, "fieldproof-coordinator 0.2.0", 64 << 20),
    "error_version": Error(ErrorCode.VERSION, "protocol version 2 is not supported"),
    "error_no_hello": Error(ErrorCode.NO_HELLO, "no Hello"),
    "player_control": PlayerControl(PlayerOp.BURST, -5, 7, 2.5),
    "player_reply": PlayerReply(True, "", True, 0.5, 3_000_000_000, 2_000_000_000, 3, 3, 5, 1,
                                5_000_000_000, True, "seek to 99 s clamped", 2),
}


def cpp_vectors():
    exe = os.environ.get("FIELDPROOF_CODEC_VECTORS")
    if not exe or not os.path.exists(exe):
        return None
    out = subprocess.run([exe], check=True, capture_output=True, text=True).stdout
    return {name: bytes.fromhex(h) for name, h in (line.split() for line in out.splitlines())}


class AgainstTheCppCodec(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.vectors = cpp_vectors()

    def setUp(self):
        if self.vectors is None:
            self.skipTest("FIELDPROOF_CODEC_VECTORS (the C++ helper) is not built; run through "
                          "ctest")

    def test_every_cpp_frame_is_known_here(self):
        self.assertEqual(set(self.vectors), set(FRAMES))

    def test_python_encodes_the_bytes_cpp_encodes(self):
        for name, frame in FRAMES.items():
            with self.subTest(name):
                self.assertEqual(codec.encode(frame).hex(), self.vectors[name].hex())

    def test_python_decodes_cpp_bytes_to_the_same_values(self):
        for name, frame in FRAMES.items():
            with self.subTest(name):
                self.assertEqual(codec.decode(self.vectors[name]), frame)

    def test_cpp_decodes_python_bytes(self):
        exe = os.environ["FIELDPROOF_CODEC_VECTORS"]
        for name, frame in FRAMES.items():
            with self.subTest(name):
                out = subprocess.run([exe, codec.encode(frame).hex()], check=True,
                                     capture_output=True, text=True).stdout.strip()
                self.assertEqual(out, "ok " + codec.kind_name(codec.kind_of(frame)))

    def test_cpp_refuses_a_truncated_python_frame_as_malformed(self):
        exe = os.environ["FIELDPROOF_CODEC_VECTORS"]
        data = codec.encode(FRAMES["publish"])[:-1]
        out = subprocess.run([exe, data.hex()], check=True, capture_output=True,
                             text=True).stdout
        self.assertTrue(out.startswith("error 1 "), out)


class Layout(unittest.TestCase):
    """Bytes written out by hand from the layout (docs/protocol.md)."""

    def test_grant_layout(self):
        self.assertEqual(codec.encode(Grant(5, 1)),
                         b"\xf2\x07" + struct.pack("<q", 5) + struct.pack("<Q", 1))

    def test_hello_is_kind_12_with_version_and_client(self):
        data = codec.encode(Hello(2, "fieldproof-python 0.2.0"))
        self.assertEqual(data[:2], b"\xf2\x0c")
        self.assertEqual(data[2:6], struct.pack("<I", 2))
        self.assertEqual(data[6:10], struct.pack("<I", 23))
        self.assertEqual(data[10:], b"fieldproof-python 0.2.0")

    def test_welcome_is_kind_13_with_version_coordinator_and_limit(self):
        data = (b"\xf2\x0d" + struct.pack("<I", 2) + struct.pack("<I", 5) + b"coord"
                + struct.pack("<Q", 64 << 20))
        self.assertEqual(codec.decode(data), Welcome(2, "coord", 64 << 20))
        self.assertEqual(codec.encode(Welcome(2, "coord", 64 << 20)), data)

    def test_version_error_code_is_10(self):
        self.assertEqual(codec.decode(b"\xf2\x09\x0a\x00\x00\x00\x00"),
                         Error(ErrorCode.VERSION, ""))

    def test_player_control_is_kind_14_with_op_offset_count_and_rate(self):
        data = (b"\xf2\x0e\x05" + struct.pack("<q", 2_000_000_000) + struct.pack("<Q", 3)
                + struct.pack("<d", 1.5))
        self.assertEqual(codec.decode(data), PlayerControl(PlayerOp.SEEK, 2_000_000_000, 3, 1.5))
        self.assertEqual(codec.encode(PlayerControl(PlayerOp.SEEK, 2_000_000_000, 3, 1.5)), data)

    def test_player_reply_is_kind_15(self):
        data = codec.encode(PlayerReply(ok=False, error="e", message="m", burst_played=4))
        self.assertEqual(data[:2], b"\xf2\x0f")
        self.assertEqual(data[2:8], b"\x00" + struct.pack("<I", 1) + b"e")
        self.assertEqual(data[-13:], struct.pack("<I", 1) + b"m" + struct.pack("<Q", 4))

    def test_negative_time_round_trips(self):
        self.assertEqual(codec.decode(codec.encode(Grant(-1, 0))), Grant(-1, 0))


def doc_hex_blocks():
    """The ```hex blocks of docs/protocol.md: (title, bytes)."""
    src = os.environ.get("FIELDPROOF_SOURCE_DIR") or os.path.join(os.path.dirname(__file__),
                                                                 "..", "..")
    path = os.path.join(src, "docs", "protocol.md")
    if not os.path.exists(path):
        return None
    blocks, title, cur = [], "", None
    with open(path, encoding="utf-8") as f:
        for line in f:
            if cur is None:
                if line.startswith("**"):
                    title = line.strip()
                elif line.strip() == "```hex":
                    cur = []
            elif line.strip() == "```":
                blocks.append((title, bytes.fromhex("".join(cur))))
                cur = None
            else:
                cur.append(line.split("#", 1)[0].replace(" ", "").strip())
    return blocks


class TheProtocolDocument(unittest.TestCase):
    """Every hex example of docs/protocol.md decodes, and re-encodes to the same bytes."""

    def test_every_hex_example_round_trips(self):
        blocks = doc_hex_blocks()
        if blocks is None:
            self.skipTest("docs/protocol.md is not in this tree yet")
        self.assertGreater(len(blocks), 10)
        kinds = set()
        for title, data in blocks:
            with self.subTest(title):
                frame = codec.decode(data)
                kinds.add(codec.kind_of(frame))
                self.assertEqual(codec.encode(frame), data)
        self.assertIn(codec.Kind.HELLO, kinds)
        self.assertIn(codec.Kind.WELCOME, kinds)


class BadInput(unittest.TestCase):
    def assertRefused(self, data, code, text):
        with self.assertRaises(DecodeError) as cm:
            codec.decode(data)
        self.assertEqual(cm.exception.code, code)
        self.assertIn(text, cm.exception.reason)

    def test_short_frame(self):
        self.assertRefused(b"\xf2", ErrorCode.MALFORMED, "at least 2 bytes")

    def test_bad_magic(self):
        self.assertRefused(b"\x01\x07" + bytes(16), ErrorCode.MALFORMED, "0x01")

    def test_another_version_nibble_is_a_version_mismatch_naming_both(self):
        with self.assertRaises(DecodeError) as cm:
            codec.decode(b"\xf1\x07" + bytes(16))
        self.assertEqual(cm.exception.code, ErrorCode.VERSION)
        self.assertIn("version 1", cm.exception.reason)
        self.assertIn("version 2", cm.exception.reason)

    def test_unknown_kind(self):
        self.assertRefused(b"\xf2\x63", ErrorCode.UNKNOWN_KIND, "unknown frame kind 99")

    def test_unknown_player_op(self):
        data = bytearray(codec.encode(PlayerControl(PlayerOp.STATUS)))
        data[2] = 9
        self.assertRefused(bytes(data), ErrorCode.MALFORMED, "unknown enum value 9")

    def test_trailing_bytes(self):
        self.assertRefused(codec.encode(Grant(1, 1)) + b"\x00", ErrorCode.MALFORMED,
                           "trailing bytes")

    def test_unknown_enum(self):
        data = bytearray(codec.encode(Announce("a", "b", Role.REGULATING, 0)))
        data[2 + 5 + 5] = 7
        self.assertRefused(bytes(data), ErrorCode.MALFORMED, "unknown enum value 7")

    def test_string_past_the_end(self):
        self.assertRefused(b"\xf2\x06" + struct.pack("<I", 1000) + b"abc", ErrorCode.MALFORMED,
                           "runs past the end")

    def test_oversized(self):
        with self.assertRaises(DecodeError) as cm:
            codec.decode(codec.encode(Heartbeat("x" * 100)), max_bytes=50)
        self.assertEqual(cm.exception.code, ErrorCode.OVERSIZED)

    def test_every_truncation_of_every_frame_is_refused_without_a_crash(self):
        for name, frame in FRAMES.items():
            data = codec.encode(frame)
            for n in range(len(data)):
                with self.subTest(name=name, length=n):
                    with self.assertRaises(DecodeError):
                        codec.decode(data[:n])

    def test_every_single_byte_corruption_decodes_or_is_refused(self):
        for name, frame in FRAMES.items():
            data = codec.encode(frame)
            for i in range(len(data)):
                for v in (0x00, 0xFF, data[i] ^ 0x01):
                    bad = bytearray(data)
                    bad[i] = v
                    try:
                        codec.decode(bytes(bad))
                    except DecodeError:
                        pass


if __name__ == "__main__":
    unittest.main()
