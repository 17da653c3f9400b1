// The engine's chroma layouts as exactq.v1 names them, for everything that writes a
// Geometry on the wire (the client's headers, the server's answers for decoded sources).
#ifndef EXACTQ_PROTO_LAYOUT_WIRE_H_
#define EXACTQ_PROTO_LAYOUT_WIRE_H_

#include "engine/format/pixel_format.h"
#include "exactq/v1/exactq.pb.h"

namespace exactq {

v1::ChromaLayout LayoutToWire(ChromaLayout layout);

}  // namespace exactq

#endif  // EXACTQ_PROTO_LAYOUT_WIRE_H_
