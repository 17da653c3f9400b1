// Prints the exactq.v1 API surface; `bazel run //proto:dump_api_surface >
// proto/exactq/v1/api_surface.txt` refreshes the committed snapshot after adding fields.
#include <iostream>

#include "api_surface.h"
#include "exactq/v1/exactq.pb.h"

int main() {
  for (const std::string& line : exactq::proto::ApiSurface(*exactq::v1::ScoreRequest::descriptor()->file())) {
    std::cout << line << "\n";
  }
  return 0;
}
