// make_sample: regenerates the committed sample pair (see sample_pair.h).
//
//   bazel run //tools/make_sample -- [OUTPUT_DIR]
//
// OUTPUT_DIR defaults to the workspace's samples/ under `bazel run` (which sets
// BUILD_WORKSPACE_DIRECTORY), else ./samples.

#include <cstdio>
#include <cstdlib>
#include <string>

#include "tools/make_sample/sample_pair.h"

int main(int argc, char** argv) {
  if (argc > 2) {
    std::fprintf(stderr, "usage: %s [OUTPUT_DIR]\n", argv[0]);
    return 2;
  }
  std::string dir = "samples";
  if (argc == 2) {
    dir = argv[1];
  } else if (const char* workspace = std::getenv("BUILD_WORKSPACE_DIRECTORY")) {
    dir = std::string(workspace) + "/samples";
  }
  const std::string ref_path = dir + "/sample.ref.y4m";
  const std::string dist_path = dir + "/sample.dist.y4m";
  const absl::Status status = exactq::WriteSamplePair(ref_path, dist_path);
  if (!status.ok()) {
    std::fprintf(stderr, "make_sample: %s\n", status.ToString().c_str());
    return 1;
  }
  std::printf("wrote %s and %s\n", ref_path.c_str(), dist_path.c_str());
  return 0;
}
