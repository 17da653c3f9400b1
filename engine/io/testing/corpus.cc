#include "engine/io/testing/corpus.h"

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "engine/format/pixel_format.h"

namespace exactq {
namespace corpus {

absl::StatusOr<std::string> FindCorpusDir() {
  const char* dir = std::getenv(kCorpusEnvVar);
  if (dir == nullptr || dir[0] == '\0') {
    return absl::NotFoundError(absl::StrCat(kCorpusEnvVar,
                                            " is not set: export it as the absolute path of the shared corpus "
                                            "(the directory holding cases.json) to run this test"));
  }
  const std::string cases = absl::StrCat(dir, "/cases.json");
  if (!std::ifstream(cases).good()) {
    return absl::NotFoundError(
        absl::StrCat(kCorpusEnvVar, "=", dir, " has no readable ", "cases.json: not the shared corpus"));
  }
  return std::string(dir);
}

absl::StatusOr<nlohmann::json> LoadJsonFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read ", path));
  std::stringstream text;
  text << in.rdbuf();
  nlohmann::json json = nlohmann::json::parse(text.str(), /*cb=*/nullptr,
                                              /*allow_exceptions=*/false);
  if (json.is_discarded()) return absl::DataLossError(absl::StrCat(path, " is not valid JSON"));
  return json;
}

absl::StatusOr<std::vector<CorpusCase>> LoadCorpusCases(const std::string& dir) {
  absl::StatusOr<nlohmann::json> json = LoadJsonFile(absl::StrCat(dir, "/cases.json"));
  if (!json.ok()) return json.status();
  if (!json->contains("cases") || !(*json)["cases"].is_array()) {
    return absl::DataLossError("cases.json has no \"cases\" array");
  }
  std::vector<CorpusCase> cases;
  for (const nlohmann::json& entry : (*json)["cases"]) {
    for (const char* key : {"id", "ref", "dist", "pixfmt"}) {
      if (!entry.contains(key) || !entry[key].is_string()) {
        return absl::DataLossError(absl::StrCat("a case in cases.json lacks \"", key, "\""));
      }
    }
    for (const char* key : {"width", "height", "frames"}) {
      if (!entry.contains(key) || !entry[key].is_number_integer()) {
        return absl::DataLossError(absl::StrCat("a case in cases.json lacks \"", key, "\""));
      }
    }
    CorpusCase c;
    c.id = entry["id"].get<std::string>();
    c.ref_path = absl::StrCat(dir, "/", entry["ref"].get<std::string>());
    c.dist_path = absl::StrCat(dir, "/", entry["dist"].get<std::string>());
    c.geometry.width = entry["width"].get<int>();
    c.geometry.height = entry["height"].get<int>();
    absl::StatusOr<PixelFormat> format = ParsePixelFormat(entry["pixfmt"].get<std::string>());
    if (!format.ok()) return format.status();
    c.geometry.format = *format;
    c.frames = entry["frames"].get<int>();
    cases.push_back(std::move(c));
  }
  return cases;
}

absl::StatusOr<nlohmann::json> LoadPeerScores(const std::string& dir) {
  return LoadJsonFile(absl::StrCat(dir, "/peer_scores.json"));
}

}  // namespace corpus
}  // namespace exactq
