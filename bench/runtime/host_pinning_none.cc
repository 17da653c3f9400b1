#include "bench/runtime/host_pinning.h"

namespace exactq {
namespace bench {

PinnedHost::PinnedHost(void* data, size_t) : data_(data) {}
PinnedHost::~PinnedHost() = default;

std::string CudaPciBusId(int) { return ""; }

}  // namespace bench
}  // namespace exactq
