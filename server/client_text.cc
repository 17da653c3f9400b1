#include "server/client_text.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "fmt/format.h"

namespace exactq::server {

namespace {

// Control characters, DEL and bytes above ASCII as \xNN, a backslash doubled; quotes
// and every other printable character as they are.
std::string Escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else if (byte < 0x20 || byte >= 0x7f) {
      out += fmt::format("\\x{:02x}", byte);
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace

std::string ClientText(std::string_view text, size_t max_bytes) {
  const std::string_view kept = text.substr(0, std::min(text.size(), max_bytes));
  if (kept.size() == text.size()) return Escape(kept);
  return absl::StrCat(Escape(kept), "...(", text.size(), " bytes)");
}

}  // namespace exactq::server
