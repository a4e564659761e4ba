#include "topology/document/device_identity.hpp"

#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include <boost/crc.hpp>

#include "memtopo/engine.hpp"
#include "topology/values/value.hpp"

namespace memtopo::host {

namespace {

// Hex of the CRC-32: it tells an edited description from the one measured; it is no defence
// against someone forging a journal.
std::string crc32_hex(const std::string& text) {
  boost::crc_32_type crc;
  crc.process_bytes(text.data(), text.size());
  char buf[16];
  std::snprintf(buf, sizeof buf, "%08x", static_cast<unsigned>(crc.checksum()));
  return buf;
}

std::string text_of(const nlohmann::json& v) {
  return v.is_string() ? v.get<std::string>() : v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace

nlohmann::json device_identity(const mt_device_info& info, const std::string& description_text) {
  nlohmann::json id = nlohmann::json::object();
  // As the journal stores it: a name that is not UTF-8 would compare unequal after a reload.
  id["name"] = valid_utf8(std::string(info.name, strnlen(info.name, sizeof info.name)));
  id["backend"] = std::string(info.backend);
  id["uuid"] = std::string(info.uuid);
  id["pci_bus_id"] = std::string(info.pci_bus_id);
  id["cc"] = std::to_string(info.cc_major) + "." + std::to_string(info.cc_minor);
  id["sm_count"] = info.sm_count;
  id["sm_clock_khz"] = info.sm_clock_khz;
  id["memory_clock_khz"] = info.memory_clock_khz;
  id["memory_bus_width_bits"] = info.memory_bus_width_bits;
  id["global_memory_bytes"] = info.global_memory_bytes;
  id["l2_bytes"] = info.l2_bytes;
  id["driver_version"] = info.driver_version;
  id["runtime_version"] = info.runtime_version;
  if (std::string(info.backend) == "sim") {
    id["description_bytes"] = description_text.size();
    id["description_crc32"] = crc32_hex(description_text);
  }
  return id;
}

std::string device_description_text(const mt_device_info& info, const std::string& description) {
  if (std::string(info.backend) != "sim") return "";
  if (description.rfind("sim:", 0) != 0) return engine::sim_builtin_description();
  return engine::read_input_file(description.substr(4), "the simulated device description to record its identity");
}

std::vector<std::string> identity_differences(const nlohmann::json& journal, const nlohmann::json& device) {
  std::vector<std::string> out;
  for (const auto& [key, value] : device.items()) {
    if (!journal.contains(key)) {
      out.push_back(key + ": not in the journal, device " + text_of(value));
    } else if (journal.at(key) != value) {
      out.push_back(key + ": journal " + text_of(journal.at(key)) + ", device " + text_of(value));
    }
  }
  for (const auto& [key, value] : journal.items())
    if (!device.contains(key)) out.push_back(key + ": journal " + text_of(value) + ", not known for this device");
  return out;
}

}  // namespace memtopo::host
