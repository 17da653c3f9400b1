#include "server/client_text.h"

#include <algorithm>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"

namespace exactq::server {

std::string ClientText(std::string_view text, size_t max_bytes) {
  const absl::string_view kept(text.data(), std::min(text.size(), max_bytes));
  if (kept.size() == text.size()) return absl::CHexEscape(kept);
  return absl::StrCat(absl::CHexEscape(kept), "...(", text.size(), " bytes)");
}

}  // namespace exactq::server
