// The quick schema judge (schema_quick.hpp) against the full validator: where it is sure, the
// full validator accepts; on the topologies memtopo wrote it is sure.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <toml++/toml.h>

#include "topology/values/schema.hpp"
#include "topology/values/schema_quick.hpp"

namespace {

namespace fs = std::filesystem;
using namespace memtopo::host;
using nlohmann::json;

const fs::path kTests = fs::path(MEMTOPO_HOST_TEST_DIR).parent_path();

json topology(const fs::path& p) { return toml_to_json(toml::parse_file(p.string())); }

bool quick(const json& doc) { return surely_meets_schema(topology_schema_text(), doc); }
bool full(const json& doc) { return full_schema_errors(topology_schema_text(), doc).empty(); }

// Every value's pointer, containers included.
void pointers(const json& v, const json::json_pointer& at, std::vector<json::json_pointer>& out) {
  out.push_back(at);
  if (v.is_object())
    for (auto it = v.begin(); it != v.end(); ++it) pointers(it.value(), at / it.key(), out);
  if (v.is_array())
    for (size_t k = 0; k < v.size(); ++k) pointers(v[k], at / k, out);
}

const std::vector<json>& replacements() {
  static const std::vector<json> r = {
      -1, 0, 1.5, -0.5, 1e300, "text", "", std::string(5000, 'a'), "\xc3\xa9", std::string("a\0b", 3), true, nullptr,
      json::array(), json{1, 2}, json{-1}, json{1.5, 2}, json{"a"}, json{true}, json{"a", 1}, json::object(),
      json{{"x", 1}}, json(uint64_t(1) << 63), "exact", "at_least", "ok", "failed", "counters", "identity", "a/b",
      "a//b", "2026-11-23T05:22:06Z", "13.0"};
  return r;
}

const std::vector<std::string> kSuffixes = {"X", ".", "_bytes", "_cycles", "_s", "/", "_mhz", "-", "~1"};

}  // namespace

TEST_CASE("schema quick: sure of each topology memtopo wrote, as the full validator is", "[host][schema_quick]") {
  for (const auto& p : {kTests / "report/inputs/h100/topology.toml", kTests / "sim/measured/h100-sxm.toml",
                        kTests / "sim/measured/hopper-like-sim.toml", kTests / "host/golden/basic.toml"}) {
    INFO(p.string());
    const json doc = topology(p);
    CHECK(quick(doc));
    CHECK(full(doc));
  }
}

TEST_CASE("schema quick: never sure of a document the full validator refuses", "[host][schema_quick]") {
  std::vector<json> seeds = {topology(kTests / "host/golden/basic.toml"),
                             topology(kTests / "python/reader-corpus/good/plain.toml")};
  seeds[0]["probes"].begin()->operator[]("absent") = json{{"l1d.ways", "not measured"}};
  std::mt19937 rng(64);
  auto pick = [&](size_t n) { return std::uniform_int_distribution<size_t>(0, n - 1)(rng); };
  int sure = 0, refused = 0;
  for (int round = 0; round < 1500; ++round) {
    json doc = seeds[pick(seeds.size())];
    for (int edits = 1 + int(pick(2)); edits > 0; --edits) {
      std::vector<json::json_pointer> all;
      pointers(doc, json::json_pointer(), all);
      const auto at = all[1 + pick(all.size() - 1)];
      const auto parent = at.parent_pointer();
      switch (pick(4)) {
        case 0: doc[at] = replacements()[pick(replacements().size())]; break;
        case 1:
          if (doc[parent].is_object()) doc[parent].erase(at.back());
          break;
        case 2:
          if (doc[parent].is_object()) {
            json moved = doc[at];
            doc[parent].erase(at.back());
            doc[parent][at.back() + kSuffixes[pick(kSuffixes.size())]] = std::move(moved);
          }
          break;
        default:
          if (doc[at].is_object()) doc[at]["extra" + kSuffixes[pick(kSuffixes.size())]] = replacements()[pick(replacements().size())];
      }
    }
    const bool q = quick(doc), f = full(doc);
    if (q && !f) FAIL_CHECK("sure of a document the full validator refuses:\n" << doc.dump(1));
    sure += q;
    refused += !f;
  }
  // Both kinds occur: the judge is sure of many edits and the validator refuses many.
  CHECK(sure > 200);
  CHECK(refused > 200);
}
