"""deploy/prometheus/prometheus.yml with its Kubernetes discovery swapped for a static
target. Debian's Prometheus is built without Kubernetes service discovery, so this is
how its promtool checks the rest of the file, and how the live test runs the real
relabelling rules: the static target carries the __meta_kubernetes_* labels that pod
discovery would attach to an exactqd pod of the rendered manifests."""

import copy

import yaml

SCRAPE_CONFIG = "deploy/prometheus/prometheus.yml"


def load():
    with open(SCRAPE_CONFIG, encoding="utf-8") as f:
        return yaml.safe_load(f)


def pod_meta_labels(pod_template, container, port_name, namespace, pod_name, node="node-1"):
    """The labels Kubernetes pod discovery gives one container port of a pod."""
    def sanitise(name):
        return "".join(c if c.isalnum() else "_" for c in name)
    labels = {
        "__meta_kubernetes_namespace": namespace,
        "__meta_kubernetes_pod_name": pod_name,
        "__meta_kubernetes_pod_node_name": node,
        "__meta_kubernetes_pod_container_name": container["name"],
        "__meta_kubernetes_pod_container_port_name": port_name,
    }
    for k, v in pod_template["metadata"].get("labels", {}).items():
        labels["__meta_kubernetes_pod_label_" + sanitise(k)] = str(v)
    for k, v in pod_template["metadata"].get("annotations", {}).items():
        labels["__meta_kubernetes_pod_annotation_" + sanitise(k)] = str(v)
    return labels


def with_static_targets(config, job_name, targets, scrape_interval=None,
                        evaluation_interval=None, rule_files=None):
    """A copy of config whose job `job_name` scrapes `targets`, [(host:port, labels)],
    instead of discovering pods; other jobs are dropped."""
    config = copy.deepcopy(config)
    jobs = [j for j in config["scrape_configs"] if j["job_name"] == job_name]
    assert len(jobs) == 1, f"no single job {job_name} in {SCRAPE_CONFIG}"
    job = jobs[0]
    job.pop("kubernetes_sd_configs")
    job["static_configs"] = [{"targets": [target], "labels": labels} for target, labels in targets]
    if scrape_interval:
        job["scrape_interval"] = scrape_interval
        job["scrape_timeout"] = scrape_interval
        config.setdefault("global", {})["scrape_interval"] = scrape_interval
    if evaluation_interval:
        config.setdefault("global", {})["evaluation_interval"] = evaluation_interval
    if rule_files is not None:
        config["rule_files"] = rule_files
    config["scrape_configs"] = [job]
    return config


def dump(config, path):
    with open(path, "w", encoding="utf-8") as f:
        yaml.safe_dump(config, f, sort_keys=False)
