#!/bin/bash
# Builds the CUDA parity test and the benchmark of the exact ordered sum for sm_90 with
# plain nvcc + g++ (no Bazel), the same flags as tools/cuda.bzl: device code without FMA
# contraction (--fmad=false), host code with -ffp-contract=off, static CUDA runtime.
#
#   engine/exact/build_cuda_binaries.sh [OUT_DIR]     # default OUT_DIR: /tmp/exactq_exact
#   EXACTQ_NVCC_EXTRA=-lineinfo engine/exact/build_cuda_binaries.sh DIR   # for ncu source views
#   OUT_DIR/ordered_sum_cuda_test                     # skips without a GPU
#   OUT_DIR/ordered_sum_bench --reps=50               # exits 2 without a GPU
#   engine/exact/device_mutations.sh OUT_DIR/ordered_sum_cuda_mutants_test   # on a GPU host
set -euo pipefail
cd "$(dirname "$0")/../.."
OUT=${1:-/tmp/exactq_exact}
mkdir -p "$OUT"
CUDA=${CUDA_PATH:-/usr/local/cuda}

NVCC=("$CUDA/bin/nvcc" ${EXACTQ_NVCC_EXTRA:-} -std=c++17 -O3 --fmad=false -prec-div=true -prec-sqrt=true -ftz=false
      -Xcompiler=-ffp-contract=off -Werror=all-warnings -gencode=arch=compute_90,code=sm_90 -I.)
CXX=(g++ -std=c++17 -O2 -ffp-contract=off -Wall -Werror -I. -I"$CUDA/include")
# Abseil, GoogleTest and libstdc++ linked statically, so the binaries also run on a GPU
# host that lacks these packages (only glibc and the NVIDIA driver are needed there).
LIBS=(-L"$CUDA/lib64" -lcudart_static -Wl,-Bstatic $(pkg-config --libs absl_status absl_statusor absl_strings)
      -Wl,-Bdynamic -static-libstdc++ -static-libgcc -ldl -lrt -lpthread)

"${NVCC[@]}" -c engine/exact/ordered_sum_cuda.cu -o "$OUT/ordered_sum_cuda.o"
"${NVCC[@]}" -c engine/exact/testing/ordered_sum_cuda_testing.cu -o "$OUT/ordered_sum_cuda_testing.o"
"${NVCC[@]}" -c bench/exact/ordered_sum_bench.cu -o "$OUT/ordered_sum_bench.o"
for src in ordered_sum testing/ordered_sum_fixtures testing/ordered_sum_device_model ordered_sum_cuda_test \
           internal/cpu_kernels_generic; do
  "${CXX[@]}" -Wno-psabi -c "engine/exact/$src.cc" -o "$OUT/$(basename "$src").o"
done
# OrderedSumThreads' AVX2 kernels, as engine/exact/BUILD.bazel builds them.
"${CXX[@]}" -mavx2 -mno-fma -Wno-psabi -c engine/exact/internal/cpu_kernels_avx2.cc \
  -o "$OUT/cpu_kernels_avx2.o"
# OrderedSumThreads runs on the engine's one worker pool.
"${CXX[@]}" -c engine/platform/worker_pool.cc -o "$OUT/worker_pool.o"
HOST_SUM=("$OUT/ordered_sum.o" "$OUT/cpu_kernels_generic.o" "$OUT/cpu_kernels_avx2.o"
          "$OUT/worker_pool.o")

g++ -o "$OUT/ordered_sum_cuda_test" "$OUT/ordered_sum_cuda_test.o" "$OUT/ordered_sum_cuda_testing.o" \
  "$OUT/ordered_sum_cuda.o" "$OUT/ordered_sum_device_model.o" "$OUT/ordered_sum_fixtures.o" "${HOST_SUM[@]}" \
  -Wl,-Bstatic -lgtest_main -lgtest -Wl,-Bdynamic "${LIBS[@]}"
g++ -o "$OUT/ordered_sum_bench" "$OUT/ordered_sum_bench.o" "$OUT/ordered_sum_cuda.o" "$OUT/ordered_sum_fixtures.o" \
  "${HOST_SUM[@]}" "${LIBS[@]}"
# The device mutation check's binary: the same suite with every device mutant compiled in
# (internal/device_mutants.cuh), EXACTQ_MUTANT=N choosing one at run time.
"${NVCC[@]}" -DEXACTQ_DEVICE_MUTANTS -c engine/exact/ordered_sum_cuda.cu -o "$OUT/ordered_sum_cuda_mutants.o"
"${NVCC[@]}" -DEXACTQ_DEVICE_MUTANTS -c engine/exact/testing/ordered_sum_cuda_testing.cu \
  -o "$OUT/ordered_sum_cuda_testing_mutants.o"
g++ -o "$OUT/ordered_sum_cuda_mutants_test" "$OUT/ordered_sum_cuda_test.o" "$OUT/ordered_sum_cuda_testing_mutants.o" \
  "$OUT/ordered_sum_cuda_mutants.o" "$OUT/ordered_sum_device_model.o" "$OUT/ordered_sum_fixtures.o" "${HOST_SUM[@]}" \
  -Wl,-Bstatic -lgtest_main -lgtest -Wl,-Bdynamic "${LIBS[@]}"
echo "built $OUT/ordered_sum_cuda_test, $OUT/ordered_sum_cuda_mutants_test and $OUT/ordered_sum_bench"
