// Calls to the standard gRPC health and reflection services, made with raw bytes on
// a GenericStub (Debian ships neither .proto file). Their encodings are tiny:
//   grpc.health.v1.HealthCheckRequest{service: ""}   -> empty message
//   HealthCheckResponse{status: SERVING (1)}          -> 08 01
//   ServerReflectionRequest{list_services: "*"}      -> 3a 01 2a
#ifndef EXACTQ_TESTS_TESTING_GRPC_PROBE_H_
#define EXACTQ_TESTS_TESTING_GRPC_PROBE_H_

#include <string>

namespace exactq::testing {

// 1 SERVING, 2 NOT_SERVING, 0 UNKNOWN; -1 when the call failed.
int HealthStatus(const std::string& address);

// The raw ServerReflectionResponse to list_services, or "" on failure. Service
// names appear in it as plain strings.
std::string ReflectionListServices(const std::string& address);

}  // namespace exactq::testing

#endif  // EXACTQ_TESTS_TESTING_GRPC_PROBE_H_
