// docs/writing-a-probe.md walks through plugins/hopper-dsmem with excerpts of its files: a
// fenced block after `<!-- excerpt: PATH -->` must be lines of PATH, in the file's order, so
// that the walkthrough stays true when the plugin changes.
#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace {

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t");
  return b == std::string::npos ? "" : s.substr(b, s.find_last_not_of(" \t") - b + 1);
}

std::vector<std::string> lines_of(const std::string& path) {
  std::ifstream in(std::string(MEMTOPO_SOURCE_DIR) + "/" + path);
  std::vector<std::string> out;
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

struct Excerpt {
  std::string path;
  size_t line = 0;  // of the marker in the doc
  std::vector<std::string> lines;
};

std::vector<Excerpt> excerpts(const std::string& doc) {
  const std::vector<std::string> lines = lines_of(doc);
  std::vector<Excerpt> out;
  const std::string marker = "<!-- excerpt: ";
  for (size_t i = 0; i < lines.size(); ++i) {
    if (lines[i].rfind(marker, 0) != 0) continue;
    Excerpt e{lines[i].substr(marker.size(), lines[i].find(" -->") - marker.size()), i + 1, {}};
    size_t j = i + 1;
    if (j < lines.size() && trim(lines[j]).rfind("```", 0) == 0) ++j;
    for (; j < lines.size() && trim(lines[j]).rfind("```", 0) != 0; ++j)
      if (!trim(lines[j]).empty()) e.lines.push_back(trim(lines[j]));
    out.push_back(e);
  }
  return out;
}

}  // namespace

TEST_CASE("docs: the walkthrough's excerpts are lines of the plugin's files, in order", "[hopper][docs]") {
  const auto all = excerpts("docs/writing-a-probe.md");
  REQUIRE(all.size() >= 5);
  for (const Excerpt& e : all) {
    INFO("docs/writing-a-probe.md:" << e.line << " excerpt of " << e.path);
    const std::vector<std::string> file = lines_of(e.path);
    REQUIRE_FALSE(file.empty());
    REQUIRE_FALSE(e.lines.empty());
    size_t at = 0;
    for (const std::string& want : e.lines) {
      while (at < file.size() && trim(file[at]) != want) ++at;
      INFO("line not found (after the previous one): " << want);
      CHECK(at < file.size());
      if (at == file.size()) break;
      ++at;
    }
  }
}
