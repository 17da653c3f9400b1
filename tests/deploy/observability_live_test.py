"""The observability files against the real things: a real exactqd on loopback, scored
through by the real exactq client (plus calls it gets wrong on purpose), scraped every
second by a real Prometheus that runs deploy/prometheus/prometheus.yml's relabelling and
loads the alert rules. Prometheus sees two pods, both this one server: their targets
carry the labels Kubernetes discovery would give a pod of the rendered GPU Deployment
and one of the CPU Deployment. Then, through Prometheus's HTTP API:
  - every Grafana panel query returns data (DCGM panels: the query is valid, the
    result may be empty, no DCGM exporter runs here; the engine's GPU memory panel may be
    empty only while the server exports that family without series, as it does on a
    machine without GPU);
  - every alert expression evaluates, and each signal it compares returns data; every
    rule evaluates healthily; the only alert pending is the fallback alert of the GPU
    pod, when this GPU-less server counts no_gpu fallbacks (never for the CPU pod);
  - the Prometheus adapter's rule finds the series and yields a value per pod;
  - every metric family the server exports is charted, and every ExactQ name the
    dashboard, rules and adapter read is one the server exports (prometheus-cpp leaves
    out a family without series: the per-GPU family, on this GPU-less machine, must then
    be absent from the page and named in the exactqd binary)."""

import math
import os
import shutil
import subprocess
import sys
import tempfile
import time
import unittest

import yaml

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, "deploy/k8s")
import dashboard  # noqa: E402
import processes  # noqa: E402
import promql_parts  # noqa: E402
import render  # noqa: E402
import scrape_config  # noqa: E402

EXACTQD = "server/exactqd"
EXACTQ = "client/exactq"
# Families with a series per GPU: none on a machine without GPU.
PER_GPU_FAMILIES = {"exactq_device_memory_used_bytes"}
PROMETHEUS = "/usr/bin/prometheus"
SAMPLES = ("samples/sample.ref.y4m", "samples/sample.dist.y4m")
RULES = "deploy/prometheus/rules/exactq-alerts.yml"
ADAPTER_RULES = "deploy/k8s/prometheus-adapter/rules.yaml"
NAMESPACE = "exactq-test"
PODS = {"gpu": "exactqd-gpu-0", "cpu": "exactqd-cpu-0"}   # overlay -> pod name
POD = PODS["gpu"]
RATE_INTERVAL = "30s"      # Grafana's $__rate_interval: covers the whole load below
LOAD_SECONDS = 10
CONCURRENT_CLIENTS = 2


def data_of(answer, what):
    assert answer.get("status") == "success", f"{what}\n -> {answer}"
    return answer["data"]


def result_of(answer, expr):
    return data_of(answer, expr)["result"]


class ObservabilityLiveTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        processes.exit_on_sigterm()
        cls.work = tempfile.mkdtemp(dir=os.environ.get("TEST_TMPDIR"))
        cls.server = cls.prometheus = None
        try:
            cls._start()
        except BaseException:
            cls.tearDownClass()
            raise

    @classmethod
    def _start(cls):
        cls.server = processes.Exactqd(EXACTQD, cls.work)
        cls.metrics_page = cls.server.metrics_page()

        # Two pods as Kubernetes pod discovery would label their metrics ports, one of
        # each overlay, both served by this one real exactqd: the GPU variant's pod (what
        # the dashboards are looked at through) and the CPU variant's.
        targets = []
        for overlay, pod in PODS.items():
            deployment = next(o for o in render.render(f"deploy/k8s/overlays/{overlay}")
                              if o["kind"] == "Deployment")
            template = deployment["spec"]["template"]
            container = template["spec"]["containers"][0]
            labels = scrape_config.pod_meta_labels(template, container, "metrics", NAMESPACE, pod)
            targets.append((f"127.0.0.1:{cls.server.metrics_port}", labels))
        config = scrape_config.with_static_targets(
            scrape_config.load(), "exactqd", targets,
            scrape_interval="1s", evaluation_interval="1s", rule_files=[os.path.abspath(RULES)])
        config_path = os.path.join(cls.work, "prometheus.yml")
        scrape_config.dump(config, config_path)
        cls.prometheus = processes.Prometheus(PROMETHEUS, config_path, cls.work)
        processes.wait_for(lambda: cls._up() == [1.0] * len(PODS), 30, "Prometheus to scrape exactqd")

        cls._drive_load()
        # Two more scrapes after the load, then let every rule evaluate at least once more.
        time.sleep(2.5)

    @classmethod
    def _up(cls):
        result = cls.prometheus.query('up{job="exactqd"}')["data"]["result"]
        return [float(r["value"][1]) for r in result]

    @classmethod
    def _drive_load(cls):
        address = f"127.0.0.1:{cls.server.grpc_port}"
        good = [EXACTQ, "score", *SAMPLES, "--server", address, "--quiet"]
        # The server answers INVALID_ARGUMENT: errors_total{method, code} gets real counts.
        bad = good + ["--metrics", "no_such_metric"]
        cls.scored = cls.failed = 0
        deadline = time.monotonic() + LOAD_SECONDS
        while time.monotonic() < deadline:
            batch = [subprocess.Popen(good, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
                     for _ in range(CONCURRENT_CLIENTS)]
            for p in batch:
                _, err = p.communicate(timeout=60)
                assert p.returncode == 0, f"exactq failed: {err.decode()}\n{cls.server.log()}"
                cls.scored += 1
            if cls.failed < 3:
                p = subprocess.run(bad, capture_output=True, timeout=60)
                assert p.returncode != 0, "a call with an unknown metric succeeded"
                cls.failed += 1
        print(f"load: {cls.scored} scoring calls, {cls.failed} rejected calls", file=sys.stderr)

    @classmethod
    def tearDownClass(cls):
        status = None
        if cls.prometheus is not None:
            processes.stop(cls.prometheus.process)
        if cls.server is not None:
            status = cls.server.stop()
        if "TEST_TMPDIR" not in os.environ:  # Bazel removes its own
            shutil.rmtree(cls.work, ignore_errors=True)
        if status not in (None, 0):
            raise AssertionError(f"exactqd exited with {status} on SIGTERM:\n{cls.server.log()}")

    # ---- helpers --------------------------------------------------------------------
    def variable_values(self):
        """The dashboard's variables as a user would pick them: each variable query
        (label_values) asked of Prometheus, and the value our pod has chosen."""
        values = {"__rate_interval": RATE_INTERVAL}
        for v in dashboard.load()["templating"]["list"]:
            if v["type"] != "query":
                continue
            definition = dashboard.substitute(v["definition"], values)
            match, label = definition[len("label_values("):-1].rsplit(",", 1)
            answer = self.prometheus.api(f"label/{label.strip()}/values", **{"match[]": match.strip()})
            offered = data_of(answer, definition)
            wanted = {"namespace": NAMESPACE, "pod": POD}[v["name"]]
            self.assertIn(wanted, offered, f"variable {v['name']}: {definition} offers {offered}")
            values[v["name"]] = wanted
        return values

    def exported_families(self):
        families = {}
        for line in self.metrics_page.splitlines():
            if line.startswith("# TYPE "):
                _, _, name, kind = line.split()
                families[name] = kind
        return families

    @staticmethod
    def named_in_server(family):
        with open(EXACTQD, "rb") as f:
            return family.encode() in f.read()

    def family_has_series(self, family):
        return any(line.startswith(family) and not line.startswith("#")
                   for line in self.metrics_page.splitlines())

    # ---- tests ----------------------------------------------------------------------
    def test_relabelling_gives_the_labels_dashboards_and_rules_use(self):
        result = result_of(self.prometheus.query('up{job="exactqd"}'), "up")
        by_pod = {r["metric"].get("pod"): r["metric"] for r in result}
        self.assertEqual(set(by_pod), set(PODS.values()))
        for overlay, pod in PODS.items():
            labels = by_pod[pod]
            self.assertEqual(labels.get("namespace"), NAMESPACE)
            self.assertEqual(labels.get("exactq_dev_accelerator"), overlay)
            self.assertTrue(labels.get("node"))

    def test_every_panel_query_returns_data(self):
        values = self.variable_values()
        board = dashboard.load()
        checked = []
        for title, ref, raw in dashboard.queries(board):
            with self.subTest(panel=title, ref=ref):
                expr = dashboard.substitute(raw, values)
                result = result_of(self.prometheus.query(expr), expr)
                if dashboard.is_dcgm(expr):
                    checked.append(f"syntax only (no DCGM exporter here): {title}")
                    continue
                families = {promql_parts.family(n) for n in promql_parts.metric_names(expr)}
                if result == [] and families <= PER_GPU_FAMILIES:
                    for family in families:
                        self.assertFalse(self.family_has_series(family),
                                         "the server exports GPU memory series, yet the panel is empty")
                        self.assertTrue(self.named_in_server(family))
                    checked.append(f"empty, as the server has no GPU series: {title}")
                    continue
                self.assertTrue(result, f"no data for {expr}")
                checked.append(f"{len(result)} series: {title} [{ref}]")
        print("\n".join(checked), file=sys.stderr)

    def test_panels_show_the_load(self):
        values = self.variable_values()
        by_title = {(t, r): e for t, r, e in dashboard.queries(dashboard.load())}

        def series(title, ref="A"):
            expr = dashboard.substitute(by_title[(title, ref)], values)
            return result_of(self.prometheus.query(expr), expr)

        frames = series("Frames scored per second, by metric and backend")
        rates = {(s["metric"]["metric"], s["metric"]["backend"]): float(s["value"][1]) for s in frames}
        self.assertEqual({b for m, b in rates}, {"cpu", "cuda"}, "both backends, zero or not")
        self.assertGreater(rates[("psnr", "cpu")] + rates[("psnr", "cuda")], 0, rates)
        received, = series("Picture bytes received per second")
        self.assertGreater(float(received["value"][1]), 0)
        scored = {(s["metric"]["metric"], s["metric"]["backend"]): float(s["value"][1])
                  for s in series("Picture bytes scored per second, by metric and backend")}
        self.assertGreater(scored[("psnr", "cpu")] + scored[("psnr", "cuda")], 0, scored)
        errors = {(s["metric"]["method"], s["metric"]["code"]): float(s["value"][1])
                  for s in series("Errors per second, by gRPC method and status code")}
        self.assertGreater(errors[("ScoreStream", "INVALID_ARGUMENT")], 0, errors)
        for method in ("ScoreStream", "ScorePair"):
            self.assertEqual(errors[(method, "INTERNAL")], 0, errors)
        for ref in ("A", "B", "C"):
            p, = series("Frame latency (total): p50, p90, p99", ref)
            latency = float(p["value"][1])
            self.assertTrue(math.isfinite(latency) and 0 < latency < 30, latency)
        stages = {s["metric"]["stage"] for s in series("p99 latency by stage")}
        self.assertEqual(stages, {"received", "queued", "host_to_device", "compute",
                                  "device_to_host"})
        servers, = series("Servers up")
        self.assertEqual(float(servers["value"][1]), 1)

    def test_every_alert_evaluates_and_its_signals_return_data(self):
        with open(RULES, encoding="utf-8") as f:
            groups = yaml.safe_load(f)["groups"]
        for group in groups:
            for rule in group["rules"]:
                with self.subTest(alert=rule["alert"]):
                    result_of(self.prometheus.query(rule["expr"]), rule["expr"])
                    for signal in promql_parts.signals(rule["expr"]):
                        self.assertTrue(result_of(self.prometheus.query(signal), signal),
                                        f"{rule['alert']}: no data for {signal}")

    def test_rules_evaluate_healthily_and_only_the_gpu_pods_fallbacks_alert(self):
        def evaluated():
            rules = [r for g in data_of(self.prometheus.api("rules"), "rules")["groups"]
                     for r in g["rules"]]
            done = rules and all(not r["lastEvaluation"].startswith("0001") for r in rules)
            return rules if done else None
        rules = processes.wait_for(evaluated, 20, "every rule to be evaluated", interval=0.5)
        with open(RULES, encoding="utf-8") as f:
            names = {r["alert"] for g in yaml.safe_load(f)["groups"] for r in g["rules"]}
        self.assertEqual({r["name"] for r in rules}, names)
        # This machine has no GPU: frames placed by `auto` fall back with no_gpu, if the
        # server counts them so. On the GPU variant's pod that is the fallback alert's
        # case; on the CPU variant's pod it is the design, and must not alert.
        page = self.server.metrics_page()  # after the load
        no_gpu = sum(float(line.split()[-1]) for line in page.splitlines()
                     if line.startswith('exactq_fallbacks_total{reason="no_gpu"}'))
        expected = {("ExactQFallbackRateHigh", PODS["gpu"], "no_gpu")} if no_gpu else set()
        active = set()
        for r in rules:
            with self.subTest(alert=r["name"]):
                self.assertEqual(r["health"], "ok", r.get("lastError"))
                for a in r.get("alerts", []):
                    self.assertEqual(a["state"], "pending", "no `for` has elapsed yet")
                    active.add((r["name"], a["labels"].get("pod"), a["labels"].get("reason")))
        self.assertEqual(active, expected)
        print(f"no_gpu fallbacks counted: {no_gpu:g}; alerts pending: {sorted(active)}", file=sys.stderr)

    def test_adapter_rule_serves_active_streams_per_pod(self):
        with open(ADAPTER_RULES, encoding="utf-8") as f:
            rules = yaml.safe_load(f)["rules"]
        for rule in rules:
            with self.subTest(rule=rule["name"]["as"]):
                found = data_of(self.prometheus.api("series", **{"match[]": rule["seriesQuery"]}),
                                rule["seriesQuery"])
                self.assertTrue(found, f"the adapter would discover nothing for {rule['seriesQuery']}")
                series = rule["seriesQuery"].split("{")[0]
                # What the adapter sends for `kubectl get --raw .../pods/*/<metric>`.
                expr = (rule["metricsQuery"]
                        .replace("<<.Series>>", series)
                        .replace("<<.LabelMatchers>>", f'namespace="{NAMESPACE}",pod=~"{POD}"')
                        .replace("<<.GroupBy>>", "pod"))
                result = result_of(self.prometheus.query(expr), expr)
                self.assertEqual([s["metric"] for s in result], [{"pod": POD}])
                self.assertGreaterEqual(float(result[0]["value"][1]), 0)

    def test_stalled_connections_do_not_delay_a_scrape(self):
        """Four connections that send half a request and then nothing (issue 40's row 5:
        before, the next scrape waited 30 s and Prometheus gave up at four)."""
        import socket
        stalled = []
        try:
            for _ in range(4):
                s = socket.create_connection(("127.0.0.1", self.server.metrics_port), timeout=5)
                s.sendall(b"GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n")
                stalled.append(s)
            time.sleep(0.2)
            for _ in range(2):
                start = time.monotonic()
                page = self.server.metrics_page()
                self.assertIn("exactq_active_streams", page)
                self.assertLess(time.monotonic() - start, 3.0)
        finally:
            for s in stalled:
                s.close()

    def test_names_agree_with_the_server(self):
        exported = self.exported_families()
        self.assertTrue(exported)
        read = set()
        for _, _, expr in dashboard.queries(dashboard.load()):
            read |= {promql_parts.family(n) for n in promql_parts.metric_names(expr)}
        charted = set(read)
        with open(RULES, encoding="utf-8") as f:
            for group in yaml.safe_load(f)["groups"]:
                for rule in group["rules"]:
                    read |= {promql_parts.family(n) for n in promql_parts.metric_names(rule["expr"])}
        with open(ADAPTER_RULES, encoding="utf-8") as f:
            for rule in yaml.safe_load(f)["rules"]:
                read |= {promql_parts.family(n) for n in promql_parts.metric_names(rule["seriesQuery"])}
        unknown = {n for n in read if n.startswith("exactq_")} - set(exported)
        for family in PER_GPU_FAMILIES & unknown:
            self.assertFalse(self.family_has_series(family))
            self.assertTrue(self.named_in_server(family), family)
            unknown.discard(family)
        self.assertEqual(unknown, set(), "names the server does not export")
        uncharted = {n for n in exported if n.startswith("exactq_")} - charted
        self.assertEqual(uncharted, set(), "families the dashboard does not chart")
        # Prometheus learnt each family from the scrape (TYPE and HELP), series or not.
        metadata = data_of(self.prometheus.api("metadata"), "metadata")
        for name in exported:
            self.assertIn(name, metadata)


if __name__ == "__main__":
    unittest.main(verbosity=2)
