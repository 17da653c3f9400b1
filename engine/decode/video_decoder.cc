#include "engine/decode/video_decoder.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "engine/decode/av_frame_conversion.h"
#include "engine/decode/device_surfaces.h"
#include "engine/decode/gpu_decoding.h"

extern "C" {
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/avutil.h>
#include <libavutil/error.h>
#include <libavutil/hwcontext.h>
}

namespace exactq {
namespace {

// FFmpeg reads in blocks of this size from the ByteSource.
constexpr int kIoBufferBytes = 64 * 1024;

std::string AvErrorText(int error) {
  char text[AV_ERROR_MAX_STRING_SIZE] = {};
  av_strerror(error, text, sizeof text);
  return text;
}

// FFmpeg logs to stderr by default; a hostile upload must not flood the server's log,
// and every error that matters comes back as a status. EXACTQ_AV_LOG=1 restores it.
void QuietLibraries() {
  static std::once_flag once;
  std::call_once(once, [] {
    const char* wanted = std::getenv("EXACTQ_AV_LOG");
    av_log_set_level(wanted != nullptr && wanted[0] == '1' ? AV_LOG_WARNING : AV_LOG_QUIET);
  });
}

int ReadCallback(void* opaque, uint8_t* buffer, int size);
int64_t SeekCallback(void* opaque, int64_t offset, int whence);

// Containers may ask to open other files (HLS and DASH playlists, concat lists, mov
// references); every source is exactly the bytes it was given.
int RefuseNestedOpen(AVFormatContext*, AVIOContext**, const char*, int, AVDictionary**) { return AVERROR(EPERM); }

// The video track's own duration from Matroska's per-track "DURATION" tag
// ("HH:MM:SS.nnnnnnnnn", written by FFmpeg's muxer), in seconds; -1 when absent.
double TaggedTrackSeconds(const AVStream& stream) {
  const AVDictionaryEntry* tag = av_dict_get(stream.metadata, "DURATION", nullptr, 0);
  if (tag == nullptr) return -1;
  int hours = 0, minutes = 0;
  double seconds = 0;
  if (std::sscanf(tag->value, "%d:%d:%lf", &hours, &minutes, &seconds) != 3) return -1;
  return hours * 3600.0 + minutes * 60.0 + seconds;
}

}  // namespace

struct VideoDecoder::Av {
  AVIOContext* io = nullptr;
  AVFormatContext* format = nullptr;
  AVCodecContext* codec = nullptr;
  AVPacket* packet = nullptr;
  AVFrame* picture = nullptr;
  AVFrame* surface = nullptr;  // picture downloaded from the GPU (GPU decoding only)
  bool gpu = false;            // the codec was set up for GPU decoding
  int stream_index = -1;
  bool flushing = false;  // the demuxer ended; the decoder is draining
  bool drained = false;
  // The first video packet: where its bytes end in the source, and its size.
  int64_t first_packet_end = -1;
  int64_t first_packet_size = -1;

  ~Av() {
    av_frame_free(&surface);
    av_frame_free(&picture);
    av_packet_free(&packet);
    avcodec_free_context(&codec);
    avformat_close_input(&format);
    if (io != nullptr) av_freep(&io->buffer);
    avio_context_free(&io);
  }
};

namespace {

int ReadCallback(void* opaque, uint8_t* buffer, int size) {
  auto* self = static_cast<std::pair<ByteSource*, absl::Status*>*>(opaque);
  absl::StatusOr<size_t> n = self->first->Read(buffer, static_cast<size_t>(size));
  if (!n.ok()) {
    if (self->second->ok()) *self->second = n.status();
    return AVERROR(EIO);
  }
  return *n == 0 ? AVERROR_EOF : static_cast<int>(*n);
}

int64_t SeekCallback(void* opaque, int64_t offset, int whence) {
  auto* self = static_cast<std::pair<ByteSource*, absl::Status*>*>(opaque);
  if (whence & AVSEEK_SIZE) return self->first->Size() >= 0 ? self->first->Size() : AVERROR(ENOSYS);
  whence &= ~AVSEEK_FORCE;
  if (whence == SEEK_END) {
    const int64_t size = self->first->Size();
    if (size < 0) return AVERROR(ENOSYS);
    offset += size;
  } else if (whence != SEEK_SET) {
    return AVERROR(EINVAL);  // avio turns SEEK_CUR into SEEK_SET itself
  }
  if (offset < 0) return AVERROR(EINVAL);
  absl::Status s = self->first->Seek(static_cast<uint64_t>(offset));
  if (!s.ok()) {
    if (self->second->ok()) *self->second = s;
    return AVERROR(EIO);
  }
  return offset;
}

}  // namespace

const char* DecodeDeviceName(DecodeDevice device) {
  switch (device) {
    case DecodeDevice::kCpu:
      return "cpu";
    case DecodeDevice::kGpu:
      return "gpu";
    case DecodeDevice::kAuto:
      return "auto";
  }
  return "?";
}

absl::StatusOr<DecodeDevice> ParseDecodeDevice(const std::string& name) {
  for (DecodeDevice d : {DecodeDevice::kCpu, DecodeDevice::kGpu, DecodeDevice::kAuto}) {
    if (name == DecodeDeviceName(d)) return d;
  }
  return absl::InvalidArgumentError(absl::StrCat("decode device '", name, "': use auto, gpu or cpu"));
}

VideoDecoder::VideoDecoder(std::unique_ptr<ByteSource> source, const DecoderOptions& options)
    : source_(std::move(source)), options_(options), av_(std::make_unique<Av>()) {}

VideoDecoder::~VideoDecoder() = default;

absl::StatusOr<std::unique_ptr<VideoDecoder>> VideoDecoder::Open(std::unique_ptr<ByteSource> source,
                                                                 const DecoderOptions& options) {
  QuietLibraries();
  std::unique_ptr<VideoDecoder> decoder(new VideoDecoder(std::move(source), options));
  if (absl::Status s = decoder->OpenStreams(); !s.ok()) return s;
  // The first picture fixes the geometry and colour that info() reports.
  absl::StatusOr<bool> first = decoder->DecodeNext();
  if (!first.ok() && decoder->av_->gpu) {
    // The GPU's decoder refused the stream (a codec or profile it lacks: AV1 on an H200).
    return absl::Status(first.status().code(),
                        absl::StrCat("the GPU decoder cannot decode it: ", first.status().message()));
  }
  if (!first.ok()) return first.status();
  if (!*first) {
    return absl::InvalidArgumentError(absl::StrCat(decoder->source_->name(), ": no picture could be decoded"));
  }
  decoder->pending_ = true;
  decoder->StartRawY4mReads();
  if (decoder->av_->gpu) {
    decoder->info_.gpu_decoded = decode::internal::IsGpuSurface(*decoder->av_->picture);
    if (!decoder->info_.gpu_decoded) {
      // FFmpeg fell back to software: the GPU refused the stream's profile.
      const std::string why = absl::StrCat("the GPU decoder does not take this ", decoder->info_.codec, " stream (",
                                           GeometryDescription(decoder->info_.geometry), ")");
      if (options.device == DecodeDevice::kGpu) {
        return absl::FailedPreconditionError(absl::StrCat(decoder->source_->name(), ": ", why));
      }
      decoder->info_.cpu_reason = why;
    } else {
      absl::StrAppend(&decoder->info_.codec, " (gpu)");
    }
  }
  return decoder;
}

absl::Status VideoDecoder::AvError(int error, const std::string& what) {
  if (!io_error_.ok()) return io_error_;
  std::string message = absl::StrCat(source_->name(), ": ", what, ": ", AvErrorText(error));
  // A packet cut by the end of the input shows up as invalid data in the decoder.
  if (av_->format != nullptr && av_->format->pb != nullptr && av_->format->pb->eof_reached) {
    absl::StrAppend(&message, " (the input ends early: truncated?)");
  }
  if (error == AVERROR_PATCHWELCOME || error == AVERROR(ENOSYS) || error == AVERROR_DECODER_NOT_FOUND ||
      error == AVERROR_DEMUXER_NOT_FOUND) {
    return absl::UnimplementedError(message);
  }
  if (error == AVERROR(ENOMEM)) return absl::ResourceExhaustedError(message);
  return absl::InvalidArgumentError(message);
}

absl::Status VideoDecoder::OpenStreams() {
  Av& av = *av_;
  auto* buffer = static_cast<uint8_t*>(av_malloc(kIoBufferBytes));
  if (buffer == nullptr) return absl::ResourceExhaustedError("out of memory for the demuxer's buffer");
  io_opaque_ = {source_.get(), &io_error_};
  av.io = avio_alloc_context(buffer, kIoBufferBytes, 0, &io_opaque_, ReadCallback, nullptr, SeekCallback);
  if (av.io == nullptr) {
    av_free(buffer);
    return absl::ResourceExhaustedError("out of memory for the demuxer");
  }
  av.format = avformat_alloc_context();
  if (av.format == nullptr) return absl::ResourceExhaustedError("out of memory for the demuxer");
  av.format->pb = av.io;
  av.format->flags |= AVFMT_FLAG_CUSTOM_IO;
  av.format->io_open = RefuseNestedOpen;
  // Probe by content only: the source's name is the client's choice.
  if (int e = avformat_open_input(&av.format, "", nullptr, nullptr); e < 0) {
    // avformat_open_input frees the context on failure.
    av.format = nullptr;
    return AvError(e, "not a container or stream FFmpeg can read");
  }
  if (int e = avformat_find_stream_info(av.format, nullptr); e < 0) {
    return AvError(e, "reading the streams' parameters failed");
  }
  const AVCodec* codec = nullptr;
  av.stream_index = av_find_best_stream(av.format, AVMEDIA_TYPE_VIDEO, -1, -1, &codec, 0);
  if (av.stream_index == AVERROR_STREAM_NOT_FOUND) {
    return absl::InvalidArgumentError(absl::StrCat(source_->name(), ": no video stream"));
  }
  if (av.stream_index < 0 || codec == nullptr) {
    return absl::UnimplementedError(absl::StrCat(source_->name(), ": no decoder for the video stream"));
  }
  for (unsigned i = 0; i < av.format->nb_streams; ++i) {
    if (static_cast<int>(i) != av.stream_index) av.format->streams[i]->discard = AVDISCARD_ALL;
  }
  AVStream* stream = av.format->streams[av.stream_index];
  if (stream->codecpar->codec_id == AV_CODEC_ID_AV1) {
    // dav1d: the software AV1 decoder Debian builds FFmpeg with (the native one needs
    // hardware).
    if (const AVCodec* dav1d = avcodec_find_decoder_by_name("libdav1d"); dav1d != nullptr) codec = dav1d;
  }
  absl::StatusOr<ChosenDecoder> chosen = ChooseDecoder(codec, stream->codecpar->codec_id);
  if (!chosen.ok()) return chosen.status();
  codec = chosen->codec;
  if (stream->codecpar->width > options_.max_width || stream->codecpar->height > options_.max_height) {
    return absl::ResourceExhaustedError(absl::StrCat(source_->name(), ": pictures of ", stream->codecpar->width, "x",
                                                     stream->codecpar->height, " exceed the limit of ",
                                                     options_.max_width, "x", options_.max_height));
  }
  av.codec = avcodec_alloc_context3(codec);
  if (av.codec == nullptr) return absl::ResourceExhaustedError("out of memory for the decoder");
  if (int e = avcodec_parameters_to_context(av.codec, stream->codecpar); e < 0) {
    return AvError(e, "the stream's codec parameters");
  }
  if (chosen->cuda_device != nullptr) {
    if (absl::Status s = decode::internal::AttachCudaDecoding(av.codec, chosen->cuda_device); !s.ok()) return s;
    av.gpu = true;
  }
  av.codec->pkt_timebase = stream->time_base;
  const bool codec_threads =
      (codec->capabilities & (AV_CODEC_CAP_FRAME_THREADS | AV_CODEC_CAP_SLICE_THREADS | AV_CODEC_CAP_OTHER_THREADS)) !=
      0;
  av.codec->thread_count =
      codec_threads && options_.grant_threads ? options_.grant_threads(options_.threads) : options_.threads;
  av.codec->thread_type = FF_THREAD_FRAME | FF_THREAD_SLICE;
  // Damage is an error, never concealed: a score of a concealed picture would be a
  // score of the decoder's guess.
  av.codec->err_recognition = AV_EF_CRCCHECK | AV_EF_BITSTREAM | AV_EF_BUFFER | AV_EF_EXPLODE;
  if (int e = avcodec_open2(av.codec, codec, nullptr); e < 0) return AvError(e, "opening the decoder");
  av.packet = av_packet_alloc();
  av.picture = av_frame_alloc();
  av.surface = av_frame_alloc();
  if (av.packet == nullptr || av.picture == nullptr || av.surface == nullptr) {
    return absl::ResourceExhaustedError("out of memory");
  }

  info_.container = av.format->iformat->name;
  info_.codec = codec->name;
  // dav1d runs its own pool: FFmpeg does not mark it active.
  const bool own_pool = (codec->capabilities & AV_CODEC_CAP_OTHER_THREADS) != 0;
  info_.threads = av.codec->active_thread_type != 0 || own_pool ? std::max(1, av.codec->thread_count) : 1;
  // Raw elementary streams carry no timestamps: their rate is a guess (25 fps).
  if ((av.format->iformat->flags & AVFMT_NOTIMESTAMPS) == 0) {
    AVRational rate = stream->avg_frame_rate.num > 0 ? stream->avg_frame_rate : stream->r_frame_rate;
    if (rate.num > 0 && rate.den > 0) {
      av_reduce(&rate.num, &rate.den, rate.num, rate.den, INT32_MAX);
      info_.timing.rate_num = rate.num;
      info_.timing.rate_den = rate.den;
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<VideoDecoder::ChosenDecoder> VideoDecoder::ChooseDecoder(const AVCodec* software, int codec_id) {
  const ChosenDecoder cpu{software, nullptr};
  if (options_.device == DecodeDevice::kCpu) return cpu;
  if (codec_id == AV_CODEC_ID_RAWVIDEO) {
    // Y4M and raw pictures: copied, not decoded, whatever was asked.
    info_.cpu_reason = "raw pictures: nothing to decode";
    return cpu;
  }
  const AVCodec* gpu = decode::internal::CudaCapableDecoder(static_cast<AVCodecID>(codec_id));
  const char* name = avcodec_get_name(static_cast<AVCodecID>(codec_id));
  if (gpu == nullptr) {
    const std::string why = absl::StrCat("FFmpeg has no GPU decoding for ", name);
    if (options_.device == DecodeDevice::kGpu) {
      return absl::UnimplementedError(absl::StrCat(source_->name(), ": ", why));
    }
    info_.cpu_reason = why;
    return cpu;
  }
  if (codec_id == AV_CODEC_ID_AV1 && options_.device == DecodeDevice::kAuto) {
    info_.cpu_reason = "auto decodes AV1 on the CPU (FFmpeg's GPU AV1 decoder cannot fall back); ask for gpu";
    return cpu;
  }
  absl::StatusOr<AVBufferRef*> device = decode::internal::SharedCudaDevice(options_.gpu);
  if (!device.ok()) {
    if (options_.device == DecodeDevice::kGpu) {
      return absl::Status(device.status().code(), absl::StrCat(source_->name(), ": ", device.status().message()));
    }
    info_.cpu_reason = std::string(device.status().message());
    return cpu;
  }
  return ChosenDecoder{gpu, *device};
}

absl::StatusOr<bool> VideoDecoder::DecodeNext() {
  Av& av = *av_;
  const std::string frame_name = absl::StrCat("frame ", frames_read_ + (pending_ ? 1 : 0));
  while (true) {
    int e = avcodec_receive_frame(av.codec, av.picture);
    if (e == 0) {
      if (absl::Status s = CheckPicture(); !s.ok()) return s;
      return true;
    }
    if (e == AVERROR_EOF) return false;
    if (e != AVERROR(EAGAIN)) return AvError(e, absl::StrCat(frame_name, ": decoding failed"));
    if (av.flushing) return false;  // not reached: a draining decoder ends with EOF
    // The decoder wants input.
    while (true) {
      e = av_read_frame(av.format, av.packet);
      if (e == AVERROR_EOF) {
        av.flushing = true;
        e = avcodec_send_packet(av.codec, nullptr);
        if (e < 0 && e != AVERROR_EOF) return AvError(e, absl::StrCat(frame_name, ": draining the decoder failed"));
        break;
      }
      if (e < 0) return AvError(e, absl::StrCat(frame_name, ": demuxing failed"));
      if (av.packet->stream_index != av.stream_index) {
        av_packet_unref(av.packet);
        continue;
      }
      if (++packets_read_ == 1 && av.packet->pos >= 0) {
        av.first_packet_end = av.packet->pos + av.packet->size;
        av.first_packet_size = av.packet->size;
      }
      // The demuxer marks a packet cut short by the end of the input, or one with a
      // continuity error (MPEG-TS), as corrupt; decoding it would score a guess.
      if ((av.packet->flags & AV_PKT_FLAG_CORRUPT) != 0) {
        av_packet_unref(av.packet);
        return absl::InvalidArgumentError(
            absl::StrCat(source_->name(), ": ", frame_name, ": the container delivered a damaged packet (",
                         av.format->pb->eof_reached ? "the input ends inside it: truncated" : "lost or cut data", ")"));
      }
      e = avcodec_send_packet(av.codec, av.packet);
      av_packet_unref(av.packet);
      if (e < 0 && e != AVERROR(EAGAIN)) return AvError(e, absl::StrCat(frame_name, ": decoding failed"));
      break;
    }
  }
}

absl::Status VideoDecoder::CheckPicture() {
  const AVFrame& picture = *av_->picture;
  const int64_t index = frames_read_ + (pending_ ? 1 : 0);
  if (picture.decode_error_flags != 0 || (picture.flags & AV_FRAME_FLAG_CORRUPT) != 0) {
    return absl::InvalidArgumentError(absl::StrCat(source_->name(), ": frame ", index,
                                                   ": the decoder reported a damaged picture (flags ",
                                                   picture.decode_error_flags, "): corrupt or truncated bitstream"));
  }
  // A GPU surface holds what the software decoder would give in its sw_pix_fmt.
  const auto decoded_format =
      decode::internal::IsGpuSurface(picture) ? av_->codec->sw_pix_fmt : static_cast<AVPixelFormat>(picture.format);
  absl::StatusOr<PixelFormat> format = decode::internal::PixelFormatFromAv(decoded_format);
  if (!format.ok())
    return absl::Status(format.status().code(),
                        absl::StrCat(source_->name(), ": frame ", index, ": ", format.status().message()));
  const FrameGeometry geometry{picture.width, picture.height, *format};
  if (index == 0) {
    if (picture.width > options_.max_width || picture.height > options_.max_height) {
      return absl::ResourceExhaustedError(
          absl::StrCat(source_->name(), ": pictures of ", picture.width, "x", picture.height, " exceed the limit"));
    }
    if (absl::Status s = ValidateGeometry(geometry); !s.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(source_->name(), ": frame 0: ", s.message()));
    }
    absl::StatusOr<decode::internal::AvColour> colour = decode::internal::ColourFromAv(picture);
    if (!colour.ok()) {
      return absl::Status(colour.status().code(), absl::StrCat(source_->name(), ": ", colour.status().message()));
    }
    info_.geometry = geometry;
    info_.color_range = colour->range;
    info_.color_matrix = colour->matrix;
    if ((av_->format->iformat->flags & AVFMT_NOTIMESTAMPS) == 0 && picture.best_effort_timestamp != AV_NOPTS_VALUE) {
      const AVStream* stream = av_->format->streams[av_->stream_index];
      double start = static_cast<double>(picture.best_effort_timestamp) * av_q2d(stream->time_base);
      // MPEG-TS and PS clocks do not start at zero: measure from the container's start.
      if ((av_->format->iformat->flags & AVFMT_TS_DISCONT) != 0 && av_->format->start_time != AV_NOPTS_VALUE) {
        start -= static_cast<double>(av_->format->start_time) / AV_TIME_BASE;
      }
      info_.timing.start_seconds = start;
      info_.timing.start_known = true;
    }
  } else if (geometry != info_.geometry) {
    return absl::UnimplementedError(absl::StrCat(source_->name(), ": frame ", index, ": the pictures change from ",
                                                 GeometryDescription(info_.geometry), " to ",
                                                 GeometryDescription(geometry), " mid-stream"));
  }
  return absl::OkStatus();
}

absl::Status VideoDecoder::Fail(absl::Status status) {
  error_ = status;
  return status;
}

bool VideoDecoder::KeepPicturesOnDevice() {
  if (!info_.gpu_decoded || !decode::internal::DeviceSurfaces::Available()) return false;
  if (device_surfaces_ == nullptr) device_surfaces_ = std::make_unique<decode::internal::DeviceSurfaces>(options_.gpu);
  return true;
}

uint64_t VideoDecoder::GpuDeviceBytes(int pictures_held) const {
  if (!info_.gpu_decoded) return 0;
  const AVCodecContext& codec = *av_->codec;
  // The frames context FFmpeg sized the NVDEC decoder from (its decode surfaces).
  const int decode_surfaces =
      codec.hw_frames_ctx == nullptr
          ? 0
          : reinterpret_cast<const AVHWFramesContext*>(codec.hw_frames_ctx->data)->initial_pool_size;
  return decode::internal::GpuDecoderDeviceBytes(codec.coded_width, codec.coded_height,
                                                 info_.geometry.bytes_per_sample(), decode_surfaces, pictures_held,
                                                 device_surfaces_ != nullptr ? info_.geometry.frame_bytes() : 0);
}

absl::Status VideoDecoder::TakeGpuSurface(Frame* frame) {
  if (device_surfaces_ != nullptr) {
    absl::StatusOr<std::shared_ptr<const DevicePicture>> picture =
        device_surfaces_->Convert(*av_->picture, info_.geometry);
    if (!picture.ok()) return picture.status();
    if (absl::Status s = frame->Reset(info_.geometry); !s.ok()) return s;
    frame->SetDevicePicture(*std::move(picture));
    return absl::OkStatus();
  }
  av_frame_unref(av_->surface);
  if (int t = av_hwframe_transfer_data(av_->surface, av_->picture, 0); t < 0) {
    return absl::InternalError(absl::StrCat("downloading the GPU decoder's picture failed: ", AvErrorText(t)));
  }
  absl::Status s = decode::internal::CopyGpuSurface(*av_->surface, info_.geometry, frame);
  av_frame_unref(av_->surface);
  return s;
}

absl::StatusOr<bool> VideoDecoder::ReadFrame(Frame* frame) {
  if (!error_.ok()) return error_;
  if (raw_y4m_offset_ >= 0 && !pending_) {
    absl::StatusOr<bool> more = ReadRawY4mPicture(frame);
    if (!more.ok()) return Fail(more.status());
    if (*more) ++frames_read_;
    return *more;
  }
  if (!pending_) {
    absl::StatusOr<bool> more = DecodeNext();
    if (!more.ok()) return Fail(more.status());
    if (!*more) {
      // A container that lists its samples (mp4, mov) and delivers fewer was cut short.
      // Packets, not pictures, are counted: an edit list may discard pictures on purpose,
      // but the demuxer still delivers their packets.
      const AVStream* stream = av_->format->streams[av_->stream_index];
      if (stream->nb_frames > 0 && packets_read_ < stream->nb_frames) {
        return Fail(absl::InvalidArgumentError(
            absl::StrCat(source_->name(), ": frame ", frames_read_, ": the stream ends after ", packets_read_,
                         " of the ", stream->nb_frames, " pictures its container lists (truncated)")));
      }
      // Matroska lists no samples, but FFmpeg's muxer tags each track's duration: a
      // stream whose last picture ends half a frame or more before it was cut short.
      const double tagged = TaggedTrackSeconds(*stream);
      if (tagged > 0 && info_.timing.start_known && info_.timing.rate_known() && last_pts_seconds_ >= 0) {
        const double frame_seconds =
            static_cast<double>(info_.timing.rate_den) / static_cast<double>(info_.timing.rate_num);
        const double last_end = last_pts_seconds_ + frame_seconds;
        if (last_end + frame_seconds / 2 < tagged) {
          return Fail(absl::InvalidArgumentError(
              absl::StrFormat("%s: frame %d: the stream ends at %.3f s but its track is tagged %.3f s long (truncated)",
                              source_->name(), frames_read_, last_end, tagged)));
        }
      }
      return false;
    }
  }
  pending_ = false;
  if (av_->picture->best_effort_timestamp != AV_NOPTS_VALUE) {
    last_pts_seconds_ = static_cast<double>(av_->picture->best_effort_timestamp) *
                        av_q2d(av_->format->streams[av_->stream_index]->time_base);
  }
  if (decode::internal::IsGpuSurface(*av_->picture)) {
    if (absl::Status s = TakeGpuSurface(frame); !s.ok()) {
      return Fail(absl::Status(s.code(), absl::StrCat(source_->name(), ": frame ", frames_read_, ": ", s.message())));
    }
  } else if (absl::Status s = decode::internal::CopyAvFrame(*av_->picture, info_.geometry, frame); !s.ok()) {
    return Fail(s);
  }
  av_frame_unref(av_->picture);
  ++frames_read_;
  return true;
}

void VideoDecoder::StartRawY4mReads() {
  const Av& av = *av_;
  if (av.gpu || std::strcmp(av.format->iformat->name, "yuv4mpegpipe") != 0 ||
      av.codec->codec_id != AV_CODEC_ID_RAWVIDEO || packets_read_ != 1 || av.first_packet_end < 0 ||
      av.first_packet_size != static_cast<int64_t>(info_.geometry.frame_bytes())) {
    return;
  }
  raw_y4m_offset_ = av.first_packet_end;
}

absl::Status VideoDecoder::ReadRawY4mBytes(uint8_t* buffer, size_t size, size_t* got) {
  *got = 0;
  while (*got < size) {
    absl::StatusOr<size_t> n = source_->Read(buffer + *got, size - *got);
    if (!n.ok()) return n.status();
    if (*n == 0) break;
    *got += *n;
  }
  return absl::OkStatus();
}

absl::StatusOr<bool> VideoDecoder::ReadRawY4mPicture(Frame* frame) {
  if (!raw_y4m_positioned_) {
    // FFmpeg's reads ran ahead of the first picture; go back to the end of it.
    if (absl::Status s = source_->Seek(static_cast<uint64_t>(raw_y4m_offset_)); !s.ok()) return s;
    raw_y4m_positioned_ = true;
  }
  // Named in errors only: no string is built for a picture that reads.
  const auto where = [this] { return absl::StrCat(source_->name(), ": frame ", frames_read_); };
  // "FRAME", then optional parameters (ignored, as FFmpeg ignores them), then '\n'.
  constexpr size_t kFrameTag = 6;        // "FRAME\n" or "FRAME "
  constexpr size_t kMaxFrameLine = 256;  // FFmpeg's own bound on the line is lower
  char line[kMaxFrameLine];
  size_t got = 0;
  if (absl::Status s = ReadRawY4mBytes(reinterpret_cast<uint8_t*>(line), kFrameTag, &got); !s.ok()) return s;
  if (got == 0) return false;  // the clean end
  if (got < kFrameTag) {
    return absl::InvalidArgumentError(absl::StrCat(where(), ": the input ends inside its FRAME line (truncated)"));
  }
  if (std::memcmp(line, "FRAME", 5) != 0 || (line[5] != '\n' && line[5] != ' ')) {
    return absl::InvalidArgumentError(absl::StrCat(where(), ": no FRAME line where the picture should start"));
  }
  for (size_t n = kFrameTag; line[n - 1] != '\n'; ++n) {
    if (n == kMaxFrameLine) {
      return absl::InvalidArgumentError(
          absl::StrCat(where(), ": its FRAME line is longer than ", kMaxFrameLine, " bytes"));
    }
    if (absl::Status s = ReadRawY4mBytes(reinterpret_cast<uint8_t*>(line + n), 1, &got); !s.ok()) return s;
    if (got == 0) {
      return absl::InvalidArgumentError(absl::StrCat(where(), ": the input ends inside its FRAME line (truncated)"));
    }
  }
  // The picture's bytes are the frame's wire layout: read straight into it.
  if (absl::Status s = frame->Reset(info_.geometry); !s.ok()) return s;
  const size_t bytes = info_.geometry.frame_bytes();
  if (absl::Status s = ReadRawY4mBytes(frame->mutable_bytes(), bytes, &got); !s.ok()) return s;
  if (got < bytes) {
    return absl::InvalidArgumentError(absl::StrCat(where(), ": the input ends inside the picture, after ", got,
                                                   " of its ", bytes, " bytes (truncated)"));
  }
  return true;
}

}  // namespace exactq
