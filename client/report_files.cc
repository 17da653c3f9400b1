#include "client/report_files.h"

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace exactq::client {

namespace {

absl::StatusOr<std::FILE*> OpenOutput(const std::string& path, bool* is_stdout) {
  *is_stdout = path == "-";
  if (path.empty()) return nullptr;
  if (*is_stdout) return stdout;
  std::FILE* f = std::fopen(path.c_str(), "w");
  if (f == nullptr) return absl::InvalidArgumentError(absl::StrCat("cannot write ", path, ": ", std::strerror(errno)));
  return f;
}

}  // namespace

absl::StatusOr<std::unique_ptr<ReportFiles>> ReportFiles::Open(const ReportPaths& paths, std::string job_id,
                                                               FrameSize size) {
  std::unique_ptr<ReportFiles> files(new ReportFiles());
  files->job_id_ = std::move(job_id);
  files->size_ = size;
  for (auto [path, file, is_stdout] : {std::tuple{&paths.json, &files->json_, &files->json_stdout_},
                                       std::tuple{&paths.csv, &files->csv_, &files->csv_stdout_},
                                       std::tuple{&paths.xml, &files->xml_, &files->xml_stdout_}}) {
    absl::StatusOr<std::FILE*> f = OpenOutput(*path, is_stdout);
    if (!f.ok()) return f.status();
    *file = *f;
  }
  return files;
}

ReportFiles::~ReportFiles() {
  std::lock_guard<std::mutex> lock(mutex_);
  CloseAll();
}

void ReportFiles::Put(std::FILE* f, const std::string& text) {
  if (f == nullptr) return;
  if (std::fwrite(text.data(), 1, text.size(), f) != text.size() || std::fflush(f) != 0) write_failed_ = true;
}

void ReportFiles::WriteHeads() {
  if (heads_written_) return;
  heads_written_ = true;
  Put(json_, JsonHead(provenance_, job_id_, accepted_));
  Put(xml_, XmlHead(provenance_, size_));
}

void ReportFiles::Accepted(const v1::StreamAccepted& accepted) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (closed_) return;
  provenance_ = accepted.provenance();
  accepted_ = accepted;
  WriteHeads();
}

void ReportFiles::Frame(const v1::FrameResult& frame) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (closed_) return;
  WriteHeads();
  Put(json_, JsonFrame(frame, frames_ == 0));
  if (frames_ == 0) Put(csv_, CsvHeader(frame));
  Put(csv_, CsvRow(frame));
  Put(xml_, XmlFrame(frame));
  ++frames_;
}

bool ReportFiles::Finish(const ScoringRun& run) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (closed_) return !write_failed_;
  WriteHeads();
  ScoringRun tail;  // JsonTail looks at whether frames were written and at the summary
  tail.summary = run.summary;
  if (frames_ > 0) tail.frames.resize(1);
  Put(json_, JsonTail(tail));
  if (frames_ == 0) Put(csv_, "frame,backend,compute_ms,total_ms\n");
  Put(xml_, XmlTail(run));
  CloseAll();
  return !write_failed_;
}

void ReportFiles::Abort(const std::string& error) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (closed_) return;
  WriteHeads();
  Put(json_, JsonIncompleteTail(frames_, error));
  if (frames_ == 0) Put(csv_, "frame,backend,compute_ms,total_ms\n");
  Put(xml_, XmlIncompleteTail(error));
  CloseAll();
}

void ReportFiles::CloseAll() {
  if (closed_) return;
  closed_ = true;
  for (auto [f, is_stdout] :
       {std::pair{json_, json_stdout_}, std::pair{csv_, csv_stdout_}, std::pair{xml_, xml_stdout_}}) {
    if (f == nullptr) continue;
    if (is_stdout) {
      std::fflush(f);
    } else if (std::fclose(f) != 0) {
      write_failed_ = true;
    }
  }
  json_ = csv_ = xml_ = nullptr;
}

}  // namespace exactq::client
