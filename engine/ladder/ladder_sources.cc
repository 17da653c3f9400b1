#include "engine/ladder/ladder_sources.h"

#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "engine/decode/decode_ahead.h"
#include "engine/decode/source_timing.h"
#include "engine/platform/picture_uploader.h"
#include "engine/platform/worker_pool.h"
#include "engine/scale/bicubic_scaler.h"
#include "engine/scale/device_scaler.h"

namespace exactq {
namespace {

std::string Size(const FrameGeometry& g) { return absl::StrCat(g.width, "x", g.height); }

// Why rendition i cannot be scored against the reference; OK when it can.
absl::Status CheckRendition(size_t i, const DecodedStreamInfo& reference, const DecodedStreamInfo& rendition,
                            ScaleMode scale) {
  const FrameGeometry& r = reference.geometry;
  const FrameGeometry& g = rendition.geometry;
  if (!(g.format == r.format)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "rendition ", i, " decodes to ", GeometryDescription(g), " and the reference to ", GeometryDescription(r),
        ": a rendition's pixel format (chroma layout and bit depth) must be the reference's"));
  }
  if (g != r && scale == ScaleMode::kNone) {
    return absl::InvalidArgumentError(absl::StrCat("rendition ", i, " is ", Size(g), " and the reference ", Size(r),
                                                   ", and scaling is off: a rendition is scored at the "
                                                   "reference's size only when scaled to it (bicubic)"));
  }
  if (absl::Status s = CheckSourcesPair(reference.timing, rendition.timing); !s.ok()) {
    return absl::Status(s.code(), absl::StrCat("rendition ", i, ": ", s.message()));
  }
  return absl::OkStatus();
}

// A rendition's scaling on its decoding thread: a picture the GPU decoded and kept there
// is scaled there (the scaler's CUDA twin, made with the first such picture), any other
// on the host. Both give the definition's samples.
class Scaling {
 public:
  Scaling(scale::BicubicScaler host, int threads) : host_(std::move(host)) {
    if (threads > 1) pool_ = std::make_unique<WorkerPool>(threads);
  }
  absl::Status Scale(const Frame& decoded, Frame* out) {
    if (const DevicePicture* picture = decoded.device_picture();
        picture != nullptr && scale::DeviceScaler::Available()) {
      if (device_ == nullptr || device_->device() != picture->device()) {
        absl::StatusOr<std::unique_ptr<scale::DeviceScaler>> made =
            scale::DeviceScaler::Create(picture->device(), decoded.geometry(), out->geometry());
        if (!made.ok()) return made.status();
        device_ = *std::move(made);
      }
      absl::StatusOr<std::shared_ptr<const DevicePicture>> scaled = device_->Scale(*picture);
      if (!scaled.ok()) return scaled.status();
      out->SetDevicePicture(*std::move(scaled));
      return absl::OkStatus();
    }
    absl::StatusOr<const Frame*> host = HostReadable(decoded, &host_copy_);
    if (!host.ok()) return host.status();
    return host_.Scale(**host, out, pool_.get());
  }

 private:
  scale::BicubicScaler host_;
  std::unique_ptr<WorkerPool> pool_;
  std::unique_ptr<scale::DeviceScaler> device_;
  Frame host_copy_;  // a device picture copied down where no device scaler runs
};

}  // namespace

struct LadderSources::Impl {
  struct Rendition {
    std::unique_ptr<DecodeAhead> source;
    bool scaled = false;
    bool live = true;      // handing out pictures
    int64_t pictures = 0;  // handed out
    absl::Status error;    // its decoder's (or the scaler's) error, which ended it
  };

  std::unique_ptr<DecodeAhead> reference;
  std::vector<Rendition> renditions;
  int64_t frames = 0;
  bool reference_ended = false;  // cleanly
  absl::Status reference_error;
  std::optional<std::vector<absl::Status>> ends;  // Finish's answer, once known
};

LadderSources::LadderSources(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

LadderSources::~LadderSources() {
  // Every thread is asked to stop before any is joined, so they wind down together.
  impl_->reference->RequestStop();
  for (Impl::Rendition& r : impl_->renditions) r.source->RequestStop();
  impl_->reference->Stop();
  for (Impl::Rendition& r : impl_->renditions) r.source->Stop();
}

absl::StatusOr<std::unique_ptr<LadderSources>> LadderSources::Start(
    std::unique_ptr<VideoDecoder> reference, std::vector<std::unique_ptr<VideoDecoder>> renditions,
    const Options& options) {
  if (reference == nullptr) return absl::InvalidArgumentError("a ladder needs a reference");
  if (renditions.empty()) return absl::InvalidArgumentError("a ladder needs at least one rendition");
  const DecodedStreamInfo& ref = reference->info();
  // Every check and every scaler comes before the first thread starts.
  std::vector<std::optional<DecodeAhead::Transform>> transforms(renditions.size());
  for (size_t i = 0; i < renditions.size(); ++i) {
    if (renditions[i] == nullptr) return absl::InvalidArgumentError(absl::StrCat("rendition ", i, " has no decoder"));
    const DecodedStreamInfo& info = renditions[i]->info();
    if (absl::Status s = CheckRendition(i, ref, info, options.scale); !s.ok()) return s;
    if (info.geometry == ref.geometry) continue;
    absl::StatusOr<scale::BicubicScaler> scaler = scale::BicubicScaler::Create(info.geometry, ref.geometry);
    if (!scaler.ok()) {
      return absl::Status(scaler.status().code(), absl::StrCat("rendition ", i, ": ", scaler.status().message()));
    }
    // The decoding thread is the scalers' only caller (the host scaler's pool's threads
    // scale bands of each picture); the host scaler's taps are made once, here.
    auto scaling = std::make_shared<Scaling>(*std::move(scaler), options.scale_threads);
    transforms[i] = DecodeAhead::Transform{
        ref.geometry, [scaling](const Frame& decoded, Frame* out) { return scaling->Scale(decoded, out); }};
  }

  auto impl = std::make_unique<Impl>();
  DecodeAhead::Options ahead;
  ahead.queue_frames = options.queue_frames;
  ahead.frame_memory = options.frame_memory;
  DecodeAhead::Options reference_ahead = ahead;
  if (options.reference_gpu >= 0 && PictureUploader::Available()) {
    absl::StatusOr<std::unique_ptr<PictureUploader>> made =
        PictureUploader::Create(options.reference_gpu, ref.geometry.frame_bytes());
    if (!made.ok()) return made.status();
    std::shared_ptr<PictureUploader> uploader = *std::move(made);
    const int gpu = options.reference_gpu;
    reference_ahead.transform = DecodeAhead::Transform{
        ref.geometry, [uploader, gpu](const Frame& decoded, Frame* out) -> absl::Status {
          if (const DevicePicture* picture = decoded.device_picture(); picture != nullptr && picture->device() == gpu) {
            return absl::FailedPreconditionError("the reference is on the GPU already: keep it there, not upload it");
          }
          if (!decoded.host_bytes_valid()) {
            return absl::FailedPreconditionError("the reference is on another GPU than its renditions' scorers");
          }
          absl::StatusOr<std::shared_ptr<const DevicePicture>> uploaded = uploader->Upload(decoded.bytes());
          if (!uploaded.ok()) return uploaded.status();
          out->SetDevicePicture(*std::move(uploaded));
          return absl::OkStatus();
        }};
  }
  impl->reference = std::make_unique<DecodeAhead>(std::move(reference), std::move(reference_ahead));
  for (size_t i = 0; i < renditions.size(); ++i) {
    DecodeAhead::Options rendition_ahead = ahead;
    rendition_ahead.transform = std::move(transforms[i]);
    Impl::Rendition r;
    r.scaled = rendition_ahead.transform.has_value();
    r.source = std::make_unique<DecodeAhead>(std::move(renditions[i]), std::move(rendition_ahead));
    impl->renditions.push_back(std::move(r));
  }
  return std::unique_ptr<LadderSources>(new LadderSources(std::move(impl)));
}

size_t LadderSources::rendition_count() const { return impl_->renditions.size(); }

const DecodedStreamInfo& LadderSources::reference_info() const { return impl_->reference->info(); }

const DecodedStreamInfo& LadderSources::rendition_info(size_t i) const {
  return impl_->renditions.at(i).source->info();
}

bool LadderSources::scaled(size_t i) const { return impl_->renditions.at(i).scaled; }

int64_t LadderSources::frames() const { return impl_->frames; }

absl::StatusOr<bool> LadderSources::Next(Frame* reference, std::vector<Frame>* renditions, std::vector<bool>* present) {
  Impl& impl = *impl_;
  if (!impl.reference_error.ok()) return impl.reference_error;
  const size_t n = impl.renditions.size();
  renditions->resize(n);
  present->assign(n, false);
  if (impl.reference_ended) return false;
  absl::Status status;
  if (!impl.reference->Take(reference, &status)) {
    if (status.ok()) {
      impl.reference_ended = true;
      return false;
    }
    // Nothing can be scored without the reference: every decoder stops now.
    impl.reference_error = status;
    for (Impl::Rendition& r : impl.renditions) r.source->RequestStop();
    for (Impl::Rendition& r : impl.renditions) r.source->Stop();
    return status;
  }
  ++impl.frames;
  for (size_t i = 0; i < n; ++i) {
    Impl::Rendition& r = impl.renditions[i];
    if (!r.live) continue;
    if (r.source->Take(&(*renditions)[i], &status)) {
      (*present)[i] = true;
      ++r.pictures;
    } else {
      r.live = false;  // it ended before the reference (cleanly: its count says so in Finish)
      r.error = status;
    }
  }
  return true;
}

std::vector<absl::Status> LadderSources::Finish() {
  Impl& impl = *impl_;
  if (impl.ends.has_value()) return *impl.ends;
  const size_t n = impl.renditions.size();
  if (!impl.reference_ended && impl.reference_error.ok()) {
    return std::vector<absl::Status>(
        n, absl::FailedPreconditionError("LadderSources::Finish before Next returned false: the reference has "
                                         "not ended"));
  }
  std::vector<absl::Status> ends(n);
  if (!impl.reference_error.ok()) {
    for (size_t i = 0; i < n; ++i) {
      ends[i] = impl.renditions[i].error.ok() ? impl.reference_error : impl.renditions[i].error;
    }
    impl.ends = ends;
    return ends;
  }
  // The renditions still live may be longer than the reference: all of them decode what
  // is left at once (no queue, no scaling), then each is counted.
  for (Impl::Rendition& r : impl.renditions) {
    if (r.live) r.source->CountAhead();
  }
  for (size_t i = 0; i < n; ++i) {
    Impl::Rendition& r = impl.renditions[i];
    int64_t count = r.pictures;
    absl::Status status = r.error;
    if (r.live) {
      count += r.source->CountRest(&status);
      r.live = false;
      r.error = status;
    }
    if (!status.ok()) {
      ends[i] = status;
    } else if (count != impl.frames) {
      ends[i] = absl::InvalidArgumentError(absl::StrCat("the sources have different frame counts: the reference has ",
                                                        impl.frames, " frames and rendition ", i, " has ", count,
                                                        "; the first ", r.pictures, " pairs were scored"));
    }
  }
  impl.ends = ends;
  return ends;
}

}  // namespace exactq
