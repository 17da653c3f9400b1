"""exactq_client against the real exactqd on loopback. The reference is the C++ client
(//client:exactq) scoring the same files through the same server: the Python client's
scores must have the same bits, whether it reads files, holds bytes or numpy planes,
streams or calls the unary method, and whatever chunk size the server asks for."""

import json
import os
import signal
import struct
import subprocess
import sys
import tempfile
import time
import unittest

import grpc

import exactq_client
from exactq_client import Client, ExactQError, ServerPath, Upload, Y4mReader, geometry, plane_shapes
from exactq_client.__main__ import to_json

EXACTQD = "server/exactqd"
EXACTQ = "client/exactq"
REF, DIST = "samples/sample.ref.y4m", "samples/sample.dist.y4m"


def bits(x):
    return struct.pack("<d", x)


class Server:
    """The real exactqd on free loopback ports (from its --port-file)."""

    def __init__(self, work, name, *args):
        self.port_file = os.path.join(work, name + ".ports")
        self.log_path = os.path.join(work, name + ".log")
        with open(self.log_path, "wb") as log:
            self.process = subprocess.Popen(
                [EXACTQD, "--listen=127.0.0.1:0", "--metrics-listen=127.0.0.1:0",
                 f"--port-file={self.port_file}", *args], stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 30
        while not os.path.exists(self.port_file):
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise AssertionError(f"exactqd did not start:\n{open(self.log_path).read()}")
            time.sleep(0.05)
        with open(self.port_file, encoding="utf-8") as f:
            ports = dict(line.split("=") for line in f.read().split())
        self.address = f"127.0.0.1:{ports['grpc']}"

    def stop(self):
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                return self.process.wait(30)
            except subprocess.TimeoutExpired:
                self.process.kill()
        return self.process.wait()


class ClientTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        signal.signal(signal.SIGTERM, lambda *_: sys.exit("SIGTERM"))
        cls.work = tempfile.mkdtemp(dir=os.environ.get("TEST_TMPDIR"))
        cls.servers = []
        cls.server = cls._start("default")
        # A server that accepts chunks of 4 KiB only: pictures travel in several chunks.
        cls.small_chunks = cls._start("small_chunks", "--max-chunk-bytes=4096")
        reference_json = os.path.join(cls.work, "cpp.json")
        subprocess.run([EXACTQ, "score", REF, DIST, "--server", cls.server.address, "--quiet",
                        f"--json={reference_json}"], check=True, timeout=60)
        with open(reference_json, encoding="utf-8") as f:
            cls.cpp = json.load(f)
        cls.client = Client(cls.server.address)
        cls.client.wait_ready(10)
        # The sample's distorted side as lossless FFV1 (the same pixels), under a source root.
        cls.root = os.path.join(cls.work, "root")
        os.mkdir(cls.root)
        cls.dist_mkv = os.path.join(cls.root, "dist.mkv")
        subprocess.run(["ffmpeg", "-nostdin", "-v", "error", "-i", DIST, "-c:v", "ffv1", cls.dist_mkv],
                       check=True, timeout=60)
        with open(REF, "rb") as src, open(os.path.join(cls.root, "ref.y4m"), "wb") as dst:
            dst.write(src.read())
        cls.with_root = cls._start("with_root", f"--source-root={cls.root}")

    @classmethod
    def _start(cls, name, *args):
        server = Server(cls.work, name, *args)
        cls.servers.append(server)
        return server

    @classmethod
    def tearDownClass(cls):
        if getattr(cls, "client", None):
            cls.client.close()
        statuses = [s.stop() for s in cls.servers]
        assert all(s == 0 for s in statuses), f"exactqd exit statuses {statuses}"

    def assertSameAsCpp(self, result):
        frames = self.cpp["frames"]
        self.assertEqual([f.index for f in result.frames], [f["frameNum"] for f in frames])
        for mine, theirs in zip(result.frames, frames):
            self.assertEqual(list(mine.scores), list(theirs["metrics"]))
            for name, value in theirs["metrics"].items():
                self.assertEqual(bits(mine.scores[name]), bits(value), f"frame {mine.index} {name}")
            self.assertEqual(mine.backend, theirs["backend"])
        for name, stats in self.cpp["pooled_metrics"].items():
            for key, value in stats.items():
                self.assertEqual(bits(result.pooled[name][key]), bits(value), f"pooled {name} {key}")
        self.assertEqual(result.metric_versions, self.cpp["metric_versions"])
        self.assertEqual(result.server_version, self.cpp["version"])

    def frames_in_memory(self):
        with Y4mReader(REF) as ref, Y4mReader(DIST) as dist:
            return ref.geometry, list(zip(ref, dist))

    # ---- scoring ----------------------------------------------------------------------
    def test_files_score_the_bits_of_the_cpp_client(self):
        result = self.client.score_files(REF, DIST)
        self.assertSameAsCpp(result)
        self.assertEqual(result.job_id, f"{REF} vs {DIST}")
        self.assertEqual(result.totals["frames"], len(self.cpp["frames"]))
        self.assertEqual(result.totals["host_to_device_bytes"], self.cpp["totals"]["host_to_device_bytes"])

    def test_encoded_upload_scores_as_the_y4m(self):
        from exactq_client import Upload
        stream = self.client.stream_sources(Upload(REF), self.dist_mkv)
        result = stream.wait()
        self.assertSameAsCpp(result)
        with Y4mReader(REF) as ref:  # the geometry the server decoded is the file's
            self.assertEqual(stream.accepted.geometry.width, ref.geometry.width)
            self.assertEqual(stream.accepted.geometry.height, ref.geometry.height)
        self.assertIn("ffv1", stream.accepted.distorted_decoder)

    def test_ladder_scores_each_rendition_as_its_stream_and_as_the_cpp_client(self):
        small = os.path.join(self.root, "small.mkv")
        subprocess.run(["ffmpeg", "-nostdin", "-v", "error", "-y", "-i", DIST, "-vf", "scale=iw/2:ih/2",
                        "-c:v", "ffv1", small], check=True, timeout=60)
        with Client(self.with_root.address) as client:
            ladder = client.score_ladder(ServerPath("ref.y4m"), [Upload(DIST), ServerPath("dist.mkv"),
                                                                  ServerPath("small.mkv")])
        self.assertEqual([r.source for r in ladder.renditions], [DIST, "dist.mkv", "small.mkv"])
        for r in ladder.renditions[:2]:
            self.assertIsNone(r.error)
            self.assertFalse(r.scaled)
            self.assertSameAsCpp(r.result)
        scaled = ladder.renditions[2]
        self.assertTrue(scaled.scaled)
        self.assertEqual(ladder.scaler_version, 1)
        # The C++ client's ladder of the same files: the same bits.
        out = os.path.join(self.work, "ladder.json")
        subprocess.run([EXACTQ, "ladder", "ref.y4m", "small.mkv", "--server_paths", "--server",
                        self.with_root.address, "--quiet", f"--json={out}"], check=True, timeout=60)
        with open(out, encoding="utf-8") as f:
            cpp = json.load(f)["renditions"][0]
        self.assertEqual(len(scaled.frames), len(cpp["frames"]))
        for mine, theirs in zip(scaled.frames, cpp["frames"]):
            for name, value in theirs["metrics"].items():
                self.assertEqual(bits(mine.scores[name]), bits(value), f"frame {mine.index} {name}")
        for name, stats in cpp["pooled_metrics"].items():
            for key, value in stats.items():
                self.assertEqual(bits(scaled.result.pooled[name][key]), bits(value), f"pooled {name} {key}")

    def test_server_paths_score_as_the_y4m_and_stay_under_the_root(self):
        from exactq_client import ServerPath
        with Client(self.with_root.address) as client:
            self.assertSameAsCpp(client.score_sources(ServerPath("ref.y4m"), ServerPath("dist.mkv")))
            with self.assertRaises(ExactQError) as refused:
                client.score_sources(ServerPath("ref.y4m"), ServerPath(os.path.abspath(DIST)))
            self.assertEqual(refused.exception.code, grpc.StatusCode.PERMISSION_DENIED)
            with self.assertRaises(ExactQError) as missing:
                client.score_sources(ServerPath("ref.y4m"), ServerPath("missing.mkv"))
            self.assertEqual(missing.exception.code, grpc.StatusCode.NOT_FOUND)

    def test_bytes_in_memory(self):
        geom, frames = self.frames_in_memory()
        self.assertSameAsCpp(self.client.score_frames(geom, frames))

    def test_numpy_planes(self):
        try:
            import numpy as np
        except ImportError:
            self.skipTest("numpy is not installed (python3-numpy); bytes work without it")
        geom, frames = self.frames_in_memory()

        def planes(data):
            out, offset = [], 0
            for h, w in plane_shapes(geom):
                out.append(np.frombuffer(data, np.uint8, h * w, offset).reshape(h, w))
                offset += h * w
            return out

        result = self.client.score_frames(geom, [(planes(r), planes(d)) for r, d in frames])
        self.assertSameAsCpp(result)
        # Samples above the bit depth are refused, not silently cut to 8 bits.
        wide = [p.astype(np.uint16) * 300 for p in planes(frames[0][0])]
        with self.assertRaisesRegex(ValueError, "outside 0..255"):
            self.client.score_frames(geom, [(wide, planes(frames[0][1]))])

    def test_streaming_yields_each_frame_in_order_before_the_summary(self):
        geom, frames = self.frames_in_memory()
        stream = self.client.stream(geom, iter(frames), job_id="streaming")
        seen = []
        for frame in stream:
            self.assertIsNone(stream.result, "the summary comes after the last frame")
            seen.append(frame.index)
            self.assertEqual(set(frame.timing_ns), {"received", "queued", "host_to_device",
                                                    "compute", "device_to_host", "total"})
            self.assertGreater(frame.timing_ns["total"], 0)
        self.assertEqual(seen, list(range(len(frames))))
        self.assertEqual(stream.result.job_id, "streaming")
        self.assertSameAsCpp(stream.result)
        self.assertEqual(stream.accepted.job_id, "streaming")

    def test_chunks_of_the_size_the_server_accepts(self):
        geom, frames = self.frames_in_memory()
        self.assertGreater(exactq_client.picture_bytes(geom), 4096 * 4)
        with Client(self.small_chunks.address) as client:
            stream = client.stream(geom, frames)
            result = stream.wait()
            self.assertEqual(stream.accepted.max_chunk_bytes, 4096)
        self.assertSameAsCpp(result)

    def test_unary_pair_equals_the_stream(self):
        geom, frames = self.frames_in_memory()
        for index, (ref, dist) in enumerate(frames):
            frame = self.client.score_pair(geom, ref, dist)
            theirs = self.cpp["frames"][index]["metrics"]
            self.assertEqual({k: bits(v) for k, v in frame.scores.items()},
                             {k: bits(v) for k, v in theirs.items()})

    def test_dns_target_with_round_robin(self):
        with Client("dns:///" + self.server.address) as client:
            client.wait_ready(10)
            self.assertSameAsCpp(client.score_files(REF, DIST))

    # ---- capabilities and errors --------------------------------------------------------
    def test_capabilities(self):
        caps = self.client.capabilities()
        self.assertEqual(caps.server_version, self.cpp["version"])
        psnr = next(m for m in caps.metrics if m.name == "psnr")
        self.assertIn("psnr_y", psnr.outputs)
        self.assertEqual(psnr.definition_version, self.cpp["metric_versions"]["psnr"])
        self.assertGreater(caps.limits.max_chunk_bytes, 0)

    def test_unknown_metric_is_invalid_argument(self):
        with self.assertRaises(ExactQError) as caught:
            self.client.score_files(REF, DIST, metrics=["no_such_metric"])
        self.assertEqual(caught.exception.code, grpc.StatusCode.INVALID_ARGUMENT)
        self.assertIn("header.metrics[0]", caught.exception.details)

    def test_wrong_picture_size_is_refused_before_sending(self):
        geom = geometry(176, 144)
        with self.assertRaisesRegex(ValueError, "38016 bytes, got 10"):
            self.client.score_frames(geom, [(b"x" * 10, b"x" * 10)])
        with self.assertRaisesRegex(ValueError, "38016 bytes, got 10"):
            self.client.score_pair(geom, b"x" * 10, b"x" * 38016)
        # The server still serves.
        self.assertSameAsCpp(self.client.score_files(REF, DIST))

    # ---- the command line ----------------------------------------------------------------
    def test_command_line_writes_the_cpp_clients_json(self):
        out = os.path.join(self.work, "py.json")
        subprocess.run([sys.executable, "-B", "-m", "exactq_client", "score", REF, DIST,
                        "--server", self.server.address, "--quiet", "--json", out],
                       check=True, timeout=60)
        with open(out, encoding="utf-8") as f:
            mine = json.load(f)
        for key in ("version", "job_id", "metric_versions", "frames", "pooled_metrics"):
            self.assertEqual(mine[key], self.cpp[key], key)
        self.assertEqual(to_json(self.client.score_files(REF, DIST))["frames"], self.cpp["frames"])
        bad = subprocess.run([sys.executable, "-B", "-m", "exactq_client", "score", REF, DIST,
                              "--server", self.server.address, "--metrics", "nope"],
                             capture_output=True, text=True, timeout=60)
        self.assertEqual(bad.returncode, 1)
        self.assertIn("INVALID_ARGUMENT", bad.stderr)
        caps = subprocess.run([sys.executable, "-B", "-m", "exactq_client", "capabilities",
                               "--server", self.server.address],
                              capture_output=True, text=True, timeout=60, check=True)
        self.assertIn('name: "psnr"', caps.stdout)


if __name__ == "__main__":
    unittest.main(verbosity=2)
