// The output files of a run (JSON, CSV, libvmaf-shaped XML), written as frames arrive
// so that a failure late in a long job, or SIGINT/SIGTERM, keeps what was scored.
// Every frame is flushed when written. At the end the JSON and XML are closed whole
// ("complete": true), or, after an error, closed with "complete": false and the error;
// the CSV then holds every frame answered so far. Thread-safe: the signal thread may
// abort while the scoring thread writes.
#ifndef EXACTQ_CLIENT_REPORT_FILES_H_
#define EXACTQ_CLIENT_REPORT_FILES_H_

#include <cstdio>
#include <memory>
#include <mutex>
#include <string>

#include "absl/status/statusor.h"
#include "client/report.h"

namespace exactq::client {

struct ReportPaths {
  std::string json;  // "" for none, "-" for stdout
  std::string csv;
  std::string xml;
};

class ReportFiles {
 public:
  // Opens (creates or truncates) every file named.
  static absl::StatusOr<std::unique_ptr<ReportFiles>> Open(const ReportPaths& paths, std::string job_id,
                                                           FrameSize size);
  ~ReportFiles();

  void Accepted(const v1::StreamAccepted& accepted);
  void Frame(const v1::FrameResult& frame);
  // Closes the files whole. False when a write failed (disk full, closed pipe).
  bool Finish(const ScoringRun& run);
  // Closes the files as incomplete, naming the error; later calls do nothing.
  void Abort(const std::string& error);

 private:
  ReportFiles() = default;
  void WriteHeads();  // once, on acceptance or on the first abort
  void Put(std::FILE* f, const std::string& text);
  void CloseAll();

  std::mutex mutex_;
  std::FILE* json_ = nullptr;
  std::FILE* csv_ = nullptr;
  std::FILE* xml_ = nullptr;
  bool json_stdout_ = false, csv_stdout_ = false, xml_stdout_ = false;
  std::string job_id_;
  FrameSize size_;
  v1::Provenance provenance_;
  v1::StreamAccepted accepted_;
  bool heads_written_ = false;
  bool closed_ = false;
  bool write_failed_ = false;
  uint64_t frames_ = 0;
};

}  // namespace exactq::client

#endif  // EXACTQ_CLIENT_REPORT_FILES_H_
