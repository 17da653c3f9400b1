#include "tests/testing/grpc_probe.h"

#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>

#include <chrono>
#include <condition_variable>
#include <mutex>

namespace exactq::testing {

namespace {

std::string Flatten(const grpc::ByteBuffer& buffer) {
  std::vector<grpc::Slice> slices;
  std::string out;
  if (!buffer.Dump(&slices).ok()) return out;
  for (const grpc::Slice& s : slices) out.append(reinterpret_cast<const char*>(s.begin()), s.size());
  return out;
}

// One unary call with raw bytes; false on any failure.
bool RawUnary(const std::string& address, const std::string& method, const std::string& request,
              std::string* response) {
  auto channel = grpc::CreateChannel(address, grpc::InsecureChannelCredentials());
  grpc::GenericStub stub(channel);
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  grpc::Slice slice(request);
  grpc::ByteBuffer send(&slice, 1);
  grpc::ByteBuffer receive;
  std::mutex mutex;
  std::condition_variable done_cv;
  bool done = false;
  grpc::Status status;
  stub.UnaryCall(&context, method, grpc::StubOptions(), &send, &receive, [&](grpc::Status s) {
    std::lock_guard<std::mutex> lock(mutex);
    status = s;
    done = true;
    done_cv.notify_all();
  });
  std::unique_lock<std::mutex> lock(mutex);
  done_cv.wait(lock, [&] { return done; });
  if (!status.ok()) return false;
  *response = Flatten(receive);
  return true;
}

}  // namespace

int HealthStatus(const std::string& address) {
  std::string response;
  if (!RawUnary(address, "/grpc.health.v1.Health/Check", "", &response)) return -1;
  if (response.empty()) return 0;  // status 0 (UNKNOWN) is encoded as nothing
  if (response.size() == 2 && response[0] == 0x08) return response[1];
  return -1;
}

std::string ReflectionListServices(const std::string& address) {
  auto channel = grpc::CreateChannel(address, grpc::InsecureChannelCredentials());
  grpc::GenericStub stub(channel);
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  grpc::CompletionQueue cq;
  void* tag;
  bool ok;
  auto call = stub.PrepareCall(&context, "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo", &cq);
  call->StartCall(reinterpret_cast<void*>(1));
  if (!cq.Next(&tag, &ok) || !ok) return "";
  const std::string request("\x3a\x01\x2a", 3);
  grpc::Slice slice(request);
  grpc::ByteBuffer send(&slice, 1);
  call->WriteLast(send, grpc::WriteOptions(), reinterpret_cast<void*>(2));
  if (!cq.Next(&tag, &ok) || !ok) return "";
  grpc::ByteBuffer receive;
  call->Read(&receive, reinterpret_cast<void*>(3));
  if (!cq.Next(&tag, &ok) || !ok) return "";
  grpc::Status status;
  call->Finish(&status, reinterpret_cast<void*>(4));
  cq.Next(&tag, &ok);
  cq.Shutdown();
  while (cq.Next(&tag, &ok)) {
  }
  return Flatten(receive);
}

}  // namespace exactq::testing
