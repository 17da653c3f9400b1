// The sample pair: a small reference/distorted Y4M pair that ships with the repository
// (samples/sample.ref.y4m, samples/sample.dist.y4m) so the service and its clients can
// be tried without the corpus.
//
// 176x144 (QCIF) yuv420p, 3 frames, BT.709 limited range. The reference is smooth
// synthetic content: a diagonal luma ramp, a soft dome that moves across the frame, a
// faint travelling ripple, and chroma ramps. The distorted copy is the reference with
// a 3x3 box blur on luma plus small noise on every plane. Everything is integer
// arithmetic and the noise comes from an inline SplitMix64 generator, not from libm or
// <random> distributions (whose outputs are implementation-defined), so every platform
// generates the same bytes and a test can compare them with the committed files.

#ifndef EXACTQ_TOOLS_MAKE_SAMPLE_SAMPLE_PAIR_H_
#define EXACTQ_TOOLS_MAKE_SAMPLE_SAMPLE_PAIR_H_

#include <string>

#include "absl/status/status.h"
#include "engine/format/frame.h"
#include "engine/io/y4m_header.h"

namespace exactq {

inline constexpr int kSampleFrames = 3;

// QCIF 4:2:0 8-bit, 25 fps, progressive, square pixels, limited range.
Y4mHeader SampleHeader();

Frame MakeSampleReference(int frame_index);
Frame MakeSampleDistorted(const Frame& reference, int frame_index);

// Writes both files (overwriting them).
absl::Status WriteSamplePair(const std::string& ref_path, const std::string& dist_path);

}  // namespace exactq

#endif  // EXACTQ_TOOLS_MAKE_SAMPLE_SAMPLE_PAIR_H_
