// splitmix64 for the exact sum's tests: tiny, fast, the same sequence on every machine.
//
//   TestRng rng{42};
//   uint64_t bits = rng.Next();
//   int64_t k = rng.Range(-3, 60);  // inclusive
#ifndef EXACTQ_ENGINE_EXACT_TESTING_ORDERED_SUM_TEST_RNG_H_
#define EXACTQ_ENGINE_EXACT_TESTING_ORDERED_SUM_TEST_RNG_H_

#include <cstdint>

namespace exactq {
namespace exact {

struct TestRng {
  uint64_t s;
  uint64_t Next() {
    uint64_t z = (s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  int64_t Range(int64_t lo, int64_t hi) {
    return lo + static_cast<int64_t>(Next() % static_cast<uint64_t>(hi - lo + 1));
  }
};

}  // namespace exact
}  // namespace exactq

#endif  // EXACTQ_ENGINE_EXACT_TESTING_ORDERED_SUM_TEST_RNG_H_
