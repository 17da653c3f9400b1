#include "bench/runtime/resident_twin.h"

namespace exactq {
namespace bench {

absl::StatusOr<std::unique_ptr<ResidentTwin>> CreateResidentTwin(int, const std::vector<ResidentMetric>&, const Frame&,
                                                                 const Frame&, PairUpload) {
  return absl::UnavailableError("this build has no CUDA support");
}

}  // namespace bench
}  // namespace exactq
