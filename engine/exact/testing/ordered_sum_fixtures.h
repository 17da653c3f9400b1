// Term sequences that stress the exact ordered sum, shared by the host tests, the CUDA
// parity test and the benchmark. Each is deterministic in (kind, n, seed), built from
// its own integer generator (std:: distributions differ between standard libraries).
//
//   std::vector<double> terms = MakeFixture(FixtureKind::kTieHeavy, 300000, /*seed=*/1);
//   double want = OrderedSumReference::Loop(terms.data(), terms.size());
//
// Test-only code.
#ifndef EXACTQ_ENGINE_EXACT_TESTING_ORDERED_SUM_FIXTURES_H_
#define EXACTQ_ENGINE_EXACT_TESTING_ORDERED_SUM_FIXTURES_H_

#include <cstddef>
#include <cstdint>
#include <vector>

namespace exactq {
namespace exact {

enum class FixtureKind {
  kUniform,               // [0, 1)
  kTieHeavy,              // 1, then k * 2^-53: every odd k is a tie while the sum is in [1, 2)
  kSignedTies,            // 1, then +-k * 2^-53: ties above 1, exact steps below 1
  kSpan300Binades,        // positive, exponents uniform in [-300, 300]
  kSignedSpan300,         // the same with random signs
  kFourthPowers,          // u^4, u uniform: many tiny terms, full mantissas
  kSsimLikeCrossingZero,  // w * SSIM(window), 5% negative; the last 65% inverted: the total
                          // climbs, crosses zero once and ends negative
  kMixedWalk,             // random signs and magnitudes 2^[-20, 20]: hundreds of sign flips
  kZeroCrossings,         // bands of positive and negative drift: the sum crosses zero 9 times
  kZeros,                 // +0 and -0 only
  kZeroIslands,           // 1024 exactly, long runs of +-0, uniform runs between them
  kSubnormals,            // positive subnormals: the sum climbs through the tiny frame
  kSignedSubnormals,      // +- subnormals: the sum crosses zero in the tiny frame
  kExactCancellation,     // x, -x pairs (exact zeros), tiny terms right after them
  kNearMax,               // a walk at the top of binade 1023 (unit 2^971), staying finite
  kNearMaxOverflow,       // the same walk drifting up until it overflows to +inf
  kPosInf,                // uniform with one +inf
  kNegInf,                // uniform with one -inf
  kPosInfThenNegInf,      // +inf, later -inf: NaN
  kNaN,                   // uniform with one NaN
};

std::vector<FixtureKind> AllFixtureKinds();
const char* FixtureName(FixtureKind kind);

// Whether a pairwise tree over the ~300k-term fixture should give other bits than the loop
// (special values and all-zero fixtures have only one possible answer).
bool ExpectOrderSensitive(FixtureKind kind);

std::vector<double> MakeFixture(FixtureKind kind, size_t n, uint64_t seed);

// The pairwise (halving) tree sum: the inexact order a naive parallel sum would use.
double PairwiseTreeSum(const double* terms, size_t n);

// True when a and b are the same double, or both any NaN (rule 1 of docs/design.md).
bool SameBitsOrBothNaN(double a, double b);

}  // namespace exact
}  // namespace exactq

#endif  // EXACTQ_ENGINE_EXACT_TESTING_ORDERED_SUM_FIXTURES_H_
