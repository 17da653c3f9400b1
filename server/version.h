// The server's version, reported in every answer's Provenance and in build_info.
#ifndef EXACTQ_SERVER_VERSION_H_
#define EXACTQ_SERVER_VERSION_H_

namespace exactq::server {
inline constexpr char kServerVersion[] = "exactq 0.1.0";
}  // namespace exactq::server

#endif  // EXACTQ_SERVER_VERSION_H_
