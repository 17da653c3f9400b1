"""exactq_client installed from client/python into a venv (package_test.sh), against the
real exactqd: the package and its generated stubs (with .pyi type stubs) import from the
venv, results are dataclasses, numpy planes go in and come out, scores have the C++
client's bits, a Y4M without XCOLORRANGE scores against one tagged limited (the proto's
unspecified range is limited), files of different lengths raise as the C++ client does
after the frames sent are answered, and the exactq-py script runs."""

import dataclasses
import json
import os
import struct
import subprocess
import sys
import tempfile
import unittest

RUNFILES = os.environ["EXACTQ_RUNFILES"]
VENV = os.environ["EXACTQ_VENV"]
sys.path.append(os.path.join(RUNFILES, "tests", "deploy"))  # processes.py, after the venv

import numpy as np  # noqa: E402
import processes  # noqa: E402

import exactq_client  # noqa: E402
from exactq.v1 import exactq_pb2  # noqa: E402
from exactq_client import Client  # noqa: E402

EXACTQD = os.path.join(RUNFILES, "server", "exactqd")
EXACTQ = os.path.join(RUNFILES, "client", "exactq")
REF = os.path.join(RUNFILES, "samples", "sample.ref.y4m")
DIST = os.path.join(RUNFILES, "samples", "sample.dist.y4m")


def bits(x):
    return struct.pack("<d", x)


def rewrite_header(src, dst, drop_tag=None, frames=None):
    with open(src, "rb") as f:
        header = f.readline()
        body = f.read()
    if drop_tag:
        header = b" ".join(w for w in header.split() if not w.startswith(drop_tag)) + b"\n"
    if frames is not None:
        size = len(body) // 3  # the sample has 3 frames
        body = body[:frames * size]
    with open(dst, "wb") as f:
        f.write(header + body)


class PackageTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        processes.exit_on_sigterm()
        cls.work = tempfile.mkdtemp()
        cls.server = processes.Exactqd(EXACTQD, cls.work)
        cls.address = f"127.0.0.1:{cls.server.grpc_port}"
        cls.client = Client(cls.address)
        cls.client.wait_ready(30)

    @classmethod
    def tearDownClass(cls):
        cls.client.close()
        cls.server.stop()

    def test_installed_in_the_venv_with_typed_stubs(self):
        for module in (exactq_client, exactq_pb2):
            self.assertTrue(os.path.realpath(module.__file__).startswith(os.path.realpath(VENV)),
                            module.__file__)
        stubs = os.path.dirname(exactq_pb2.__file__)
        for name in ("exactq_pb2.pyi", "exactq_pb2_grpc.py", "py.typed"):
            self.assertTrue(os.path.exists(os.path.join(stubs, name)), name)
        self.assertTrue(os.path.exists(os.path.join(os.path.dirname(exactq_client.__file__), "py.typed")))
        self.assertEqual(exactq_client.__version__, "0.1.0")

    def test_results_are_dataclasses_with_the_cpp_clients_bits(self):
        result = self.client.score_files(REF, DIST, metrics=["psnr"])
        self.assertTrue(dataclasses.is_dataclass(result))
        self.assertIsInstance(result.pooled["psnr_y"], exactq_client.PooledScore)
        self.assertIsInstance(result.totals, exactq_client.Totals)
        self.assertIsInstance(result.frames[0], exactq_client.FrameScores)
        self.assertEqual(result.totals.frames, 3)
        self.assertEqual(result.pooled["psnr_y"]["mean"], result.pooled["psnr_y"].mean)
        out = os.path.join(self.work, "cpp.json")
        subprocess.run([EXACTQ, "score", REF, DIST, "--server", self.address, "--json", out,
                        "--quiet"], check=True, timeout=60)
        with open(out, encoding="utf-8") as f:
            cpp = json.load(f)
        for mine, theirs in zip(result.frames, cpp["frames"]):
            self.assertEqual({k: bits(v) for k, v in mine.scores.items()},
                             {k: bits(v) for k, v in theirs["metrics"].items()})
        self.assertEqual(bits(result.pooled["psnr_y"].mean), bits(cpp["pooled_metrics"]["psnr_y"]["mean"]))

    def test_numpy_planes_in_and_out(self):
        g = exactq_client.geometry(16, 8, "420", 10)
        rng = np.random.default_rng(7)
        planes = [rng.integers(0, 1024, size=s, dtype=np.uint16) for s in exactq_client.plane_shapes(g)]
        back = exactq_client.from_wire(g, exactq_client.to_wire(g, planes))
        for a, b in zip(planes, back):
            np.testing.assert_array_equal(a, b)
        frame = self.client.score_pair(g, planes, back)
        self.assertTrue(dataclasses.is_dataclass(frame))

    def test_untagged_range_is_limited(self):
        untagged = os.path.join(self.work, "untagged.y4m")
        rewrite_header(DIST, untagged, drop_tag=b"XCOLORRANGE")
        tagged = self.client.score_files(REF, DIST)
        mixed = self.client.score_files(REF, untagged)
        self.assertEqual([f.scores for f in mixed.frames], [f.scores for f in tagged.frames])
        full = os.path.join(self.work, "full.y4m")
        with open(DIST, "rb") as f:
            data = f.read().replace(b"XCOLORRANGE=LIMITED", b"XCOLORRANGE=FULL", 1)
        with open(full, "wb") as f:
            f.write(data)
        with self.assertRaisesRegex(ValueError, "differ in geometry"):
            self.client.score_files(REF, full)

    def test_different_lengths_raise_after_the_frames_sent(self):
        short = os.path.join(self.work, "short.y4m")
        rewrite_header(DIST, short, frames=2)
        with self.assertRaisesRegex(ValueError, "the distorted file ended at frame 2 but the "
                                    "reference file has more frames"):
            self.client.score_files(REF, short)
        with exactq_client.Y4mReader(REF) as ref, exactq_client.Y4mReader(short) as dist:
            stream = self.client.stream(ref.geometry, exactq_client.paired_frames(ref, dist))
            with self.assertRaises(ValueError):
                stream.wait()
        self.assertEqual([f.index for f in stream.result.frames], [0, 1])

    def test_console_script(self):
        script = os.path.join(VENV, "bin", "exactq-py")
        r = subprocess.run([script, "capabilities", "--server", self.address], capture_output=True,
                           text=True, timeout=60)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("psnr", r.stdout)


if __name__ == "__main__":
    unittest.main(verbosity=2)
