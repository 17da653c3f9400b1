#include "server/stream_admission.h"

#include <chrono>

#include "absl/strings/str_cat.h"

namespace exactq::server {

StreamAdmission::Ticket::~Ticket() {
  if (owner_ != nullptr) owner_->Release(peer_);
}

std::string StreamAdmission::PeerHost(const std::string& grpc_peer) {
  const size_t colon = grpc_peer.rfind(':');
  const size_t scheme = grpc_peer.find(':');
  if (colon == std::string::npos || colon == scheme) return grpc_peer;
  return grpc_peer.substr(0, colon);
}

absl::StatusOr<StreamAdmission::Ticket> StreamAdmission::Admit(const std::string& grpc_peer) {
  const std::string peer = PeerHost(grpc_peer);
  std::lock_guard<std::mutex> lock(mutex_);
  if (total_ >= max_total_) {
    return absl::ResourceExhaustedError(
        absl::StrCat("the server is at its limit ", limit_name_, "=", max_total_, "; retry later"));
  }
  uint32_t& mine = per_peer_[peer];
  if (mine >= max_per_peer_) {
    return absl::ResourceExhaustedError(
        absl::StrCat("peer ", peer, " is at its limit max_streams_per_peer=", max_per_peer_));
  }
  ++mine;
  ++total_;
  return Ticket(this, peer);
}

absl::StatusOr<StreamAdmission::Ticket> StreamAdmission::AdmitWhenFree(const std::string& grpc_peer,
                                                                       const std::function<bool()>& give_up) {
  const std::string peer = PeerHost(grpc_peer);
  std::unique_lock<std::mutex> lock(mutex_);
  while (total_ >= max_total_ || (per_peer_.count(peer) != 0 && per_peer_[peer] >= max_per_peer_)) {
    if (give_up()) return absl::CancelledError(absl::StrCat("gave up waiting for ", limit_name_));
    released_.wait_for(lock, std::chrono::milliseconds(100));
  }
  ++per_peer_[peer];
  ++total_;
  return Ticket(this, peer);
}

bool StreamAdmission::saturated() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return total_ >= max_total_;
}

uint32_t StreamAdmission::active() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return total_;
}

void StreamAdmission::Release(const std::string& peer) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    --total_;
    auto it = per_peer_.find(peer);
    if (--it->second == 0) per_peer_.erase(it);
  }
  released_.notify_all();
}

}  // namespace exactq::server
