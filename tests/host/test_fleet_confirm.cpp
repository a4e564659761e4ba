// fleet --confirm (docs/fleet.md, "Confirming a finding"): a flagged GPU's findings measured
// again beside a control; a finding that does not show again is dropped, one that does says so,
// and a GPU of another host or flagged for its state is not measured again. The measurements
// here are files a stand-in runner writes (the simulated round trip is tests/fleet).
#include <regex>

#include <nlohmann/json.hpp>

#include "tools/fleet/fleet_confirm.hpp"
#include "helpers.hpp"

using namespace memtopo::host;
namespace fs = std::filesystem;

namespace {

const std::string& committed() {
  static const std::string text =
      test::read_file(fs::path(MEMTOPO_SOURCE_DIR) / "tests" / "sim" / "measured" / "hopper-like-sim.toml");
  return text;
}

// The committed simulated run with its DRAM read rate scaled by `factor`.
std::string with_dram(double factor) {
  static const std::regex rate("\ndram_read_bytes_per_second = ([0-9.e+]+)\n");
  std::smatch m;
  const std::string& text = committed();
  REQUIRE(std::regex_search(text, m, rate));
  return text.substr(0, size_t(m.position(0))) + "\ndram_read_bytes_per_second = " +
         std::to_string(std::stod(m[1].str()) * factor) + "\n" + text.substr(size_t(m.position(0) + m.length(0)));
}

// Six GPUs of one host, the last one's DRAM read rate 20 % low; the DRAM rates rated by a profile.
struct Fleet {
  test::TempDir dir{"fleet-confirm"};
  FleetOptions options;
  std::vector<std::string> runs;  // the members whose measurement again was asked for
  Fleet() {
    for (int i = 0; i < 6; ++i) test::write_file(dir / ("g" + std::to_string(i) + ".toml"), with_dram(i == 5 ? 0.8 : 1.0));
    options.policy = KeyPolicy::from_profile_text("[keys.\"throughput.dram_*\"]\ntolerance_percent = 3\n", "p.toml");
  }
  FleetReport report() {
    std::vector<std::string> errors;
    FleetReport r = compare_fleet(read_fleet({dir.path.string()}, &errors), options);
    REQUIRE(errors.empty());
    return r;
  }
  // A runner that writes `again` for the flagged GPU, the committed run for the control.
  ConfirmSettings settings(double again) {
    ConfirmSettings s;
    s.this_host = "vm";  // the committed file's [meta].host
    s.folder = dir / kConfirmFolder / "t";
    fs::create_directories(s.folder);
    s.runner = [this, again](const ConfirmRun& run) {
      runs.push_back(fs::path(run.member->file).stem().string() + ":" + run.probes.front());
      const bool flagged = fs::path(run.member->file).stem() == "g5";
      test::write_file(run.output, with_dram(flagged ? again : 1.0));
      return 0;
    };
    return s;
  }
};

size_t member_named(const FleetReport& r, const std::string& stem) {
  for (size_t m = 0; m < r.members.size(); ++m)
    if (fs::path(r.members[m].file).stem() == stem) return m;
  FAIL("no member " << stem);
  return 0;
}

const FleetFinding& dram_finding(const FleetReport& r, size_t m) {
  for (const auto& f : r.gpus[m].findings)
    if (f.key == "throughput.dram_read_bytes_per_second") return f;
  FAIL("no DRAM finding");
  return r.gpus[m].findings.front();
}

}  // namespace

TEST_CASE("fleet --confirm: a deviation that does not show again is dropped", "[fleet][confirm]") {
  Fleet fleet;
  FleetReport r = fleet.report();
  REQUIRE(r.flagged() == 1);
  const size_t odd = member_named(r, "g5");
  const auto lines = confirm_findings(r, fleet.options, fleet.settings(1.0));
  CHECK(r.flagged() == 0);
  const FleetFinding& f = dram_finding(r, odd);
  CHECK_FALSE(f.counts);
  CHECK(f.not_flagged == "not reproduced");
  CHECK(f.confirmation.find("measured again: ") == 0);
  // The GPU and one control, each the probe behind the finding.
  CHECK(fleet.runs == std::vector<std::string>{"g5:global-throughput/streams", "g0:global-throughput/streams"});
  REQUIRE(lines.size() == 1);
  CHECK(lines[0].find("0 confirmed, 1 not reproduced") != std::string::npos);
  INFO(render_fleet_text(r));
  CHECK(render_fleet_text(r).find("(not reproduced: not flagged)") != std::string::npos);
}

TEST_CASE("fleet --confirm: a deviation that shows again stays, confirmed", "[fleet][confirm]") {
  Fleet fleet;
  FleetReport r = fleet.report();
  confirm_findings(r, fleet.options, fleet.settings(0.8));
  CHECK(r.flagged() == 1);
  const FleetFinding& f = dram_finding(r, member_named(r, "g5"));
  CHECK(f.counts);
  CHECK(f.confirmation.find("confirmed in 2 of 2 measurements (again ") == 0);
  CHECK(fleet_to_json(r)["gpus"][member_named(r, "g5")]["findings"][0]["confirmation"] == f.confirmation);
  // Off the other way when measured again: not the same finding.
  Fleet other;
  FleetReport o = other.report();
  confirm_findings(o, other.options, other.settings(1.3));
  CHECK(o.flagged() == 0);
}

TEST_CASE("fleet --confirm: another host's GPU is not measured again", "[fleet][confirm]") {
  Fleet fleet;
  FleetReport r = fleet.report();
  ConfirmSettings elsewhere = fleet.settings(1.0);
  elsewhere.this_host = "another-node";
  confirm_findings(r, fleet.options, elsewhere);
  CHECK(fleet.runs.empty());
  CHECK(r.flagged() == 1);
  CHECK(dram_finding(r, member_named(r, "g5")).confirmation.find("not confirmed: measured on host vm") == 0);
}

TEST_CASE("fleet --confirm: a GPU flagged for its state is confirmed only where it is busy again", "[fleet][confirm]") {
  // A run that recorded another process: its state comes first, its values are not its own.
  auto busy = [](std::string text) {
    text.insert(text.find("[meta.gpu_state]\n") + 17, "start_compute_processes = 2\n");
    return text;
  };
  for (const bool busy_again : {true, false}) {
    INFO("busy again: " << busy_again);
    Fleet fleet;
    test::write_file(fleet.dir / "g5.toml", busy(with_dram(0.8)));
    FleetReport r = fleet.report();
    REQUIRE(r.flagged() == 1);
    const size_t odd = member_named(r, "g5");
    REQUIRE(r.gpus[odd].findings.front().kind == "state");
    ConfirmSettings s = fleet.settings(1.0);
    const ConfirmRunner plain = s.runner;
    s.runner = [&](const ConfirmRun& run) {
      const int rc = plain(run);
      if (busy_again && fs::path(run.member->file).stem() == "g5") test::write_file(run.output, busy(with_dram(0.8)));
      return rc;
    };
    confirm_findings(r, fleet.options, s);
    CHECK(fleet.runs.size() == 2);
    const FleetFinding& state = r.gpus[odd].findings.front();
    if (busy_again) {
      CHECK(r.flagged() == 1);
      CHECK(state.counts);
      CHECK(state.confirmation.find("confirmed in 2 of 2 measurements (again: ") == 0);
      CHECK(dram_finding(r, odd).confirmation == "not confirmed: not idle when measured again");
    } else {  // idle now, and its DRAM as its siblings': a healthy GPU
      CHECK(r.flagged() == 0);
      CHECK(state.not_flagged == "not reproduced");
      CHECK(dram_finding(r, odd).not_flagged == "not reproduced");
    }
  }
}

TEST_CASE("fleet --confirm: measured again with the options the flagged GPU ran with", "[fleet][confirm][options]") {
  // Every file of the fleet ran the streams probe with a series option: the fleet compares them
  // as alike, and both measurements again get that option, not the probe's defaults.
  auto with_series = [](std::string text) {
    return text + "\n[probes.\"global-throughput/streams\".options]\n\"series\" = [\"dram_read\", \"l2_read\"]\n";
  };
  Fleet fleet;
  for (int i = 0; i < 6; ++i)
    test::write_file(fleet.dir / ("g" + std::to_string(i) + ".toml"), with_series(with_dram(i == 5 ? 0.8 : 1.0)));
  FleetReport r = fleet.report();
  REQUIRE(r.flagged() == 1);
  ConfirmSettings s = fleet.settings(1.0);
  const ConfirmRunner plain = s.runner;
  std::vector<std::string> configs;
  s.runner = [&](const ConfirmRun& run) {
    configs.push_back(run.config_text);
    return plain(run);
  };
  confirm_findings(r, fleet.options, s);
  const std::string expected = "[probes.\"global-throughput/streams\"]\n\"series\" = [\"dram_read\", \"l2_read\"]\n";
  CHECK(configs == std::vector<std::string>{expected, expected});
  // The runner writes the options into a config beside its output, as a run reads it.
  const auto again = toml::parse(expected);
  CHECK(again["probes"]["global-throughput/streams"]["series"][1].value<std::string>() == "l2_read");
}

TEST_CASE("fleet: files whose probes ran with other options are compared apart", "[fleet][options]") {
  test::TempDir dir{"fleet-options"};
  const std::string options = "\n[probes.\"global-throughput/streams\".options]\n\"series\" = [\"dram_read\"]\n";
  for (int i = 0; i < 4; ++i) test::write_file(dir / ("g" + std::to_string(i) + ".toml"), committed() + (i < 2 ? options : ""));
  std::vector<std::string> errors;
  const std::vector<FleetMember> members = read_fleet({dir.path.string()}, &errors);
  REQUIRE(errors.empty());
  REQUIRE(members.size() == 4);
  CHECK(members[0].like == members[1].like);
  CHECK(members[2].like == members[3].like);
  CHECK(members[0].like != members[2].like);
  REQUIRE(members[0].probe_options.size() == 1);
  CHECK(members[0].probe_options[0].second == "\"series\" = [\"dram_read\"]\n");
  FleetOptions o;
  const FleetReport r = compare_fleet(members, o);
  CHECK(std::any_of(r.notes.begin(), r.notes.end(), [](const std::string& n) {
    return n.find("probe options") != std::string::npos;
  }));
}
