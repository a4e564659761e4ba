// Inputs the fuzzers (tests/fuzz) found the journal reader mishandling: each is now a record
// error or a header error with the file and line, never undefined behaviour or an escaping
// JSON exception. Their seeds are in tests/fuzz/corpus/journal/.
#include <catch2/catch.hpp>

#include <sstream>
#include <stdexcept>
#include <string>

#include "run/output/journal.hpp"

using memtopo::host::read_journal;

namespace {

const std::string kHeader = R"({"memtopo_journal": 1, "device_spec": "sim", "backend": "sim"})";

std::string record(const std::string& type, const std::string& value) {
  return R"({"probe": "a/b", "version": "1.0.0", "status": "ok", "reason": "", "duration_s": 0.5, "results": [)"
         R"({"key": "x.y", "type": )" + type + R"(, "value": )" + value +
         R"(, "confidence": 1.0, "bound": "exact", "note": ""}]})";
}

memtopo::host::JournalContents read(const std::string& text) {
  std::istringstream in(text);
  return read_journal(in, "j.journal");
}

}  // namespace

TEST_CASE("journal: a type tag that is not one of the value types is a record error", "[host][journal][fuzz]") {
  for (const std::string tag : {"1e300", "99", "-1", "2.0", "\"1\""}) {
    const auto c = read(kHeader + "\n" + record(tag, "1") + "\n" + record("1", "7") + "\n");
    REQUIRE(c.outcomes.size() == 1);  // the good record after it is kept
    CHECK(c.outcomes[0].results.at(0).value.i == 7);
    REQUIRE(c.warnings.size() == 1);
    CHECK_THAT(c.warnings[0], Catch::StartsWith("j.journal:2: record ignored: type of x.y is not a value type"));
  }
}

TEST_CASE("journal: array elements of the wrong type are a record error", "[host][journal][fuzz]") {
  // 5, 6, 7: integer, float and string arrays.
  for (const auto& [tag, value] : {std::pair<std::string, std::string>{"5", "[1, 1e300]"}, {"5", "[1, true]"},
                                   {"6", "[1.5, \"x\"]"}, {"7", "[\"a\", 1]"}, {"5", "{}"}}) {
    const auto c = read(kHeader + "\n" + record(tag, value) + "\n");
    CHECK(c.outcomes.empty());
    REQUIRE(c.warnings.size() == 1);
    CHECK_THAT(c.warnings[0], Catch::Contains("value of x.y does not match its type"));
  }
  const auto ok = read(kHeader + "\n" + record("6", "[1, 2.5]") + "\n");  // integers are floats too
  REQUIRE(ok.outcomes.size() == 1);
  CHECK(ok.outcomes[0].results.at(0).value.floats == std::vector<double>{1.0, 2.5});
}

TEST_CASE("journal: a header field resume reads must be a string", "[host][journal][fuzz]") {
  CHECK_THROWS_WITH(read(R"({"memtopo_journal": 1, "device_spec": 7})" "\n"),
                    Catch::StartsWith("j.journal:1: the journal header's device_spec is not a string"));
  CHECK_THROWS_AS(read(R"({"memtopo_journal": 1, "backend": null})" "\n"), std::runtime_error);
  CHECK(read(kHeader + "\n").header.value("device_spec", std::string()) == "sim");
}

TEST_CASE("journal: the header is the first line, a blank one is not a journal", "[host][journal][fuzz]") {
  CHECK_THROWS_WITH(read("\n" + kHeader + "\n"), Catch::StartsWith("j.journal:1: not a memtopo journal"));
  CHECK(read(kHeader + "\n\n" + record("1", "7") + "\n").outcomes.size() == 1);  // blank records are skipped
}
