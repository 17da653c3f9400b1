// Writers for a ladder run: JSON (libvmaf's frame shape inside each rendition), CSV
// (one row per rendition and frame) and the console's one line per rendition. Numbers
// keep every bit as in report.h.
//
// JSON: {"version", "job_id", "metric_versions", "scaler_version",
//        "reference": {"source", "width", "height", "decoder"},
//        "renditions": [{"source", "width", "height", "scaled", "decoder", "bytes",
//                        "frames": [...], "pooled_metrics": {...}, "totals": {...},
//                        "complete": true} or {..., "complete": false, "error": "..."}],
//        "complete": true}
#ifndef EXACTQ_CLIENT_LADDER_REPORT_H_
#define EXACTQ_CLIENT_LADDER_REPORT_H_

#include <string>

#include "client/ladder_client.h"

namespace exactq::client {

std::string LadderToJson(const LadderRun& run);
// A run that failed as a whole: what was answered, "complete": false and the error.
std::string LadderToJson(const LadderRun& run, const std::string& error);
std::string LadderToCsv(const LadderRun& run);
// One line per rendition: its index, source, size (and whether it was scaled), bytes
// when known, frames and each output's mean (or its error).
std::string LadderToTable(const LadderRun& run, int precision);

}  // namespace exactq::client

#endif  // EXACTQ_CLIENT_LADDER_REPORT_H_
