#include "server/encoded_source.h"

#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "engine/runtime/device_memory.h"
#include "proto/layout_wire.h"
#include "server/client_text.h"

namespace exactq::server {
namespace {

std::string SpoolDirectory(const DecodeConfig& config) {
  if (!config.spool_dir.empty()) return config.spool_dir;
  const char* tmp = std::getenv("TMPDIR");
  return tmp != nullptr && tmp[0] != '\0' ? tmp : "/tmp";
}

absl::Status Prefixed(const absl::Status& s, const std::string& prefix) {
  return absl::Status(s.code(), absl::StrCat(prefix, s.message()));
}

}  // namespace

bool IsDecoded(const v1::Source& source) {
  return source.kind_case() == v1::Source::kUpload || source.kind_case() == v1::Source::kServerPath;
}

absl::Status OpenEncodedSource(const DecodeConfig& config, const v1::Source& wire, EncodedSource* source) {
  if (wire.kind_case() == v1::Source::kServerPath) {
    const std::string& path = wire.server_path().path();
    absl::StatusOr<int> fd = config.source_roots.Open(path);
    if (!fd.ok()) return Prefixed(fd.status(), source->field + ".server_path: ");
    source->label = absl::StrCat(source->name, " ", path);
    absl::StatusOr<std::unique_ptr<ByteSource>> file = FileByteSource::FromDescriptor(*fd, source->label);
    if (!file.ok()) return Prefixed(file.status(), source->field + ".server_path: ");
    source->bytes = *std::move(file);
    return absl::OkStatus();
  }
  const v1::EncodedUpload& upload = wire.upload();
  if (upload.size_bytes() > config.max_upload_bytes) {
    return absl::ResourceExhaustedError(absl::StrCat(source->field, ".upload.size_bytes: ", upload.size_bytes(),
                                                     " exceeds the limit max_upload_bytes=", config.max_upload_bytes));
  }
  // The client's name, bounded: it only decorates messages.
  source->label = absl::StrCat(source->name, " upload", upload.name().empty() ? "" : " ", upload.name().substr(0, 200));
  absl::StatusOr<std::shared_ptr<SpoolFile>> spool =
      SpoolFile::Create(SpoolDirectory(config), config.max_upload_bytes, source->label);
  if (!spool.ok()) return spool.status();
  source->spool = *spool;
  source->bytes = source->spool->OpenReader();
  return absl::OkStatus();
}

absl::Status AppendUploadChunk(const v1::EncodedChunk& chunk, uint64_t max_chunk_bytes, EncodedSource* source) {
  if (source->spool == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("encoded_chunk.picture: the ", source->name, " source is not an upload"));
  }
  if (source->upload_ended) {
    return absl::InvalidArgumentError(absl::StrCat("encoded_chunk: bytes after the last chunk of the ", source->label));
  }
  if (chunk.offset() != source->next_offset) {
    return absl::InvalidArgumentError(absl::StrCat("encoded_chunk.offset: ", chunk.offset(), " for the ", source->label,
                                                   ", expected ", source->next_offset));
  }
  if (chunk.data().size() > max_chunk_bytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("encoded_chunk.data: ", chunk.data().size(), " bytes exceed max_chunk_bytes=", max_chunk_bytes));
  }
  if (absl::Status s = source->spool->Append(chunk.data().data(), chunk.data().size()); !s.ok()) return s;
  source->next_offset += chunk.data().size();
  if (chunk.last()) {
    source->upload_ended = true;
    source->spool->Finish();
  }
  return absl::OkStatus();
}

void EndUpload(EncodedSource* source, const absl::Status& status) {
  if (source->spool == nullptr) return;
  if (status.ok()) {
    source->spool->Finish();
  } else {
    source->spool->Abort(status);
  }
}

v1::Geometry DecodedGeometry(const DecodedStreamInfo& info, const v1::PixelFormat& requested) {
  v1::Geometry g;
  g.set_width(static_cast<uint32_t>(info.geometry.width));
  g.set_height(static_cast<uint32_t>(info.geometry.height));
  v1::PixelFormat* format = g.mutable_format();
  *format = requested;
  format->set_chroma(LayoutToWire(info.geometry.format.layout));
  format->set_bit_depth(static_cast<uint32_t>(info.geometry.format.bit_depth));
  if (format->range() == v1::COLOR_RANGE_UNSPECIFIED && info.color_range.has_value()) {
    format->set_range(*info.color_range == ColorRange::kFull ? v1::COLOR_RANGE_FULL : v1::COLOR_RANGE_LIMITED);
  }
  if (format->matrix() == v1::COLOR_MATRIX_UNSPECIFIED && info.color_matrix.has_value()) {
    format->set_matrix(*info.color_matrix == ColorMatrix::kBt601 ? v1::COLOR_MATRIX_BT601 : v1::COLOR_MATRIX_BT709);
  }
  return g;
}

absl::StatusOr<DecodeRequest> RequestedDecode(const DecodeConfig& config, const std::string& asked,
                                              const std::string& field) {
  DecodeRequest request;
  request.device = config.device;
  request.gpu = config.gpu;
  if (!asked.empty()) {
    absl::StatusOr<DecodeDevice> device = ParseDecodeDevice(asked);
    if (!device.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat(field, ": \"", ClientText(asked, 40), "\" is not a decode device; use auto, gpu or cpu"));
    }
    request.device = *device;
  }
  if (config.gpus_off && request.device != DecodeDevice::kCpu) {
    if (request.device == DecodeDevice::kGpu) {
      return absl::FailedPreconditionError(absl::StrCat(field, ": gpu, but the server runs with --gpus=none"));
    }
    request.device = DecodeDevice::kCpu;
    request.cpu_reason = "the server runs with --gpus=none";
  }
  return request;
}

void ApplyDecodeRequest(const DecodeRequest& request, DecoderOptions* options) {
  options->device = request.device;
  options->gpu = request.gpu;
}

absl::StatusOr<std::unique_ptr<VideoDecoder>> OpenDecoderWithThreads(std::unique_ptr<ByteSource> bytes,
                                                                     DecoderOptions options, uint32_t threads,
                                                                     DecodeThreadBudget* budget,
                                                                     std::vector<DecodeThreadBudget::Grant>* grants) {
  options.threads = static_cast<int>(threads);
  // Taken only once the codec is known to thread: a Y4M side holds none of the budget,
  // even while it opens.
  DecodeThreadBudget::Grant* grant = nullptr;
  if (budget != nullptr) {
    options.grant_threads = [&](int asked) {
      grants->push_back(budget->Take(static_cast<uint32_t>(asked), 1));
      grant = &grants->back();
      return static_cast<int>(grant->per_side());
    };
  }
  absl::StatusOr<std::unique_ptr<VideoDecoder>> decoder = VideoDecoder::Open(std::move(bytes), options);
  if (decoder.ok() && grant != nullptr) grant->KeepOnly(static_cast<uint32_t>((*decoder)->info().threads));
  return decoder;
}

bool KeepPicturesOnScorerGpu(int scorer_gpu, const DecoderOptions& options, VideoDecoder* decoder) {
  return scorer_gpu >= 0 && scorer_gpu == options.gpu && decoder->KeepPicturesOnDevice();
}

absl::StatusOr<DeviceMemoryReservation> ReserveDecoderDeviceMemory(const VideoDecoder& decoder,
                                                                   const DecoderOptions& options, int pictures_held,
                                                                   const std::string& side) {
  const uint64_t bytes = decoder.GpuDeviceBytes(pictures_held);
  if (bytes == 0) return DeviceMemoryReservation();
  return ReserveDeviceMemory(options.gpu, bytes, absl::StrCat("the GPU decoder of ", side));
}

void ToWire(const DecodedStreamInfo& info, const DecodeRequest& request, v1::DecodeInfo* wire) {
  wire->set_device(info.gpu_decoded ? "gpu" : "cpu");
  wire->set_cpu_reason(info.cpu_reason.empty() ? request.cpu_reason : info.cpu_reason);
}

}  // namespace exactq::server
