// Journals a crash or a hand tore or edited (issue 31, cases 4 and 5): a torn tail never swallows
// the next record, every record --resume takes passes the checks a probe's results pass, and a
// journal of another format or an empty one is named, not trusted (docs/host.md, "Guarantees").
#include "helpers.hpp"
#include "run/output/journal.hpp"
#include "run_helpers.hpp"

namespace fs = std::filesystem;
using memtopo::host::journal_path_for;
using test::quoted;
using test::run_memtopo;

namespace {

using test::kGood;

using test::has;

std::string resume(const fs::path& out, const std::string& only) {
  const auto r = run_memtopo("run --resume --device sim" + kGood + " --only " + only + " -o " + quoted(out));
  return std::to_string(r.exit_code) + "\n" + r.output;
}

}  // namespace

TEST_CASE("journal: a record appended after a torn last line starts a line of its own", "[host][faults][journal]") {
  test::TempDir dir("journal-torn");
  const auto out = dir / "t.toml";
  const auto journal = journal_path_for(out);
  const std::string consumer = test::journal_record("t-basic/consumer", "1.2.3", "t.double_bytes", "84");
  // The consumer's record keeps the journal alive after a run of the source alone.
  test::write_file(journal, test::journal_header_line() + consumer + consumer.substr(0, 40));
  const std::string first = resume(out, "t-basic/source");
  INFO(first);
  CHECK(first.rfind("0\n", 0) == 0);
  const auto jc = memtopo::host::read_journal(journal);
  REQUIRE(jc.outcomes.size() == 2);
  CHECK(jc.outcomes[1].probe == "t-basic/source");
  REQUIRE(jc.warnings.size() == 1);  // the torn line alone
  CHECK(has(jc.warnings[0], ":3: record ignored"));
  const std::string second = resume(out, "t-basic");
  INFO(second);
  CHECK(has(second, "reusing 2 measured probe(s): t-basic/consumer, t-basic/source"));
}

TEST_CASE("journal: records the output would refuse are measured again, never written", "[host][faults][journal]") {
  test::TempDir dir("journal-invalid");
  const auto out = dir / "t.toml";
  const std::string good = test::journal_record("t-basic/source", "1.2.3", "t.value_bytes", "100");
  std::string high_confidence = good;
  high_confidence.replace(high_confidence.find("\"confidence\":1.0"), 16, "\"confidence\":7.5");
  for (const auto& [record, why] : std::vector<std::pair<std::string, std::string>>{
           {test::journal_record("t-basic/source", "1.2.3", "t.value_bytes", "-5"), "t.value_bytes must not be negative"},
           {high_confidence, "confidence must be in [0, 1]"},
           {test::journal_record("t-basic/source", "1.2.3", "t.value_bytes", "1.5", MT_VALUE_FLOAT),
            "keys ending in _bytes hold integers"},
           {test::journal_record("t-basic/source", "1.2.3", "t.double_bytes", "7"),
            "t.double_bytes is not in the probe's provided keys"}}) {
    test::write_file(journal_path_for(out), test::journal_header_line() + record);
    const std::string r = resume(out, "t-basic/source");
    INFO(record << r);
    CHECK(r.rfind("0\n", 0) == 0);
    CHECK(has(r, "warning: t-basic/source: journal record ignored: "));
    CHECK(has(r, why));
    CHECK(has(r, "; measuring it again"));
    const std::string text = test::read_file(out);
    CHECK(has(text, "value_bytes = 42"));  // measured again
    CHECK_FALSE(has(text, "double_bytes"));
    CHECK(run_memtopo("validate " + quoted(out)).exit_code == 0);
  }
}

TEST_CASE("journal: another format is refused, an empty journal resumes nothing", "[host][faults][journal]") {
  test::TempDir dir("journal-format");
  const auto out = dir / "t.toml";
  std::string header = test::journal_header_line();
  header.replace(header.find("\"memtopo_journal\":2"), 19, "\"memtopo_journal\":99");
  test::write_file(journal_path_for(out), header);
  const std::string refused = resume(out, "t-basic/source");
  INFO(refused);
  CHECK(refused.rfind("2\n", 0) == 0);
  CHECK(has(refused, ":1: journal format 99 is not one this memtopo reads (1 to 2)"));

  test::write_file(journal_path_for(out), "");
  const std::string empty = resume(out, "t-basic/source");
  INFO(empty);
  CHECK(empty.rfind("0\n", 0) == 0);
  CHECK(has(empty, "is empty (its run could not write it); measuring everything"));
  CHECK(has(test::read_file(out), "value_bytes = 42"));
}

TEST_CASE("journal: a new journal appears whole or not at all", "[host][journal]") {
  test::TempDir dir("journal-new");
  const auto path = dir / "j.journal";
  memtopo::host::JournalWriter w;
  w.open_new(path, {{"memtopo_journal", 2}});
  CHECK(test::read_file(path) == "{\"memtopo_journal\":2}\n");
  for (const auto& e : fs::directory_iterator(dir.path)) CHECK(e.path().filename() == "j.journal");
  // A folder that cannot take the file leaves nothing behind.
  memtopo::host::JournalWriter failing;
  CHECK_THROWS_WITH(failing.open_new(dir / "missing" / "j.journal", {{"memtopo_journal", 2}}),
                    Catch::Contains("cannot create journal"));
  CHECK_FALSE(fs::exists(dir / "missing"));
}
