// LadderSources: one reference and N renditions of it, decoded side by side, each on its
// own thread, handed out one reference picture at a time with every live rendition's
// picture of the same index, already at the reference's geometry.
//
// The reference is decoded once however many renditions there are. A rendition whose
// size differs from the reference's is scaled to it on its own decoding thread by the
// exact scaler (engine/scale, ScaleMode::kBicubic; one BicubicScaler per rendition, its
// taps made once; a picture the GPU decoder kept on the device is scaled there by the
// scaler's CUDA twin, scale::DeviceScaler, to the same samples), so renditions decode and
// scale in parallel; each source is a
// DecodeAhead (engine/decode/decode_ahead.h). ScaleMode::kNone refuses it instead
// (Start fails with InvalidArgument naming the rendition and both sizes). Start also
// refuses a rendition whose pixel format (chroma layout, bit depth) differs from the
// reference's, or whose timing would misalign (CheckSourcesPair), naming the rendition.
//
// Frame counts: a rendition that ends before the reference gets no more pictures; one
// that is longer is decoded to its end when the reference ends, to count it. After
// Next returns false, Finish says per rendition: OK when its count equals the
// reference's, else InvalidArgument naming both counts (or its decoder's error, which
// ended it after the pictures before the failing one). A reference decoder error ends
// everything: Next returns it.
//
//   absl::StatusOr<std::unique_ptr<LadderSources>> ladder =
//       LadderSources::Start(std::move(reference), std::move(renditions), {});
//   Frame ref;
//   std::vector<Frame> renditions;
//   std::vector<bool> present;
//   while (true) {
//     absl::StatusOr<bool> more = (*ladder)->Next(&ref, &renditions, &present);
//     if (!more.ok()) return more.status();  // the reference failed
//     if (!*more) break;
//     for (size_t i = 0; i < renditions.size(); ++i) if (present[i]) score(ref, renditions[i]);
//   }
//   std::vector<absl::Status> ends = (*ladder)->Finish();
#ifndef EXACTQ_ENGINE_LADDER_LADDER_SOURCES_H_
#define EXACTQ_ENGINE_LADDER_LADDER_SOURCES_H_

#include <cstdint>
#include <memory>
#include <memory_resource>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "engine/decode/video_decoder.h"
#include "engine/format/frame.h"

namespace exactq {

enum class ScaleMode {
  kNone,     // a rendition of another size is refused
  kBicubic,  // scaled to the reference's size by scale::ScaleBicubic
};

class LadderSources {
 public:
  struct Options {
    int queue_frames = 2;  // pictures decoded (and scaled) ahead per source
    ScaleMode scale = ScaleMode::kBicubic;
    // Where the handed-out pictures live (page-locked memory for a GPU stream).
    std::pmr::memory_resource* frame_memory = std::pmr::get_default_resource();
    // Threads that scale each resized rendition's pictures, in bands of rows (the same
    // bytes for any count; bicubic_scaler.h). 1: its decoding thread alone.
    int scale_threads = 1;
    // A GPU on which every rendition is scored: a reference picture that arrives on the
    // host is copied there once, on the reference's decoding thread, and handed out as a
    // device picture (Frame::device_picture) that every rendition's scorer reads in
    // place, instead of each uploading it. -1 (or a build without CUDA): host pictures.
    int reference_gpu = -1;
  };

  // At least one rendition. Errors name the rendition by its index (from 0).
  static absl::StatusOr<std::unique_ptr<LadderSources>> Start(std::unique_ptr<VideoDecoder> reference,
                                                              std::vector<std::unique_ptr<VideoDecoder>> renditions,
                                                              const Options& options);
  // Stops every decoder and joins their threads (mid-stream too).
  ~LadderSources();
  LadderSources(const LadderSources&) = delete;
  LadderSources& operator=(const LadderSources&) = delete;

  size_t rendition_count() const;
  const DecodedStreamInfo& reference_info() const;
  // The rendition as decoded (its own size, before scaling).
  const DecodedStreamInfo& rendition_info(size_t i) const;
  // Whether rendition i is scaled to the reference's geometry.
  bool scaled(size_t i) const;

  // The next reference picture into *reference and, for each rendition i still live,
  // its picture of the same index at the reference's geometry into (*renditions)[i]
  // with (*present)[i] = true (buffers are swapped and reused). Both vectors are
  // resized to rendition_count(). true: a reference picture; false: the reference
  // ended (call Finish). A rendition that ends or fails is not present from then on.
  absl::StatusOr<bool> Next(Frame* reference, std::vector<Frame>* renditions, std::vector<bool>* present);

  // After Next returned false: each rendition's end (see the top of the file). Decodes
  // the rest of longer renditions to count them (all at once, without scaling). After
  // Next returned the reference's error: each rendition's own error, else the
  // reference's. Before either: FailedPrecondition. The answer is kept: later calls
  // return it again.
  std::vector<absl::Status> Finish();

  // Reference pictures handed out so far.
  int64_t frames() const;

 private:
  struct Impl;
  explicit LadderSources(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace exactq

#endif  // EXACTQ_ENGINE_LADDER_LADDER_SOURCES_H_
