"""The Kubernetes manifests, rendered offline (deploy/k8s/render.py; and compared with
`kubectl kustomize` where a kubectl is on PATH): kinds and required fields, GPU limits,
probes, security context, drain timing; and names, ports and labels agreeing across the
manifests, the Prometheus scrape config and adapter rule, the Dockerfile, and the flags
of the real exactqd binary."""

import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

import yaml

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, "deploy/k8s")
import dockerfile  # noqa: E402
import render  # noqa: E402
from server_flags import effective_config, port_of, server_flags  # noqa: E402

OVERLAYS = {"gpu": "deploy/k8s/overlays/gpu", "cpu": "deploy/k8s/overlays/cpu"}
OPERATOR = "deploy/k8s/prometheus-operator"
ADAPTER_RULES = "deploy/k8s/prometheus-adapter/rules.yaml"
SCRAPE_CONFIG = "deploy/prometheus/prometheus.yml"
ALERT_RULES = "deploy/prometheus/rules/exactq-alerts.yml"
NAME_LABEL = "app.kubernetes.io/name"
GPU = "nvidia.com/gpu"

EXPECTED_KINDS = {
    ("apps/v1", "Deployment"): 1,
    ("v1", "Service"): 2,
    ("policy/v1", "PodDisruptionBudget"): 1,
    ("autoscaling/v2", "HorizontalPodAutoscaler"): 1,
    ("networking.k8s.io/v1", "NetworkPolicy"): 1,
}


def load(path):
    with open(path, encoding="utf-8") as f:
        return yaml.safe_load(f)


def one(objects, kind, predicate=lambda o: True):
    hits = [o for o in objects if o["kind"] == kind and predicate(o)]
    assert len(hits) == 1, f"expected one {kind}, found {len(hits)}"
    return hits[0]


def selects(selector, labels):
    return bool(selector) and all(labels.get(k) == v for k, v in selector.items())


def quantity_bytes(q):
    units = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "k": 10**3, "M": 10**6, "G": 10**9}
    m = re.fullmatch(r"(\d+)([A-Za-z]*)", str(q))
    assert m and m.group(2) in units or m.group(2) == "", f"memory quantity {q!r}"
    return int(m.group(1)) * units.get(m.group(2), 1)


class Variant:
    """One rendered overlay and the pieces the checks look at."""

    def __init__(self, name, objects, flags):
        self.name = name
        self.objects = objects
        self.deployment = one(objects, "Deployment")
        self.pod = self.deployment["spec"]["template"]
        self.spec = self.pod["spec"]
        assert len(self.spec["containers"]) == 1, "one container per pod"
        self.container = self.spec["containers"][0]
        self.config = effective_config(flags, self.container.get("args"), self.container.get("env"))
        self.ports = {p["name"]: p["containerPort"] for p in self.container["ports"]}
        self.grpc_service = one(objects, "Service", lambda s: s["spec"].get("clusterIP") == "None")
        self.metrics_service = one(objects, "Service", lambda s: s["spec"].get("clusterIP") != "None")
        self.pdb = one(objects, "PodDisruptionBudget")
        self.hpa = one(objects, "HorizontalPodAutoscaler")


def per_variant(check):
    """Runs a check on each rendered overlay, as subtests."""
    def run(self):
        for name, variant in self.variants.items():
            with self.subTest(overlay=name):
                check(self, variant)
    run.__name__ = check.__name__
    run.__doc__ = check.__doc__
    return run


class ManifestsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.flags = server_flags("server/exactqd")
        cls.variants = {n: Variant(n, render.render(p), cls.flags) for n, p in OVERLAYS.items()}
        cls.operator = render.render(OPERATOR)
        cls.adapter = load(ADAPTER_RULES)
        cls.scrape = load(SCRAPE_CONFIG)
        cls.stages = dockerfile.parse("deploy/container/Dockerfile")

    # ---- structure ---------------------------------------------------------------
    @per_variant
    def test_kinds_and_required_fields(self, v):
        counts = {}
        for o in v.objects:
            key = (o.get("apiVersion"), o.get("kind"))
            counts[key] = counts.get(key, 0) + 1
            self.assertTrue(o.get("metadata", {}).get("name"), f"{key} has no name")
            self.assertEqual(o["metadata"].get("labels", {}).get(NAME_LABEL), "exactqd",
                             f"{key} {o['metadata']['name']} lacks {NAME_LABEL}=exactqd")
            self.assertIn("spec", o)
        self.assertEqual(counts, EXPECTED_KINDS)

    @per_variant
    def test_deployment_selector_and_image(self, v):
        selector = v.deployment["spec"]["selector"]["matchLabels"]
        self.assertTrue(selects(selector, v.pod["metadata"]["labels"]))
        self.assertNotIn("replicas", v.deployment["spec"], "the HorizontalPodAutoscaler owns replicas")
        image = v.container["image"]
        self.assertRegex(image, r"^[^:@]+(:[\w.-]+|@sha256:[0-9a-f]{64})$", "pin a tag or digest")
        self.assertFalse(image.endswith(":latest"))
        self.assertEqual(v.container["name"], "exactqd")
        self.assertIn(v.container.get("imagePullPolicy"), ("IfNotPresent", None))

    @per_variant
    def test_ports_are_the_servers(self, v):
        self.assertEqual(set(v.ports), {"grpc", "metrics"})
        self.assertEqual(v.ports["grpc"], port_of(v.config["listen"]))
        self.assertEqual(v.ports["metrics"], port_of(v.config["metrics_listen"]))
        for flag in ("listen", "metrics_listen"):
            host = v.config[flag].rsplit(":", 1)[0]
            self.assertIn(host, ("0.0.0.0", "[::]"), f"--{flag} must listen on the pod's address")
        self.assertEqual(v.config["port_file"], "", "no port file on a read-only root filesystem")

    @per_variant
    def test_probes_use_the_grpc_health_service(self, v):
        for probe_name in ("readinessProbe", "livenessProbe"):
            probe = v.container.get(probe_name)
            self.assertIsNotNone(probe, probe_name)
            self.assertEqual(set(probe) & {"grpc", "httpGet", "tcpSocket", "exec"}, {"grpc"},
                             f"{probe_name}: a native gRPC probe")
            self.assertEqual(probe["grpc"]["port"], v.ports["grpc"],
                             f"{probe_name}: the gRPC port, as a number")
            # The server registers the overall status (service "") only.
            self.assertIn(probe["grpc"].get("service", ""), ("",))

    @per_variant
    def test_drain_timing_matches_the_grace_period(self, v):
        grace = int(v.config["grace_period_seconds"])
        pre_stop = v.container["lifecycle"]["preStop"]["exec"]["command"]
        self.assertEqual(pre_stop[0], "/bin/sleep", "debian:12-slim has coreutils' sleep")
        sleep = int(pre_stop[1])
        self.assertGreater(sleep, 0)
        self.assertLessEqual(sleep, 15)
        termination = v.spec["terminationGracePeriodSeconds"]
        self.assertGreaterEqual(termination, sleep + grace + 5,
                                "preStop + --grace-period-seconds + a margin to exit")
        self.assertLessEqual(termination, sleep + grace + 60, "no needlessly long hang on deletion")
        # Health reports NOT_SERVING while draining: liveness must not kill a draining pod.
        live = v.container["livenessProbe"]
        self.assertGreater(live["periodSeconds"] * live["failureThreshold"], termination)
        ready = v.container["readinessProbe"]
        self.assertLessEqual(ready["periodSeconds"] * ready["failureThreshold"], sleep + grace,
                             "readiness notices a drain before it ends")

    @per_variant
    def test_resources(self, v):
        resources = v.container["resources"]
        for r in ("cpu", "memory"):
            self.assertIn(r, resources["requests"])
        limit = quantity_bytes(resources["limits"]["memory"])
        self.assertGreaterEqual(limit, quantity_bytes(resources["requests"]["memory"]))
        if "max_buffered_bytes" in v.config:
            self.assertGreater(limit, int(v.config["max_buffered_bytes"]),
                               "the memory limit must hold --max-buffered-bytes of frames")

    def test_gpu_variant_requests_a_gpu(self):
        v = self.variants["gpu"]
        gpus = v.container["resources"]["limits"].get(GPU)
        self.assertIsInstance(gpus, int)
        self.assertGreaterEqual(gpus, 1)
        requested = v.container["resources"]["requests"].get(GPU)
        self.assertIn(requested, (None, gpus), "extended resources: request equals limit")
        self.assertTrue(any(t.get("key") == GPU and t.get("effect") == "NoSchedule"
                            for t in v.spec.get("tolerations", [])))
        self.assertEqual(v.pod["metadata"]["labels"].get("exactq.dev/accelerator"), "gpu")

    def test_gpu_variant_schedules_on_gpu_nodes_with_the_nvidia_runtime(self):
        v = self.variants["gpu"]
        self.assertEqual(v.spec.get("runtimeClassName"), "nvidia")
        self.assertEqual(v.spec.get("nodeSelector"), {"nvidia.com/gpu.present": "true"})
        # The runtime class is its own patch, so that it can be changed or dropped.
        gpu = load(os.path.join(OVERLAYS["gpu"], "kustomization.yaml"))
        self.assertIn("runtime-class.yaml", [p["path"] for p in gpu["patchesJson6902"]])

    def test_gpu_variant_has_a_writable_cuda_cache(self):
        v = self.variants["gpu"]
        self.assertIs(v.container["securityContext"]["readOnlyRootFilesystem"], True)
        env = {e["name"]: e.get("value") for e in v.container.get("env", [])}
        path = env.get("CUDA_CACHE_PATH")
        image_env = " ".join(dockerfile.all_of(self.stages[-1], "ENV"))
        self.assertIn(f"CUDA_CACHE_PATH={path}", image_env, "the image and the pod agree")
        mounts = {m["mountPath"]: m["name"] for m in v.container.get("volumeMounts", [])}
        self.assertIn(path, mounts, "the CUDA cache path is a mounted volume")
        volumes = {vol["name"]: vol for vol in v.spec.get("volumes", [])}
        self.assertIn("emptyDir", volumes[mounts[path]])

    @per_variant
    def test_network_policy_admits_grpc_and_metrics_only(self, v):
        policy = one(v.objects, "NetworkPolicy")
        spec = policy["spec"]
        self.assertTrue(selects(spec["podSelector"]["matchLabels"], v.pod["metadata"]["labels"]))
        self.assertEqual(set(spec["policyTypes"]), {"Ingress", "Egress"})
        self.assertEqual(spec.get("egress"), [], "exactqd opens no connection")
        ports = {p["port"] for rule in spec["ingress"] for p in rule["ports"]}
        self.assertEqual(ports, {v.ports["grpc"], v.ports["metrics"]})
        for rule in spec["ingress"]:
            self.assertTrue(rule.get("from"), "every port names who may reach it")

    def test_tls_example_renders_and_probes_over_tls(self):
        copy = os.path.join(tempfile.mkdtemp(dir=os.environ.get("TEST_TMPDIR")), "k8s")
        shutil.copytree("deploy/k8s", copy, symlinks=False)
        overlay = os.path.join(copy, "overlays", "gpu")
        kfile = os.path.join(overlay, "kustomization.yaml")
        kustomization = load(kfile)
        kustomization["patchesJson6902"].append(
            {"target": {"group": "apps", "version": "v1", "kind": "Deployment", "name": "exactqd"},
             "path": "tls-example.yaml"})
        with open(kfile, "w", encoding="utf-8") as f:
            yaml.safe_dump(kustomization, f)
        v = Variant("gpu-tls", render.render(overlay), self.flags)
        mount = {m["name"]: m["mountPath"] for m in v.container["volumeMounts"]}["tls"]
        secret = {vol["name"]: vol for vol in v.spec["volumes"]}["tls"]["secret"]
        self.assertEqual(secret["secretName"], "exactqd-tls")
        self.assertEqual(v.spec["securityContext"]["fsGroup"], v.spec["securityContext"]["runAsGroup"])
        self.assertEqual(v.config["tls_cert_file"], f"{mount}/tls.crt")
        self.assertEqual(v.config["tls_key_file"], f"{mount}/tls.key")
        for probe in ("readinessProbe", "livenessProbe"):
            command = v.container[probe]["exec"]["command"]
            self.assertEqual(command[:2], ["/usr/local/bin/exactq", "health"])
            self.assertIn(f"--server=localhost:{v.ports['grpc']}", command)
            self.assertTrue(any(a.startswith("--tls-ca-file=") for a in command))
        # The rest of the GPU variant is untouched.
        self.assertEqual(v.spec["runtimeClassName"], "nvidia")

    def test_cpu_variant_has_no_gpu(self):
        v = self.variants["cpu"]
        text = yaml.safe_dump(v.objects)
        self.assertNotIn(GPU, text)
        self.assertEqual(v.pod["metadata"]["labels"].get("exactq.dev/accelerator"), "cpu")

    def test_security_context(self):
        uid, _, gid = dockerfile.all_of(self.stages[-1], "USER")[0].partition(":")
        for v in self.variants.values():
            pod_sc = v.spec["securityContext"]
            self.assertIs(pod_sc["runAsNonRoot"], True)
            self.assertEqual(pod_sc["runAsUser"], int(uid), "the image's user")
            self.assertEqual(pod_sc["runAsGroup"], int(gid))
            self.assertEqual(pod_sc.get("seccompProfile", {}).get("type"), "RuntimeDefault")
            sc = v.container["securityContext"]
            self.assertIs(sc["runAsNonRoot"], True)
            self.assertIs(sc["allowPrivilegeEscalation"], False)
            self.assertIs(sc["readOnlyRootFilesystem"], True)
            self.assertIs(sc.get("privileged", False), False)
            self.assertEqual(sc["capabilities"]["drop"], ["ALL"])
            self.assertNotIn("add", sc["capabilities"])
            self.assertIs(v.spec.get("automountServiceAccountToken"), False)
            self.assertFalse(v.spec.get("hostNetwork", False))

    # ---- agreement across files ----------------------------------------------------
    @per_variant
    def test_services_reach_the_pods(self, v):
        labels = v.pod["metadata"]["labels"]
        for service, port_name in ((v.grpc_service, "grpc"), (v.metrics_service, "metrics")):
            self.assertTrue(selects(service["spec"]["selector"], labels))
            ports = service["spec"]["ports"]
            self.assertEqual(len(ports), 1)
            self.assertEqual(ports[0]["name"], port_name)
            self.assertEqual(ports[0]["targetPort"], port_name)
            self.assertEqual(ports[0]["port"], v.ports[port_name])
        self.assertEqual(v.grpc_service["spec"]["clusterIP"], "None",
                         "headless, for client-side round-robin over dns:///")
        self.assertFalse(v.grpc_service["spec"].get("publishNotReadyAddresses", False),
                         "draining pods must leave DNS")
        self.assertEqual(v.grpc_service["metadata"]["name"], "exactqd")

    @per_variant
    def test_disruption_budget_and_autoscaler(self, v):
        labels = v.pod["metadata"]["labels"]
        self.assertTrue(selects(v.pdb["spec"]["selector"]["matchLabels"], labels))
        spec = v.hpa["spec"]
        self.assertEqual(spec["scaleTargetRef"],
                         {"apiVersion": "apps/v1", "kind": "Deployment",
                          "name": v.deployment["metadata"]["name"]})
        self.assertGreaterEqual(spec["minReplicas"], 2, "one replica and a PDB block node drains")
        self.assertGreater(spec["maxReplicas"], spec["minReplicas"])
        if "minAvailable" in v.pdb["spec"]:
            self.assertLess(int(v.pdb["spec"]["minAvailable"]), spec["minReplicas"])
        else:
            self.assertGreaterEqual(int(v.pdb["spec"]["maxUnavailable"]), 1)
        metrics = spec["metrics"]
        self.assertEqual(len(metrics), 1)
        self.assertEqual(metrics[0]["type"], "Pods")
        name = metrics[0]["pods"]["metric"]["name"]
        self.assertIn(name, self.adapter_metric_names())
        self.assertEqual(metrics[0]["pods"]["target"]["type"], "AverageValue")
        average = float(metrics[0]["pods"]["target"]["averageValue"])
        self.assertGreater(average, 0)
        self.assertLessEqual(average, int(v.config["max_streams"]),
                             "a target above --max-streams is never reached")

    def adapter_metric_names(self):
        names = set()
        for rule in self.adapter["rules"]:
            series = re.match(r"([a-zA-Z_:][a-zA-Z0-9_:]*)", rule["seriesQuery"]).group(1)
            self.assertRegex(series, r"^exactq_")
            self.assertRegex(series, rule["name"]["matches"])
            names.add(rule["name"].get("as") or series)
            self.assertIn("<<.LabelMatchers>>", rule["metricsQuery"])
            self.assertIn("<<.GroupBy>>", rule["metricsQuery"])
        return names

    def test_adapter_rule_uses_the_labels_prometheus_attaches(self):
        targets = {r.get("target_label") for r in self.exactqd_job()["relabel_configs"]}
        for rule in self.adapter["rules"]:
            overrides = rule["resources"]["overrides"]
            self.assertEqual(overrides["namespace"], {"resource": "namespace"})
            self.assertEqual(overrides["pod"], {"resource": "pod"})
            for label in overrides:
                self.assertIn(label, targets, f"the scrape config gives no {label} label")

    def exactqd_job(self):
        jobs = [j for j in self.scrape["scrape_configs"] if j["job_name"] == "exactqd"]
        self.assertEqual(len(jobs), 1)
        return jobs[0]

    def test_scrape_config_finds_the_pods(self):
        job = self.exactqd_job()
        self.assertEqual(job["kubernetes_sd_configs"], [{"role": "pod"}])
        keeps = {tuple(r["source_labels"]): r["regex"] for r in job["relabel_configs"]
                 if r.get("action") == "keep"}
        for v in self.variants.values():
            annotations = v.pod["metadata"]["annotations"]
            labels = v.pod["metadata"]["labels"]
            self.assertEqual(annotations["prometheus.io/scrape"], "true")
            self.assertEqual(int(annotations["prometheus.io/port"]), v.ports["metrics"])
            self.assertEqual(annotations["prometheus.io/path"], "/metrics")
            self.assertRegex(labels[NAME_LABEL],
                             "^(" + keeps[("__meta_kubernetes_pod_label_app_kubernetes_io_name",)] + ")$")
            self.assertRegex(annotations["prometheus.io/scrape"],
                             "^(" + keeps[("__meta_kubernetes_pod_annotation_prometheus_io_scrape",)] + ")$")
            self.assertRegex("metrics", "^(" + keeps[("__meta_kubernetes_pod_container_port_name",)] + ")$")
        self.assertEqual(job.get("metrics_path", "/metrics"), "/metrics")

    def test_alerts_select_the_scrape_job(self):
        rules = load(ALERT_RULES)
        job_names = {j["job_name"] for j in self.scrape["scrape_configs"]}
        for group in rules["groups"]:
            for rule in group["rules"]:
                for job in re.findall(r'job="([^"]*)"', rule["expr"]):
                    self.assertIn(job, job_names, rule.get("alert"))
        self.assertIn("rules/exactq-alerts.yml", self.scrape["rule_files"])

    def test_service_monitor_agrees_with_the_services_and_scrape_config(self):
        monitor = one(self.operator, "ServiceMonitor")
        self.assertEqual(monitor["apiVersion"], "monitoring.coreos.com/v1")
        spec = monitor["spec"]
        for v in self.variants.values():
            selected = [s for s in (v.grpc_service, v.metrics_service)
                        if selects(spec["selector"]["matchLabels"], s["metadata"]["labels"])]
            self.assertEqual(selected, [v.metrics_service], "exactly the metrics Service")
            endpoint, = spec["endpoints"]
            self.assertEqual(endpoint["port"], v.metrics_service["spec"]["ports"][0]["name"])
            self.assertEqual(endpoint.get("path", "/metrics"), "/metrics")
            # The job label: the selected Service's label value, as named in prometheus.yml.
            self.assertEqual(v.metrics_service["metadata"]["labels"][spec["jobLabel"]],
                             self.exactqd_job()["job_name"])
            for label in spec.get("podTargetLabels", []):
                self.assertIn(label, v.pod["metadata"]["labels"])
        # podTargetLabels become sanitised label names; the scrape config uses the same.
        targets = {r.get("target_label") for r in self.exactqd_job()["relabel_configs"]}
        for label in spec.get("podTargetLabels", []):
            self.assertIn(re.sub(r"[^a-zA-Z0-9_]", "_", label), targets)

    def test_kubectl_kustomize_renders_the_same(self):
        kubectl = shutil.which("kubectl")
        if kubectl is None:
            self.skipTest("no kubectl on PATH (Debian's kubernetes-client provides one); "
                          "rendered with deploy/k8s/render.py only")
        # kustomize will not read a kustomization.yaml that is a symlink, as Bazel's
        # runfiles are: render a plain copy.
        copy = os.path.join(tempfile.mkdtemp(dir=os.environ.get("TEST_TMPDIR")), "k8s")
        shutil.copytree("deploy/k8s", copy, symlinks=False)
        for path in list(OVERLAYS.values()) + [OPERATOR]:
            with self.subTest(path=path):
                copied = os.path.join(copy, os.path.relpath(path, "deploy/k8s"))
                result = subprocess.run([kubectl, "kustomize", copied], capture_output=True,
                                        text=True, timeout=60)
                self.assertEqual(result.returncode, 0, result.stderr)
                theirs = [d for d in yaml.safe_load_all(result.stdout) if d]
                key = lambda o: (o["kind"], o["metadata"]["name"])  # noqa: E731
                self.assertEqual(sorted(theirs, key=key), sorted(render.render(path), key=key))
        print(f"kubectl kustomize ({kubectl}) and render.py agree", file=sys.stderr)


if __name__ == "__main__":
    unittest.main(verbosity=2)
