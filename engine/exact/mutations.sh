#!/bin/bash
# Mutation check of the ordered-sum algebra (see mutations.md): applies each of twenty-one
# deliberate bugs to a COPY of ordered_sum_algebra.h, internal/binary64_summaries.h or
# internal/cpu_kernels.inc (the host kernels, both instruction sets) in a temporary
# tree (the working tree is never touched, so a concurrent commit cannot pick up a
# mutant), builds the host tests (algebra, fast increments and summaries, kernels, sums) from that
# copy with plain g++, and requires that they FAIL. CI runs it (.ci/run).
#
#   engine/exact/mutations.sh            # from anywhere; exit 0 = every mutation caught
set -u
cd "$(dirname "$0")/../.."
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
mkdir -p "$WORK/src/engine/exact/testing" "$WORK/src/engine/exact/internal" "$WORK/src/engine/platform"
cp engine/exact/*.h engine/exact/*.cc "$WORK/src/engine/exact/"
cp engine/exact/internal/*.h engine/exact/internal/*.cc engine/exact/internal/*.inc "$WORK/src/engine/exact/internal/"
cp engine/exact/testing/*.h engine/exact/testing/*.cc "$WORK/src/engine/exact/testing/"
# The host/device macros and the worker pool the sum's threads run on.
cp engine/platform/host_device.h engine/platform/worker_pool.h engine/platform/worker_pool.cc "$WORK/src/engine/platform/"
cp engine/exact/ordered_sum_algebra.h "$WORK/original_algebra.h"
cp engine/exact/internal/binary64_summaries.h "$WORK/original_fast.h"
cp engine/exact/internal/cpu_kernels.inc "$WORK/original_kernels.inc"

CXX="g++ -std=c++17 -O2 -ffp-contract=off -I$WORK/src"
ABSL="-labsl_status -labsl_statusor -labsl_strings -labsl_str_format_internal -labsl_cord -labsl_cord_internal \
-labsl_cordz_info -labsl_cordz_functions -labsl_cordz_handle -labsl_synchronization -labsl_int128 \
-labsl_raw_logging_internal -labsl_throw_delegate -labsl_base -labsl_spinlock_wait -labsl_strings_internal \
-labsl_time -labsl_time_zone -labsl_stacktrace -labsl_symbolize -labsl_malloc_internal -labsl_debugging_internal \
-labsl_demangle_internal -labsl_graphcycles_internal -labsl_exponential_biased -labsl_cordz_sample_token"

# name | exact text in the header | replacement (ordered_sum_algebra.h unless the name
# starts with "fast_": internal/binary64_summaries.h, or "cpu_": internal/cpu_kernels.inc)
MUTATIONS=(
  "round_ties_up|      r_even = whole + (whole & 1);
      r_odd = whole + 1 - (whole & 1);|      r_even = r_odd = whole + 1;"
  "drop_binade_check|  if (FrameOfBits(s) != frame) return false;|"
  "drop_upper_bound|  if (m_highest > kHighestInnerSignificand) return false;|"
  "ignore_parity_when_composing|int ParityAfter(int p, int64_t moved) { return static_cast<int>((p + moved) & 1); }|int ParityAfter(int p, int64_t moved) { (void)moved; return p; }"
  # Beyond the four the issue asks for: pitfalls 2, 5 and 7 of the signed design.
  "no_lower_margin|kLowestInnerSignificand = (int64_t{1} << 52) + 1;|kLowestInnerSignificand = (int64_t{1} << 52);"
  "extremes_from_wrong_parity_path|    const int64_t b_lo = a.d[p] + AtParity(b.lo, q);|    const int64_t b_lo = a.d[p] + AtParity(b.lo, p);"
  "zero_result_keeps_sign|    s_bits = n1 == 0 ? 0 :|    s_bits = n1 == 0 ? (s & kSignBit) :"
  # The binary64 lane summary of the segment pipeline: its hand-over bound, and ties.
  "fast_binary64_bound_inclusive|(lo > -0x1p53 && hi < 0x1p53)|(lo >= -0x1p53 && hi <= 0x1p53)"
  # (Mutation texts cannot contain "|", the field separator.)
  "fast_binary64_ignores_ties|    const double diff = SubRn(t, r);|    const double diff = 0.0 * SubRn(t, r);"
  # The tile path's two-parity binary64 fold (TieRunBinary64): the parity after a tie, and
  # the side a tie takes at odd parity.
  "fast_tie_run_parity_kept_after_tie|      q[p] = tie ? 0u : (q[p] ^ r_odd);|      q[p] = q[p] ^ r_odd;"
  "fast_tie_run_rounds_away_from_t|    const double toward = AddRn(r, rest > 0.0 ? 1.0 : -1.0);|    const double toward = AddRn(r, rest > 0.0 ? -1.0 : 1.0);"
  # The walk's binary64 run check (TryApplyFloatRun): its lower margin, and parity.
  "fast_float_run_no_lower_margin|  const double bottom = negative ? far : near_zero;|  const double bottom = negative ? far : DoubleOf(top);"
  "fast_float_run_ignores_parity|  const int p = static_cast<int>(bits & 1);  // m's parity: the hidden bit is above it|  const int p = 0;"
  # The strided chunk form: the parity after a tie, and the path bounds' room for ties.
  "fast_strided_parity_kept_after_tie|    ties.parity = 0;  // a tie leaves the running integer even|"
  "fast_strided_bounds_ignore_ties|    run.hi[p] = (r0 < 0 ? r0 : 0) + positive + tie_count;|    run.hi[p] = (r0 < 0 ? r0 : 0) + positive;"
  # The tie pass's step summaries (the device applies them with a warp scan).
  "fast_tie_step_first_ignores_odd|  s.first_before = static_cast<uint32_t>(ParityOf(odd & ~LanesFrom(first)));|  s.first_before = 0;"
  "fast_tie_step_parity_flips_after_tie|  ties.parity = s.parity_after;|  ties.parity ^= s.parity_after;"
  # The host kernels of OrderedSumThreads (AVX2 and generic tables from one source).
  "cpu_kernel_ignores_ties|Lanes::Equal(magnitude, Lanes::Splat(0.5))|Lanes::Equal(magnitude, Lanes::Splat(0.75))"
  "cpu_kernel_bound_inclusive|f.lo[j] > -0x1p53 && f.hi[j] < 0x1p53|f.lo[j] >= -0x1p53 && f.hi[j] <= 0x1p53"
  "cpu_kernel_negative_zero_counts|    if ((f.bits[j] & static_cast<int64_t>(~kSignBit)) == 0) {|    if (f.bits[j] == 0) {"
  "cpu_generic_rint_without_range|    const L small = (L)_mm_cmplt_pd((__m128d)magnitude, (__m128d)two52);|    const L small = SplatL(-1);"
)

caught=0
for entry in "${MUTATIONS[@]}"; do
  name=${entry%%|*}
  rest=${entry#*|}
  from=${rest%%|*}
  to=${rest#*|}
  cp "$WORK/original_algebra.h" "$WORK/src/engine/exact/ordered_sum_algebra.h"
  cp "$WORK/original_fast.h" "$WORK/src/engine/exact/internal/binary64_summaries.h"
  cp "$WORK/original_kernels.inc" "$WORK/src/engine/exact/internal/cpu_kernels.inc"
  HEADER=$WORK/src/engine/exact/ordered_sum_algebra.h
  [[ $name == fast_* ]] && HEADER=$WORK/src/engine/exact/internal/binary64_summaries.h
  [[ $name == cpu_* ]] && HEADER=$WORK/src/engine/exact/internal/cpu_kernels.inc
  if ! FROM="$from" TO="$to" python3 - "$HEADER" <<'EOF'
import os, sys
path = sys.argv[1]
text = open(path).read()
if text.count(os.environ["FROM"]) != 1:
    sys.exit("mutation point not found exactly once")
open(path, "w").write(text.replace(os.environ["FROM"], os.environ["TO"]))
EOF
  then
    echo "MUTATION $name: could not be applied (header changed?)"
    exit 2
  fi
  E=$WORK/src/engine/exact
  EI=$E/internal
  POOL=$WORK/src/engine/platform/worker_pool.cc
  KERNELS="$WORK/kernels_avx2.o $WORK/kernels_generic.o"
  if ! $CXX $E/ordered_sum_algebra_test.cc -o "$WORK/algebra_test" -lgtest -lgtest_main -pthread ||
     ! $CXX $EI/binary64_summaries_test.cc -o "$WORK/fast_test" -lgtest -lgtest_main -pthread ||
     ! $CXX -mavx2 -mno-fma -Wno-psabi -c $EI/cpu_kernels_avx2.cc -o "$WORK/kernels_avx2.o" ||
     ! $CXX -Wno-psabi -c $EI/cpu_kernels_generic.cc -o "$WORK/kernels_generic.o" ||
     ! $CXX $EI/cpu_kernels_test.cc $E/ordered_sum.cc $E/testing/ordered_sum_fixtures.cc $POOL $KERNELS \
         -o "$WORK/kernels_test" -lgtest -lgtest_main -pthread $ABSL ||
     ! $CXX $E/ordered_sum_test.cc $E/ordered_sum.cc $E/testing/ordered_sum_fixtures.cc $E/testing/ordered_sum_device_model.cc \
         $POOL $KERNELS -o "$WORK/sum_test" -lgtest -lgtest_main -pthread $ABSL; then
    echo "MUTATION $name: does not compile"
    exit 2
  fi
  failed=$( { "$WORK/algebra_test"; "$WORK/fast_test"; "$WORK/kernels_test"; "$WORK/sum_test"; } 2>&1 | grep -E '^\[  FAILED  \] [A-Za-z]+\.' | sed 's/ (.*//; s/\[  FAILED  \] //' | sort -u | tr '\n' ' ')
  if [ -n "$failed" ]; then
    echo "MUTATION $name: caught by $failed"
    caught=$((caught + 1))
  else
    echo "MUTATION $name: NOT CAUGHT"
  fi
done
echo "$caught of ${#MUTATIONS[@]} mutations caught"
[ "$caught" -eq "${#MUTATIONS[@]}" ]
