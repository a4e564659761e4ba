// The journal, the lock and --resume (issue 18, cases 4 and 6 to 9): an interrupted run
// leaves a complete output untouched, two runs never share an output, resume merges only
// what the same device measured and never drops a journaled result.
#include <signal.h>

#include <cmath>

#include <toml++/toml.h>

#include <nlohmann/json.hpp>

#include "helpers.hpp"
#include "run/output/journal.hpp"
#include "topology/values/value.hpp"
#include "run_helpers.hpp"

namespace fs = std::filesystem;
using memtopo::host::journal_path_for;
using test::quoted;
using test::run_memtopo;

namespace {

using test::kGood;
const std::string kSource = test::journal_record("t-basic/source", "1.2.3", "t.value_bytes", "100");
const std::string kConsumer = test::journal_record("t-basic/consumer", "1.2.3", "t.double_bytes", "7");

// A config that makes t-slow/wait create `marker` when it starts.
fs::path slow_config(const test::TempDir& dir) {
  test::write_file(dir / "slow.toml", "[probes.\"t-slow/wait\"]\nmarker = " +
                                          memtopo::host::toml_string_literal((dir / "started").string()) + "\n");
  return dir / "slow.toml";
}

std::vector<std::string> slow_run(const test::TempDir& dir, const fs::path& out) {
  return {"run", "--device", "sim", "--only", "t-slow", "--plugin-path", test::plugin_set("slow").string(),
          "--config", slow_config(dir).string(), "-o", out.string()};
}

}  // namespace

TEST_CASE("resume: an interrupted run writes NAME.partial.toml and leaves a complete NAME untouched",
          "[host][resume][interrupt]") {
  test::TempDir dir("res-int");
  const auto out = dir / "out.toml";
  test::write_file(out, "# a complete earlier output\n");
  const pid_t pid = test::spawn_memtopo(slow_run(dir, out), dir / "log.txt");
  REQUIRE(test::wait_for_file(dir / "started"));
  ::kill(pid, SIGINT);
  CHECK(test::wait_exit(pid) == 1);
  const std::string log = test::read_file(dir / "log.txt");
  INFO(log);
  CHECK(test::read_file(out) == "# a complete earlier output\n");
  const auto partial = dir / "out.partial.toml";
  REQUIRE(fs::exists(partial));
  CHECK(test::read_file(partial).find("quick_bytes = 1") != std::string::npos);
  CHECK(log.find("wrote what was measured to " + partial.string() + "; " + out.string() + " is untouched") !=
        std::string::npos);
  CHECK(log.find("memtopo run --resume -o " + out.string()) != std::string::npos);
  CHECK(fs::exists(journal_path_for(out)));

  // Resuming completes the output and consumes the journal and the partial file.
  const auto r = run_memtopo("run --resume --device sim --only t-slow --plugin-path " + quoted(test::plugin_set("slow")) +
                             " -o " + quoted(out));
  INFO(r.output);
  CHECK(r.exit_code == 0);
  CHECK(r.output.find("reusing 2 measured probe(s): t-slow/quick, t-slow/wait") != std::string::npos);
  CHECK(test::read_file(out).find("quick_bytes = 1") != std::string::npos);
  CHECK_FALSE(fs::exists(partial));
  CHECK_FALSE(fs::exists(journal_path_for(out)));
}

TEST_CASE("resume: a second run on the same output fails at once, naming the live run", "[host][resume][lock]") {
  test::TempDir dir("res-lock");
  const auto out = dir / "out.toml";
  const pid_t pid = test::spawn_memtopo(slow_run(dir, out), dir / "log.txt");
  REQUIRE(test::wait_for_file(dir / "started"));
  const std::string journal_before = test::read_file(journal_path_for(out));
  const auto second = run_memtopo("run --device sim --only device-info -o " + quoted(out));
  const auto resumed = run_memtopo("run --resume --device sim --only device-info -o " + quoted(out));
  ::kill(pid, SIGINT);
  CHECK(test::wait_exit(pid) == 1);
  INFO(second.output);
  CHECK(second.exit_code == 2);
  CHECK(second.output.find("another memtopo run (pid " + std::to_string(pid) + ") is writing " + out.string() +
                           "; wait for it or pick another -o") != std::string::npos);
  CHECK(resumed.exit_code == 2);
  // The live run's journal was neither replaced nor written to by the others.
  CHECK(test::read_file(journal_path_for(out)).rfind(journal_before, 0) == 0);
  CHECK(test::read_file(journal_path_for(out)).find("device-info") == std::string::npos);
  CHECK_FALSE(fs::exists(dir / "out.toml.lock"));
}

TEST_CASE("resume: the lock file of a run that was killed is taken over", "[host][resume][lock]") {
  test::TempDir dir("res-stale");
  const auto out = dir / "t.toml";
  test::write_file(dir / "t.toml.lock", "999999\n");  // nobody holds the flock
  const auto r = run_memtopo("run --device sim --only device-info -o " + quoted(out));
  INFO(r.output);
  CHECK(r.exit_code == 0);
  CHECK(fs::exists(out));
  CHECK_FALSE(fs::exists(dir / "t.toml.lock"));
}

TEST_CASE("resume: without --resume, an earlier run's journal is kept as .prev", "[host][resume][lock]") {
  test::TempDir dir("res-prev");
  const auto out = dir / "t.toml";
  const std::string earlier = test::journal_header_line() + kSource;
  test::write_file(journal_path_for(out), earlier);
  const auto r = run_memtopo("run --device sim --only device-info -o " + quoted(out));
  INFO(r.output);
  CHECK(r.exit_code == 0);
  const fs::path prev = journal_path_for(out).string() + ".prev";
  CHECK(r.output.find("kept the journal of an earlier run as " + prev.string()) != std::string::npos);
  CHECK(test::read_file(prev) == earlier);
  CHECK_FALSE(fs::exists(journal_path_for(out)));
}

TEST_CASE("resume: takes measured probes from the journal of the same device", "[host][resume]") {
  test::TempDir dir("res-same");
  const auto out = dir / "t.toml";
  const auto journal = journal_path_for(out);
  test::write_file(journal, test::journal_header_line() + kSource);
  const auto r = run_memtopo("run --resume --device sim" + kGood + " --only t-basic/consumer -o " + quoted(out));
  INFO(r.output);
  CHECK(r.exit_code == 0);
  CHECK(r.output.find("reusing 1 measured probe(s): t-basic/source") != std::string::npos);
  const std::string text = test::read_file(out);
  CHECK(text.find("double_bytes = 200") != std::string::npos);  // from the journal's 100
  CHECK(text.find("value_bytes = 100") != std::string::npos);
  CHECK_FALSE(fs::exists(journal));
}

TEST_CASE("resume: keeps a not determinable probe from the journal", "[host][resume]") {
  test::TempDir dir("res-nd");
  const auto out = dir / "t.toml";
  test::write_file(journal_path_for(out),
                   test::journal_header_line() +
                       "{\"probe\":\"t-undetermined/geometry\",\"version\":\"1.0.0\",\"status\":\"not_determinable\","
                       "\"reason\":\"said by the journal\",\"duration_s\":0.1,\"results\":[{\"key\":\"t.fetch_bytes\","
                       "\"type\":1,\"value\":64,\"confidence\":1.0,\"bound\":\"exact\",\"note\":\"\"}]}\n");
  const auto r = run_memtopo("run --resume --device sim --plugin-path " + quoted(test::plugin_set("undetermined")) +
                             " --only t-undetermined -o " + quoted(out));
  INFO(r.output);
  CHECK(r.exit_code == 0);
  const std::string text = test::read_file(out);
  CHECK(text.find("reason = \"said by the journal\"") != std::string::npos);  // not run again
  CHECK(text.find("twice_fetch_bytes = 128") != std::string::npos);           // fed by the journal's 64
}

TEST_CASE("resume: a narrower selection writes the narrower file and keeps the journal", "[host][resume]") {
  test::TempDir dir("res-narrow");
  const auto out = dir / "t.toml";
  const auto journal = journal_path_for(out);
  test::write_file(journal, test::journal_header_line() + kSource + kConsumer);
  const auto narrow = run_memtopo("run --resume --device sim" + kGood + " --only t-basic/source -o " + quoted(out));
  INFO(narrow.output);
  CHECK(narrow.exit_code == 0);
  CHECK(narrow.output.find("reusing 1 measured probe(s): t-basic/source") != std::string::npos);
  CHECK(narrow.output.find("outside this selection: t-basic/consumer") != std::string::npos);
  CHECK(test::read_file(out).find("double_bytes") == std::string::npos);
  REQUIRE(fs::exists(journal));
  CHECK(test::read_file(journal).find(kConsumer) != std::string::npos);
  // A run whose output holds every journaled probe consumes it.
  const auto full = run_memtopo("run --resume --device sim" + kGood + " --only t-basic/consumer -o " + quoted(out));
  INFO(full.output);
  CHECK(full.exit_code == 0);
  CHECK(test::read_file(out).find("double_bytes = 7") != std::string::npos);  // the journal's, not 200
  CHECK_FALSE(fs::exists(journal));
}

TEST_CASE("resume: a journal of another device is refused with the differences named", "[host][resume][identity]") {
  test::TempDir dir("res-identity");
  const auto out = dir / "t.toml";
  const auto device = dir / "gpu.toml";
  const std::string original = test::read_file(fs::path(MEMTOPO_SOURCE_DIR) / "examples/devices/hopper-like.toml");
  test::write_file(device, original);
  test::write_file(journal_path_for(out), test::journal_header_line(device) + kSource);
  const std::string resume = "run --resume --device sim:" + quoted(device) + kGood + " --only t-basic/source -o " +
                             quoted(out);
  SECTION("a property of the device changed") {
    std::string edited = original;
    edited.replace(edited.find("sm_count = 8"), 12, "sm_count = 16");
    test::write_file(device, edited);
    const auto r = run_memtopo(resume);
    INFO(r.output);
    CHECK(r.exit_code == 2);
    CHECK(r.output.find("the journal was recorded on another device (") != std::string::npos);
    CHECK(r.output.find("sm_count: journal 8, device 16") != std::string::npos);
  }
  SECTION("only the description's content changed") {
    test::write_file(device, original + "# edited\n");
    const auto r = run_memtopo(resume);
    INFO(r.output);
    CHECK(r.exit_code == 2);
    CHECK(r.output.find("description_crc32: journal ") != std::string::npos);
    CHECK(r.output.find("sm_count") == std::string::npos);
  }
  SECTION("the same content under another name (the built-in device is this file): resumed") {
    const auto r = run_memtopo("run --resume --device sim" + kGood + " --only t-basic/source -o " + quoted(out));
    INFO(r.output);
    CHECK(r.exit_code == 0);
  }
  SECTION("the same content: resumed") {
    const auto r = run_memtopo(resume);
    INFO(r.output);
    CHECK(r.exit_code == 0);
    CHECK(test::read_file(out).find("value_bytes = 100") != std::string::npos);
  }
  CHECK(fs::exists(journal_path_for(out)) != fs::exists(out));  // refused runs keep the journal and write nothing
}

// The file names the build that wrote it: another build's journal is refused, naming both
// builds; a journal whose header names no build (an older one) is resumed.
TEST_CASE("resume: a journal of another build is refused, naming both", "[host][resume][identity]") {
  test::TempDir dir("res-build");
  const auto out = dir / "t.toml";
  auto header = nlohmann::json::parse(test::journal_header_line());
  header["tool_version"] = "9.9.9-otherbuild";
  header["git_commit"] = "0123456789ab";
  test::write_file(journal_path_for(out), header.dump() + "\n" + kSource);
  const std::string resume = "run --resume --device sim" + kGood + " --only t-basic/source -o " + quoted(out);
  const auto r = run_memtopo(resume);
  INFO(r.output);
  CHECK(r.exit_code == 2);
  CHECK(r.output.find(":1: the journal was written by memtopo 9.9.9-otherbuild (0123456789ab), this is memtopo ") !=
        std::string::npos);
  CHECK_FALSE(fs::exists(out));
  test::write_file(journal_path_for(out), test::journal_header_line() + kSource);
  const auto old = run_memtopo(resume);
  INFO(old.output);
  CHECK(old.exit_code == 0);
  CHECK(test::read_file(out).find("value_bytes = 100") != std::string::npos);
}

TEST_CASE("resume: a journal without the device's identity is refused", "[host][resume][identity]") {
  test::TempDir dir("res-old");
  const auto out = dir / "t.toml";
  test::write_file(journal_path_for(out), "{\"memtopo_journal\":1,\"device_spec\":\"sim\"}\n" + kSource);
  const auto r = run_memtopo("run --resume --device sim" + kGood + " --only t-basic/source -o " + quoted(out));
  INFO(r.output);
  CHECK(r.exit_code == 2);
  CHECK(r.output.find(journal_path_for(out).string() + ":1: the journal does not record the device's identity") !=
        std::string::npos);
  CHECK_FALSE(fs::exists(out));
}

TEST_CASE("resume: NaN and infinite results are refused at put_result, naming the key", "[host][resume][nan]") {
  test::TempDir dir("res-nan");
  const auto out = dir / "t.toml";
  const auto r = run_memtopo("run --device sim --plugin-path " + quoted(test::plugin_set("nan")) + " --only t-nan -o " + quoted(out));
  INFO(r.output);
  CHECK(r.exit_code == 1);
  CHECK(r.output.find("t-nan/scalar: result refused: t.nan_cycles is nan: results must be finite numbers") !=
        std::string::npos);
  CHECK(r.output.find("t-nan/array: result refused: t.spread is inf: results must be finite numbers") !=
        std::string::npos);
  CHECK(r.output.find("t-nan/bytes: result refused: t.text is not valid UTF-8 text") != std::string::npos);
  const std::string text = test::read_file(out);
  CHECK(text.find("fine_cycles = 2.5") != std::string::npos);
  CHECK(text.find("nan_cycles =") == std::string::npos);
  CHECK(text.find("spread =") == std::string::npos);
  CHECK(text.find("= nan") == std::string::npos);
  CHECK(run_memtopo("validate " + quoted(out)).exit_code == 0);
}

TEST_CASE("resume: a journal record with a null value is a warning naming file:line", "[host][resume][nan]") {
  test::TempDir dir("res-null");
  const auto out = dir / "t.toml";
  const auto journal = journal_path_for(out);
  test::write_file(journal, test::journal_header_line() +
                                test::journal_record("t-nan/fine", "1.0.0", "t.fine_cycles", "null", MT_VALUE_FLOAT));
  const auto r = run_memtopo("run --resume --device sim --plugin-path " + quoted(test::plugin_set("nan")) +
                             " --only t-nan/fine -o " + quoted(out));
  INFO(r.output);
  CHECK(r.exit_code == 0);
  CHECK(r.output.find("warning: " + journal.string() + ":2: record ignored: t-nan/fine: the value of t.fine_cycles is "
                      "null") != std::string::npos);
  CHECK(r.output.find("the probe is measured again") != std::string::npos);
  CHECK(test::read_file(out).find("fine_cycles = 2.5") != std::string::npos);
}

TEST_CASE("journal: text that is not UTF-8 is written with U+FFFD instead of throwing", "[host][resume][utf8]") {
  test::TempDir dir("res-utf8");
  const auto path = dir / "j.journal";
  memtopo::host::ProbeOutcome o;
  o.probe = "t-basic/source";
  o.version = "1.2.3";
  o.status = memtopo::host::Status::Failed;
  o.reason = std::string("cut mid-character: \xc3");
  {
    memtopo::host::JournalWriter w;
    w.open_new(path, {{"memtopo_journal", 2}});
    CHECK_NOTHROW(w.append(o));
  }
  const auto jc = memtopo::host::read_journal(path);
  CHECK(jc.warnings.empty());
  REQUIRE(jc.outcomes.size() == 1);
  CHECK(jc.outcomes[0].reason == "cut mid-character: \xef\xbf\xbd");
  // The topology's string literals are valid UTF-8 whatever they are given.
  CHECK_NOTHROW(toml::parse("k = " + memtopo::host::toml_string_literal("caf\xc3")));
  CHECK(memtopo::host::check_value_for_key("t.x_cycles", memtopo::host::Value::of_float(std::nan(""))) ==
        std::string("t.x_cycles is nan: results must be finite numbers (a probe that cannot measure a value reports "
                    "not determinable)"));
  CHECK_FALSE(memtopo::host::check_value_for_key("t.x_cycles", memtopo::host::Value::of_float(1.5)));
}
