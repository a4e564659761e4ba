// Disk full (issue 18, case 5), injected with a file size limit (RLIMIT_FSIZE, SIGXFSZ
// ignored): writes to regular files fail with EFBIG once they pass the limit, pipes do not.
// The journal's message must name exactly the probes it lacks, and the topology held in
// memory must land somewhere (here: stdout, the last resort) instead of being dropped.
#include <set>
#include <sstream>

#include "helpers.hpp"
#include "run/output/journal.hpp"
#include "run_helpers.hpp"
#include "run/output/run_output.hpp"

namespace fs = std::filesystem;

namespace {

// The probe names after "the results of " up to " are not in it".
std::set<std::string> listed_as_missing(const std::string& log) {
  const std::string from = "the results of ", to = " are not in it";
  const auto a = log.find(from);
  if (a == std::string::npos) return {};
  const auto b = log.find(to, a);
  std::set<std::string> out;
  std::stringstream names(log.substr(a + from.size(), b - a - from.size()));
  for (std::string n; std::getline(names, n, ',');) out.insert(n.substr(n.find_first_not_of(' ')));
  return out;
}

std::set<std::string> journaled(const fs::path& journal) {
  std::set<std::string> out;
  std::stringstream lines(test::read_file(journal));
  for (std::string line; std::getline(lines, line);) {
    const auto j = nlohmann::json::parse(line, nullptr, false);
    if (!j.is_discarded() && j.contains("probe")) out.insert(j["probe"].get<std::string>());
  }
  return out;
}

}  // namespace

TEST_CASE("output failure: the journal names the probes it lacks, the topology goes to a fallback",
          "[host][output][diskfull]") {
  test::TempDir dir("out-full");
  const auto out = dir / "t.toml";
  // 1 KiB per file: the journal's header and first record fit, the rest and the output do not;
  // one probe at a time, so that the first record is the first probe's.
  const std::string cmd = "trap \"\" XFSZ; ulimit -f 1; cd " + dir.path.string() + " && TMPDIR=" + dir.path.string() +
                          " \"$EXE\" run --device sim --jobs 1 --only t-basic --plugin-path " +
                          test::plugin_set("good").string() + " -o t.toml 2>&1";
  const auto r = test::run_shell_stdout(cmd);
  INFO(r.output);
  CHECK(r.exit_code == 1);
  const auto missing = listed_as_missing(r.output);
  const auto in_journal = journaled(memtopo::host::journal_path_for(out));
  CHECK_FALSE(missing.empty());
  for (const auto& p : missing) CHECK(in_journal.count(p) == 0);
  std::set<std::string> all = missing;
  all.insert(in_journal.begin(), in_journal.end());
  CHECK(all == std::set<std::string>{"t-basic/consumer", "t-basic/rogue", "t-basic/source"});
  CHECK(in_journal.count("t-basic/source") == 1);
  CHECK(r.output.find("could not be written (cannot write journal ") != std::string::npos);
  // Neither the output, NAME.partial.toml nor $TMPDIR took it: stdout did.
  CHECK(r.output.find("wrote the topology to stdout instead") != std::string::npos);
  CHECK(r.output.find("[probes.\"t-basic/source\"]") != std::string::npos);
  CHECK(r.output.find("fallback failed: cannot write t.partial.toml") != std::string::npos);
  CHECK_FALSE(fs::exists(out));
}

// What the host would write must pass its own check; a text that fails is never written, the
// earlier output stays, and the exit status says so. Reached here through a Meta the writer
// refuses (an invalid created_utc), since probes' results are checked as they are stored.
TEST_CASE("output check: a topology that fails the host's own check is not written", "[run][output]") {
  namespace cli = memtopo::host::cli;
  test::TempDir dir("invalid-output");
  const fs::path out = dir / "t.toml";
  test::write_file(out, "# an earlier complete output\n");
  RunRequest args;
  args.output = out.string();
  args.quiet = true;
  const cli::OutputTarget target = cli::resolve_output(args.output);
  memtopo::host::Meta meta = memtopo::host::default_meta();
  meta.created_utc = "yesterday";
  memtopo::host::RunReport report;
  memtopo::host::ProbeOutcome o;
  o.probe = "t-basic/source";
  o.status = memtopo::host::Status::Ok;
  report.outcomes.push_back(o);
  const cli::JournalState no_journal;
  const cli::JournalRecorder recorder(nullptr);
  const int status = cli::finish(args, target, memtopo::host::Plan{}, meta, report, no_journal, recorder);
  CHECK(status == 1);
  CHECK(test::read_file(out) == "# an earlier complete output\n");
  CHECK_FALSE(fs::exists(dir / "t.partial.toml"));
}

// Under a file-size limit with SIGXFSZ at its default (a shell's `ulimit -f`, no trap): memtopo
// ignores the signal itself, so each command ends with a message and exit 1, not by the
// signal; the earlier output stays and no temporary file is left beside it.
TEST_CASE("file-size limit: each writer says so, the earlier output stays, no temporary file",
          "[host][output][diskfull]") {
  test::TempDir dir("out-fsize");
  const std::string topology = (fs::path(MEMTOPO_SOURCE_DIR) / "tests/sim/measured/h100-sxm.toml").string();
  const std::vector<std::pair<std::string, std::string>> commands = {
      {"out.csv", "export -o out.csv \"" + topology + "\""},
      {"out.svg", "draw -o out.svg \"" + topology + "\""},
      {"out.html", "report -o out.html \"" + topology + "\""},
      {"out.toml", "run --device sim --only device-info -o out.toml"}};
  for (const auto& [name, command] : commands) {
    test::write_file(dir / name, "earlier\n");
    const auto r = test::run_shell_stdout("ulimit -f 2; cd " + dir.path.string() + " && TMPDIR=" +
                                          dir.path.string() + " \"$EXE\" " + command + " 2>&1");
    INFO(command << "\n" << r.output);
    if (name == "out.svg" && test::has(r.output, "matplotlib")) continue;  // no matplotlib: said so
    CHECK(r.exit_code == 1);
    CHECK((test::has(r.output, "File too large") || test::has(r.output, "was not written")));
    if (name != "out.toml") CHECK(test::read_file(dir / name) == "earlier\n");
    for (const auto& e : fs::directory_iterator(dir.path))
      CHECK(e.path().filename().string().find(".tmp.") == std::string::npos);
  }
}

TEST_CASE("file-size limit 0: the run stops before measuring and leaves no empty lock file",
          "[host][output][diskfull]") {
  test::TempDir dir("out-fsize0");
  const auto r = test::run_shell_stdout("ulimit -f 0; cd " + dir.path.string() +
                                        " && \"$EXE\" run --device sim --only device-info -o t.toml 2>&1");
  INFO(r.output);
  CHECK(r.exit_code == 2);
  CHECK(test::has(r.output, "cannot write the lock file"));
  CHECK(fs::is_empty(dir.path));
}

TEST_CASE("file-size limit 0: a run of several devices says it wrote no topology", "[host][output][diskfull][fleet]") {
  test::TempDir dir("out-fsize-fleet");
  const auto r = test::run_shell_stdout("ulimit -f 0; cd " + dir.path.string() +
                                        " && \"$EXE\" run -q --device sim,sim --only device-info -o out/ 2>&1");
  INFO(r.output);
  CHECK(r.exit_code == 2);
  CHECK(test::has(r.output, "2 GPU(s) in "));
  CHECK(test::has(r.output, "; wrote no topology into out/"));
  const auto ok = test::run_shell_stdout("cd " + dir.path.string() +
                                         " && \"$EXE\" run -q --device sim,sim --only device-info -o out/ 2>&1");
  CHECK(ok.exit_code == 0);
  CHECK(test::has(ok.output, "; wrote out/"));
}
