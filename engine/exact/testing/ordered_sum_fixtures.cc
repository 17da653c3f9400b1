#include "engine/exact/testing/ordered_sum_fixtures.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <limits>

namespace exactq {
namespace exact {
namespace {

// splitmix64: tiny, fast, and the same sequence everywhere.
class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed * 0x2545f4914f6cdd1dull + 0x9e3779b97f4a7c15ull) {}
  uint64_t Next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  // Uniform in [0, 1) with 53 random bits.
  double Unit() { return static_cast<double>(Next() >> 11) * 0x1p-53; }
  // Uniform integer in [lo, hi].
  int64_t Range(int64_t lo, int64_t hi) {
    return lo + static_cast<int64_t>(Next() % static_cast<uint64_t>(hi - lo + 1));
  }
  bool Chance(double p) { return Unit() < p; }
  double Sign() { return (Next() & 1) ? -1.0 : 1.0; }

 private:
  uint64_t state_;
};

double FromBits(uint64_t b) {
  double x;
  std::memcpy(&x, &b, sizeof x);
  return x;
}

// A random full-mantissa value in [2^e, 2^(e+1)).
double InBinade(Rng& rng, int e) { return std::ldexp(1.0 + rng.Unit(), e); }

std::vector<double> Uniform(size_t n, Rng& rng) {
  std::vector<double> t(n);
  for (double& x : t) x = rng.Unit();
  return t;
}

// One SSIM-like window term: w * SSIM from random window moments, as integer SSIM forms
// it (products and one division per term, so every term has a full mantissa).
double SsimLikeTerm(Rng& rng, double weight) {
  const double c1 = 6.5025, c2 = 58.5225;
  const double mx = 16.0 + 219.0 * rng.Unit();
  const double my = mx + 8.0 * (rng.Unit() - 0.5);
  const double vx = 400.0 * rng.Unit();
  const double vy = vx * (0.8 + 0.4 * rng.Unit());
  const double rho = rng.Chance(0.05) ? -rng.Unit() : 0.7 + 0.3 * rng.Unit();
  const double cov = rho * std::sqrt(vx * vy);
  const double ssim = ((2.0 * mx * my + c1) * (2.0 * cov + c2)) / ((mx * mx + my * my + c1) * (vx + vy + c2));
  return weight * ssim;
}

}  // namespace

std::vector<FixtureKind> AllFixtureKinds() {
  return {FixtureKind::kUniform,
          FixtureKind::kTieHeavy,
          FixtureKind::kSignedTies,
          FixtureKind::kSpan300Binades,
          FixtureKind::kSignedSpan300,
          FixtureKind::kFourthPowers,
          FixtureKind::kSsimLikeCrossingZero,
          FixtureKind::kMixedWalk,
          FixtureKind::kZeroCrossings,
          FixtureKind::kZeros,
          FixtureKind::kZeroIslands,
          FixtureKind::kSubnormals,
          FixtureKind::kSignedSubnormals,
          FixtureKind::kExactCancellation,
          FixtureKind::kNearMax,
          FixtureKind::kNearMaxOverflow,
          FixtureKind::kPosInf,
          FixtureKind::kNegInf,
          FixtureKind::kPosInfThenNegInf,
          FixtureKind::kNaN};
}

const char* FixtureName(FixtureKind kind) {
  switch (kind) {
    case FixtureKind::kUniform:
      return "uniform";
    case FixtureKind::kTieHeavy:
      return "tie_heavy";
    case FixtureKind::kSignedTies:
      return "signed_ties";
    case FixtureKind::kSpan300Binades:
      return "span_300_binades";
    case FixtureKind::kSignedSpan300:
      return "signed_span_300";
    case FixtureKind::kFourthPowers:
      return "fourth_powers";
    case FixtureKind::kSsimLikeCrossingZero:
      return "ssim_like_crossing_zero";
    case FixtureKind::kMixedWalk:
      return "mixed_walk";
    case FixtureKind::kZeroCrossings:
      return "zero_crossings";
    case FixtureKind::kZeros:
      return "zeros";
    case FixtureKind::kZeroIslands:
      return "zero_islands";
    case FixtureKind::kSubnormals:
      return "subnormals";
    case FixtureKind::kSignedSubnormals:
      return "signed_subnormals";
    case FixtureKind::kExactCancellation:
      return "exact_cancellation";
    case FixtureKind::kNearMax:
      return "near_max";
    case FixtureKind::kNearMaxOverflow:
      return "near_max_overflow";
    case FixtureKind::kPosInf:
      return "pos_inf";
    case FixtureKind::kNegInf:
      return "neg_inf";
    case FixtureKind::kPosInfThenNegInf:
      return "pos_inf_then_neg_inf";
    case FixtureKind::kNaN:
      return "nan";
  }
  return "?";
}

bool ExpectOrderSensitive(FixtureKind kind) {
  switch (kind) {
    case FixtureKind::kZeros:
    case FixtureKind::kNearMaxOverflow:
    case FixtureKind::kPosInf:
    case FixtureKind::kNegInf:
    case FixtureKind::kPosInfThenNegInf:
    case FixtureKind::kNaN:
      return false;
    default:
      return true;
  }
}

std::vector<double> MakeFixture(FixtureKind kind, size_t n, uint64_t seed) {
  Rng rng(seed * 131 + static_cast<uint64_t>(kind));
  const double inf = std::numeric_limits<double>::infinity();
  switch (kind) {
    case FixtureKind::kUniform:
      return Uniform(n, rng);

    case FixtureKind::kTieHeavy: {
      // The increments add up to at most 1/2, so the sum stays in [1, 2) where u = 2^-52
      // and k * 2^-53 is a tie for every odd k.
      std::vector<double> t(n);
      const int64_t k_max = std::max<int64_t>(1, (int64_t{1} << 52) / static_cast<int64_t>(n + 1));
      for (size_t i = 0; i < n; ++i) t[i] = i == 0 ? 1.0 : std::ldexp(static_cast<double>(rng.Range(0, k_max)), -53);
      return t;
    }

    case FixtureKind::kSignedTies: {
      // A zero-mean walk around 1: ties above 1, exact steps below (u halves there).
      std::vector<double> t(n);
      const double spread = std::sqrt(static_cast<double>(n + 1));
      const int64_t k_max = std::max<int64_t>(1, static_cast<int64_t>(0x1p50 / spread));
      for (size_t i = 0; i < n; ++i) {
        t[i] = i == 0 ? 1.0 : rng.Sign() * std::ldexp(static_cast<double>(rng.Range(0, k_max)), -53);
      }
      return t;
    }

    case FixtureKind::kSpan300Binades:
    case FixtureKind::kSignedSpan300: {
      std::vector<double> t(n);
      for (double& x : t) {
        x = InBinade(rng, static_cast<int>(rng.Range(-300, 300)));
        if (kind == FixtureKind::kSignedSpan300) x *= rng.Sign();
      }
      return t;
    }

    case FixtureKind::kFourthPowers: {
      std::vector<double> t(n);
      for (double& x : t) {
        const double u = rng.Unit();
        const double sq = u * u;
        x = sq * sq;
      }
      return t;
    }

    case FixtureKind::kSsimLikeCrossingZero: {
      // Interior weight 65536, 2% border weights; the distorted frame "inverted" from 35%
      // of the raster on, which negates the terms there.
      std::vector<double> t(n);
      const size_t inverted_from = n * 35 / 100;
      for (size_t i = 0; i < n; ++i) {
        const double weight = rng.Chance(0.02) ? static_cast<double>(rng.Range(1, 65535)) : 65536.0;
        const double term = SsimLikeTerm(rng, weight);
        t[i] = i >= inverted_from ? -term : term;
      }
      return t;
    }

    case FixtureKind::kMixedWalk: {
      std::vector<double> t(n);
      for (double& x : t) x = rng.Sign() * InBinade(rng, static_cast<int>(rng.Range(-20, 20)));
      return t;
    }

    case FixtureKind::kZeroCrossings: {
      // A half band up, then full bands alternating down and up: each full band crosses 0.
      std::vector<double> t(n);
      const size_t band = std::max<size_t>(1, n / 10);
      for (size_t i = 0; i < n; ++i) {
        const size_t b = i < band / 2 ? 0 : 1 + (i - band / 2) / band;
        const double drift = (b % 2 == 0) ? 1.0 : -1.0;
        t[i] = rng.Chance(0.1) ? -drift * 0.5 * rng.Unit() : drift * (0.5 + rng.Unit());
      }
      return t;
    }

    case FixtureKind::kZeros: {
      std::vector<double> t(n);
      for (double& x : t) x = rng.Sign() * 0.0;
      return t;
    }

    case FixtureKind::kZeroIslands: {
      // First half: multiples of 2^-10 (exact adds), with zero runs while the sum is exactly
      // 2^10 and exactly 2^20. Second half: full-mantissa runs between zero runs.
      std::vector<double> t;
      t.reserve(n);
      double s = 0.0;
      const auto push = [&](double x) {
        if (t.size() < n) {
          t.push_back(x);
          s = s + x;
        }
      };
      const auto zeros = [&](size_t len) {
        for (size_t j = 0; j < len; ++j) push(rng.Sign() * 0.0);
      };
      push(1024.0);
      zeros(3000);
      for (size_t j = 0; j < 2000; ++j) push(std::ldexp(static_cast<double>(rng.Range(0, 1 << 12)), -10));
      push(1048576.0 - s);  // the sum is exactly 2^20 now
      zeros(2500);
      while (t.size() < n) {
        for (size_t j = 0; j < 1500; ++j) push(rng.Unit() * 64.0);
        zeros(static_cast<size_t>(rng.Range(1000, 5000)));
      }
      return t;
    }

    case FixtureKind::kSubnormals:
    case FixtureKind::kSignedSubnormals: {
      std::vector<double> t(n);
      for (double& x : t) {
        x = FromBits(static_cast<uint64_t>(rng.Range(1, (int64_t{1} << 52) - 1)));
        if (kind == FixtureKind::kSignedSubnormals) x *= rng.Sign();
      }
      return t;
    }

    case FixtureKind::kExactCancellation: {
      // Runs of random terms closed by the term that cancels the sum exactly (+0), then a
      // tiny term: an all-zero-increment chunk is not an all-zero chunk (pitfall 8).
      std::vector<double> t;
      t.reserve(n);
      double s = 0.0;
      while (t.size() < n) {
        const int64_t run = rng.Range(1, 40);
        for (int64_t j = 0; j < run && t.size() < n; ++j) {
          const double x = rng.Sign() * InBinade(rng, static_cast<int>(rng.Range(-8, 8)));
          t.push_back(x);
          s = s + x;
        }
        if (t.size() < n) {
          t.push_back(-s);
          s = s + (-s);  // +0
        }
        if (t.size() < n) {
          const double tiny = rng.Chance(0.5) ? -0x1.134f1518c20d7p-595 : rng.Sign() * FromBits(rng.Range(1, 1000));
          t.push_back(tiny);
          s = s + tiny;
        }
      }
      return t;
    }

    case FixtureKind::kNearMax:
    case FixtureKind::kNearMaxOverflow: {
      // Start at 3/4 of DBL_MAX and walk in binade 1023 with steps of about 2^1004 (at 300k)
      // and some of +-(k/4) * 2^971 (the unit there). kNearMax refuses steps that would
      // overflow; kNearMaxOverflow lets the drift overflow near the end (then stays +inf).
      std::vector<double> t;
      t.reserve(n);
      double s = 0.0;
      // Mean step 0.7 * drift: the headroom of 2^1022 is used up after about 80% of the terms.
      const double drift = std::ldexp(1.0, 1022) / (0.56 * static_cast<double>(n + 1));
      for (size_t i = 0; i < n; ++i) {
        double x;
        if (i == 0) {
          x = 0.75 * DBL_MAX;
        } else if (rng.Chance(0.3)) {
          x = static_cast<double>(rng.Range(-8, 8)) * 0x1p969;  // k/4 units of 2^971
        } else {
          x = drift * (rng.Unit() * 4.0 - 1.0);
        }
        if (kind == FixtureKind::kNearMax && std::isinf(s + x)) x = -std::fabs(x);
        t.push_back(x);
        s = s + x;
      }
      return t;
    }

    case FixtureKind::kPosInf:
    case FixtureKind::kNegInf:
    case FixtureKind::kNaN: {
      std::vector<double> t = Uniform(n, rng);
      if (n > 0) {
        const double special = kind == FixtureKind::kPosInf   ? inf
                               : kind == FixtureKind::kNegInf ? -inf
                                                              : std::numeric_limits<double>::quiet_NaN();
        t[n / 3] = special;
      }
      return t;
    }

    case FixtureKind::kPosInfThenNegInf: {
      std::vector<double> t = Uniform(n, rng);
      if (n > 0) t[n / 4] = inf;
      if (n > 1) t[(3 * n) / 4] = -inf;
      return t;
    }
  }
  return {};
}

double PairwiseTreeSum(const double* terms, size_t n) {
  if (n == 0) return 0.0;
  if (n == 1) return terms[0];
  const size_t half = n / 2;
  return PairwiseTreeSum(terms, half) + PairwiseTreeSum(terms + half, n - half);
}

bool SameBitsOrBothNaN(double a, double b) {
  if (std::isnan(a) && std::isnan(b)) return true;
  uint64_t x, y;
  std::memcpy(&x, &a, sizeof x);
  std::memcpy(&y, &b, sizeof y);
  return x == y;
}

}  // namespace exact
}  // namespace exactq
