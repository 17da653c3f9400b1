// A small set of golden frame pairs (at most 64x64) and the committed bits every
// metric output must have on them, per metric definition version. `exactqd
// --self_check` scores them on the CPU and on every GPU before serving, and `exactq
// verify` through a server: a new GPU type, driver or build proves it returns the
// reference bits before it takes traffic.
//
// The pictures are made by a fixed integer recipe (no files); the values live in
// golden_values.inc, written by `bazel run //engine/golden:print_golden` from the CPU
// reference engine (regenerate when a metric's definition version changes, never to
// make a difference go away).
#ifndef EXACTQ_ENGINE_GOLDEN_GOLDEN_PAIRS_H_
#define EXACTQ_ENGINE_GOLDEN_GOLDEN_PAIRS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "engine/format/frame.h"
#include "engine/metrics/metric.h"

namespace exactq::golden {

struct GoldenMetric {
  std::string name;       // "psnr"
  MetricOptions options;  // {"enable_mse", "true"}
};

struct GoldenPair {
  std::string name;  // "yuv420p_64x64"
  FrameGeometry geometry;
  std::vector<GoldenMetric> metrics;
};

// Every pair, in a fixed order.
const std::vector<GoldenPair>& GoldenPairs();

// The pair's reference (distorted = false) or distorted picture.
Frame MakePicture(const GoldenPair& pair, bool distorted);

struct GoldenValue {
  const char* pair;
  const char* metric;
  int definition_version;
  const char* output;
  uint64_t bits;  // the double's bits
};

// The committed values (golden_values.inc).
const std::vector<GoldenValue>& GoldenValues();

uint64_t Bits(double value);
double FromBits(uint64_t bits);

// One output compared with its golden value.
struct Difference {
  std::string pair, metric, output, where;
  std::string detail;  // "got 41.70944606843499 (0x...), golden 41.7094460684350 (0x...)"
};

// Compares a metric's scores on a pair with the golden values for its definition
// version; appends what differs (a missing golden value, a missing or extra output,
// different bits) to `differences`. Returns the outputs compared.
int Compare(const GoldenPair& pair, const std::string& metric, int definition_version,
            const std::vector<NamedScore>& scores, const std::string& where, std::vector<Difference>* differences);

std::string Describe(const Difference& d);

}  // namespace exactq::golden

#endif  // EXACTQ_ENGINE_GOLDEN_GOLDEN_PAIRS_H_
