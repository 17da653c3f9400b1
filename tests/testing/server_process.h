// Starts the real exactqd binary on free loopback ports for a test and stops it with
// SIGTERM when destroyed. The ports come from the server's --port_file, so tests
// never guess a port.
//
//   ServerProcess server({"--max_streams=4"});
//   ASSERT_TRUE(server.Start()) << server.log();
//   RunClient({"score", a, b, "--server", server.address()});
#ifndef EXACTQ_TESTS_TESTING_SERVER_PROCESS_H_
#define EXACTQ_TESTS_TESTING_SERVER_PROCESS_H_

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

namespace exactq::testing {

class ServerProcess {
 public:
  explicit ServerProcess(std::vector<std::string> extra_args = {});
  ~ServerProcess();

  // Launches the server and waits (up to 30 s) for its ports.
  bool Start();
  // Sends SIGTERM and waits; returns the exit status (as from waitpid).
  int Stop();
  bool running() const { return pid_ > 0; }
  // Sends a signal (e.g. SIGTERM to start a drain) without waiting.
  void Signal(int signal);
  // Waits up to `seconds` for the process to exit; its exit code, or -1 on timeout.
  int WaitForExit(int seconds);

  std::string address() const { return "127.0.0.1:" + std::to_string(grpc_port_); }
  int grpc_port() const { return grpc_port_; }
  int metrics_port() const { return metrics_port_; }
  // The server's log so far.
  std::string log() const;
  // The server's resident memory (VmRSS) in bytes, 0 if unknown.
  uint64_t resident_bytes() const;
  // A numeric field of /proc/PID/status ("VmHWM", "VmRSS" in kB, "Threads"), 0 if unknown.
  uint64_t proc_status(const std::string& field) const;

 private:
  std::vector<std::string> extra_args_;
  std::string dir_;
  pid_t pid_ = -1;
  int grpc_port_ = 0;
  int metrics_port_ = 0;
};

// Runs a command; returns its exit code and fills *output with stdout+stderr.
int RunCommand(const std::vector<std::string>& argv, std::string* output, const std::string& stdin_path = "");

// Path of a binary built by Bazel, relative to the test's runfiles directory.
std::string ServerBinary();  // server/exactqd
std::string ClientBinary();  // client/exactq

// A fresh empty directory under TEST_TMPDIR.
std::string MakeTempDir(const std::string& prefix);

// A whole file's bytes ("" when it cannot be read).
std::string ReadFile(const std::string& path);

// A double's bit pattern, for exactness checks (== on bits, never a tolerance).
uint64_t DoubleBits(double value);

// GET http://127.0.0.1:port/path; the body, or "" on failure.
std::string HttpGet(int port, const std::string& path);

}  // namespace exactq::testing

#endif  // EXACTQ_TESTS_TESTING_SERVER_PROCESS_H_
