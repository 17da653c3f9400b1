#include "engine/io/testing/corpus_pairs.h"

#include <unistd.h>

#include <utility>

#include "absl/strings/str_cat.h"

namespace exactq {
namespace corpus {

bool CaseFilesPresent(const CorpusCase& c) {
  return access(c.ref_path.c_str(), R_OK) == 0 && access(c.dist_path.c_str(), R_OK) == 0;
}

absl::StatusOr<CorpusPairReader> CorpusPairReader::Open(const CorpusCase& c) {
  absl::StatusOr<Y4mReader> ref = Y4mReader::Open(c.ref_path);
  if (!ref.ok()) return absl::Status(ref.status().code(), absl::StrCat(c.id, ": ", ref.status().message()));
  absl::StatusOr<Y4mReader> dis = Y4mReader::Open(c.dist_path);
  if (!dis.ok()) return absl::Status(dis.status().code(), absl::StrCat(c.id, ": ", dis.status().message()));
  if (!(ref->geometry() == dis->geometry())) {
    return absl::InvalidArgumentError(absl::StrCat(c.id, ": the reference and distorted geometries differ"));
  }
  return CorpusPairReader(c, *std::move(ref), *std::move(dis));
}

absl::StatusOr<bool> CorpusPairReader::Next(Frame* ref, Frame* dis) {
  if (!status_.ok()) return status_;
  absl::StatusOr<bool> more_ref = ref_.ReadFrame(ref);
  absl::StatusOr<bool> more_dis = dis_.ReadFrame(dis);
  if (!more_ref.ok() || !more_dis.ok()) {
    const absl::Status& bad = !more_ref.ok() ? more_ref.status() : more_dis.status();
    status_ = absl::Status(bad.code(), absl::StrCat(case_.id, " frame ", frames_read_, ": ", bad.message()));
  } else if (*more_ref != *more_dis) {
    status_ = absl::DataLossError(absl::StrCat(case_.id, ": the ", *more_ref ? "distorted" : "reference",
                                               " file ends after ", frames_read_, " frames, the other does not"));
  } else if (!*more_ref && frames_read_ != case_.frames) {
    status_ =
        absl::DataLossError(absl::StrCat(case_.id, ": ", frames_read_, " frames read, cases.json says ", case_.frames));
  }
  if (!status_.ok()) return status_;
  if (*more_ref) ++frames_read_;
  return *more_ref;
}

}  // namespace corpus
}  // namespace exactq
