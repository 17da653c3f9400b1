#include "bench/runtime/host_pinning.h"

namespace exactq {
namespace bench {

PinnedHost::PinnedHost(void* data, size_t) : data_(data) {}
PinnedHost::~PinnedHost() = default;

}  // namespace bench
}  // namespace exactq
