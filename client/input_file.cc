#include "client/input_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace exactq::client {
namespace {

// A stdio stream over a descriptor that first replays `prefix` (the bytes read to
// recognise the input), so nothing is read twice from a pipe.
struct ReplayCookie {
  int fd;
  bool owns_fd;
  std::string prefix;
  size_t replayed = 0;
};

ssize_t ReplayRead(void* cookie, char* buffer, size_t size) {
  auto* c = static_cast<ReplayCookie*>(cookie);
  if (c->replayed < c->prefix.size()) {
    const size_t n = std::min(size, c->prefix.size() - c->replayed);
    std::memcpy(buffer, c->prefix.data() + c->replayed, n);
    c->replayed += n;
    return static_cast<ssize_t>(n);
  }
  while (true) {
    const ssize_t n = ::read(c->fd, buffer, size);
    if (n >= 0 || errno != EINTR) return n;
  }
}

int ReplayClose(void* cookie) {
  auto* c = static_cast<ReplayCookie*>(cookie);
  const int result = c->owns_fd ? ::close(c->fd) : 0;
  delete c;
  return result;
}

constexpr char kY4mSignature[] = "YUV4MPEG2";
constexpr size_t kSignatureBytes = sizeof(kY4mSignature) - 1;

}  // namespace

absl::StatusOr<std::unique_ptr<InputFile>> InputFile::Open(const std::string& path, bool raw_geometry_given) {
  const bool is_stdin = path == "-";
  const int fd = is_stdin ? STDIN_FILENO : ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    const int error = errno;
    const std::string message = absl::StrCat(path, ": ", std::strerror(error));
    return error == ENOENT ? absl::NotFoundError(message) : absl::InvalidArgumentError(message);
  }
  std::unique_ptr<InputFile> input(new InputFile());
  input->name_ = is_stdin ? "stdin" : path;
  struct stat st;
  if (::fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
    if (!is_stdin) ::close(fd);
    return absl::InvalidArgumentError(
        absl::StrCat(path, " is a directory; give a Y4M, raw YUV or encoded video file (or '-' for Y4M on stdin)"));
  }
  const bool regular = ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
  if (regular) input->size_bytes_ = st.st_size;
  auto* cookie = new ReplayCookie{fd, !is_stdin, std::string(), 0};
  // Read the signature's length (or to the end of a shorter input).
  char head[kSignatureBytes];
  size_t got = 0;
  while (got < kSignatureBytes) {
    const ssize_t n = ::read(fd, head + got, kSignatureBytes - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int error = errno;
      ReplayClose(cookie);
      return absl::InvalidArgumentError(absl::StrCat(input->name_, ": ", std::strerror(error)));
    }
    if (n == 0) break;
    got += static_cast<size_t>(n);
  }
  cookie->prefix.assign(head, got);
  if (!is_stdin && regular && ::lseek(fd, 0, SEEK_SET) == 0) {
    // A regular file is read again from its start through a plain stream: glibc then
    // reads a picture straight into the frame, where the replaying stream below copied
    // every byte through its buffer first (a tenth of the client's CPU time at 4K).
    input->stream_ = ::fdopen(fd, "rb");
    if (input->stream_ != nullptr) {
      delete cookie;
    }
  } else {
    cookie_io_functions_t functions = {ReplayRead, nullptr, nullptr, ReplayClose};
    input->stream_ = fopencookie(cookie, "rb", functions);
  }
  if (input->stream_ == nullptr) {
    ReplayClose(cookie);
    return absl::ResourceExhaustedError(absl::StrCat(input->name_, ": cannot open a stream"));
  }
  if (got == kSignatureBytes && std::memcmp(head, kY4mSignature, kSignatureBytes) == 0) {
    input->kind_ = kY4m;
  } else if (raw_geometry_given) {
    input->kind_ = kRaw;
  } else if (absl::EndsWithIgnoreCase(path, ".yuv") || absl::EndsWithIgnoreCase(path, ".raw")) {
    // Named as raw pictures, which carry no geometry: say what is missing rather than
    // have the server fail to find a container.
    return absl::InvalidArgumentError(
        absl::StrCat(input->name_, ": not a Y4M file; for raw YUV give --width, --height and --pixfmt"));
  } else {
    input->kind_ = kEncoded;
  }
  return input;
}

InputFile::~InputFile() {
  if (stream_ != nullptr) std::fclose(stream_);
}

}  // namespace exactq::client
