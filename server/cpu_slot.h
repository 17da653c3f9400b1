// A CPU stream's place in the CPU pool (--max_cpu_streams), held only while one of its
// frames is being scored or answered: a stream that sends nothing holds no slot, so
// idle streams cannot lock busy ones out of a CPU node. When every slot is busy, a
// stream waits before scoring its next frame (and stops reading meanwhile, so gRPC
// flow control holds its client back).
//
//   CpuSlot slot(cpu_pool, context);
//   if (absl::Status s = slot.FrameStarting(); !s.ok()) ...;  // before Submit
//   slot.FrameDone();                                          // after the answer
#ifndef EXACTQ_SERVER_CPU_SLOT_H_
#define EXACTQ_SERVER_CPU_SLOT_H_

#include <grpcpp/grpcpp.h>

#include <mutex>
#include <optional>

#include "absl/status/status.h"
#include "server/stream_admission.h"

namespace exactq::server {

class CpuSlot {
 public:
  CpuSlot(StreamAdmission* pool, grpc::ServerContext* context) : pool_(pool), context_(context) {}

  // Takes the slot when none of the stream's frames is in flight, waiting while the
  // pool is full; CANCELLED if the call is cancelled while it waits.
  absl::Status FrameStarting();
  // Gives the slot back when the stream's last frame in flight is done.
  void FrameDone();

 private:
  StreamAdmission* const pool_;
  grpc::ServerContext* const context_;
  std::mutex mutex_;
  int frames_ = 0;
  std::optional<StreamAdmission::Ticket> ticket_;
};

}  // namespace exactq::server

#endif  // EXACTQ_SERVER_CPU_SLOT_H_
