// What a fleet flags and what it only reports (docs/fleet.md, "How a GPU is flagged"): a tie
// has no majority to judge by, a list of another length is structure, a key present on some
// GPUs only comes and goes, a list is judged by its worst element, which the text names, and
// this build's key classes apply to files of any build.
#include <algorithm>

#include <memtopo/abi.h>
#include <nlohmann/json.hpp>

#include "helpers.hpp"
#include "memtopo_host/fleet.hpp"

using namespace memtopo::host;
using json = nlohmann::json;

namespace {

FleetMember gpu(const std::string& host, std::vector<std::pair<std::string, json>> values) {
  FleetMember m;
  m.file = host + ".toml";
  m.host = host;
  m.device = "cuda:0";
  m.model = m.group = "GPU X";
  for (auto& [k, v] : values) m.values.push_back({k, FlatValue{v, "exact", "", {}}});
  std::sort(m.values.begin(), m.values.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  return m;
}

const FleetFinding* finding(const FleetReport& r, size_t m, const std::string& key) {
  for (const auto& f : r.gpus[m].findings)
    if (f.key == key) return &f;
  return nullptr;
}

}  // namespace

TEST_CASE("fleet verdicts: a 2-2 tie flags nobody, a 3-1 majority flags the one", "[fleet]") {
  std::vector<FleetMember> m;
  for (int i = 0; i < 4; ++i) m.push_back(gpu("n" + std::to_string(i), {{"tlb.l1_entries", i < 2 ? 16 : 32}}));
  const FleetReport tie = compare_fleet(m, FleetOptions{});
  CHECK(tie.flagged() == 0);
  size_t reported = 0;
  for (size_t g = 0; g < 4; ++g)
    if (const FleetFinding* f = finding(tie, g, "tlb.l1_entries")) {
      CHECK_FALSE(f->counts);
      CHECK(f->not_flagged == "no majority");
      ++reported;
    }
  CHECK(reported == 2);
  CHECK(render_fleet_text(tie).find("(no majority: not flagged)") != std::string::npos);
  m[1].values[0].second.value = 32;  // 16 against three of 32
  const FleetReport one = compare_fleet(m, FleetOptions{});
  CHECK(one.flagged() == 1);
  CHECK(one.gpus[0].flagged());
}

TEST_CASE("fleet verdicts: four DRAM levels against five are structure, reported and not flagged", "[fleet]") {
  std::vector<FleetMember> m;
  for (int i = 0; i < 4; ++i) {
    const bool five = i >= 2;
    m.push_back(gpu("n" + std::to_string(i),
                    {{"spectrum.level_names", five ? json{"l1", "l2", "dram_1", "dram_2", "dram_3"}
                                                   : json{"l1", "l2", "dram_1", "dram_2"}},
                     {"spectrum.level_latencies_cycles", five ? json{32.0, 282.0, 570.0, 755.0, 900.0}
                                                              : json{32.0, 282.0, 570.0, 755.0}}}));
  }
  for (int odd : {-1, 3}) {  // two against two, then three against one
    if (odd >= 0) {
      m[size_t(odd)].values = gpu("x", {{"spectrum.level_names", json{"l1", "l2", "dram_1", "dram_2"}},
                                        {"spectrum.level_latencies_cycles", json{32.0, 282.0, 570.0, 755.0}}})
                                  .values;
    }
    const FleetReport r = compare_fleet(m, FleetOptions{});
    INFO(render_fleet_text(r));
    CHECK(r.flagged() == 0);
    const FleetFinding* f = finding(r, 2, "spectrum.level_latencies_cycles");
    REQUIRE(f);
    CHECK(f->not_flagged == "structure: 5 elements against 4");
  }
}

TEST_CASE("fleet verdicts: a list is judged by its worst element, which the text names", "[fleet]") {
  std::vector<FleetMember> m;
  for (int i = 0; i < 5; ++i) {
    json per_sm = json::array();
    for (int s = 0; s < 132; ++s) per_sm.push_back(300.0 + (s % 2));
    if (i == 4) per_sm[37] = 360.0;
    m.push_back(gpu("n" + std::to_string(i), {{"l2.slice_other_class_hit_latency_cycles", per_sm}}));
  }
  const FleetReport r = compare_fleet(m, FleetOptions{});
  REQUIRE(r.flagged() == 1);
  const FleetFinding* f = finding(r, 4, "l2.slice_other_class_hit_latency_cycles");
  REQUIRE(f);
  REQUIRE(f->element);
  CHECK(*f->element == 37);
  CHECK(f->element_value == 360.0);
  CHECK(f->element_expected == 301.0);
  CHECK(*f->deviation_percent == Approx((360.0 - 301.0) / 301.0 * 100));
  const std::string text = render_fleet_text(r);
  INFO(text);
  CHECK(text.find("[37] 360") != std::string::npos);
  CHECK(text.find("+19.6 %") != std::string::npos);
  const auto j = fleet_to_json(r);
  CHECK(j["gpus"][4]["findings"][0]["element"] == 37);
}

TEST_CASE("fleet verdicts: a key present on some GPUs only comes and goes, reported", "[fleet]") {
  std::vector<FleetMember> m;
  for (int i = 0; i < 4; ++i) m.push_back(gpu("n" + std::to_string(i), {{"l2.size_bytes", 26214400}}));
  for (int i = 0; i < 3; ++i) m[size_t(i)].values.push_back({"tlb.l1_reach_bytes", FlatValue{json(68719476736), "exact", "", {}}});
  const FleetReport r = compare_fleet(m, FleetOptions{});
  CHECK(r.flagged() == 0);
  const FleetFinding* f = finding(r, 3, "tlb.l1_reach_bytes");
  REQUIRE(f);
  CHECK(f->kind == "missing");
  CHECK(f->not_flagged == "comes and goes");
}

TEST_CASE("fleet verdicts: probe statuses without a majority flag nobody", "[fleet]") {
  std::vector<FleetMember> m;
  for (int i = 0; i < 4; ++i) {
    m.push_back(gpu("n" + std::to_string(i), {{"l2.size_bytes", 26214400}}));
    m.back().probes = {{"tlb/levels", i < 2 ? "1.0.0 ok" : "1.0.0 not_determinable"}};
  }
  CHECK(compare_fleet(m, FleetOptions{}).flagged() == 0);
  m[2].probes = {{"tlb/levels", "1.0.0 ok"}};
  const FleetReport r = compare_fleet(m, FleetOptions{});
  CHECK(r.flagged() == 1);
  CHECK(r.gpus[3].flagged());
}

TEST_CASE("fleet verdicts: this build's key classes apply to a file of an older build", "[fleet]") {
  // A committed run of a build before gpc.sm_counts was declared configuration (floor
  // sweeping): its provenance records no class, and today's probes declare one.
  namespace fs = std::filesystem;
  const std::string text =
      test::read_file(fs::path(MEMTOPO_SOURCE_DIR) / "tests" / "sim" / "measured" / "hopper-like-sim.toml");
  REQUIRE(text.find("\nsm_counts = [4, 4]\n") != std::string::npos);
  test::TempDir dir("fleet-old-build");
  for (const char* name : {"a", "b", "c"}) test::write_file(dir / (std::string(name) + ".toml"), text);
  std::string swept = text;
  swept.replace(swept.find("\nsm_counts = [4, 4]\n"), 20, "\nsm_counts = [3, 5]\n");
  test::write_file(dir / "d.toml", swept);
  const auto r = test::run_memtopo("fleet " + test::quoted(dir.path));
  INFO(r.output);
  CHECK(r.exit_code == 0);
  CHECK(test::has(r.output, "gpc.sm_counts"));  // shown under configuration
  // The unit rule itself: a declaration of this build makes the class.
  const KeyPolicy policy = KeyPolicy().with_declarations({{"gpc.sm_counts", declared_by_flags(MT_KEY_CONFIGURATION)}});
  CHECK(policy.rule("gpc.sm_counts", {}).key_class == KeyClass::configuration);
  CHECK(policy.rule("gpc.count", {}).key_class == KeyClass::measurement);
  CHECK(declared_by_flags(MT_KEY_VARIES | MT_KEY_ESTIMATE).varies);
}
