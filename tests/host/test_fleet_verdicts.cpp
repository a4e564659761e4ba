// What a fleet flags and what it only reports (docs/fleet.md, "How a GPU is flagged"): a tie
// has no majority to judge by, a list of another length is structure, a key present on some
// GPUs only comes and goes, a list is judged by its worst element, which the text names, and
// this build's key classes apply to files of any build.
#include <algorithm>

#include <memtopo/abi.h>
#include <nlohmann/json.hpp>

#include "helpers.hpp"
#include "tools/fleet/fleet.hpp"

using namespace memtopo::host;
using json = nlohmann::json;

namespace {

FleetMember gpu(const std::string& host, std::vector<std::pair<std::string, json>> values) {
  FleetMember m;
  m.file = host + ".toml";
  m.host = host;
  m.device = "cuda:0";
  m.model = m.group = "GPU X";
  KeyDeclared rated;  // as a probe's noise model rates it; the tests of rating clear it
  rated.rated = true;
  for (auto& [k, v] : values) m.values.push_back({k, FlatValue{v, "exact", "", rated}});
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
  CHECK(f->absent_reason.empty());
  // Where the file says why (its probe's [probes."..".absent]), the report does.
  m[3].absent = {{"tlb.l1_reach_bytes", "the sweep kept 1 TLB level(s)"}};
  const FleetReport said = compare_fleet(m, FleetOptions{});
  REQUIRE(finding(said, 3, "tlb.l1_reach_bytes"));
  CHECK(finding(said, 3, "tlb.l1_reach_bytes")->absent_reason == "the sweep kept 1 TLB level(s)");
  INFO(render_fleet_text(said));
  CHECK(render_fleet_text(said).find("- (absent: the sweep kept 1 TLB level(s))") != std::string::npos);
  CHECK(fleet_to_json(said)["gpus"][3]["findings"][0]["absent_reason"] == "the sweep kept 1 TLB level(s)");
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

namespace {

// Five GPUs of one model: the last one's L2 latency 10 % higher, declared as `declared` says.
std::vector<FleetMember> latency_fleet(const std::string& model, KeyDeclared declared) {
  std::vector<FleetMember> m;
  for (int i = 0; i < 5; ++i) {
    m.push_back(gpu("n" + std::to_string(i), {{"l2.latency_cycles", i == 4 ? 308.0 : 280.0}}));
    m.back().model = m.back().group = model;
    m.back().values[0].second.declared = declared;
  }
  return m;
}

}  // namespace

TEST_CASE("fleet verdicts: a float flags only where its tolerance is rated, else it is reported", "[fleet]") {
  const FleetReport unrated = compare_fleet(latency_fleet("GPU X", {}), FleetOptions{});
  INFO(render_fleet_text(unrated));
  CHECK(unrated.flagged() == 0);
  const FleetFinding* f = finding(unrated, 4, "l2.latency_cycles");
  REQUIRE(f);
  CHECK(f->not_flagged == "unrated");
  CHECK(*f->deviation_percent == Approx(10.0));
  CHECK(render_fleet_text(unrated).find("+10.0 % (unrated: not flagged)") != std::string::npos);
  // The probe's noise model rates it.
  KeyDeclared rated;
  rated.rated = true;
  CHECK(compare_fleet(latency_fleet("GPU X", rated), FleetOptions{}).flagged() == 1);
  // So does an operator's tolerance for it in a profile; a profile may also unrate a key.
  FleetOptions profiled;
  profiled.policy = KeyPolicy::from_profile_text("[keys.\"l2.latency_cycles\"]\ntolerance_percent = 5\n", "p.toml");
  CHECK(compare_fleet(latency_fleet("GPU X", {}), profiled).flagged() == 1);
  FleetOptions unrating;
  unrating.policy = KeyPolicy::from_profile_text("[keys.\"l2.*\"]\nrated = false\n", "p.toml");
  CHECK(compare_fleet(latency_fleet("GPU X", rated), unrating).flagged() == 0);
  // Sizes and counts are compared exactly: rated without a declaration.
  std::vector<FleetMember> sizes;
  for (int i = 0; i < 4; ++i) {
    sizes.push_back(gpu("n" + std::to_string(i), {{"l2.size_bytes", i == 3 ? 13107200 : 26214400}}));
    sizes.back().values[0].second.declared = {};
  }
  CHECK(compare_fleet(sizes, FleetOptions{}).flagged() == 1);
}

TEST_CASE("fleet verdicts: the shipped table rates a model's keys from enough GPUs and runs", "[fleet]") {
  // The table's models: each of them from at least the minimum, so each rates what it lists.
  for (const char* model : {"NVIDIA H100 80GB HBM3", "NVIDIA H200"}) {
    const ShippedSpreads& table = shipped_spreads(model);
    INFO(model);
    CHECK(table.gpus >= kRatingMinGpus);
    CHECK(table.runs >= kRatingMinRuns);
    CHECK(table.rates());
  }
  // l2.latency_cycles is in the H100's table: rated there, its least tolerance (above 3 %) kept.
  const FleetReport h100 = compare_fleet(latency_fleet("NVIDIA H100 80GB HBM3", {}), FleetOptions{});
  CHECK(h100.flagged() == 1);
  FleetOptions no_table;
  no_table.shipped_spreads = false;
  CHECK(compare_fleet(latency_fleet("NVIDIA H100 80GB HBM3", {}), no_table).flagged() == 0);
  // A table of too few GPUs widens tolerances but rates nothing.
  const KeyPolicy few = KeyPolicy().with_least_tolerances({{"l2.latency_cycles", 4.0}}, false);
  CHECK_FALSE(few.rule("l2.latency_cycles", {}).rated);
  CHECK(few.rule("l2.latency_cycles", {}).tolerance_percent == 4.0);
  CHECK(KeyPolicy().with_least_tolerances({{"l2.latency_cycles", 4.0}}, true).rule("l2.latency_cycles", {}).rated);
  CHECK_FALSE(ShippedSpreads{{}, kRatingMinGpus - 1, 100}.rates());
  CHECK_FALSE(ShippedSpreads{{}, 100, kRatingMinRuns - 1}.rates());
}

TEST_CASE("fleet verdicts: a count of levels found is structure, reported and not flagged", "[fleet]") {
  KeyDeclared structure;
  structure.structure = true;
  std::vector<FleetMember> m;
  for (int i = 0; i < 4; ++i) {
    m.push_back(gpu("n" + std::to_string(i), {{"tlb.level_count", i == 3 ? 3 : 2}}));
    m.back().values[0].second.declared = structure;
  }
  const FleetReport r = compare_fleet(m, FleetOptions{});
  CHECK(r.flagged() == 0);
  const FleetFinding* f = finding(r, 3, "tlb.level_count");
  REQUIRE(f);
  CHECK(f->not_flagged == "structure");
  CHECK(declared_by_flags(MT_KEY_STRUCTURE).structure);
  for (auto& g : m) g.values[0].second.declared = {};  // undeclared: an exact count, flagged
  CHECK(compare_fleet(m, FleetOptions{}).flagged() == 1);
}

TEST_CASE("fleet verdicts: a key declared always written is a finding where it is missing", "[fleet]") {
  KeyDeclared always;
  always.always = true;
  std::vector<FleetMember> m;
  for (int i = 0; i < 4; ++i) m.push_back(gpu("n" + std::to_string(i), {{"l2.size_bytes", 26214400}}));
  for (int i = 0; i < 3; ++i) m[size_t(i)].values.push_back({"dram.latency_cycles", FlatValue{json(530.0), "exact", "", always}});
  const FleetReport r = compare_fleet(m, FleetOptions{});
  CHECK(r.flagged() == 1);
  const FleetFinding* f = finding(r, 3, "dram.latency_cycles");
  REQUIRE(f);
  CHECK(f->kind == "missing");
  CHECK(f->counts);
  CHECK(declared_by_flags(MT_KEY_ALWAYS).always);
  // Present on half the group only: no majority to miss it by, reported.
  m[2].values.pop_back();
  const FleetReport half = compare_fleet(m, FleetOptions{});
  CHECK(half.flagged() == 0);
}

TEST_CASE("method changes: another major version of a key's probe is no difference but a note", "[fleet][diff]") {
  CHECK(method_change("global-throughput/streams", "1.0.0", "2.0.0") == "method changed (global-throughput/streams 1 -> 2)");
  CHECK(method_change("global-throughput/streams", "2.0.0", "2.3.1").empty());
  CHECK(method_change("global-throughput/streams", "", "2.0.0").empty());
  // The committed simulated run, and one of the next major with another DRAM read rate.
  namespace fs = std::filesystem;
  const std::string text =
      test::read_file(fs::path(MEMTOPO_SOURCE_DIR) / "tests" / "sim" / "measured" / "hopper-like-sim.toml");
  const std::string streams = "[probes.\"global-throughput/streams\"]\nversion = \"";
  const size_t at = text.find(streams);
  REQUIRE(at != std::string::npos);
  std::string next = text;
  next.replace(at + streams.size(), 1, "9");  // "2.0.0" -> "9.0.0"
  const std::string rate = "\ndram_read_bytes_per_second = ";
  const size_t r = next.find(rate);
  REQUIRE(r != std::string::npos);
  next.insert(r + rate.size(), "1");  // another rate, as another method reads
  test::TempDir dir("method-change");
  test::write_file(dir / "old.toml", text);
  test::write_file(dir / "new.toml", next);
  const auto d = test::run_memtopo("diff " + test::quoted(dir / "old.toml") + " " + test::quoted(dir / "new.toml"));
  INFO(d.output);
  CHECK(test::has(d.output, "method changed (global-throughput/streams 2 -> 9)"));
  const auto c = test::run_memtopo("compare " + test::quoted(dir / "old.toml") + " " + test::quoted(dir / "new.toml"));
  INFO(c.output);
  CHECK(c.exit_code == 0);
  CHECK(test::has(c.output, "method changed"));  // its cell continues on the lines below
  CHECK(read_fleet_member((dir / "new.toml").string()).probes.size() > 0);
  CHECK(method_change(read_fleet_member((dir / "old.toml").string()), read_fleet_member((dir / "new.toml").string()),
                      "throughput.dram_read_bytes_per_second") == "method changed (global-throughput/streams 2 -> 9)");
}
