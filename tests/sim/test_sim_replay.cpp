// What a measured topology holds besides the model's keys: every key the probes write is
// read and type-checked, a typo is still refused. Expected values follow from the
// descriptions written here.
#include <catch2/catch.hpp>

#include <string>

#include "memtopo/errors.hpp"
#include "sim/sim_model.hpp"
#include "sim_helpers.hpp"

using namespace simtest;
using memtopo::sim::load_model;
using memtopo::sim::Model;

namespace {

const std::string kDevice = "[device]\nsm_count = 8\nl2_bytes = 1048576\n";

// `table` measured: a [provenance.<element>] entry for its size, with `bound`.
std::string measured(const std::string& element, const std::string& table, const std::string& bound = "exact") {
  return "[" + element + "]\n" + table + "\n[provenance." + element + "]\nsize_bytes = { probe = \"x\", bound = \"" +
         bound + "\" }\n";
}

Model model(const std::string& text) { return load_model(text, "t.toml", "sim:t.toml"); }

std::string error_of(const std::string& text) {
  try {
    model(text);
  } catch (const memtopo::Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("sim: keys probes report beside the model's are type-checked, typos still refused", "[sim][replay]") {
  const std::string l2 = "size_bytes = 1048576\nfirst_miss_bytes = 1048576\nfull_miss_bytes = 1179648\n"
                         "api_size_bytes = 1048576\nlevel_latencies_cycles = [200.5, 480]\nlevel_start_bytes = [65536, 1179648]\n";
  CHECK(error_of(kDevice + measured("l2", l2)) == "");
  CHECK(error_of(kDevice + "[l2]\n" + l2) == "");  // accepted in a hand-written file too
  CHECK_THAT(error_of(kDevice + "[l2]\nsize_bytes = 1048576\nfirst_miss_bytes = \"1 MiB\"\n"),
             Catch::StartsWith("t.toml:6: l2.first_miss_bytes: must be an integer, not a string"));
  CHECK_THAT(error_of(kDevice + "[l2]\nsize_bytes = 1048576\nlevel_latencies_cycles = [200, \"far\"]\n"),
             Catch::Contains("l2.level_latencies_cycles: must be an array of numbers; it holds a string"));
  CHECK_THAT(error_of(kDevice + measured("l1d", "size_bytes = 4096\nfull_miss_byte = 8192")),
             Catch::StartsWith("t.toml:6: l1d.full_miss_byte: unknown key"));
  // The L2 sweep's keys belong to [l2] only.
  CHECK_THAT(error_of(kDevice + measured("l1d", "size_bytes = 4096\nlevel_start_bytes = [1]")),
             Catch::Contains("l1d.level_start_bytes: unknown key"));
  CHECK_THAT(error_of(kDevice + measured("l1d", "size_bytes = 4096\nset_mapping = \"xor\"")),
             Catch::Contains("l1d.set_mapping: \"xor\" is not a set mapping"));
}
