#include "replay_rules.hpp"

#include <algorithm>
#include <filesystem>
#include <stdexcept>

#include <toml++/toml.h>

namespace fs = std::filesystem;

namespace probetest {
namespace {

// A glob of '*' only: enough for key names.
bool matches(const char* pattern, const char* text) {
  if (*pattern == '\0') return *text == '\0';
  if (*pattern == '*') return matches(pattern + 1, text) || (*text != '\0' && matches(pattern, text + 1));
  return *pattern == *text && matches(pattern + 1, text + 1);
}

std::vector<std::string> strings(const toml::node_view<const toml::node>& n) {
  std::vector<std::string> out;
  if (const toml::array* a = n.as_array())
    for (const toml::node& v : *a)
      if (auto s = v.value<std::string>()) out.push_back(*s);
  return out;
}

void read_file(const fs::path& file, ReplayRules& out) {
  const toml::table t = toml::parse_file(file.string());
  for (const std::string& p : strings(t["skip_on_gpu"])) {
    out.skip_on_gpu.push_back(p);
    out.skip_on_gpu_why.push_back(t["skip_on_gpu_why"].value_or(std::string()));
  }
  if (const toml::table* also = t["also_run"].as_table())
    for (const auto& [probe, with] : *also) out.also_run[std::string(probe.str())] = with.value_or(std::string());
  if (const toml::array* rules = t["rule"].as_array())
    for (const toml::node& n : *rules) {
      const toml::table& r = *n.as_table();
      ReplayRule rule{r["keys"].value_or(std::string()), r["compare"].value_or(std::string("exact")),
                      r["tolerance"].value_or(0.0), r["why"].value_or(std::string()),
                      r["at_least"].value_or(std::string()), strings(r["slack_from"])};
      static const char* const kinds[] = {"skip", "exact", "cycles", "relative", "each"};
      if (rule.keys.empty() || std::find(std::begin(kinds), std::end(kinds), rule.compare) == std::end(kinds))
        throw std::runtime_error(file.string() + ": a rule needs keys and a known compare (" + rule.compare + ")");
      out.rules.push_back(rule);
    }
}

ReplayRules read_all() {
  ReplayRules out;
  std::vector<fs::path> files;
  for (const auto& d : fs::directory_iterator(fs::path(MEMTOPO_SOURCE_DIR) / "plugins"))
    if (fs::exists(d.path() / "tests/replay.toml")) files.push_back(d.path() / "tests/replay.toml");
  std::sort(files.begin(), files.end());
  for (const fs::path& f : files) read_file(f, out);
  return out;
}

}  // namespace

const ReplayRule* ReplayRules::find(const std::string& key) const {
  for (const ReplayRule& r : rules)
    if (matches(r.keys.c_str(), key.c_str())) return &r;
  return nullptr;
}

const ReplayRules& replay_rules() {
  static const ReplayRules rules = read_all();
  return rules;
}

}  // namespace probetest
