#!/usr/bin/env bash
# Installs everything ExactQ needs to build and test on Debian 12 (run as root).
# Idempotent: a second run installs nothing new. CUDA is optional: with nvcc at
# $CUDA_PATH (default /usr/local/cuda) the CUDA engine is built too.
set -euo pipefail

packages=(
  # Build: Bazel and the rules Debian ships for it (see README "Building offline").
  bazel-bootstrap bazel-rules-cc bazel-rules-proto bazel-rules-java bazel-skylib bazel-platforms
  g++ pkg-config
  # Libraries (README "Dependencies" says what each is for).
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev libabsl-dev libspdlog-dev libfmt-dev
  prometheus-cpp-dev libgtest-dev libbenchmark-dev nlohmann-json3-dev
  # Encoded sources: FFmpeg's demuxers and decoders (engine/decode).
  libavformat-dev libavcodec-dev libavutil-dev
  # Tests: the ffmpeg CLI makes tiny encodes and decodes them for comparison.
  ffmpeg
  # Tests: python3 runs the deploy, Python-client and fuzz-seed scripts; openssl makes the
  # TLS tests' certificates (minimal Debian images have neither).
  python3 openssl
  # Tests: the request fuzzer (libFuzzer with ASan/UBSan).
  clang libclang-rt-14-dev
  # Tests: the C++ and CUDA files' format (tools/check_format.sh).
  clang-format
  # Tests: a real Prometheus scrapes the server's /metrics.
  prometheus
  # tests/deploy: Python's YAML for the Kubernetes renderer (deploy/k8s/render.py) and the
  # manifest, scrape-config and dashboard checks (run on /usr/bin/python3).
  python3-yaml
  # client/python: the Python client's gRPC and protobuf runtimes (its stubs come from
  # protobuf-compiler-grpc's grpc_python_plugin); numpy for frames held as arrays (optional
  # for users, exercised by //client/python:client_test).
  python3-grpcio python3-protobuf python3-numpy
  # client/python as a package: a venv on the system's modules, pip and its build backend
  # (//client/python:package_test installs it that way, offline).
  python3-venv python3-pip python3-setuptools python3-wheel
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
echo "setup: all packages present"
