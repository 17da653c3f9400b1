// The self-check: the golden pairs scored on the CPU reference engine and on GPUs,
// each output's bits compared with the committed golden values for the metric's
// definition version (golden_pairs.h). Small (at most 64x64): under a second.
#ifndef EXACTQ_ENGINE_GOLDEN_SELF_CHECK_H_
#define EXACTQ_ENGINE_GOLDEN_SELF_CHECK_H_

#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/golden/golden_pairs.h"

namespace exactq::golden {

struct CheckReport {
  std::string where;  // "cpu", "cuda:0"
  int outputs = 0;    // outputs compared
  int skipped = 0;    // metric x pair the backend does not take (GPU: unsupported input)
  std::vector<Difference> differences;
  absl::Status error;  // the backend failed outright (not a difference)
  double seconds = 0;
  bool ok() const { return differences.empty() && error.ok(); }
};

// Scores one metric on one pair; Unimplemented/InvalidArgument: the backend does not
// take it (skipped); another error: the backend failed.
using PairScorer = std::function<absl::StatusOr<std::vector<NamedScore>>(
    const GoldenPair& pair, const GoldenMetric& metric, const Frame& reference, const Frame& distorted)>;

CheckReport RunCheck(const std::string& where, const PairScorer& scorer);

// The CPU reference engine (the metrics' own code).
CheckReport CheckCpu();
// GPU `device` (an index as ListGpuDevices gives it), through the CUDA engine.
CheckReport CheckGpu(int device);

// The current definition version of a metric (0 if unknown).
int DefinitionVersion(const std::string& metric);

}  // namespace exactq::golden

#endif  // EXACTQ_ENGINE_GOLDEN_SELF_CHECK_H_
