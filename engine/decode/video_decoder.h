// VideoDecoder: the pictures of an encoded file (any container and codec Debian 12's
// FFmpeg libraries read), as engine Frames in presentation order.
//
// Bytes come from a ByteSource through a custom AVIOContext, so FFmpeg never opens a
// file or URL itself (nested opens by playlists or references are refused). Geometry,
// pixel format and colour come from the bitstream: Open decodes the first picture, so
// info() describes what ReadFrame returns, and a later picture that changes size or
// format ends the stream with an error naming it. Decoding is bit-exact (FFmpeg's
// decoders are), so a rendition decoded here equals `ffmpeg -f yuv4mpegpipe` of it.
//
// Errors name the source, the frame and the cause, with a status code the server
// passes on: InvalidArgument for corrupt, truncated or unreadable input, Unimplemented
// for what ExactQ cannot score right (a pixel format or colour it does not take),
// ResourceExhausted for pictures above the limits. The decoder treats any picture the
// codec reports as damaged (concealed errors included) as an error: a score of a
// concealed picture would be a score of the decoder's guess.
//
//   absl::StatusOr<std::unique_ptr<VideoDecoder>> decoder =
//       VideoDecoder::Open(*FileByteSource::Open("dist.mp4"), DecoderOptions{.threads = 4});
//   Frame frame;
//   while (true) {
//     absl::StatusOr<bool> more = (*decoder)->ReadFrame(&frame);
//     if (!more.ok()) return more.status();
//     if (!*more) break;
//     ... score frame ...
//   }

#ifndef EXACTQ_ENGINE_DECODE_VIDEO_DECODER_H_
#define EXACTQ_ENGINE_DECODE_VIDEO_DECODER_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "engine/decode/byte_source.h"
#include "engine/decode/source_timing.h"
#include "engine/format/color.h"
#include "engine/format/frame.h"

struct AVBufferRef;
struct AVCodec;

namespace exactq {
namespace decode::internal {
class DeviceSurfaces;
}  // namespace decode::internal

// Where pictures are decoded. kGpu: the GPU's video decoder (NVDEC, through FFmpeg's
// CUDA decoding), or an error naming why not; kAuto: the GPU's decoder when the machine
// and the stream allow it, else the CPU, saying why (DecodedStreamInfo::cpu_reason).
// kAuto leaves AV1 to the CPU (dav1d): FFmpeg's AV1 decoder has no software path to fall
// back to when a GPU lacks AV1. Raw pictures (Y4M) are copied, not decoded, under any
// device (cpu_reason says so). Pictures decoded on the GPU are downloaded into Frames,
// or kept there (VideoDecoder::KeepPicturesOnDevice), with the same bytes the CPU's
// decoder gives (decoding is bit-exact by the standards).
enum class DecodeDevice { kCpu, kGpu, kAuto };

// "cpu", "gpu", "auto".
const char* DecodeDeviceName(DecodeDevice device);
// InvalidArgument naming the accepted words.
absl::StatusOr<DecodeDevice> ParseDecodeDevice(const std::string& name);

struct DecoderOptions {
  // Decoder threads (frame and slice threads); 0 lets FFmpeg pick (one per core).
  int threads = 1;
  // Called once the codec is known, and only for one that decodes on threads of its
  // own (frame or slice threads, dav1d's pool), with `threads`; returns the threads to
  // open it with. A caller sharing threads among decoders takes them here, so a codec
  // without threads (Y4M, raw video) takes none. Unset: `threads` as asked.
  std::function<int(int asked)> grant_threads;
  DecodeDevice device = DecodeDevice::kCpu;
  int gpu = 0;  // the CUDA device ordinal for kGpu and kAuto
  // Pictures larger than this are refused before any is decoded.
  int max_width = kMaxFrameDimension;
  int max_height = kMaxFrameDimension;
};

struct DecodedStreamInfo {
  FrameGeometry geometry;
  std::optional<ColorRange> color_range;    // unset: the bitstream does not say
  std::optional<ColorMatrix> color_matrix;  // unset: the bitstream does not say
  SourceTiming timing;
  std::string container;     // FFmpeg's demuxer name, e.g. "mov,mp4,m4a,3gp,3g2,mj2"
  std::string codec;         // the decoder, e.g. "h264", "libdav1d"
  bool gpu_decoded = false;  // the GPU's video decoder made the pictures
  std::string cpu_reason;    // asked for kAuto and decoded on the CPU: why
  // Threads the decoder decodes on: those it was opened with where the codec threads
  // (FFmpeg's frame or slice threads, or the codec's own pool as dav1d's), else 1 (the
  // reading thread alone: raw video, Y4M).
  int threads = 1;
};

class VideoDecoder {
 public:
  static absl::StatusOr<std::unique_ptr<VideoDecoder>> Open(std::unique_ptr<ByteSource> source,
                                                            const DecoderOptions& options);
  ~VideoDecoder();
  VideoDecoder(const VideoDecoder&) = delete;
  VideoDecoder& operator=(const VideoDecoder&) = delete;

  const DecodedStreamInfo& info() const { return info_; }

  // The next picture in presentation order into *frame (its buffer reused when large
  // enough). true: a frame; false: the clean end. Errors are sticky.
  absl::StatusOr<bool> ReadFrame(Frame* frame);

  // From the next ReadFrame on, pictures the GPU decodes stay in its memory: the frames
  // carry them as Frame::device_picture, with no host bytes (a scorer on that GPU reads
  // them without an upload; the CPU's paths copy them down). False, and pictures come to
  // the host as before, when the stream is not decoded on the GPU or the build has no
  // CUDA. For one thread, like ReadFrame.
  bool KeepPicturesOnDevice();

  // Device memory this decoder holds at most while the GPU decodes it (0 when it does
  // not), with `pictures_held` of its pictures held by the caller at once (queued ahead,
  // in flight): its NVDEC surfaces and CUDA frames, and once KeepPicturesOnDevice a
  // planar copy per held picture (GpuDecoderDeviceBytes, gpu_decoding.h). For the
  // device memory admission; known once Open has set the decoder up.
  uint64_t GpuDeviceBytes(int pictures_held) const;

  // Frames returned so far; also the index of the next.
  int64_t frames_read() const { return frames_read_; }

 private:
  struct Av;
  VideoDecoder(std::unique_ptr<ByteSource> source, const DecoderOptions& options);
  absl::Status OpenStreams();
  // The decoder for the stream per options_.device, with the CUDA device for GPU
  // decoding (null: the CPU); a fallback to the CPU (kAuto) is recorded in
  // info_.cpu_reason.
  struct ChosenDecoder {
    const AVCodec* codec;
    AVBufferRef* cuda_device;
  };
  absl::StatusOr<ChosenDecoder> ChooseDecoder(const AVCodec* software, int codec_id);
  // Decodes the next picture into av's frame; false at the end.
  absl::StatusOr<bool> DecodeNext();
  absl::Status CheckPicture();
  // The GPU's picture into *frame: kept on the device (KeepPicturesOnDevice) or
  // downloaded and de-interleaved on the host.
  absl::Status TakeGpuSurface(Frame* frame);
  absl::Status Fail(absl::Status status);
  // Y4M: after the first picture (FFmpeg's, which checked the header and the format),
  // pictures are read from the source straight into the Frame, one copy instead of the
  // demuxer's packet and the decoder's copy of it (a 4K reference is 12 MB a picture).
  // Sets raw_y4m_offset_ when the stream is Y4M and its packets are whole pictures.
  void StartRawY4mReads();
  absl::StatusOr<bool> ReadRawY4mPicture(Frame* frame);
  // Up to `size` bytes into buffer; *got < size only at the end of the source.
  absl::Status ReadRawY4mBytes(uint8_t* buffer, size_t size, size_t* got);
  // Maps an FFmpeg error to a status naming `what`; prefers the byte source's own error.
  absl::Status AvError(int error, const std::string& what);

  std::unique_ptr<ByteSource> source_;
  DecoderOptions options_;
  std::unique_ptr<Av> av_;
  std::unique_ptr<decode::internal::DeviceSurfaces> device_surfaces_;  // set: pictures stay on the GPU
  DecodedStreamInfo info_;
  bool pending_ = false;  // av's frame holds a picture not yet returned
  int64_t frames_read_ = 0;
  int64_t packets_read_ = 0;      // of the video stream, discarded ones included
  double last_pts_seconds_ = -1;  // the last picture returned
  int64_t raw_y4m_offset_ = -1;   // >= 0: Y4M read directly (StartRawY4mReads), from here
  bool raw_y4m_positioned_ = false;
  absl::Status io_error_;  // the byte source's error, seen by the AVIOContext callbacks
  std::pair<ByteSource*, absl::Status*> io_opaque_{nullptr, nullptr};
  absl::Status error_;  // sticky
};

}  // namespace exactq

#endif  // EXACTQ_ENGINE_DECODE_VIDEO_DECODER_H_
