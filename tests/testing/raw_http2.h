// A bare HTTP/2 client over plaintext TCP for attacks that gRPC's own client will not
// make: thousands of HEADERS each followed at once by RST_STREAM (the rapid-reset
// pattern), and a header block spread over endless CONTINUATION frames. It never
// acknowledges the server's SETTINGS; what the server sends is read and dropped.
//
//   RawHttp2Connection c(port);
//   c.RapidReset("/exactq.v1.Scorer/ScoreStream", 20000);
#ifndef EXACTQ_TESTS_TESTING_RAW_HTTP2_H_
#define EXACTQ_TESTS_TESTING_RAW_HTTP2_H_

#include <atomic>
#include <cstdint>
#include <string>
#include <thread>

namespace exactq::testing {

class RawHttp2Connection {
 public:
  explicit RawHttp2Connection(int port);  // connects to 127.0.0.1:port, sends the preface
  ~RawHttp2Connection();
  bool connected() const { return fd_ >= 0; }

  // `streams` HEADERS for a gRPC call to `path`, each followed by RST_STREAM(CANCEL).
  // False once the server closed the connection.
  bool RapidReset(const std::string& path, int streams);
  // One HEADERS without END_HEADERS, then `frames` CONTINUATION frames of
  // `frame_bytes` of header fields each (never ending the block).
  bool ContinuationFlood(const std::string& path, int frames, int frame_bytes);
  // Acknowledges the server's SETTINGS (gRPC 1.51 enforces its stream limit only once
  // acknowledged).
  bool AckSettings();
  // `streams` HEADERS for calls to `path` that then send nothing (and stay open).
  bool OpenStreams(const std::string& path, int streams);
  // Bytes the server sent so far (read and dropped).
  uint64_t received_bytes() const { return received_.load(); }

 private:
  bool Send(const std::string& bytes);
  std::string Frame(uint8_t type, uint8_t flags, uint32_t stream, const std::string& payload);
  std::string RequestHeaders(const std::string& path);

  int fd_ = -1;
  uint32_t next_stream_ = 1;
  std::atomic<uint64_t> received_{0};
  std::thread reader_;
};

}  // namespace exactq::testing

#endif  // EXACTQ_TESTS_TESTING_RAW_HTTP2_H_
