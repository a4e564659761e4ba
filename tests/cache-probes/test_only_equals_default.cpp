// A key asked for alone is measured as the default run measures it (memtopo issue 49): for
// every headline key of each shipped simulated device, `memtopo run --only KEY` writes the value
// the device's default run wrote. Each probe finds the simulated GPU as it was opened
// (engine::Device::begin_probe), so a difference can only come from the probe's inputs: a key it
// only uses, which the default run measures and --only does not, decides its value.
#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <toml++/toml.h>

#include "../shipped/shipped_run.hpp"
#include "memtopo_run.hpp"

namespace fs = std::filesystem;

namespace {

// Keys ("element.key") by the probe that wrote them, from a topology's provenance: the
// headline keys, or all of them.
std::map<std::string, std::vector<std::string>> keys_by_probe(const toml::table& t, bool headline_only) {
  std::map<std::string, std::vector<std::string>> out;
  if (const toml::table* prov = t["provenance"].as_table())
    for (const auto& [element, keys] : *prov)
      if (const toml::table* kt = keys.as_table())
        for (const auto& [key, p] : *kt)
          if (p.as_table() && (!headline_only || (*p.as_table())["headline"].value_or(false)))
            out[(*p.as_table())["probe"].value_or(std::string())].push_back(std::string(element.str()) + "." +
                                                                             std::string(key.str()));
  return out;
}

// The value of "element.key" as TOML text, or "(absent)".
std::string value_text(const toml::table& t, const std::string& key) {
  const size_t dot = key.find('.');
  const toml::node* n = t.at_path(key.substr(0, dot)).as_table()
                            ? (*t.at_path(key.substr(0, dot)).as_table()).get(key.substr(dot + 1))
                            : nullptr;
  if (!n) return "(absent)";
  std::ostringstream s;
  n->visit([&](const auto& v) { s << v; });
  return s.str();
}

}  // namespace

// Keys of one probe are asked for together: --only with any of them selects that probe and what
// it requires, the same plan as each key alone (host/run/planning/plan.cpp). One run a probe:
// about 5-7 s a device on two cores, beside the default run the other tests share.
TEST_CASE("run --only KEY writes what the default run writes, for every key of each shipped device's probes",
          "[only][sim]") {
  const std::string name = GENERATE("hopper-like", "kepler-like", "pascal-like");
  INFO(name);
  const shipped::Run run = shipped::measured_run(name);
  REQUIRE(fs::exists(run.topology));
  const toml::table a = toml::parse_file(run.topology.string());
  const auto by_probe = keys_by_probe(a, true);
  const auto all_by_probe = keys_by_probe(a, false);
  REQUIRE(by_probe.size() >= 5);
  const fs::path device = probetest::device_file(name + ".toml");
  for (const auto& [probe, keys] : by_probe) {
    std::string only;
    for (const std::string& k : keys) only += (only.empty() ? "" : ",") + k;
    INFO("memtopo run --only " << only << " (" << probe << ")");
    std::string tag = "only-" + name + "-" + probe;
    std::replace(tag.begin(), tag.end(), '/', '-');
    const toml::table b = probetest::run_memtopo(device, tag, only);
    CHECK(b["probes"][probe]["status"].value<std::string>() == a["probes"][probe]["status"].value<std::string>());
    // Every key of the probe, not only those asked for: a value that moves with which other
    // probes ran is a defect wherever it is shown.
    for (const std::string& k : all_by_probe.at(probe)) {
      INFO(k);
      CHECK(value_text(b, k) == value_text(a, k));
    }
    // No headline key of the probe that the default run lacks.
    const auto alone = keys_by_probe(b, true);
    if (auto it = alone.find(probe); it != alone.end())
      for (const std::string& k : it->second) {
        INFO(k << " is written under --only only");
        CHECK(std::find(keys.begin(), keys.end(), k) != keys.end());
      }
  }
}
