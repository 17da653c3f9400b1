// Writers for a finished scoring run: libvmaf-shaped JSON, CSV (one row per frame)
// and a readable table. Every number is written in the shortest form that parses
// back to the same double bits; non-finite values are written as JSON null (as
// libvmaf does) and as "nan"/"inf"/"-inf" in CSV.
#ifndef EXACTQ_CLIENT_REPORT_H_
#define EXACTQ_CLIENT_REPORT_H_

#include <string>
#include <vector>

#include "exactq/v1/exactq.pb.h"

namespace exactq::client {

struct ScoringRun {
  v1::StreamAccepted accepted;
  std::vector<v1::FrameResult> frames;
  v1::StreamSummary summary;
};

// The shortest decimal that round-trips to the same bits; "null" when not finite.
std::string JsonNumber(double value);

std::string ToJson(const ScoringRun& run);
std::string ToCsv(const ScoringRun& run);
std::string ToTable(const ScoringRun& run);

}  // namespace exactq::client

#endif  // EXACTQ_CLIENT_REPORT_H_
