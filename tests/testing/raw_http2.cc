#include "tests/testing/raw_http2.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

namespace exactq::testing {

namespace {

constexpr uint8_t kHeaders = 0x1, kRstStream = 0x3, kSettings = 0x4, kContinuation = 0x9;
constexpr uint8_t kEndHeaders = 0x4;

// An HPACK string literal, no Huffman coding (lengths below 127 only here).
std::string Literal(const std::string& text) { return std::string(1, static_cast<char>(text.size())) + text; }

}  // namespace

RawHttp2Connection::RawHttp2Connection(int port) {
  fd_ = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd_, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0) {
    close(fd_);
    fd_ = -1;
    return;
  }
  const int one = 1;
  setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  reader_ = std::thread([this] {
    char buffer[65536];
    for (;;) {
      const ssize_t n = recv(fd_, buffer, sizeof(buffer), 0);
      if (n <= 0) return;
      received_ += static_cast<uint64_t>(n);
    }
  });
  Send(std::string("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n") + Frame(kSettings, 0, 0, ""));
}

RawHttp2Connection::~RawHttp2Connection() {
  if (fd_ >= 0) {
    shutdown(fd_, SHUT_RDWR);
    if (reader_.joinable()) reader_.join();
    close(fd_);
  }
}

bool RawHttp2Connection::Send(const std::string& bytes) {
  size_t sent = 0;
  while (sent < bytes.size()) {
    const ssize_t n = send(fd_, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) return false;
    sent += static_cast<size_t>(n);
  }
  return true;
}

std::string RawHttp2Connection::Frame(uint8_t type, uint8_t flags, uint32_t stream, const std::string& payload) {
  std::string frame;
  const uint32_t length = static_cast<uint32_t>(payload.size());
  frame += static_cast<char>(length >> 16);
  frame += static_cast<char>(length >> 8);
  frame += static_cast<char>(length);
  frame += static_cast<char>(type);
  frame += static_cast<char>(flags);
  for (int shift = 24; shift >= 0; shift -= 8) frame += static_cast<char>((stream >> shift) & 0xff);
  return frame + payload;
}

std::string RawHttp2Connection::RequestHeaders(const std::string& path) {
  std::string block;
  block += '\x83';                         // :method POST (static table 3)
  block += '\x86';                         // :scheme http (6)
  block += '\x04' + Literal(path);         // :path, name from the static table (4), not indexed
  block += '\x01' + Literal("localhost");  // :authority (1)
  block += std::string("\x0f\x10", 2) + Literal("application/grpc");  // content-type (31)
  block += '\x00' + Literal("te") + Literal("trailers");
  return block;
}

bool RawHttp2Connection::AckSettings() { return Send(Frame(kSettings, 0x1, 0, "")); }

bool RawHttp2Connection::OpenStreams(const std::string& path, int streams) {
  // One write: gRPC closes a connection that exceeds its stream limit, and frames sent
  // one by one lost that race on a loaded machine (the later writes failed).
  const std::string headers = RequestHeaders(path);
  std::string batch;
  for (int i = 0; i < streams; ++i) {
    batch += Frame(kHeaders, kEndHeaders, next_stream_, headers);
    next_stream_ += 2;
  }
  return Send(batch);
}

bool RawHttp2Connection::RapidReset(const std::string& path, int streams) {
  const std::string headers = RequestHeaders(path);
  const std::string cancel("\x00\x00\x00\x08", 4);  // CANCEL
  std::string batch;
  for (int i = 0; i < streams; ++i) {
    const uint32_t id = next_stream_;
    next_stream_ += 2;
    batch += Frame(kHeaders, kEndHeaders, id, headers);
    batch += Frame(kRstStream, 0, id, cancel);
    if (batch.size() > (64 << 10) || i + 1 == streams) {
      if (!Send(batch)) return false;
      batch.clear();
    }
  }
  return true;
}

bool RawHttp2Connection::ContinuationFlood(const std::string& path, int frames, int frame_bytes) {
  const uint32_t id = next_stream_;
  next_stream_ += 2;
  if (!Send(Frame(kHeaders, 0, id, RequestHeaders(path)))) return false;
  // Header fields "x-pad: aaa..." (literal, not indexed) filling each frame.
  std::string fields;
  const std::string field = '\x00' + Literal("x-pad") + Literal(std::string(100, 'a'));
  while (fields.size() + field.size() <= static_cast<size_t>(frame_bytes)) fields += field;
  const std::string frame = Frame(kContinuation, 0, id, fields);
  std::string batch;
  for (int i = 0; i < frames; ++i) {
    batch += frame;
    if (batch.size() > (256 << 10) || i + 1 == frames) {
      if (!Send(batch)) return false;
      batch.clear();
    }
  }
  return true;
}

}  // namespace exactq::testing
