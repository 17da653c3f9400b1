"""The exactq command line for long jobs, against the real exactqd on loopback:
  - a run killed midway (SIGTERM, SIGINT) leaves valid JSON, CSV and XML holding every
    frame answered, the JSON and XML marked incomplete with the signal;
  - a run that fails late (the distorted input ends early) keeps what was scored and
    names the error in the files;
  - a 10,000-frame run shows progress (frames done of the total, frames/s) and the
    pooled scores, without the per-frame table unless --per-frame;
  - --frames A:B and --subsample N pick the frames and keep the files' numbering;
  - libvmaf's spelling (-r, -d, -o FILE.xml) gives libvmaf's XML shape;
  - a named pipe is read as Y4M; a directory as input says so; `--json -` is quiet;
  - --help and --version exit 0 on both binaries, and help lists the metrics;
  - `exactq health` (the exec probe of a TLS server) exits 0 only on SERVING;
  - exactqd's self-check passes at start and `exactq verify` finds the golden bits."""

import csv
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import unittest
import xml.etree.ElementTree as ElementTree

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "deploy"))
import processes  # noqa: E402

EXACTQD = "server/exactqd"
EXACTQ = "client/exactq"
W, H = 32, 32
FRAME_BYTES = W * H * 3 // 2


def y4m_header():
    return f"YUV4MPEG2 W{W} H{H} F25:1 Ip A1:1 C420jpeg\n".encode()


def picture(index, noise):
    # A gradient that moves with the frame number, plus a little noise on the distorted.
    return bytes(((x * 7 + index * 3) + (((x * 131 + index) % 5) if noise else 0)) & 0xFF
                 for x in range(FRAME_BYTES))


def write_y4m(path, frames, noise):
    pictures = [picture(i, noise) for i in range(7)]  # a few distinct pictures, repeated
    with open(path, "wb") as f:
        f.write(y4m_header())
        for i in range(frames):
            f.write(b"FRAME\n" + pictures[i % len(pictures)])


class ExactqCliTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        processes.exit_on_sigterm()
        cls.work = tempfile.mkdtemp(dir=os.environ.get("TEST_TMPDIR"))
        cls.server = processes.Exactqd(EXACTQD, cls.work)
        cls.address = f"127.0.0.1:{cls.server.grpc_port}"
        cls.ref = os.path.join(cls.work, "ref.y4m")
        cls.dist = os.path.join(cls.work, "dist.y4m")
        write_y4m(cls.ref, 10000, noise=False)
        write_y4m(cls.dist, 10000, noise=True)

    @classmethod
    def tearDownClass(cls):
        cls.server.stop()

    def path(self, name):
        return os.path.join(self.work, f"{self._testMethodName}.{name}")

    def exactq(self, *args, stdin=None, timeout=120):
        return subprocess.run([EXACTQ, *args], stdin=stdin, capture_output=True, text=True, timeout=timeout)

    def check_partial(self, json_path, csv_path, xml_path, frames, error_part):
        with open(json_path, encoding="utf-8") as f:
            doc = json.load(f)  # valid JSON, closed
        self.assertIs(doc["complete"], False)
        self.assertIn(error_part, doc["error"])
        self.assertEqual([fr["frameNum"] for fr in doc["frames"]], list(range(frames)))
        self.assertEqual(doc["totals"]["frames"], frames)
        for fr in doc["frames"]:
            self.assertIsInstance(fr["metrics"]["psnr_y"], float)
        with open(csv_path, encoding="utf-8", newline="") as f:
            rows = list(csv.DictReader(f))
        self.assertEqual([int(r["frame"]) for r in rows], list(range(frames)))
        self.assertEqual([float(r["psnr_y"]) for r in rows],
                         [fr["metrics"]["psnr_y"] for fr in doc["frames"]])
        root = ElementTree.parse(xml_path).getroot()
        self.assertEqual(root.tag, "VMAF")
        self.assertEqual(len(root.find("frames")), frames)
        self.assertEqual(root.find("fyi").get("complete"), "false")
        self.assertIn(error_part, root.find("fyi").get("error"))

    def interrupted_run(self, signum, name):
        """Streams 25 distorted frames through a pipe, waits until they are in the JSON,
        then stops the client with `signum` while it waits for more."""
        outputs = [self.path(e) for e in ("json", "csv", "xml")]
        client = subprocess.Popen(
            [EXACTQ, "score", self.ref, "-", "--server", self.address, "--json", outputs[0],
             "--csv", outputs[1], "--xml", outputs[2], "--quiet"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        try:
            client.stdin.write(y4m_header())
            for i in range(25):
                client.stdin.write(b"FRAME\n" + picture(i % 7, noise=True))
            client.stdin.flush()

            def answered():
                if not os.path.exists(outputs[1]):
                    return False
                with open(outputs[1], encoding="utf-8") as f:
                    return len(f.read().splitlines()) == 26
            processes.wait_for(answered, 30, "25 frames in the CSV")
            client.send_signal(signum)
            _, err = client.communicate(timeout=30)
        finally:
            if client.poll() is None:
                client.kill()
            client.stdin.close()
        self.assertEqual(client.returncode, 128 + signum, err)
        self.assertIn(f"interrupted by {name}", err.decode())
        self.check_partial(*outputs, 25, f"interrupted by {name}")

    def test_sigterm_midway_leaves_valid_partial_files(self):
        self.interrupted_run(signal.SIGTERM, "SIGTERM")

    def test_sigint_midway_leaves_valid_partial_files(self):
        self.interrupted_run(signal.SIGINT, "SIGINT")

    def test_a_late_failure_keeps_what_was_scored(self):
        short = self.path("short.y4m")
        write_y4m(short, 40, noise=True)
        outputs = [self.path(e) for e in ("json", "csv", "xml")]
        r = self.exactq("score", self.ref, short, "--server", self.address, "--json", outputs[0],
                        "--csv", outputs[1], "--xml", outputs[2], "--frames", ":60")
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertIn("the distorted file ended at frame 40", r.stderr)
        self.check_partial(*outputs, 40, "the distorted file ended at frame 40")

    def test_ten_thousand_frames_show_progress_and_pooled_scores(self):
        out = self.path("json")
        start = time.monotonic()
        r = self.exactq("score", self.ref, self.dist, "--server", self.address, "--json", out,
                        "--precision", "3")
        seconds = time.monotonic() - start
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("frame 10000/10000 (100.0%)", r.stderr)
        self.assertIn("frames/s", r.stderr)
        self.assertIn("pooled over 10000 frames", r.stdout)
        self.assertNotIn("total_ms", r.stdout, "no per-frame table without --per-frame")
        self.assertLess(len(r.stdout.splitlines()), 12)
        with open(out, encoding="utf-8") as f:
            doc = json.load(f)
        self.assertIs(doc["complete"], True)
        self.assertEqual(len(doc["frames"]), 10000)
        self.assertEqual(doc["totals"]["frames"], 10000)
        print(f"10,000 frames in {seconds:.1f} s", file=sys.stderr)

    def test_frames_and_subsample_keep_the_files_numbering(self):
        out = self.path("json")
        r = self.exactq("score", self.ref, self.dist, "--server", self.address, "--json", out,
                        "--frames", "1000:1500", "--subsample", "100", "--per-frame")
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(out, encoding="utf-8") as f:
            doc = json.load(f)
        self.assertEqual([fr["frameNum"] for fr in doc["frames"]], [1000, 1100, 1200, 1300, 1400])
        self.assertIn("total_ms", r.stdout)  # the per-frame table
        self.assertIn("frame 5/5", r.stderr)
        # The same pictures scored whole give the same bits.
        whole = self.path("whole.json")
        self.assertEqual(self.exactq("score", self.ref, self.dist, "--server", self.address,
                                     "--json", whole, "--frames", "1100:1101", "--quiet").returncode, 0)
        with open(whole, encoding="utf-8") as f:
            one = json.load(f)["frames"]
        self.assertEqual(one[0]["metrics"], doc["frames"][1]["metrics"])

    def test_libvmaf_spelling_writes_libvmafs_xml(self):
        out = self.path("xml")
        r = self.exactq("-r", self.ref, "-d", self.dist, "-o", out, "--server", self.address,
                        "--frames", "0:3", "--quiet")
        self.assertEqual(r.returncode, 0, r.stderr)
        root = ElementTree.parse(out).getroot()
        self.assertEqual(root.tag, "VMAF")
        self.assertEqual(root.find("params").get("qualityWidth"), str(W))
        frames = root.find("frames")
        self.assertEqual([f.get("frameNum") for f in frames], ["0", "1", "2"])
        self.assertIsNotNone(frames[0].get("psnr_y"))
        names = {m.get("name") for m in root.find("pooled_metrics")}
        self.assertEqual(names, {"psnr_y", "psnr_cb", "psnr_cr"})

    def test_named_pipe_directory_and_quiet_stdout(self):
        fifo = self.path("fifo")
        os.mkfifo(fifo)
        feeder = subprocess.Popen(["sh", "-c", f"head -c {len(y4m_header()) + 3 * (6 + FRAME_BYTES)} "
                                   f"{self.dist} > {fifo}"])
        r = self.exactq("score", self.ref, fifo, "--server", self.address, "--frames", ":3", "--json", "-")
        feeder.wait(timeout=30)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(len(json.loads(r.stdout)["frames"]), 3)  # stdout is the JSON alone
        self.assertNotIn("Did you really mean", r.stderr)
        self.assertIn("pooled over 3 frames", r.stderr)  # the summary moves to stderr
        r = self.exactq("score", self.work, self.dist, "--server", self.address)
        self.assertEqual(r.returncode, 1)
        self.assertIn("is a directory", r.stderr)

    def test_health_is_the_servers(self):
        r = self.exactq("health", "--server", self.address)
        self.assertEqual((r.returncode, r.stdout), (0, "SERVING\n"), r.stderr)
        r = self.exactq("health", "--server", f"127.0.0.1:{processes.free_port()}", "--connect-timeout=1")
        self.assertEqual(r.returncode, 1)

    def test_self_check_at_start_and_verify_through_the_server(self):
        self.assertIn("self-check: cpu:", self.server.log())
        self.assertIn("outputs equal to the golden bits", self.server.log())
        r = self.exactq("verify", "--server", self.address)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("returns the golden bits", r.stdout)
        self.assertRegex(r.stdout, r"cpu: \d+ outputs compared")
        self.assertNotIn("DIFFERS", r.stdout)

    def test_help_and_version_exit_zero(self):
        for argv in ([EXACTQ, "--help"], [EXACTQ, "score", "--help"], [EXACTQD, "--help"]):
            r = subprocess.run(argv, capture_output=True, text=True, timeout=30)
            self.assertEqual(r.returncode, 0, argv)
            for word in ("psnr", "ssimulacra2", "enable_chroma"):
                self.assertIn(word, r.stdout, argv)
        r = subprocess.run([EXACTQD, "--help"], capture_output=True, text=True, timeout=30)
        self.assertTrue(r.stdout.startswith("exactqd: the ExactQ scoring server"), r.stdout[:80])
        self.assertIn("--subsample", subprocess.run([EXACTQ, "--help"], capture_output=True,
                                                    text=True).stdout)
        for binary, name in ((EXACTQ, "exactq"), (EXACTQD, "exactqd")):
            r = subprocess.run([binary, "--version"], capture_output=True, text=True, timeout=30)
            self.assertEqual(r.returncode, 0)
            self.assertTrue(r.stdout.startswith(f"{name} 0.1.0"), r.stdout)


if __name__ == "__main__":
    unittest.main(verbosity=2)
