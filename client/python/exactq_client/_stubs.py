"""The generated exactq.v1 modules (protoc + grpc_python_plugin): installed with the
package (`pip install client/python`, see pyproject.toml), or, in the source tree, made
by `bazel build //client/python:exactq_v1_py` with bazel-bin/client/python on
PYTHONPATH beside client/python."""

try:
    from exactq.v1 import exactq_pb2 as pb  # noqa: F401
    from exactq.v1 import exactq_pb2_grpc as pb_grpc  # noqa: F401
except ImportError as e:  # pragma: no cover - a set-up error, explained
    raise ImportError(
        "exactq_client needs the generated exactq.v1 stubs: install the package "
        "(pip install client/python), or run `bazel build //client/python:exactq_v1_py` "
        f"and add bazel-bin/client/python to PYTHONPATH ({e})") from e
