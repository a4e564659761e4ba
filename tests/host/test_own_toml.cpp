// The reader of memtopo's own TOML form (own_toml.hpp) against TOML++: whatever it reads, TOML++
// reads to the same JSON, and it reads every topology memtopo wrote that the tree holds.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <toml++/toml.h>

#include "topology/values/own_toml.hpp"
#include "topology/values/schema.hpp"

namespace {

namespace fs = std::filesystem;
using memtopo::host::read_own_toml;
using nlohmann::json;

const fs::path kTests = fs::path(MEMTOPO_HOST_TEST_DIR).parent_path();

std::string file_text(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

struct Verdict {
  bool read = false;      // read_own_toml read it
  bool agrees = true;     // ... and TOML++ read it to the same JSON
};

Verdict judge(const std::string& text) {
  Verdict v;
  const auto own = read_own_toml(text);
  v.read = own.has_value();
  if (!own) return v;
  try {
    v.agrees = memtopo::host::toml_to_json(toml::parse(text)) == *own;
  } catch (const toml::parse_error&) {
    v.agrees = false;
  }
  return v;
}

// Every construct the reader takes, and the rules it must keep.
const char* const kSeed = R"([meta]
schema_version = 1
tool_version = "0.1.0"
created_utc = 2026-11-23T05:22:06Z
host = "a\"b\\c\u00e9\n\t\u0001"

[l1d]
size_bytes = 131072
latency_cycles = 38.5
negative = -7
list = [1, 2, 3]
floats = [1.5, -2.0e-3, 1e+20, 0.0]
names = ["a", "b", ""]
empty = []
flag = true
other = false

[provenance.l1d]
size_bytes = { probe = "data-cache/l1d-size", confidence = 1.0, bound = "exact", varies = true }
list = { probe = "x/y", confidence = 0.5, bound = "at_least", note = "n" }

[probes."data-cache/l1d-size"]
version = "1.0.0"
status = "ok"
duration_s = 0.25

[probes."data-cache/l1d-size".absent]
"l1d.ways" = "not measured"
)";

}  // namespace

TEST_CASE("own toml: every topology memtopo wrote is read, as TOML++ reads it", "[host][own_toml]") {
  const std::vector<fs::path> written = {kTests / "report/inputs/h100/topology.toml", kTests / "sim/measured/h100-sxm.toml",
                                         kTests / "sim/measured/hopper-like-sim.toml", kTests / "host/golden/basic.toml"};
  for (const auto& p : written) {
    INFO(p.string());
    const Verdict v = judge(file_text(p));
    CHECK(v.read);
    CHECK(v.agrees);
  }
  CHECK(judge(kSeed).read);
}

TEST_CASE("own toml: each TOML file of the tree is read alike or left to TOML++", "[host][own_toml]") {
  int files = 0, read = 0;
  for (const auto& e : fs::recursive_directory_iterator(kTests)) {
    if (!e.is_regular_file() || e.path().extension() != ".toml") continue;
    INFO(e.path().string());
    const Verdict v = judge(file_text(e.path()));
    CHECK(v.agrees);
    ++files;
    read += v.read;
  }
  CHECK(files > 50);
  CHECK(read > 20);
}

TEST_CASE("own toml: what TOML++ refuses or reads otherwise is declined", "[host][own_toml]") {
  const std::vector<std::string> declined = {
      "a = 1\na = 2\n",                      // a key twice
      "[t]\n[t]\n",                          // a table twice
      "t = { a = 1 }\n[t]\n",                // a header for an inline table
      "t = { a = 1 }\n[t.b]\n",              // ... or below one
      "[a]\nb = 1\n[a.b]\n",                 // a header for a value
      "a = 1 # comment\n",                   // comments
      "a = 1\r\n",                           // CR
      "a = 01\n", "a = +1\n", "a = 1_000\n", "a = 0x10\n", "a = .5\n", "a = 1.\n", "a = 1e\n",
      "a = nan\n", "a = inf\n", "a = 1e400\n", "a = 9223372036854775808\n",
      "a = 'literal'\n", "a = \"\"\"multi\"\"\"\n", "a = \"\\q\"\n", "a = \"\\uD800\"\n", "a = \"\\U00110000\"\n",
      "a = \"\xc3\xa9\"\n",                  // past ASCII: TOML++ checks UTF-8
      "a = \"tab\x01\"\n", "a = \"open\n",
      "a.b = 1\n",                           // dotted keys
      "[[t]]\n", "a = [[1], [2]]\n", "a = [{ b = 1 }]\n", "a = { b = { c = 1 } }\n", "a = { b = 1, }\n",
      "a = [1,\n2]\n", "a = truex\n", "a = 1 2\n", "a = 2026-13-01\n", "a = 2026-11-23 x\n", "= 1\n",
      "\xef\xbb\xbf" "a = 1\n", std::string("a = 1\n\0\n", 8),
  };
  for (const auto& text : declined) {
    INFO(text);
    const Verdict v = judge(text);
    CHECK_FALSE(v.read);
  }
  const std::vector<std::string> read = {
      "", "\n\n", "a = 1", "a = -0\n", "a = [1, 2,]\n", "a = [1, \"x\", true]\n", "a = { }\n", "\"q k\" = 1\n",
      "a = 1e05\n", "a = 1E-3\n", "a = 2026-11-23\n", "a = 07:32:00\n", "a = 2026-11-23 05:22:06Z\n",
      "a = 2026-11-23T05:22:06.5+01:00\n", "[a.b]\n[a]\nc = 1\n", "  [ a . \"b\" ]  \n\tk\t=\t\"v\"\t\n", "a = \"\\u0000\"\n",
  };
  for (const auto& text : read) {
    INFO(text);
    const Verdict v = judge(text);
    CHECK(v.read);
    CHECK(v.agrees);
  }
}

TEST_CASE("own toml: a thousand edits of a topology, each read alike or declined", "[host][own_toml]") {
  const std::string seed = kSeed;
  const std::string alphabet = std::string("\"\\[]{}=,.#\n\r\t 0123456789-+eE_:TZutfnalsrx'") + '\0' + "\x80\xff";
  std::mt19937 rng(62);
  auto pick = [&](size_t n) { return std::uniform_int_distribution<size_t>(0, n - 1)(rng); };
  int read = 0, declined = 0;
  for (int round = 0; round < 3000; ++round) {
    std::string text = seed;
    for (int edits = 1 + int(pick(3)); edits > 0; --edits) {
      const size_t at = pick(text.size());
      switch (pick(4)) {
        case 0: text.erase(at, 1); break;
        case 1: text.insert(at, 1, alphabet[pick(alphabet.size())]); break;
        case 2: text[at] = alphabet[pick(alphabet.size())]; break;
        default: {  // a line again, elsewhere
          const size_t b = text.rfind('\n', at) == std::string::npos ? 0 : text.rfind('\n', at) + 1;
          const size_t e = text.find('\n', at);
          text.insert(pick(text.size()), text.substr(b, e == std::string::npos ? std::string::npos : e - b + 1));
        }
      }
    }
    const Verdict v = judge(text);
    if (!v.agrees) FAIL_CHECK("read otherwise than TOML++ reads it:\n" << text);
    (v.read ? read : declined) += 1;
  }
  // Both kinds occur: the edits test the reader's rules, not only its refusals.
  CHECK(read > 300);
  CHECK(declined > 300);
}
