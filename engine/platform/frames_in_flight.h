// How many frames the metrics' CUDA twins have on each device at once, in this process:
// the load a twin sees when it launches a frame. A twin may launch a frame differently
// when the device is busy with others (ssimulacra2's slabs: faster with many frames in
// flight, slower for a frame alone). Every instance on a device counts, whichever thread
// and stream it runs on; other processes and other kernels on the device do not.
//
//   FrameInFlight frame(device);                    // counted in until it goes out of scope
//   if (frame.in_flight() >= 4) ...                 // this frame and the others then
#ifndef EXACTQ_ENGINE_PLATFORM_FRAMES_IN_FLIGHT_H_
#define EXACTQ_ENGINE_PLATFORM_FRAMES_IN_FLIGHT_H_

namespace exactq {

// Devices 0 .. kMaxCountedDevices - 1 are counted; a frame on a higher ordinal counts as
// alone (in_flight() == 1).
inline constexpr int kMaxCountedDevices = 64;

// A frame counted in on `device` from construction to destruction (thread-safe).
class FrameInFlight {
 public:
  explicit FrameInFlight(int device);
  ~FrameInFlight();
  FrameInFlight(const FrameInFlight&) = delete;
  FrameInFlight& operator=(const FrameInFlight&) = delete;

  // Frames in flight on the device when this one came in, this one included (>= 1).
  int in_flight() const { return in_flight_; }

 private:
  int device_;
  int in_flight_;
};

// Frames in flight on `device` now (0 for an uncounted ordinal).
int FramesInFlight(int device);

}  // namespace exactq

#endif  // EXACTQ_ENGINE_PLATFORM_FRAMES_IN_FLIGHT_H_
