// Admission control for concurrent calls: a limit over all peers and one per peer
// (a peer is its address without the port, so one farm host with many connections
// counts once). A Ticket releases its slot when destroyed.
#ifndef EXACTQ_SERVER_STREAM_ADMISSION_H_
#define EXACTQ_SERVER_STREAM_ADMISSION_H_

#include <condition_variable>
#include <functional>
#include <map>
#include <mutex>
#include <string>

#include "absl/status/statusor.h"

namespace exactq::server {

class StreamAdmission {
 public:
  class Ticket {
   public:
    Ticket(Ticket&& other) noexcept : owner_(other.owner_), peer_(std::move(other.peer_)) { other.owner_ = nullptr; }
    Ticket& operator=(Ticket&&) = delete;
    ~Ticket();

   private:
    friend class StreamAdmission;
    Ticket(StreamAdmission* owner, std::string peer) : owner_(owner), peer_(std::move(peer)) {}
    StreamAdmission* owner_;
    std::string peer_;
  };

  // `limit_name` is the setting named in errors ("max_streams", "max_cpu_streams").
  StreamAdmission(uint32_t max_total, uint32_t max_per_peer, std::string limit_name = "max_streams")
      : max_total_(max_total), max_per_peer_(max_per_peer), limit_name_(std::move(limit_name)) {}

  // RESOURCE_EXHAUSTED naming the limit when either is reached.
  absl::StatusOr<Ticket> Admit(const std::string& grpc_peer);
  // Waits while either limit is reached; CANCELLED once give_up() returns true (asked
  // every 100 ms).
  absl::StatusOr<Ticket> AdmitWhenFree(const std::string& grpc_peer, const std::function<bool()>& give_up);
  uint32_t active() const;
  bool saturated() const;

  // "ipv4:10.0.0.7:53122" -> "ipv4:10.0.0.7"; "ipv6:[::1]:5000" -> "ipv6:[::1]".
  static std::string PeerHost(const std::string& grpc_peer);

 private:
  void Release(const std::string& peer);

  const uint32_t max_total_;
  const uint32_t max_per_peer_;
  const std::string limit_name_;
  mutable std::mutex mutex_;
  std::condition_variable released_;
  uint32_t total_ = 0;
  std::map<std::string, uint32_t> per_peer_;
};

}  // namespace exactq::server

#endif  // EXACTQ_SERVER_STREAM_ADMISSION_H_
