// What makes two runs' measurements mergeable: the same device. The journal header records
// this identity and --resume compares it field by field (docs/host.md, "Journal and resume").
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "memtopo/abi.h"

namespace memtopo::host {

// The identity as a flat JSON object of strings and integers: name, backend, uuid, pci_bus_id,
// cc, sm_count, clocks, memory and L2 size, driver and runtime versions; for the simulator also
// description_bytes and description_crc32 of `description_text` (the description file's bytes
// or the built-in description). `description_text` is ignored for CUDA devices.
nlohmann::json device_identity(const mt_device_info& info, const std::string& description_text);

// The description text behind a device: for the simulator, the file named by its description
// ("sim:PATH", as engine::Device::description() says) or the built-in text; "" for CUDA.
// Throws std::runtime_error naming the file when it cannot be read.
std::string device_description_text(const mt_device_info& info, const std::string& description);

// One line per differing field, "sm_count: journal 132, device 114"; empty when the same.
std::vector<std::string> identity_differences(const nlohmann::json& journal, const nlohmann::json& device);

}  // namespace memtopo::host
