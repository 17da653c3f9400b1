// `exactq verify`: the golden pairs of the self-check (engine/golden) scored through a
// server, every output's bits compared with the committed golden values for the
// definition version the server reports. Once on the CPU (backend cpu), then, when
// the server has usable GPUs, once per GPU with backend auto (the server's device
// pool hands new calls to its GPUs in turn; inputs a GPU does not take come back from
// the CPU, and are compared too).
#ifndef EXACTQ_CLIENT_VERIFY_H_
#define EXACTQ_CLIENT_VERIFY_H_

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "client/score_client.h"

namespace exactq::client {

struct VerifyReport {
  int answers = 0;
  std::map<std::string, int> outputs_by_device;  // "cpu", "cuda:0" -> outputs compared
  std::vector<std::string> differences;          // one line each
  bool ok() const { return differences.empty() && answers > 0; }
};

absl::StatusOr<VerifyReport> Verify(const ConnectionOptions& connection);

}  // namespace exactq::client

#endif  // EXACTQ_CLIENT_VERIFY_H_
