// Shared by the CPU benchmark programs (bench/*/..._bench.cc): wall and process-CPU
// timing, medians, a description of this CPU, the git commit of the tree, and the
// results file
//   {"benchmark", "device", "commit", "dirty", "input", "results": [{"name", "value", "unit"}]}
// ("input" says which frames or terms were measured).
//
//   bench::Results results("ssim");
//   results.Add("8bit/threads_1_ms", 142.0, "ms");
//   results.WriteJson(path, commit);  // false when the file cannot be written
//
// The commit comes from --commit=SHA / --dirty=true|false when given, else from
// `git rev-parse HEAD` and `git status --porcelain` in the workspace (bazel run sets
// BUILD_WORKSPACE_DIRECTORY) or the working directory.
#ifndef EXACTQ_BENCH_COMMON_CPU_BENCH_H_
#define EXACTQ_BENCH_COMMON_CPU_BENCH_H_

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

namespace exactq {
namespace bench {

inline double Median(std::vector<double> v) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  const size_t m = v.size() / 2;
  return v.size() % 2 ? v[m] : 0.5 * (v[m - 1] + v[m]);
}

inline double Min(const std::vector<double>& v) { return v.empty() ? 0.0 : *std::min_element(v.begin(), v.end()); }

inline double ProcessCpuMs() {
  timespec t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return t.tv_sec * 1e3 + t.tv_nsec * 1e-6;
}

// Wall and process CPU milliseconds of one call.
struct Timing {
  double wall_ms = 0;
  double cpu_ms = 0;
};

template <class Fn>
Timing Time(Fn&& fn) {
  const double cpu0 = ProcessCpuMs();
  const auto t0 = std::chrono::steady_clock::now();
  fn();
  const auto t1 = std::chrono::steady_clock::now();
  return {std::chrono::duration<double, std::milli>(t1 - t0).count(), ProcessCpuMs() - cpu0};
}

// A path's samples over the repetitions.
struct Samples {
  std::vector<double> wall_ms;
  std::vector<double> cpu_ms;
  void Add(const Timing& t) {
    wall_ms.push_back(t.wall_ms);
    cpu_ms.push_back(t.cpu_ms);
  }
  double median() const { return Median(wall_ms); }
  double best() const { return Min(wall_ms); }
  double median_cpu() const { return Median(cpu_ms); }
};

inline int HardwareThreads() { return static_cast<int>(std::max(1u, std::thread::hardware_concurrency())); }

// "AMD EPYC, 2 logical CPUs, avx2" from /proc/cpuinfo (model name, processor count,
// the widest vector flag) and the thread count the library sees.
inline std::string CpuDescription() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  std::string model = "unknown CPU";
  int processors = 0;
  bool avx2 = false;
  bool avx = false;
  bool avx512 = false;
  while (std::getline(in, line)) {
    const size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string key = line.substr(0, colon);
    key.erase(key.find_last_not_of(" \t") + 1);
    std::string value = colon + 2 <= line.size() ? line.substr(colon + 2) : "";
    if (key == "processor") ++processors;
    if (key == "model name" && model == "unknown CPU") model = value;
    if (key == "flags") {
      const std::string flags = " " + value + " ";
      avx512 = avx512 || flags.find(" avx512f ") != std::string::npos;
      avx2 = avx2 || flags.find(" avx2 ") != std::string::npos;
      avx = avx || flags.find(" avx ") != std::string::npos;
    }
  }
  std::string out = model + ", " + std::to_string(processors) + " logical CPUs (/proc/cpuinfo), " +
                    std::to_string(HardwareThreads()) + " hardware threads";
  out += avx512 ? ", avx512f" : avx2 ? ", avx2" : avx ? ", avx" : "";
  return out;
}

// The first three fields of /proc/loadavg ("0.12 0.30 0.41"): other work on the machine
// shows here, and as wall time above CPU time in the one-thread runs.
inline std::string LoadAverage() {
  std::ifstream in("/proc/loadavg");
  std::string a, b, c;
  in >> a >> b >> c;
  return a + " " + b + " " + c;
}

inline std::string RunCommand(const std::string& command) {
  std::string out;
  if (FILE* p = popen(command.c_str(), "r")) {
    char buf[256];
    while (std::fgets(buf, sizeof buf, p) != nullptr) out += buf;
    pclose(p);
  }
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
  return out;
}

struct Commit {
  std::string sha = "unknown";
  bool dirty = false;
};

// From git in the workspace unless the flags gave it (`given_sha` empty: ask git).
inline Commit FindCommit(const std::string& given_sha, int given_dirty /* -1: ask git */) {
  Commit c;
  const char* ws = std::getenv("BUILD_WORKSPACE_DIRECTORY");
  const std::string git = std::string("git -C '") + (ws != nullptr ? ws : ".") + "' ";
  c.sha = given_sha.empty() ? RunCommand(git + "rev-parse HEAD 2>/dev/null") : given_sha;
  if (c.sha.empty()) c.sha = "unknown";
  c.dirty = given_dirty >= 0 ? given_dirty == 1 : !RunCommand(git + "status --porcelain 2>/dev/null").empty();
  return c;
}

// A path as the user meant it: bazel run starts programs in their runfiles, so a
// relative path is taken from the directory bazel was called in.
inline std::string UserPath(const std::string& path) {
  const char* wd = std::getenv("BUILD_WORKING_DIRECTORY");
  if (path.empty() || path[0] == '/' || wd == nullptr) return path;
  return std::string(wd) + "/" + path;
}

inline std::string JsonString(const std::string& s) {
  std::string out = "\"";
  for (char ch : s) {
    if (ch == '"' || ch == '\\') {
      out += '\\';
      out += ch;
    } else if (static_cast<unsigned char>(ch) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", ch);
      out += buf;
    } else {
      out += ch;
    }
  }
  return out + "\"";
}

class Results {
 public:
  explicit Results(std::string benchmark) : benchmark_(std::move(benchmark)) {}

  void Add(const std::string& name, double value, const std::string& unit) { rows_.push_back({name, value, unit}); }
  void set_input(const std::string& input) { input_ = input; }
  // The machine measured, when it is not this CPU (a GPU benchmark names its device).
  void set_device(const std::string& device) { device_ = device; }

  bool WriteJson(const std::string& path, const Commit& commit) const {
    FILE* f = std::fopen(UserPath(path).c_str(), "w");
    if (f == nullptr) return false;
    std::fprintf(f,
                 "{\n  \"benchmark\": %s,\n  \"device\": %s,\n  \"commit\": %s,\n  \"dirty\": %s,\n"
                 "  \"input\": %s,\n  \"results\": [\n",
                 JsonString(benchmark_).c_str(), JsonString(device_.empty() ? CpuDescription() : device_).c_str(),
                 JsonString(commit.sha).c_str(), commit.dirty ? "true" : "false", JsonString(input_).c_str());
    for (size_t i = 0; i < rows_.size(); ++i) {
      std::fprintf(f, "    {\"name\": %s, \"value\": %.9g, \"unit\": %s}%s\n", JsonString(rows_[i].name).c_str(),
                   rows_[i].value, JsonString(rows_[i].unit).c_str(), i + 1 < rows_.size() ? "," : "");
    }
    std::fprintf(f, "  ]\n}\n");
    return std::fclose(f) == 0;
  }

 private:
  struct Row {
    std::string name;
    double value;
    std::string unit;
  };
  std::string benchmark_;
  std::string input_;
  std::string device_;
  std::vector<Row> rows_;
};

// "--name=value": true and *value set when arg is that flag.
inline bool Flag(const char* arg, const char* name, std::string* value) {
  const size_t n = std::strlen(name);
  if (std::strncmp(arg, name, n) != 0 || arg[n] != '=') return false;
  *value = arg + n + 1;
  return true;
}

// -1 unless "true"/"1" (1) or "false"/"0" (0).
inline int ParseBool(const std::string& v) {
  if (v == "true" || v == "1") return 1;
  if (v == "false" || v == "0") return 0;
  return -1;
}

// The flags every benchmark takes for its output: --json=FILE, --commit=SHA,
// --dirty=true|false.
struct OutputFlags {
  std::string json;
  std::string commit;
  int dirty = -1;  // -1: ask git
  // True when arg is one of them (and records it).
  bool Parse(const char* arg) {
    std::string v;
    if (Flag(arg, "--json", &v)) {
      json = v;
    } else if (Flag(arg, "--commit", &v)) {
      commit = v;
    } else if (Flag(arg, "--dirty", &v)) {
      dirty = ParseBool(v);
    } else {
      return false;
    }
    return true;
  }
};

// The end of every benchmark: the load average, the JSON file if asked for, and the exit
// status (1 when a path's bits differed from `reference`, or the file cannot be written).
inline int Finish(const Results& results, const OutputFlags& flags, const Commit& commit, bool bits_ok,
                  const char* reference) {
  std::printf("\nload average (1, 5, 15 min) at the end: %s\n", LoadAverage().c_str());
  if (!flags.json.empty() && !results.WriteJson(flags.json, commit)) {
    std::fprintf(stderr, "cannot write %s\n", flags.json.c_str());
    return 1;
  }
  if (!bits_ok) std::printf("BITS DIFFER from the %s\n", reference);
  return bits_ok ? 0 : 1;
}

}  // namespace bench
}  // namespace exactq

#endif  // EXACTQ_BENCH_COMMON_CPU_BENCH_H_
