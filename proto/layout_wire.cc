#include "proto/layout_wire.h"

namespace exactq {

v1::ChromaLayout LayoutToWire(ChromaLayout layout) {
  switch (layout) {
    case ChromaLayout::k400:
      return v1::CHROMA_400;
    case ChromaLayout::k420:
      return v1::CHROMA_420;
    case ChromaLayout::k422:
      return v1::CHROMA_422;
    case ChromaLayout::k444:
      return v1::CHROMA_444;
  }
  return v1::CHROMA_LAYOUT_UNSPECIFIED;
}

}  // namespace exactq
