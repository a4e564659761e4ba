// `memtopo diff`: the comparison (tolerance, discrete values, bounds, types, keys in one file
// only, probe versions) through the library, and the command's output against golden files
// in tests/host/golden/diff/ (inputs there too: each *.toml changes one thing of base.toml).
#include <algorithm>
#include <regex>
#include <sstream>

#include <nlohmann/json.hpp>

#include "helpers.hpp"
#include "topology/values/schema.hpp"
#include "topology/base/text_table.hpp"
#include "tools/compare/topology_diff.hpp"

namespace fs = std::filesystem;
using namespace memtopo::host;

namespace {

const fs::path& golden_dir() {
  static const fs::path dir = fs::path(MEMTOPO_HOST_TEST_DIR) / "golden" / "diff";
  return dir;
}

toml::table golden_input(const std::string& name) { return toml::parse_file((golden_dir() / name).string()); }

// A topology of [meta] and the given TOML (element tables, provenance, probes).
toml::table topology(const std::string& body) {
  return toml::parse("[meta]\nschema_version = 1\ntool_version = \"0.1.0\"\n" + body);
}

// `memtopo diff ARGS` run in the golden folder (relative names: no absolute path in the output).
test::CommandResult diff_in_golden_dir(const std::string& args) { return test::run_memtopo("diff " + args, golden_dir()); }

// The output equals golden/diff/<name>; otherwise the actual output is written beside the build.
void check_golden(const std::string& name, const std::string& actual) {
  const fs::path golden = golden_dir() / name;
  REQUIRE(fs::exists(golden));
  if (test::read_file(golden) == actual) return;
  const fs::path written = fs::path(MEMTOPO_BINARY_DIR) / "tests" / ("diff-" + name + ".actual");
  test::write_file(written, actual);
  FAIL("memtopo diff output differs from " << golden << "; actual output written to " << written << ":\n" << actual);
}

}  // namespace

// --------------------------------------------------------------------------- the comparison

TEST_CASE("diff: floats are equal within the relative tolerance, integers only when equal", "[host][diff]") {
  const auto a = topology("[l2]\nlatency_cycles = 200.0\nsize_bytes = 52428800\n");
  const auto near = topology("[l2]\nlatency_cycles = 206.0\nsize_bytes = 52428800\n");     // 6 <= 3 % of 206
  const auto far = topology("[l2]\nlatency_cycles = 207.0\nsize_bytes = 52428800\n");      // 7 > 3 % of 207
  const auto one_more = topology("[l2]\nlatency_cycles = 200.0\nsize_bytes = 52428801\n");  // discrete: exact
  CHECK(diff_topologies(a, a).equal());
  CHECK(diff_topologies(a, near).equal());
  CHECK(diff_topologies(near, a).equal());  // symmetric: relative to the larger value
  const TopologyDiff beyond = diff_topologies(a, far);
  REQUIRE(beyond.differences.size() == 1);
  CHECK(beyond.differences[0].key == "l2.latency_cycles");
  CHECK(beyond.differences[0].kind == DiffKind::value);
  CHECK(*beyond.differences[0].change_percent == Approx(3.5));
  CHECK(beyond.compared == 2);
  const TopologyDiff size = diff_topologies(a, one_more);
  REQUIRE(size.differences.size() == 1);
  CHECK(size.differences[0].key == "l2.size_bytes");
  // The tolerance is an option: 0 % compares floats exactly, 5 % accepts 3.5 %.
  CHECK_FALSE(diff_topologies(a, near, DiffOptions{KeyPolicy(0), {}}).equal());
  CHECK(diff_topologies(a, far, DiffOptions{KeyPolicy(5), {}}).equal());
  CHECK_FALSE(diff_topologies(a, one_more, DiffOptions{KeyPolicy(50), {}}).equal());
}

// No tolerance reaches from an infinite value to a finite one (every one did: inf times a
// tolerance is inf), and equal infinities are equal.
TEST_CASE("diff: an infinite value equals no finite one at any tolerance", "[host][diff]") {
  const auto finite = topology("[l2]\nlatency_cycles = 200.0\n");
  const auto inf = topology("[l2]\nlatency_cycles = inf\n");
  const auto minus_inf = topology("[l2]\nlatency_cycles = -inf\n");
  for (double percent : {3.0, 50.0, 1e6}) {
    CHECK_FALSE(diff_topologies(finite, inf, DiffOptions{KeyPolicy(percent), {}}).equal());
    CHECK_FALSE(diff_topologies(minus_inf, finite, DiffOptions{KeyPolicy(percent), {}}).equal());
    CHECK_FALSE(diff_topologies(inf, minus_inf, DiffOptions{KeyPolicy(percent), {}}).equal());
  }
  CHECK(diff_topologies(inf, inf).equal());
}

TEST_CASE("diff: an integer estimate one unit apart is equal, two units apart is not", "[host][diff]") {
  // A count rounded from a measured rate (an H100's one-warp L2 loads in flight: 25 or 26 in
  // three runs) comes no closer than a unit, 4 % at 25.
  const std::string prov =
      "[provenance.mlp]\nwarp_l2_loads_in_flight = { probe = \"a/b\", confidence = 0.9, bound = \"at_least\", "
      "estimate = true }\n";
  const auto a = topology("[mlp]\nwarp_l2_loads_in_flight = 25\n" + prov);
  const auto b = topology("[mlp]\nwarp_l2_loads_in_flight = 26\n" + prov);
  const auto c = topology("[mlp]\nwarp_l2_loads_in_flight = 27\n" + prov);
  CHECK(diff_topologies(a, b).equal());
  CHECK_FALSE(diff_topologies(a, c).equal());
  // Not declared an estimate: integers are compared exactly.
  CHECK_FALSE(diff_topologies(topology("[mlp]\nwarp_l2_loads_in_flight = 25\n"),
                              topology("[mlp]\nwarp_l2_loads_in_flight = 26\n")).equal());
}

TEST_CASE("diff: arrays element-wise, a changed length, a changed type", "[host][diff]") {
  const auto a = topology("[l2]\nlevels_cycles = [200.0, 480.0]\nways_tried = [8, 16]\npolicy = \"lru\"\n");
  const auto b = topology("[l2]\nlevels_cycles = [201.0, 520.0]\nways_tried = [8, 16, 32]\npolicy = 1\n");
  const TopologyDiff d = diff_topologies(a, b);
  REQUIRE(d.differences.size() == 3);
  CHECK(d.differences[0].key == "l2.levels_cycles");
  CHECK(*d.differences[0].change_percent == Approx(100.0 * 40 / 480));  // the element that changed most
  CHECK(d.differences[1].key == "l2.policy");
  CHECK(d.differences[1].kind == DiffKind::type);
  CHECK(d.differences[2].key == "l2.ways_tried");
  CHECK_FALSE(d.differences[2].change_percent);
  const auto c = topology("[l2]\nlevels_cycles = [201.0, 481.0]\nways_tried = [8, 16]\npolicy = \"lru\"\n");
  CHECK(diff_topologies(a, c).equal());  // each element within 3 %
  // A long array is shown by its first elements, in the key's unit, and its length.
  const auto long_array = topology("[l2]\nvictim_fractions = [0.0637255, 0.0833333, 0.0490196, 0.1, 0.2, 0.3, 0.4, "
                                   "0.5, 0.6, 0.7, 0.8, 0.9]\n");
  const std::string text = render_diff_text(diff_topologies(a, long_array), diff_side("a", a), diff_side("b", long_array));
  INFO(text);
  CHECK(text.find("  l2.victim_fractions = [6.4 %, 8.3 %, 4.9 %, 10 %, ... 12 values]\n") != std::string::npos);
  CHECK(text.find("  l2.levels_cycles = [200.0 cyc, 480.0 cyc]\n") != std::string::npos);
  // An integer and a float of one value are the same number, compared as floats.
  CHECK(diff_topologies(topology("[l1d]\nlatency_cycles = 33\n"), topology("[l1d]\nlatency_cycles = 33.5\n")).equal());
}

TEST_CASE("diff: a changed bound is a difference, shown as >= and <=", "[host][diff]") {
  const std::string values = "[l1d]\nsize_bytes = 245760\n";
  const auto exact = topology(values);  // no [provenance]: exact
  const auto at_least = topology(values + "[provenance.l1d]\nsize_bytes = { probe = \"a/b\", confidence = 1.0, bound = \"at_least\" }\n");
  const TopologyDiff d = diff_topologies(exact, at_least);
  REQUIRE(d.differences.size() == 1);
  CHECK(d.differences[0].kind == DiffKind::bound);
  CHECK(d.differences[0].a_bound == "exact");
  CHECK(d.differences[0].b_bound == "at_least");
  const std::string text = render_diff_text(d, diff_side("a.toml", exact), diff_side("b.toml", at_least));
  CHECK(text.find(">= 240 KiB") != std::string::npos);  // in the unit the run's summary uses
  CHECK(text.find("bound exact -> at_least") != std::string::npos);
}

TEST_CASE("diff: keys and tables in one file only, probe versions and statuses (meta never counts)", "[host][diff]") {
  const auto a = topology("[l2]\nways = 16\nsets = 8\n[probes.\"p/geometry\"]\nversion = \"1.0.0\"\nstatus = \"ok\"\n"
                          "[probes.\"p/gone\"]\nversion = \"1.0.0\"\nstatus = \"ok\"\n");
  const auto b = topology("created_utc = 2027-01-01T00:00:00Z\n[l2]\nways = 16\n[tma]\nmode = \"bulk\"\n"
                          "[probes.\"p/geometry\"]\nversion = \"1.1.0\"\nstatus = \"ok\"\n");
  const TopologyDiff d = diff_topologies(a, b);
  CHECK(d.differences.empty());
  REQUIRE(d.only_in_a.size() == 1);
  CHECK(d.only_in_a[0].key == "l2.sets");
  CHECK(d.only_in_a[0].value == 8);
  REQUIRE(d.only_in_b.size() == 1);
  CHECK(d.only_in_b[0].key == "tma.mode");
  CHECK(d.tables_only_in_b == std::vector<std::string>{"tma"});
  REQUIRE(d.probes.size() == 2);
  CHECK(d.probes[0].probe == "p/geometry");
  CHECK(*d.probes[0].b_version == "1.1.0");
  CHECK(d.probes[1].probe == "p/gone");
  CHECK_FALSE(d.probes[1].b_version);
  CHECK_FALSE(d.equal());
  // Only a probe's version differs: still a difference (did anything change?).
  const auto probes_only = diff_topologies(golden_input("base.toml"), golden_input("probe-version.toml"));
  CHECK(probes_only.differences.empty());
  CHECK_FALSE(probes_only.equal());
  CHECK(diff_topologies(golden_input("base.toml"), golden_input("rerun.toml")).equal());
}

TEST_CASE("diff: --only compares the named element tables and the probes that measured them", "[host][diff]") {
  const auto base = golden_input("base.toml");
  const auto changed = golden_input("changed.toml");
  const TopologyDiff l2 = diff_topologies(base, changed, DiffOptions{KeyPolicy(3), {"l2"}});
  for (const auto& d : l2.differences) CHECK(d.key.rfind("l2.", 0) == 0);
  CHECK(l2.differences.size() == 3);  // latency, levels, ways
  // The geometry probe ran with other options in B; not data-cache/l1d-size.
  REQUIRE(l2.probes.size() == 2);
  CHECK(l2.probes[0].probe == "data-cache/l2-geometry");
  CHECK(l2.probes[0].a_options.is_null());
  CHECK(l2.probes[0].b_options == nlohmann::json::parse(R"({"targets": [2, 4]})"));
  CHECK(l2.probes[1].probe == "data-cache/l2-latency");
  const TopologyDiff l1d = diff_topologies(base, changed, DiffOptions{KeyPolicy(3), {"l1d"}});
  CHECK(l1d.differences.size() == 1);  // the size's bound
  REQUIRE(l1d.probes.size() == 1);
  CHECK(*l1d.probes[0].b_status == "not_determinable");
}

TEST_CASE("diff: --only naming a table neither file has, or [meta], is refused", "[host][diff]") {
  const auto base = golden_input("base.toml");
  CHECK_THROWS_WITH(diff_topologies(base, base, DiffOptions{KeyPolicy(3), {"l3"}}),
                    "--only l3: neither file has an element table [l3]; their tables are device, l1d, l2");
  CHECK_THROWS_AS(diff_topologies(base, base, DiffOptions{KeyPolicy(3), {"meta"}}), DiffError);
}

TEST_CASE("diff: the golden inputs are valid topologies", "[host][diff]") {
  for (const char* name : {"base.toml", "rerun.toml", "latency-within.toml", "latency-beyond.toml", "ways.toml",
                           "missing.toml", "probe-version.toml", "bound.toml", "changed.toml"}) {
    INFO(name);
    CHECK(validate_topology(toml_to_json(golden_input(name))).empty());
  }
}

// --------------------------------------------------------------------------- the command

TEST_CASE("diff: text output and exit status match the golden files", "[host][diff]") {
  struct Case {
    const char* b;
    const char* golden;
    int exit_code;
  };
  const Case cases[] = {
      {"rerun.toml", "equal.txt", 0},                 // another date, host and commit: equal
      {"latency-within.toml", "latency-within.txt", 0},  // +2.2 % within 3 %
      {"latency-beyond.toml", "latency-beyond.txt", 1},  // +7.2 %
      {"ways.toml", "ways.txt", 1},                    // a discrete value
      {"missing.toml", "missing.txt", 1},              // a key only in A, a table only in B
      {"probe-version.toml", "probe-version.txt", 1},  // nothing else differs
      {"bound.toml", "bound.txt", 1},                  // at_least -> exact
      {"changed.toml", "changed.txt", 1},              // all of it
  };
  for (const Case& c : cases) {
    INFO("memtopo diff base.toml " << c.b);
    const auto r = diff_in_golden_dir(std::string("base.toml ") + c.b);
    CHECK(r.exit_code == c.exit_code);
    check_golden(c.golden, r.output);
  }
}

TEST_CASE("diff: --tolerance-percent widens the tolerance, --only narrows the comparison", "[host][diff]") {
  const auto wide = diff_in_golden_dir("--tolerance-percent 8 base.toml latency-beyond.toml");
  INFO(wide.output);
  CHECK(wide.exit_code == 0);
  CHECK(wide.output.find("equal within tolerance (12 keys compared, tolerance 8 %)") != std::string::npos);
  const auto l1d = diff_in_golden_dir("--only l1d,device base.toml ways.toml");
  INFO(l1d.output);
  CHECK(l1d.exit_code == 0);  // ways is in [l2]
  CHECK(l1d.output.find("(6 keys compared") != std::string::npos);
}

TEST_CASE("diff: --format json matches the golden file and parses", "[host][diff]") {
  const auto r = diff_in_golden_dir("--format json base.toml changed.toml");
  CHECK(r.exit_code == 1);
  check_golden("changed.json", r.output);
  const auto j = nlohmann::json::parse(r.output);
  CHECK(j["equal"] == false);
  CHECK(j["tolerance_percent"] == 3.0);
  CHECK(j["a"]["file"] == "base.toml");
  CHECK(j["b"]["meta"]["driver_version"] == "13.1");
  CHECK(j["only_in_a"][0]["key"] == "l2.far_latency_cycles");
  CHECK(j["only_in_a"][0]["value"] == 310.2);
  const auto& first = j["differences"][0];
  CHECK(first["key"] == "device.compute_capability");
  CHECK(first["kind"] == "type");
  const auto equal = nlohmann::json::parse(diff_in_golden_dir("--format json base.toml rerun.toml").output);
  CHECK(equal["equal"] == true);
  CHECK(equal["differences"].empty());
  CHECK(equal["b"]["meta"]["host"] == "lab-2");
}

TEST_CASE("diff: unreadable files and bad options exit 2 and say why", "[host][diff]") {
  test::TempDir dir("diff");
  fs::copy_file(golden_dir() / "base.toml", dir / "base.toml");
  test::write_file(dir / "broken.toml", "[meta]\nschema_version = 1\nname = \"unterminated\n");
  test::write_file(dir / "device.toml", "[device]\nsm_count = 8\n");
  struct Case {
    std::string args, message;
  };
  const Case cases[] = {
      {"base.toml missing.toml", "missing.toml: no such file; name a topology file; memtopo diff compares two"},
      {"base.toml broken.toml", "broken.toml:3:"},
      {"base.toml device.toml", "device.toml: not a topology file (no [meta] table)"},
      {"base.toml .", ".: is a folder"},
      {"base.toml", "diff: B is missing: The second topology file (after) (usage: memtopo diff [options] A B)"},
      {"--format yaml base.toml base.toml", "--format"},
      {"--tolerance-percent -1 base.toml base.toml", "--tolerance-percent"},
      {"--tolerance-percent nan base.toml base.toml", "--tolerance-percent: 'nan' is not a percentage from 0 to 100"},
      {"--tolerance-percent 101 base.toml base.toml", "--tolerance-percent: '101' is not a percentage"},
      {"--tolerance-percent 0x10 base.toml base.toml", "--tolerance-percent: '0x10' is not a percentage"},
      {"--only l3 base.toml base.toml", "--only l3: neither file has an element table [l3]"},
      {"--only , base.toml base.toml", "has an empty entry"},
  };
  for (const Case& c : cases) {
    const auto r = test::run_memtopo("diff " + c.args, dir.path);
    INFO("memtopo diff " << c.args << "\n" << r.output);
    CHECK(r.exit_code == 2);
    CHECK(r.output.find(c.message) != std::string::npos);
  }
  const auto syntax = test::run_memtopo("diff base.toml broken.toml", dir.path);
  CHECK(syntax.output.find("TOML syntax error") != std::string::npos);
}

TEST_CASE("diff: the example in docs/host.md is the golden output", "[host][diff][docs]") {
  const std::string doc = test::read_file(fs::path(MEMTOPO_SOURCE_DIR) / "docs" / "host.md");
  const std::string golden = test::read_file(golden_dir() / "changed.txt");
  REQUIRE_FALSE(golden.empty());
  CHECK(doc.find("```text\n" + golden + "```\n") != std::string::npos);
}

TEST_CASE("compare: headline values of three files side by side with ratios, as text, Markdown and CSV",
          "[host][compare]") {
  const fs::path src(MEMTOPO_SOURCE_DIR);
  const std::string files = " '" + (src / "tests/report/inputs/h100/topology.toml").string() + "' '" +
                            (src / "tests/sim/measured/h100-sxm.toml").string() + "' '" +
                            (src / "tests/sim/measured/hopper-like-sim.toml").string() + "'";
  const auto text = test::run_memtopo("compare" + files);
  INFO(text.output);
  REQUIRE(text.exit_code == 0);
  CHECK(text.output.rfind("key ", 0) == 0);
  CHECK(text.output.find("hopper-like-sim.toml / topology.toml") != std::string::npos);
  // The L1 of the simulated Hopper-like device (256 KiB) against the H100's 241 KiB: the values
  // in the first block of columns, the ratios in the next (120 columns at most).
  const auto l1 = text.output.find("\nl1d size ");
  REQUIRE(l1 != std::string::npos);
  const std::string l1_line = text.output.substr(l1 + 1, text.output.find('\n', l1 + 1) - l1 - 1);
  CHECK(l1_line.find("241 KiB") != std::string::npos);
  CHECK(l1_line.find("256 KiB") != std::string::npos);
  const auto l1_ratio = text.output.find("\nl1d size ", l1 + 1);
  REQUIRE(l1_ratio != std::string::npos);
  CHECK(text.output.substr(l1_ratio, text.output.find('\n', l1_ratio + 1) - l1_ratio).find("x1.06") != std::string::npos);
  CHECK(text.output.find("\nprobes ") != std::string::npos);
  std::istringstream lines(text.output);
  for (std::string line; std::getline(lines, line);) CHECK(line.size() <= 120);

  const auto md = test::run_memtopo("compare --format markdown" + files);
  REQUIRE(md.exit_code == 0);
  CHECK(md.output.rfind("| key | topology.toml | h100-sxm.toml | hopper-like-sim.toml |", 0) == 0);
  CHECK(md.output.find("\n|---|---:|---:|---:|---:|---:|\n") != std::string::npos);

  const auto csv = test::run_memtopo("compare --format csv" + files);
  REQUIRE(csv.exit_code == 0);
  // Numbers in the key's unit, a unit column, ratios as numbers.
  CHECK(csv.output.rfind("key,unit,topology.toml,h100-sxm.toml,hopper-like-sim.toml,h100-sxm.toml / topology.toml,", 0) == 0);
  CHECK(csv.output.find("\nl1d.size_bytes,bytes,246784,246784,262144,1,1.062") != std::string::npos);
  CHECK(csv.output.find(" cyc") == std::string::npos);
  // Rates and fractions have their units; a bound keeps its sign and has no ratio (issue 66).
  CHECK(csv.output.find("\nthroughput.l1_read_bytes_per_second,B/s,") != std::string::npos);
  CHECK(csv.output.find("\nthroughput.dram_read_fraction_of_theoretical,fraction,") != std::string::npos);
  CHECK(csv.output.find("\ntlb.level_count,,>=1,>=0,2,bound,bound\n") != std::string::npos);

  // One file: the summary `memtopo run` printed, from the file.
  const auto one = test::run_memtopo("compare '" + (src / "tests/sim/measured/h100-sxm.toml").string() + "'");
  INFO(one.output);
  CHECK(one.exit_code == 0);
  CHECK(one.output.rfind("device ", 0) == 0);
  CHECK(std::regex_search(one.output, std::regex("\nl1d +size [0-9]+ KiB  line [0-9]+ B")));
  CHECK(std::regex_search(one.output, std::regex("\n[0-9]+ ok, [0-9]+ not determinable, [0-9]+ skipped, 0 failed\n$")));
  CHECK(test::run_memtopo("compare").exit_code != 0);
  CHECK(test::run_memtopo("compare --format html" + files).exit_code == 2);
}

TEST_CASE("diff: a configuration key (floor sweeping) is shown, never a difference", "[host][diff]") {
  const std::string prov =
      "[provenance.gpc]\nsm_counts = { probe = \"a/b\", confidence = 1.0, bound = \"exact\", class = \"configuration\" }\n";
  const auto a = topology("[gpc]\nsm_counts = [16, 16, 18, 18]\n" + prov);
  const auto b = topology("[gpc]\nsm_counts = [14, 18, 18, 18]\n" + prov);
  const TopologyDiff d = diff_topologies(a, b);
  CHECK(d.equal());
  REQUIRE(d.not_counted.size() == 1);
  CHECK(d.not_counted[0].key == "gpc.sm_counts");
  CHECK(d.not_counted[0].reason == "configuration");
}

TEST_CASE("diff: an array of integers differs by how many entries changed, not by a percentage", "[host][diff]") {
  test::TempDir dir("diff-index");
  const std::string meta = "[meta]\nschema_version = 1\ntool_version = \"0.1.0\"\ncreated_utc = 2026-11-21T16:00:00Z\n"
                           "backend = \"sim\"\ndevice_spec = \"sim\"\nabi = \"3.3\"\n";
  // A key no probe declares (l2.near_partition_of_sm is configuration: never counted).
  test::write_file(dir / "a.toml", meta + "[l2]\nhome_slice_of_sm = [0, 0, 1, 1]\n");
  test::write_file(dir / "b.toml", meta + "[l2]\nhome_slice_of_sm = [1, 0, 1, 0]\n");
  const auto text = test::run_memtopo("diff a.toml b.toml", dir.path);
  INFO(text.output);
  CHECK(text.exit_code == 1);
  CHECK(test::has(text.output, "2 of 4 entries changed"));
  CHECK_FALSE(test::has(text.output, "%  "));
  const auto j = test::run_memtopo("diff --format json a.toml b.toml", dir.path);
  const auto doc = nlohmann::json::parse(j.output);
  REQUIRE(doc["differences"].size() == 1);
  CHECK(doc["differences"][0]["changed_entries"] == 2);
  CHECK(doc["differences"][0]["relative_change_percent"].is_null());
}

TEST_CASE("diff: two runs of one model compare a key by the model's measured spread", "[host][diff]") {
  test::TempDir dir("diff-spreads");
  const std::string meta = "[meta]\nschema_version = 1\ntool_version = \"0.1.0\"\ncreated_utc = 2026-11-21T16:00:00Z\n"
                           "backend = \"cuda\"\ndevice_spec = \"cuda:0\"\nabi = \"3.4\"\n"
                           "[device]\nname = \"NVIDIA H100 80GB HBM3\"\n";
  // tma.bulk_l2_latency_cycles spreads over 7 % across healthy H100s (host/data/fleet_spreads.toml).
  auto diff_of = [&](const std::string& head, const std::string& options) {
    test::write_file(dir / "a.toml", head + "[tma]\nbulk_l2_latency_cycles = [300.0, 310.0]\n");
    test::write_file(dir / "b.toml", head + "[tma]\nbulk_l2_latency_cycles = [315.0, 310.0]\n");
    return test::run_memtopo("diff " + options + "a.toml b.toml", dir.path);
  };
  const auto r = diff_of(meta, "");
  INFO(r.output);
  CHECK(r.exit_code == 0);
  CHECK(test::has(r.output, "or the measured spread of NVIDIA H100 80GB HBM3 where wider"));
  const auto strict = diff_of(meta, "--tolerance-percent 3 ");  // the user's own
  INFO(strict.output);
  CHECK(strict.exit_code == 1);
  CHECK_FALSE(test::has(strict.output, "measured spread"));
  // A run of some probes (--only) has no [device]: [meta] names the model, as for fleet.
  const std::string only_meta = std::regex_replace(meta, std::regex("\\[device\\]\nname"), "device_name");
  REQUIRE(only_meta.find("[device]") == std::string::npos);
  const auto by_meta = diff_of(only_meta, "");
  INFO(by_meta.output);
  CHECK(by_meta.exit_code == 0);
  CHECK(test::has(by_meta.output, "or the measured spread of NVIDIA H100 80GB HBM3 where wider"));
}

// A file the schema refuses (a provenance entry's `verified` no value it may hold) is named
// with why and ends the command: never a column of dashes and exit 0.
TEST_CASE("compare: a file the schema refuses is named with why, exit 2", "[host][compare]") {
  test::TempDir dir("compare-invalid");
  std::string text = test::read_file(golden_dir() / "base.toml");
  text = std::regex_replace(text, std::regex("bound = \"at_least\" \\}"), "bound = \"at_least\", verified = \"bogus\" }");
  REQUIRE(text.find("bogus") != std::string::npos);
  test::write_file(dir / "bad.toml", text);
  for (const std::string& files : {test::q(dir / "bad.toml"),
                                   test::q(golden_dir() / "base.toml") + " " + test::q(dir / "bad.toml")}) {
    const auto r = test::run_memtopo("compare " + files);
    INFO(r.output);
    CHECK(r.exit_code == 2);
    CHECK(r.output.find("bad.toml") != std::string::npos);
    CHECK(r.output.find("verified") != std::string::npos);
  }
}

TEST_CASE("compare: five files fit 120 columns, the key column in every block", "[host][compare]") {
  const fs::path src(MEMTOPO_SOURCE_DIR);
  test::TempDir dir("compare-five");
  std::string files;
  for (int i = 1; i <= 5; ++i) {
    const fs::path from = src / (i % 2 ? "tests/sim/measured/h100-sxm.toml" : "tests/sim/measured/hopper-like-sim.toml");
    fs::copy_file(from, dir / ("gpu" + std::to_string(i) + ".toml"));
    files += " gpu" + std::to_string(i) + ".toml";
  }
  const auto r = test::run_memtopo("compare" + files, dir.path);
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  size_t blocks = 0;
  std::istringstream lines(r.output);
  for (std::string line; std::getline(lines, line);) {
    CHECK(line.size() <= 120);
    blocks += line.rfind("key ", 0) == 0;
  }
  CHECK(blocks >= 2);
  CHECK(test::has(r.output, "gpu5.toml / gpu1.toml"));
}

TEST_CASE("text tables: columns narrowed to a width, free text wrapped with a hanging indent", "[host][diff]") {
  using memtopo::host::aligned_within;
  using memtopo::host::wrapped_lines;
  std::string long_cell;
  for (int i = 0; i < 8; ++i) long_cell += "xxxxxxxxx/";  // a path: 80 characters
  const std::string t = aligned_within({{"key", "A", "B"}, {"l2.size_bytes", long_cell, long_cell}}, 2, 60);
  std::istringstream lines(t);
  for (std::string line; std::getline(lines, line);) CHECK(line.size() <= 60);
  CHECK(test::has(t, "  l2.size_bytes  xxx"));
  CHECK(std::count(t.begin(), t.end(), 'x') == 144);  // nothing cut: the cells continue below
  CHECK(!test::has(t, "..."));
  // A word with no place to break (an escape) stays whole, wider than its column.
  const std::string escaped = "pipe\\u202eexe" + std::string(30, 'y');
  CHECK(test::has(aligned_within({{"key", "A", "B"}, {"k", escaped, escaped}}, 2, 60), escaped));
  // A column of words breaks between them.
  const std::string words = aligned_within({{"key", "why"}, {"k", "one two three four five six"}}, 0, 20);
  CHECK(words == "key  why\nk    one two three\n     four five six\n");
  // Short rows are left as they are; the key column is never cut.
  CHECK(aligned_within({{"a", "b"}}, 2, 60) == "  a  b\n");
  CHECK(test::has(aligned_within({{long_cell, "b"}}, 0, 40), long_cell));
  CHECK(wrapped_lines("one two three four", 4, 9) == "one two\n    three\n    four");
  CHECK(wrapped_lines("short", 4, 9) == "short");
  CHECK(wrapped_lines("averyveryverylongword next", 2, 9) == "averyveryverylongword\n  next");
}

TEST_CASE("diff: two GPUs' files unlike each other fit 120 columns", "[host][diff]") {
  const fs::path src(MEMTOPO_SOURCE_DIR);
  const auto r = test::run_memtopo("diff '" + (src / "tests/sim/measured/h100-sxm.toml").string() + "' '" +
                                   (src / "tests/sim/measured/hopper-like-sim.toml").string() + "'");
  INFO(r.output);
  CHECK(r.exit_code == 1);
  CHECK(test::has(r.output, "differences:"));
  CHECK(test::has(r.output, "only in A:"));
  std::istringstream lines(r.output);
  for (std::string line; std::getline(lines, line);) CHECK(line.size() <= 120);
}

TEST_CASE("diff: a table in one file only counts all its keys, configuration ones too", "[host][diff]") {
  const std::string prov = "[provenance.gpc]\n"
                           "sm_counts = { probe = \"a/b\", confidence = 1.0, bound = \"exact\", class = \"configuration\" }\n"
                           "index_of_sm = { probe = \"a/b\", confidence = 1.0, bound = \"exact\", class = \"configuration\" }\n";
  const auto a = topology("[gpc]\ncount = 4\nsm_counts = [16, 16]\nindex_of_sm = [0, 1]\nunresolved_sms = 0\n" + prov);
  const auto b = topology("[l1d]\nsize_bytes = 1024\n");
  const std::string text = render_diff_text(diff_topologies(a, b), diff_side("a", a), diff_side("b", b));
  INFO(text);
  CHECK(text.find("  [gpc]  (4 keys)\n") != std::string::npos);
}
