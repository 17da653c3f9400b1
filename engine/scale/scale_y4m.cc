// scale_y4m IN.y4m WIDTH HEIGHT OUT.y4m: every frame of IN resized by the exact scaler
// (bicubic_scaler.h), same pixel format, written as Y4M.
#include <cstdio>
#include <string>

#include "absl/strings/numbers.h"
#include "engine/io/y4m_reader.h"
#include "engine/io/y4m_writer.h"
#include "engine/scale/bicubic_scaler.h"

int main(int argc, char** argv) {
  using namespace exactq;
  int width = 0, height = 0;
  if (argc != 5 || !absl::SimpleAtoi(argv[2], &width) || !absl::SimpleAtoi(argv[3], &height)) {
    std::fprintf(stderr, "usage: scale_y4m IN.y4m WIDTH HEIGHT OUT.y4m\n");
    return 2;
  }
  absl::StatusOr<Y4mReader> reader = Y4mReader::Open(argv[1]);
  if (!reader.ok()) {
    std::fprintf(stderr, "%s\n", reader.status().ToString().c_str());
    return 1;
  }
  Y4mHeader header = reader->header();
  header.geometry.width = width;
  header.geometry.height = height;
  absl::StatusOr<Y4mWriter> writer = Y4mWriter::Create(argv[4], header);
  if (!writer.ok()) {
    std::fprintf(stderr, "%s\n", writer.status().ToString().c_str());
    return 1;
  }
  for (;;) {
    Frame frame;
    absl::StatusOr<bool> more = reader->ReadFrame(&frame);
    if (!more.ok()) {
      std::fprintf(stderr, "%s\n", more.status().ToString().c_str());
      return 1;
    }
    if (!*more) break;
    absl::StatusOr<Frame> scaled = scale::ScaleBicubic(frame, header.geometry);
    if (!scaled.ok()) {
      std::fprintf(stderr, "%s\n", scaled.status().ToString().c_str());
      return 1;
    }
    if (absl::Status s = writer->WriteFrame(*scaled); !s.ok()) {
      std::fprintf(stderr, "%s\n", s.ToString().c_str());
      return 1;
    }
  }
  if (absl::Status s = writer->Close(); !s.ok()) {
    std::fprintf(stderr, "%s\n", s.ToString().c_str());
    return 1;
  }
  return 0;
}
