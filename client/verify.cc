#include "client/verify.h"

#include <grpcpp/grpcpp.h>

#include <chrono>

#include "absl/strings/str_cat.h"
#include "engine/golden/golden_pairs.h"

namespace exactq::client {

absl::StatusOr<VerifyReport> Verify(const ConnectionOptions& connection) {
  absl::StatusOr<std::shared_ptr<grpc::Channel>> channel = Connect(connection);
  if (!channel.ok()) return channel.status();
  std::unique_ptr<v1::Scorer::Stub> stub = v1::Scorer::NewStub(*channel);
  absl::StatusOr<v1::Capabilities> capabilities = GetCapabilities(connection);
  if (!capabilities.ok()) return capabilities.status();
  int gpus = 0;
  for (const v1::Device& d : capabilities->devices()) gpus += d.healthy() ? 1 : 0;

  VerifyReport report;
  std::vector<v1::Backend> rounds = {v1::BACKEND_CPU};
  for (int i = 0; i < gpus; ++i) rounds.push_back(v1::BACKEND_AUTO);
  for (const v1::Backend backend : rounds) {
    for (const golden::GoldenPair& pair : golden::GoldenPairs()) {
      const Frame reference = golden::MakePicture(pair, false);
      const Frame distorted = golden::MakePicture(pair, true);
      for (const golden::GoldenMetric& metric : pair.metrics) {
        v1::ScorePairRequest request;
        v1::StreamHeader* header = request.mutable_header();
        header->set_job_id(absl::StrCat("exactq verify ", pair.name, " ", metric.name));
        *header->mutable_geometry() = GeometryToWire(pair.geometry);
        v1::MetricRequest* m = header->add_metrics();
        m->set_name(metric.name);
        for (const auto& [key, value] : metric.options) (*m->mutable_options())[key] = value;
        header->set_backend(backend);
        request.set_reference(reference.bytes(), reference.size_bytes());
        request.set_distorted(distorted.bytes(), distorted.size_bytes());
        grpc::ClientContext context;
        context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(60));
        v1::ScorePairResponse response;
        const grpc::Status status = stub->ScorePair(&context, request, &response);
        if (!status.ok()) {
          report.differences.push_back(absl::StrCat(pair.name, " ", metric.name, ": the server answered ",
                                                    status.error_code(), " ", status.error_message()));
          continue;
        }
        ++report.answers;
        int version = 0;
        for (const v1::MetricVersion& v : response.provenance().metrics()) {
          if (v.name() == metric.name) version = v.definition_version();
        }
        std::vector<NamedScore> scores;
        for (const v1::Score& s : response.frame().scores()) scores.push_back({s.name(), s.value()});
        const std::string where = response.frame().backend() == v1::BACKEND_CUDA && !response.frame().device().empty()
                                      ? response.frame().device()
                                      : (response.frame().backend() == v1::BACKEND_CUDA ? "cuda" : "cpu");
        std::vector<golden::Difference> differences;
        report.outputs_by_device[where] += golden::Compare(pair, metric.name, version, scores, where, &differences);
        for (const golden::Difference& d : differences) report.differences.push_back(golden::Describe(d));
      }
    }
  }
  return report;
}

}  // namespace exactq::client
