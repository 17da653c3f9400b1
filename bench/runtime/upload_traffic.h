// UploadTraffic: a request's host-to-device copies without its kernels. A thread of its
// own copies `bytes` from page-locked memory to the device on a stream of its own,
// `copies_per_second` times a second, until destroyed. runtime_bench times twins on
// resident frames beside it, which tells the uploads' share of a request's cost that is
// their traffic on the device (the kernels slowed while copies land) from the share that
// is their order (each frame's kernels wait for its own upload). Builds without CUDA get
// UNAVAILABLE.
#ifndef EXACTQ_BENCH_RUNTIME_UPLOAD_TRAFFIC_H_
#define EXACTQ_BENCH_RUNTIME_UPLOAD_TRAFFIC_H_

#include <cstddef>
#include <cstdint>
#include <memory>

#include "absl/status/statusor.h"

namespace exactq {
namespace bench {

class UploadTraffic {
 public:
  virtual ~UploadTraffic() = default;  // stops the copies and waits for the last
  // Copies done so far.
  virtual uint64_t copies() const = 0;
};

absl::StatusOr<std::unique_ptr<UploadTraffic>> StartUploadTraffic(int device, size_t bytes, double copies_per_second);

}  // namespace bench
}  // namespace exactq

#endif  // EXACTQ_BENCH_RUNTIME_UPLOAD_TRAFFIC_H_
