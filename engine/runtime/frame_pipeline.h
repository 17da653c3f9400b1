// FramePipeline: one stream's frames with up to K in flight. FrameScorer is
// synchronous, so a stream with one scorer leaves the GPU idle while it copies and
// waits; K scorers (the first one's siblings: own scratch, same device) on K worker
// threads overlap a stream's frames, and answers still come back in frame order.
//
// Rules:
//   - Submit blocks while K frames are in flight (back-pressure: the stream never
//     holds more than K frame pairs); a frame is in flight from Submit until its
//     `done` callback has returned.
//   - `done` runs once per submitted frame, strictly in submission order, never two
//     at once (on a worker thread); an error is delivered in its place like a score.
//     Nothing is dropped or scored twice. `done` must not call Submit, WaitForSlot
//     or Drain: its own frame is still in flight.
//   - Placement and fallback are FrameScorer's, per scorer: each answer says its
//     backend and fallback reason as before.
//   - Cancel(status): frames not yet started are answered with `status` unscored;
//     frames being scored finish. The destructor cancels and joins.
//   - Metrics with state across frames (Metric::CreateSequenceStage, VMAF) are applied
//     here, in frame order, without the pipeline knowing which they are: frame n is
//     scored with frame n - 1's reference where a metric reads it, and answered once
//     its stages have its final outputs (VMAF: once frame n + 1 is scored) or the
//     stream ends (Drain). A frame that waits only for that no longer counts against
//     K, so such a stream holds one pair more than K. An error ends the stages'
//     sequence: the frames before it are answered with final outputs, then the error.
//     A frame whose reference a later frame reads is answered only after that frame is
//     scored, so the caller may free a pair in `done`.
//
//   FramePipeline pipeline(std::move(scorer), {/*frames_in_flight=*/2});
//   pipeline.Submit(ref, dist, [](FramePipeline::Result r) { ... });  // frames live until done
//   pipeline.Drain();  // every frame answered
#ifndef EXACTQ_ENGINE_RUNTIME_FRAME_PIPELINE_H_
#define EXACTQ_ENGINE_RUNTIME_FRAME_PIPELINE_H_

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "engine/format/frame.h"
#include "engine/runtime/frame_scorer.h"

namespace exactq {

class FramePipeline {
 public:
  using Clock = std::chrono::steady_clock;

  struct Options {
    int frames_in_flight = 2;  // K >= 1; 1 scores one frame at a time as before
  };

  struct Result {
    uint64_t sequence = 0;  // 0, 1, 2, ... in submission order
    absl::StatusOr<ScoredFrame> scored;
    Clock::time_point started;  // scoring began (== done for a cancelled frame)
    Clock::time_point done;
  };
  using Done = std::function<void(Result)>;

  // `first` scores frames from the start; K - 1 siblings are created from it now (before
  // any frame, so their device memory is admitted up front). A sibling that cannot be
  // created (no room on the device, a device failure) lowers K; frames_in_flight() says
  // what is left, sibling_error() why.
  FramePipeline(std::unique_ptr<FrameScorer> first, Options options);
  ~FramePipeline();
  FramePipeline(const FramePipeline&) = delete;
  FramePipeline& operator=(const FramePipeline&) = delete;

  // Queues one pair; blocks while K frames are in flight. Both frames must stay valid
  // and unchanged until `done` has run. After Cancel: returns the cancel status and
  // never calls `done`.
  absl::Status Submit(const Frame& reference, const Frame& distorted, Done done);
  // Blocks until fewer than K frames are in flight (or the pipeline is cancelled), so
  // a caller can hold at most K pairs, counting the one it fills next.
  void WaitForSlot();
  // Blocks until every submitted frame has been answered: the end of the stream for
  // metrics with state across frames (their last frames are answered now; frames
  // submitted afterwards start a new sequence). May call `done` on this thread.
  void Drain();
  // Frames not yet started are answered with `status` (not OK); later Submits fail.
  void Cancel(absl::Status status);

  int frames_in_flight() const { return static_cast<int>(scorers_.size()); }
  const absl::Status& sibling_error() const { return sibling_error_; }
  // The first scorer: metric identities and output names (they never change, so they
  // may be read while frames are in flight). Its placement only after Drain.
  const FrameScorer& scorer() const { return *scorers_[0]; }

 private:
  struct Job {
    uint64_t sequence;
    const Frame* reference;
    const Frame* distorted;
    const Frame* previous_reference;  // only where a metric reads it
    Done done;
  };
  struct Finished {
    Done done;
    Result result;
  };
  // A frame taken in order, waiting for its final outputs or its turn to be answered.
  struct Held {
    Done done;
    Result result;
    std::vector<std::optional<FrameScores>> parts;  // per metric; empty for an error
    bool counted = true;                            // still counted in in_flight_
  };

  void Work(FrameScorer* scorer);
  // Takes the finished frames that are next in order through the stages, then answers
  // the frames that are complete and may go; one thread at a time.
  void DeliverReady(std::unique_lock<std::mutex>& lock);
  // One finished frame, in order, into held_ (under the lock).
  void Take(Finished finished);
  // Hands stage `m`'s completed outputs to the held frames that wait for them.
  void Fill(size_t m, std::vector<FrameScores> outputs);
  // Ends the stages' sequence: their last frames complete.
  void FinishStages();
  // Whether a held frame is complete and may be answered now (after those before it).
  bool MayGo(const Held& held) const;
  // Answers held_.front() (unlocks around `done`).
  void DeliverFront(std::unique_lock<std::mutex>& lock);

  std::vector<std::unique_ptr<FrameScorer>> scorers_;
  absl::Status sibling_error_;
  std::vector<std::thread> workers_;

  std::mutex mutex_;
  std::condition_variable work_ready_;     // a job was queued, or stopping
  std::condition_variable slot_free_;      // a frame was answered, or cancelled
  std::deque<Job> queue_;                  // submitted, not started
  std::map<uint64_t, Finished> finished_;  // scored, not yet taken (out of order)
  std::deque<Held> held_;                  // taken in order, not yet answered
  uint64_t next_sequence_ = 0;
  uint64_t next_to_take_ = 0;
  int in_flight_ = 0;  // submitted, not answered (less frames waiting only for later ones)
  bool delivering_ = false;
  std::condition_variable delivered_;  // delivering_ turned false
  bool ended_ = false;                 // Drain or the destructor: no later frame will come

  // Metrics with state across frames (FrameScorer::CreateSequenceStages).
  std::vector<std::unique_ptr<SequenceStage>> stages_;  // per metric, null for per-frame ones
  bool has_stages_ = false;
  bool reads_previous_ = false;
  const Frame* last_reference_ = nullptr;  // the last submitted reference, for the next frame
  std::vector<uint64_t> next_fill_;        // per metric: the frame its stage answers next
  bool stopping_ = false;                  // workers exit once the queue is empty
  absl::Status cancelled_;                 // not OK after Cancel
};

}  // namespace exactq

#endif  // EXACTQ_ENGINE_RUNTIME_FRAME_PIPELINE_H_
