// The API surface of a proto file as sorted text lines, one per message field, enum
// value and rpc: "field exactq.v1.FrameChunk.offset = 3 uint64 optional". A committed
// snapshot of these lines is the v1 contract: a line that disappears means a field was
// removed, renumbered or retyped (see api_compat_test.cc).
#ifndef EXACTQ_PROTO_API_SURFACE_H_
#define EXACTQ_PROTO_API_SURFACE_H_

#include <string>
#include <vector>

#include "google/protobuf/descriptor.h"

namespace exactq::proto {

std::vector<std::string> ApiSurface(const google::protobuf::FileDescriptor& file);

}  // namespace exactq::proto

#endif  // EXACTQ_PROTO_API_SURFACE_H_
