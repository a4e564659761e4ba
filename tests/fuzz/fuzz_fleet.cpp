// libFuzzer target: the fleet reader as `memtopo fleet` runs it on each file (the nesting
// bound, TOML or JSON to one JSON form, the schema, flattening, provenance, the GPU state),
// then a comparison of three GPUs made from it and its three renderings. The input's first
// line is the file's name (any bytes: a name need not be UTF-8; ".json" at its end reads the
// rest as JSON, else as TOML), the rest the file. Its documented error is std::runtime_error
// ("FILE: why"); anything else escaping, JSON that cannot be written, or JUnit XML with a
// character XML 1.0 does not allow is a finding.
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "tools/fleet/fleet.hpp"
#include "topology/base/text_encoding.hpp"
#include "../common/xml_characters.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace memtopo::host;
  const std::string input(reinterpret_cast<const char*>(data), size);
  const size_t line_end = input.find('\n');
  std::string file = line_end == std::string::npos ? "" : input.substr(0, line_end);
  if (file.empty()) file = "fuzz.toml";
  const std::string text = line_end == std::string::npos ? input : input.substr(line_end + 1);
  FleetMember member;
  try {
    member = fleet_member_of(file, text);
  } catch (const std::runtime_error&) {
    return 0;
  }
  // Three GPUs of one model, one of them a copy with another UUID: every key is compared.
  std::vector<FleetMember> members{member, member, member};
  members[1].uuid += "-b";
  members[2].file += ".c";
  const FleetReport report = compare_fleet(members, FleetOptions{});
  (void)render_fleet_text(report);
  (void)fleet_to_json(report).dump(2);  // nlohmann throws on text that is not UTF-8
  if (!test::xml_characters_allowed(render_fleet_junit(report))) __builtin_trap();
  return 0;
}
