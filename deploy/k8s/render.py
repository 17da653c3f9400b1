#!/usr/bin/python3
"""Renders a kustomization the way `kubectl kustomize DIR` does, for the subset of
kustomize these manifests use, where no kubectl is at hand (Debian 12's kubernetes-client
package ships one, but it cannot be installed beside another kubectl).

    deploy/k8s/render.py deploy/k8s/overlays/gpu > exactq.yaml

Supported: resources (files, or directories holding a kustomization), bases,
patchesJson6902 (add, remove, replace, test), images (newName, newTag, digest).
Anything else in a kustomization is an error, never silently ignored.
tests/deploy/k8s_manifests_test compares this renderer's output with kubectl's when a
kubectl is on PATH. Needs only python3-yaml (Debian).
"""

import copy
import os
import sys

import yaml

SUPPORTED_KEYS = {"apiVersion", "kind", "resources", "bases", "patchesJson6902", "images"}
KUSTOMIZATION_FILES = ("kustomization.yaml", "kustomization.yml", "Kustomization")

# kustomize's legacy output order (kinds not listed come after, by kind then name).
KIND_ORDER = [
    "Namespace", "ResourceQuota", "StorageClass", "CustomResourceDefinition",
    "ServiceAccount", "PodSecurityPolicy", "Role", "ClusterRole", "RoleBinding",
    "ClusterRoleBinding", "ConfigMap", "Secret", "Endpoints", "Service", "LimitRange",
    "PriorityClass", "PersistentVolume", "PersistentVolumeClaim", "Deployment",
    "StatefulSet", "CronJob", "PodDisruptionBudget",
]
ORDER_LAST = ["MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"]

# Where pod specs live, per kind, for the images transformer.
POD_SPEC_PATHS = {
    "Pod": ["spec"],
    "Deployment": ["spec", "template", "spec"],
    "StatefulSet": ["spec", "template", "spec"],
    "DaemonSet": ["spec", "template", "spec"],
    "ReplicaSet": ["spec", "template", "spec"],
    "Job": ["spec", "template", "spec"],
    "CronJob": ["spec", "jobTemplate", "spec", "template", "spec"],
}


class RenderError(Exception):
    pass


def _kustomization_file(directory):
    for name in KUSTOMIZATION_FILES:
        path = os.path.join(directory, name)
        if os.path.isfile(path):
            return path
    raise RenderError(f"{directory}: no kustomization.yaml")


def _load_documents(path):
    with open(path, encoding="utf-8") as f:
        return [d for d in yaml.safe_load_all(f) if d is not None]


def _unescape(token):
    return token.replace("~1", "/").replace("~0", "~")


def _pointer(path):
    if path == "":
        return []
    if not path.startswith("/"):
        raise RenderError(f"JSON pointer must start with '/': {path!r}")
    return [_unescape(t) for t in path[1:].split("/")]


def _container_and_key(document, tokens, where):
    parent = document
    for token in tokens[:-1]:
        if isinstance(parent, list):
            parent = parent[int(token)]
        elif isinstance(parent, dict) and token in parent:
            parent = parent[token]
        else:
            raise RenderError(f"{where}: path element {token!r} does not exist")
    return parent, tokens[-1]


def apply_json_patch(document, operations, where):
    """RFC 6902 on one object: add, remove, replace, test."""
    for op in operations:
        kind = op.get("op")
        tokens = _pointer(op["path"])
        if not tokens:
            raise RenderError(f"{where}: patching the whole object is not supported")
        parent, key = _container_and_key(document, tokens, where)
        if kind == "add":
            value = copy.deepcopy(op["value"])
            if isinstance(parent, list):
                if key == "-":
                    parent.append(value)
                else:
                    parent.insert(int(key), value)
            else:
                parent[key] = value
        elif kind in ("remove", "replace", "test"):
            if isinstance(parent, list):
                index = int(key)
                if index >= len(parent):
                    raise RenderError(f"{where}: {op['path']} does not exist")
                key = index
            elif key not in parent:
                raise RenderError(f"{where}: {op['path']} does not exist")
            if kind == "remove":
                del parent[key]
            elif kind == "replace":
                parent[key] = copy.deepcopy(op["value"])
            elif parent[key] != op["value"]:
                raise RenderError(f"{where}: test failed at {op['path']}")
        else:
            raise RenderError(f"{where}: unsupported JSON patch op {kind!r}")


def _matches(resource, target):
    api_version = resource.get("apiVersion", "")
    group, _, version = api_version.rpartition("/")
    return (resource.get("kind") == target.get("kind")
            and resource.get("metadata", {}).get("name") == target.get("name")
            and group == target.get("group", "")
            and version == target.get("version", version))


def _split_image(image):
    """'reg:5000/a/b:tag@sha256:x' -> ('reg:5000/a/b', ':tag', '@sha256:x')."""
    name, at, digest = image.partition("@")
    slash = name.rfind("/")
    colon = name.rfind(":")
    tag = ""
    if colon > slash:
        name, tag = name[:colon], name[colon:]
    return name, tag, at + digest


def _apply_images(resource, images):
    path = POD_SPEC_PATHS.get(resource.get("kind"))
    if path is None:
        return
    spec = resource
    for key in path:
        spec = spec.get(key) if isinstance(spec, dict) else None
        if spec is None:
            return
    for field in ("initContainers", "containers"):
        for container in spec.get(field, []) or []:
            name, tag, digest = _split_image(container.get("image", ""))
            for image in images:
                if image["name"] != name:
                    continue
                new_name = image.get("newName", name)
                if "digest" in image:
                    container["image"] = f"{new_name}@{image['digest']}"
                elif "newTag" in image:
                    container["image"] = f"{new_name}:{image['newTag']}"
                else:
                    container["image"] = f"{new_name}{tag}{digest}"


def render(directory):
    """The resources a kustomization directory produces, in kustomize's order."""
    kfile = _kustomization_file(directory)
    with open(kfile, encoding="utf-8") as f:
        kustomization = yaml.safe_load(f) or {}
    unknown = set(kustomization) - SUPPORTED_KEYS
    if unknown:
        raise RenderError(f"{kfile}: unsupported kustomization fields {sorted(unknown)}")

    resources = []
    for entry in (kustomization.get("bases") or []) + (kustomization.get("resources") or []):
        path = os.path.normpath(os.path.join(directory, entry))
        if os.path.isdir(path):
            resources.extend(render(path))
        else:
            resources.extend(_load_documents(path))

    seen = set()
    for r in resources:
        key = (r.get("apiVersion"), r.get("kind"), r.get("metadata", {}).get("name"))
        if key in seen:
            raise RenderError(f"{directory}: resource {key} appears twice")
        seen.add(key)

    for patch in kustomization.get("patchesJson6902") or []:
        target = patch["target"]
        where = f"{kfile}: patch {patch['path']}"
        hits = [r for r in resources if _matches(r, target)]
        if len(hits) != 1:
            raise RenderError(f"{where}: target {target} matches {len(hits)} resources")
        with open(os.path.join(directory, patch["path"]), encoding="utf-8") as f:
            operations = yaml.safe_load(f)
        apply_json_patch(hits[0], operations, where)

    images = kustomization.get("images") or []
    for resource in resources:
        _apply_images(resource, images)

    def order(r):
        kind = r.get("kind", "")
        if kind in KIND_ORDER:
            rank = KIND_ORDER.index(kind)
        elif kind in ORDER_LAST:
            rank = len(KIND_ORDER) + 1 + ORDER_LAST.index(kind)
        else:
            rank = len(KIND_ORDER)
        return (rank, kind, r.get("metadata", {}).get("name", ""))

    return sorted(resources, key=order)


def main(argv):
    if len(argv) != 2:
        print(f"usage: {argv[0]} KUSTOMIZATION_DIR", file=sys.stderr)
        return 2
    try:
        documents = render(argv[1])
    except (RenderError, OSError, KeyError, ValueError, IndexError) as e:
        print(f"render: {e}", file=sys.stderr)
        return 1
    yaml.safe_dump_all(documents, sys.stdout, default_flow_style=False, sort_keys=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
