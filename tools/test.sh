#!/usr/bin/env bash
# Install, build and run every test. Corpus tests use $EXACTQ_CORPUS (default
# ../shared/corpus beside the checkout) and skip with a printed reason without it.
set -euo pipefail
cd "$(dirname "$0")/.."

tools/setup-debian.sh
# The C++ and CUDA files as clang-format makes them (.clang-format).
tools/check_format.sh
if [ -z "${EXACTQ_CORPUS:-}" ] && [ -d ../shared/corpus ]; then
  EXACTQ_CORPUS=$(cd ../shared/corpus && pwd)
fi
export EXACTQ_CORPUS=${EXACTQ_CORPUS:-}
echo "test: EXACTQ_CORPUS=${EXACTQ_CORPUS:-(unset: corpus tests will skip)}"
bazel test "$@" //...
# The request decoding and frame assembly under libFuzzer, ASan and UBSan, for a fixed time.
tests/fuzz/run_fuzzer.sh "${EXACTQ_FUZZ_SECONDS:-60}"
# Uploaded encoded bytes through the spool, the demux callbacks and FFmpeg's decoders.
tests/fuzz/run_decode_fuzzer.sh "${EXACTQ_FUZZ_SECONDS:-60}"
