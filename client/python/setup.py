"""Builds exactq_client with its generated exactq.v1 stubs (metadata: pyproject.toml).

The stubs come from proto/exactq/v1/exactq.proto (found beside this tree at
../../proto, or at $EXACTQ_PROTO_DIR), compiled by protoc with Debian's
grpc_python_plugin (package protobuf-compiler-grpc; $PROTOC and
$GRPC_PYTHON_PLUGIN override the paths) into the build tree, so that they install
with the package as the top-level package exactq.v1 (the import path the generated
gRPC module uses)."""

import os
import shutil
import subprocess

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = os.path.dirname(os.path.abspath(__file__))


def _tool(env, name, fallback):
    path = os.environ.get(env) or shutil.which(name) or fallback
    if not path or not os.path.exists(path):
        raise SystemExit(f"exactq-client: {name} not found (Debian: apt-get install "
                         f"protobuf-compiler-grpc); or set {env}")
    return path


class BuildPyWithStubs(build_py):
    def run(self):
        super().run()
        proto_root = os.environ.get("EXACTQ_PROTO_DIR") or os.path.join(HERE, "..", "..", "proto")
        proto = os.path.join(proto_root, "exactq", "v1", "exactq.proto")
        if not os.path.exists(proto):
            raise SystemExit(f"exactq-client: {proto} not found; set EXACTQ_PROTO_DIR to the "
                             "folder that holds exactq/v1/exactq.proto")
        protoc = _tool("PROTOC", "protoc", None)
        plugin = _tool("GRPC_PYTHON_PLUGIN", "grpc_python_plugin", "/usr/bin/grpc_python_plugin")
        out = self.build_lib
        subprocess.check_call([
            protoc, f"-I{proto_root}", f"--python_out={out}", f"--pyi_out={out}",
            f"--plugin=protoc-gen-grpc_python={plugin}", f"--grpc_python_out={out}", proto])
        for package in ("exactq", os.path.join("exactq", "v1")):
            init = os.path.join(out, package, "__init__.py")
            if not os.path.exists(init):
                with open(init, "w", encoding="utf-8") as f:
                    f.write('"""Generated from proto/exactq/v1/exactq.proto."""\n')
        with open(os.path.join(out, "exactq", "v1", "py.typed"), "w", encoding="utf-8"):
            pass


setup(cmdclass={"build_py": BuildPyWithStubs})
