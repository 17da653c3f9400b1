#include "bench/runtime/upload_traffic.h"

namespace exactq {
namespace bench {

absl::StatusOr<std::unique_ptr<UploadTraffic>> StartUploadTraffic(int, size_t, double) {
  return absl::UnavailableError("this build has no CUDA support");
}

}  // namespace bench
}  // namespace exactq
