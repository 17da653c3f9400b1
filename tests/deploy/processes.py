"""Real processes for the live test: exactqd on free loopback ports (read from its
--port-file), Prometheus on a loopback port with its own storage, and the HTTP API.
Children get SIGTERM if the test process dies (PR_SET_PDEATHSIG), and a SIGTERM to the
test (Bazel's timeout) unwinds through the tests' clean-up."""

import ctypes
import json
import os
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.parse
import urllib.request

_PR_SET_PDEATHSIG = 1


def _die_with_parent():
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)


def exit_on_sigterm():
    def handler(signum, frame):
        raise SystemExit(f"signal {signum}")
    signal.signal(signal.SIGTERM, handler)


def start(argv, log_path, env=None):
    with open(log_path, "wb") as log:  # the child keeps its own descriptor
        return subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, env=env,
                                preexec_fn=_die_with_parent)


def stop(process, timeout=30):
    """SIGTERM, wait; the exit status (SIGKILL after timeout seconds)."""
    if process is None:
        return None
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            return process.wait(timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
            return None
    return process.returncode


def wait_for(predicate, timeout, what, interval=0.1):
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(interval)


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Exactqd:
    def __init__(self, binary, work_dir, extra_args=()):
        self.port_file = os.path.join(work_dir, "exactqd.ports")
        self.log_path = os.path.join(work_dir, "exactqd.log")
        self.process = start([binary, "--listen=127.0.0.1:0", "--metrics-listen=127.0.0.1:0",
                              f"--port-file={self.port_file}", *extra_args], self.log_path)

        def ports():
            if self.process.poll() is not None:
                raise AssertionError(f"exactqd exited with {self.process.returncode}:\n{self.log()}")
            if not os.path.exists(self.port_file):
                return None
            with open(self.port_file, encoding="utf-8") as f:
                pairs = dict(line.split("=", 1) for line in f.read().split())
            return pairs if {"grpc", "metrics"} <= set(pairs) else None

        found = wait_for(ports, 30, "exactqd's port file")
        self.grpc_port = int(found["grpc"])
        self.metrics_port = int(found["metrics"])

    def log(self):
        with open(self.log_path, encoding="utf-8", errors="replace") as f:
            return f.read()

    def metrics_page(self):
        with urllib.request.urlopen(f"http://127.0.0.1:{self.metrics_port}/metrics", timeout=10) as r:
            return r.read().decode()

    def stop(self):
        return stop(self.process)


class Prometheus:
    def __init__(self, binary, config_path, work_dir):
        self.log_path = os.path.join(work_dir, "prometheus.log")
        for attempt in range(3):  # a free port may be taken between probe and bind
            self.port = free_port()
            self.process = start([
                binary, f"--config.file={config_path}",
                f"--storage.tsdb.path={os.path.join(work_dir, f'tsdb{attempt}')}",
                f"--web.listen-address=127.0.0.1:{self.port}",
                "--storage.tsdb.retention.time=1h", "--log.level=warn",
            ], self.log_path)
            try:
                wait_for(self._ready, 60, "Prometheus to be ready")
                return
            except AssertionError:
                stop(self.process)
                if "address already in use" not in self.log():
                    raise AssertionError(f"Prometheus did not start:\n{self.log()}")
        raise AssertionError(f"Prometheus found no free port:\n{self.log()}")

    def _ready(self):
        if self.process.poll() is not None:
            raise AssertionError(f"Prometheus exited with {self.process.returncode}:\n{self.log()}")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/-/ready", timeout=2) as r:
                return r.status == 200
        except (urllib.error.URLError, ConnectionError):
            return False

    def log(self):
        with open(self.log_path, encoding="utf-8", errors="replace") as f:
            return f.read()

    def api(self, path, **params):
        """GET /api/v1/<path>; the JSON answer (errors come back as answers too)."""
        query = urllib.parse.urlencode(params, doseq=True)
        url = f"http://127.0.0.1:{self.port}/api/v1/{path}?{query}"
        try:
            with urllib.request.urlopen(url, timeout=30) as r:
                return json.load(r)
        except urllib.error.HTTPError as e:  # 400/422: a bad query, with its error
            return json.load(e)

    def query(self, expr):
        return self.api("query", query=expr, time=f"{time.time():.3f}")

    def stop(self):
        return stop(self.process)
