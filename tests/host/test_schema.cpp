// Schema validation of topology files: good and bad, errors naming the key path.
#include "helpers.hpp"
#include "topology/values/schema.hpp"
#include "topology/checks/validate.hpp"

using namespace memtopo::host;

namespace {

const char* kGoodTopology = R"([meta]
schema_version = 1
tool_version = "0.1.0"
created_utc = 2026-11-21T16:00:00Z
backend = "sim"
device_spec = "sim"
abi = "1.0"

[device]
name = "x"
sm_count = 8

[l1d]
size_bytes = 262144
hit_cycles = [30, 31.5]

[provenance.l1d]
size_bytes = { probe = "data-cache/l1d-size", confidence = 0.97, bound = "exact" }

[probes."data-cache/l1d-size"]
version = "1.0.0"
status = "ok"
reason = ""
duration_s = 0.5

[sim]
anything = { goes = [1, "two"] }
)";

std::vector<std::string> errors_for(const std::string& text) {
  std::vector<std::string> out;
  for (const auto& e : validate_topology(toml_to_json(toml::parse(text)))) out.push_back(e.text());
  return out;
}

std::string replace(std::string s, const std::string& from, const std::string& to) {
  const auto at = s.find(from);
  REQUIRE(at != std::string::npos);
  return s.replace(at, from.size(), to);
}

}  // namespace

TEST_CASE("a good topology validates", "[host][schema]") {
  CHECK(errors_for(kGoodTopology).empty());
  CHECK(errors_for(replace(kGoodTopology, "status = \"ok\"", "status = \"not_determinable\"")).empty());
}

TEST_CASE("schema errors name the key path", "[host][schema]") {
  CHECK(errors_for(replace(kGoodTopology, "size_bytes = 262144", "size_bytes = 1.5")) ==
        std::vector<std::string>{"/l1d/size_bytes: expected an integer >= 0 or an array of them, got float 1.5"});
  CHECK(errors_for(replace(kGoodTopology, "size_bytes = 262144", "size_bytes = -4")) ==
        std::vector<std::string>{"/l1d/size_bytes: expected an integer >= 0 or an array of them, got integer -4"});
  CHECK(errors_for(replace(kGoodTopology, "hit_cycles = [30, 31.5]", "hit_cycles = \"fast\"")) ==
        std::vector<std::string>{"/l1d/hit_cycles: expected a number >= 0 or an array of them, got string \"fast\""});
  CHECK(errors_for(replace(kGoodTopology, "sm_count = 8", "Sm_count = 8")) ==
        std::vector<std::string>{"/device/Sm_count: bad key name: key names are [a-z][a-z0-9_]* (lower case, digits, '_')"});
  CHECK(errors_for(replace(kGoodTopology, "status = \"ok\"", "status = \"fine\"")) ==
        std::vector<std::string>{
            "/probes/\"data-cache/l1d-size\"/status: expected \"ok\", \"not_determinable\", \"failed\" or \"skipped\", "
            "got string \"fine\""});
  CHECK(errors_for(replace(kGoodTopology, "confidence = 0.97", "confidence = 1.5")) ==
        std::vector<std::string>{"/provenance/l1d/size_bytes/confidence: expected a number between 0 and 1, got float 1.5"});
  CHECK(errors_for(replace(kGoodTopology, "backend = \"sim\"", "backend = \"opencl\"")) ==
        std::vector<std::string>{"/meta/backend: expected \"cuda\" or \"sim\", got string \"opencl\""});
  const auto missing = errors_for(replace(kGoodTopology, "abi = \"1.0\"\n", ""));
  REQUIRE(missing.size() == 1);
  CHECK(missing[0].rfind("/meta: Missing required property 'abi'", 0) == 0);
  const auto extra = errors_for(replace(kGoodTopology, "bound = \"exact\" }", "bound = \"exact\", color = \"red\" }"));
  REQUIRE(extra.size() == 1);
  CHECK(extra[0].rfind("/provenance/l1d/size_bytes:", 0) == 0);
  CHECK(extra[0].find("color") != std::string::npos);
}

TEST_CASE("node_at finds the TOML node of a path, for line numbers", "[host][schema]") {
  const auto doc = toml::parse(kGoodTopology);
  const toml::node* n = node_at(doc, "/probes/data-cache~1l1d-size/status");
  REQUIRE(n);
  CHECK(n->source().begin.line == 22);
  CHECK(node_at(doc, "/l1d/hit_cycles/1")->value<double>() == 31.5);
  CHECK_FALSE(node_at(doc, "/l1d/nope"));
}

TEST_CASE("the schema knows the element tables of docs/format.md", "[host][schema]") {
  const auto& t = memtopo::host::schema_element_tables();
  for (const char* e : {"device", "l1d", "l2", "texture", "readonly", "constant_l1", "constant_l15", "shared", "tlb", "dram"})
    CHECK(t.count(e) == 1);
  CHECK(t.count("meta") == 0);
  CHECK(t.count("tma") == 0);
}

TEST_CASE("validation with a key catalog: declared keys checked, unknown tables noted", "[host][schema][keys]") {
  KeyCatalog c;
  c.providers["tma.latency_cycles"] = "x/tma";
  c.declared["tma.latency_cycles"] = {"x/tma", {"tma.latency_cycles", MT_VALUE_FLOAT, "cycles", ""}};
  c.providers["l1d.policy"] = "x/l1d";
  c.declared["l1d.policy"] = {"x/l1d", {"l1d.policy", MT_VALUE_STRING, "", ""}};
  auto doc = toml_to_json(toml::parse(std::string(kGoodTopology) +
                                      "[tma]\nlatency_cycles = 12\nother = 1\n[zzz]\nx_bytes = -1\n"));
  Validation v = validate_with_plugins(doc, c);
  CHECK(v.errors.empty());  // an integer is fine for a float
  // [l1d] holds keys a plugin provides: its others are noted too.
  CHECK(v.not_checked == std::vector<std::string>{"l1d.hit_cycles (no installed plugin provides it)",
                                                  "l1d.size_bytes (no installed plugin provides it)",
                                                  "tma.other (no installed plugin provides it)",
                                                  "[zzz] (no installed plugin provides it)"});
  doc["l1d"]["policy"] = 3;
  doc["tma"]["latency_cycles"] = "slow";
  doc["l1d"]["size_bytes"] = -1;
  v = validate_with_plugins(doc, c);
  std::vector<std::string> texts;
  for (const auto& e : v.errors) texts.push_back(e.text());
  CHECK(texts == std::vector<std::string>{"/l1d/policy: x/l1d declares string, got integer 3",
                                          "/tma/latency_cycles: x/tma declares float (cycles), got string \"slow\"",
                                          "/l1d/size_bytes: expected an integer >= 0 or an array of them, got integer -1"});
}

TEST_CASE("validation: a typo of a provided key or table, and provenance left behind, are errors", "[host][schema][keys]") {
  KeyCatalog c;
  c.providers["l1d.size_bytes"] = "x/l1d";
  c.providers["l1d.hit_cycles"] = "x/l1d";
  auto texts_of = [&](const nlohmann::json& doc) {
    std::vector<std::string> texts;
    for (const auto& e : validate_with_plugins(doc, c).errors) texts.push_back(e.text());
    return texts;
  };
  auto doc = toml_to_json(toml::parse(std::string(kGoodTopology)));
  REQUIRE(texts_of(doc).empty());
  auto renamed = doc;
  renamed["l1d"]["size_byte"] = renamed["l1d"]["size_bytes"];
  renamed["l1d"].erase("size_bytes");
  renamed["provenance"]["l1d"]["size_bytes"] = {{"probe", "x/l1d"}, {"confidence", 1.0}, {"bound", "exact"}};
  CHECK(texts_of(renamed) ==
        std::vector<std::string>{"/provenance/l1d/size_bytes: describes l1d.size_bytes, which the file holds no value for "
                                 "(a key renamed or removed?); remove the entry or restore the value",
                                 "/l1d/size_byte: no installed plugin declares l1d.size_byte; did you mean l1d.size_bytes?"});
  auto table = doc;
  table["l1dd"] = table["l1d"];
  table.erase("l1d");
  table["provenance"].erase("l1d");
  const auto t = texts_of(table);
  REQUIRE(t.size() == 1);
  CHECK(t[0] == "/l1dd: no installed plugin provides [l1dd] and the schema does not know it; did you mean [l1d]?");
}

TEST_CASE("a text value longer than 4096 characters is refused, naming its key", "[host][schema][hostile]") {
  CHECK(errors_for(replace(kGoodTopology, "name = \"x\"", "name = \"" + std::string(4096, 'f') + "\"")).empty());
  const auto longer = errors_for(replace(kGoodTopology, "name = \"x\"", "name = \"" + std::string(100000, 'f') + "\""));
  REQUIRE(longer.size() == 1);
  CHECK(longer[0].rfind("/device/name: expected an integer, float, string (at most 4096 characters) or boolean", 0) == 0);
  CHECK(longer[0].find("got string of 100000 bytes \"fff") != std::string::npos);
  CHECK(longer[0].size() < 400);  // the message shows the start of the value, not all of it
  const auto in_array = errors_for(replace(kGoodTopology, "sm_count = 8", "tags = [\"" + std::string(5000, 'a') + "\"]"));
  REQUIRE(in_array.size() == 1);
  CHECK(in_array[0].rfind("/device/tags", 0) == 0);
}
