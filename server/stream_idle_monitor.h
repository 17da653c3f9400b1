// Ends streams whose client sends nothing for --stream_idle_seconds while the server
// waits to read from it (issue: a stream that sends its header and then nothing held
// its admission slot, CPU slot and memory reservation forever).
//
// Only time the server spends waiting for the client counts: the clock runs while the
// session is blocked reading and none of the stream's frames is being scored or
// answered, and while an answer waits for the client to read (its write blocked by
// flow control). Time spent scoring or holding the client back (the session not
// reading because K frames are in flight) does not count, so when the limit fires
// for a silent client every complete frame has been answered. A message that adds no
// bytes (an empty chunk) is not progress; an answer written is. The stream ends with DEADLINE_EXCEEDED naming the
// limit, sent by cancelling the call with that status (the synchronous API cannot
// end a call while its handler is blocked in Read).
//
//   StreamIdleMonitor monitor(30);                  // one per server
//   std::unique_ptr<StreamIdleMonitor::Watch> watch = monitor.Start(context);
//   watch->ReadStarted(); ... watch->ReadEnded(/*progress=*/true);
#ifndef EXACTQ_SERVER_STREAM_IDLE_MONITOR_H_
#define EXACTQ_SERVER_STREAM_IDLE_MONITOR_H_

#include <grpcpp/grpcpp.h>

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>

namespace exactq::server {

class StreamIdleMonitor {
 public:
  using Clock = std::chrono::steady_clock;

  // idle_seconds 0: streams are never ended for idleness.
  explicit StreamIdleMonitor(int idle_seconds);
  ~StreamIdleMonitor();
  StreamIdleMonitor(const StreamIdleMonitor&) = delete;
  StreamIdleMonitor& operator=(const StreamIdleMonitor&) = delete;

  // One stream's clock; unregisters itself when destroyed.
  class Watch {
   public:
    ~Watch();
    void ReadStarted();
    // progress: the message read carried bytes (a header, or a chunk with data).
    void ReadEnded(bool progress);
    void FrameSubmitted();
    // The frame is scored; its answer is being written.
    void FrameScored();
    // Its answer is written (progress: the client reads).
    void FrameAnswered();
    // An answer the watch did not see scored is being written (sessions that do not
    // report their frames one by one); FrameAnswered ends it.
    void WriteStarted();
    // True once the limit fired (the call has been cancelled with status()).
    bool expired() const;
    grpc::Status status() const;

   private:
    friend class StreamIdleMonitor;
    Watch(StreamIdleMonitor* monitor, grpc::ServerContext* context) : monitor_(monitor), context_(context) {}
    bool counting() const { return (reading_ && busy_frames_ == 0) || writing_ > 0; }
    // Under mutex_: moves the time since the last update into idle_.
    void Update(Clock::time_point now);
    // Called by the monitor's thread: cancels the call once idle_ reaches the limit.
    void Check(Clock::time_point now);

    StreamIdleMonitor* const monitor_;
    grpc::ServerContext* const context_;
    mutable std::mutex mutex_;
    bool reading_ = false;
    int busy_frames_ = 0;  // submitted, not yet scored
    int writing_ = 0;      // answers being written
    bool expired_ = false;
    bool expired_writing_ = false;  // the limit fired on an answer the client did not read
    Clock::duration idle_{0};
    Clock::time_point last_update_ = Clock::now();
  };

  // nullptr when the limit is off.
  std::unique_ptr<Watch> Start(grpc::ServerContext* context);
  int idle_seconds() const { return idle_seconds_; }

 private:
  void Run();

  const int idle_seconds_;
  std::mutex mutex_;  // watches_ and stop_; held while a watch is checked
  std::condition_variable wake_;
  std::set<Watch*> watches_;
  bool stop_ = false;
  std::thread thread_;
};

// The server's own time in a call that reads its sources itself (decoded streams,
// ladders): from Begin() until destruction the watch's clock is stopped, as while frames
// are scored. Begin once every upload has arrived (at once when there are none): until
// then a client that stops sending its upload is idle like any other.
class ServerTime {
 public:
  explicit ServerTime(StreamIdleMonitor::Watch* watch) : watch_(watch) {}
  ~ServerTime() {
    if (begun_) {
      watch_->FrameScored();
      watch_->FrameAnswered();
    }
  }
  ServerTime(const ServerTime&) = delete;
  ServerTime& operator=(const ServerTime&) = delete;

  void Begin() {
    if (watch_ == nullptr || begun_) return;
    watch_->FrameSubmitted();
    begun_ = true;
  }

 private:
  StreamIdleMonitor::Watch* const watch_;  // null when the limit is off
  bool begun_ = false;
};

// Writes one answer of a call whose frames the watch does not follow one by one
// (decoded streams, ladders): the clock runs while the write waits for the client, so a
// client that reads no answers is idle, and a written answer is progress.
template <typename Write>
bool WatchedWrite(StreamIdleMonitor::Watch* watch, Write&& write) {
  if (watch == nullptr) return write();
  watch->WriteStarted();
  const bool written = write();
  watch->FrameAnswered();
  return written;
}

}  // namespace exactq::server

#endif  // EXACTQ_SERVER_STREAM_IDLE_MONITOR_H_
