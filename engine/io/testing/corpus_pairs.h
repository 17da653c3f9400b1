// The corpus loop every corpus test shares: a case's reference and distorted files read
// pair by pair, in step, with the checks each test made for itself (both files present,
// same frame count, the count cases.json gives).
//
//   for (const corpus::CorpusCase& c : *cases) {
//     if (!corpus::CaseFilesPresent(c)) continue;  // left out of a smaller copy
//     absl::StatusOr<corpus::CorpusPairReader> pairs = corpus::CorpusPairReader::Open(c);
//     ASSERT_TRUE(pairs.ok()) << pairs.status();
//     Frame ref, dis;
//     for (;;) {
//       absl::StatusOr<bool> more = pairs->Next(&ref, &dis);
//       ASSERT_TRUE(more.ok()) << more.status();  // a read error or a count mismatch
//       if (!*more) break;
//       ...
//     }
//   }
#ifndef EXACTQ_ENGINE_IO_TESTING_CORPUS_PAIRS_H_
#define EXACTQ_ENGINE_IO_TESTING_CORPUS_PAIRS_H_

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "engine/format/frame.h"
#include "engine/io/testing/corpus.h"
#include "engine/io/y4m_reader.h"

namespace exactq {
namespace corpus {

// Whether both files of the case can be read here.
bool CaseFilesPresent(const CorpusCase& c);

class CorpusPairReader {
 public:
  static absl::StatusOr<CorpusPairReader> Open(const CorpusCase& c);

  // The next pair into *ref and *dis: true; false after the last one. An error (a read
  // error, frame counts that differ between the files or from cases.json) names the case
  // and the frame, and is kept in status().
  absl::StatusOr<bool> Next(Frame* ref, Frame* dis);

  // OK, or the error Next returned.
  const absl::Status& status() const { return status_; }
  // Pairs read so far; also the index of the next one.
  int frames_read() const { return frames_read_; }
  const FrameGeometry& geometry() const { return ref_.geometry(); }

 private:
  CorpusPairReader(const CorpusCase& c, Y4mReader ref, Y4mReader dis)
      : case_(c), ref_(std::move(ref)), dis_(std::move(dis)) {}

  CorpusCase case_;
  Y4mReader ref_;
  Y4mReader dis_;
  int frames_read_ = 0;
  absl::Status status_;
};

}  // namespace corpus
}  // namespace exactq

#endif  // EXACTQ_ENGINE_IO_TESTING_CORPUS_PAIRS_H_
