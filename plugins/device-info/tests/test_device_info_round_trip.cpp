// device-info states what the backend reports: on the simulated GPU, the description's [device]
// table, key by key and with its type; an identity the backend lacks is absent with the reason.
#include <catch2/catch.hpp>

#include <sstream>
#include <string>

#include <toml++/toml.h>

#include "memtopo_run.hpp"

namespace {

using probetest::device_file;
using probetest::run_memtopo;
using probetest::write_variant;

std::string text_of(const toml::node& n) {
  std::ostringstream out;
  n.visit([&](const auto& v) { out << v; });
  return out.str();
}

void check_device_table(const std::string& device, const std::string& tag) {
  const toml::table description = toml::parse_file(device);
  const toml::table got = run_memtopo(device, tag, "device-info");
  const toml::table* want = description["device"].as_table();
  REQUIRE(want);
  REQUIRE(got["device"].as_table());
  for (const auto& [key, value] : *want) {
    INFO(tag << ": device." << key.str());
    const toml::node* measured = got["device"].as_table()->get(key.str());
    REQUIRE(measured);
    CHECK(measured->type() == value.type());
    CHECK(text_of(*measured) == text_of(value));
    CHECK(got["provenance"]["device"][key.str()]["confidence"].value<double>() == 1.0);
  }
  // The simulated GPU has no UUID or PCI bus id: absent, with why.
  for (const char* key : {"device.uuid", "device.pci_bus_id"}) {
    INFO(tag << ": " << key);
    const auto why = got["probes"]["device-info/properties"]["absent"][key].value<std::string>();
    REQUIRE(why);
    CHECK(why->find("backend has none") != std::string::npos);
  }
}

}  // namespace

TEST_CASE("device-info states each shipped simulated device's [device] table", "[sim][device-info]") {
  for (const char* name : {"hopper-like.toml", "kepler-like.toml", "pascal-like.toml"})
    check_device_table(device_file(name).string(), std::string("device-info-") + name);
}

TEST_CASE("device-info states a device unlike the shipped ones", "[sim][device-info]") {
  const std::string dev = write_variant("hopper-like.toml", "device-info-variant", [](toml::table& t) {
    toml::table& d = *t["device"].as_table();
    d.insert_or_assign("name", "a GPU of 48 SMs at 1.1 GHz");
    d.insert_or_assign("compute_capability", "8.6");
    d.insert_or_assign("sm_count", 48);
    d.insert_or_assign("sm_clock_khz", 1100000);
    d.insert_or_assign("registers_per_block", 32768);
  });
  check_device_table(dev, "device-info-variant");
}
