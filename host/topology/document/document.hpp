// The topology document (docs/format.md): rendering and atomic writing.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "topology/base/new_file.hpp"  // write_atomically: how the document is written
#include "topology/document/outcome.hpp"
#include "topology/values/value.hpp"


namespace memtopo::host {

struct Meta {
  int schema_version = 1;
  std::string tool_version;
  std::string git_commit;
  std::string created_utc;  // RFC 3339, "2026-11-21T16:00:00Z"; written as a TOML date-time
  std::string host;
  std::string backend;      // "cuda" or "sim"
  std::string device_spec;  // what --device resolved to
  std::optional<std::string> driver_version;   // "13.0"; absent for sim
  std::optional<std::string> runtime_version;
  std::string abi;          // "1.0"
  // The GPU as its fleet knows it ("cuda:3" of the node, when a run of several GPUs or a rank
  // measured it through a narrower CUDA_VISIBLE_DEVICES); absent otherwise.
  std::optional<std::string> device_label;
  // The GPU's identity from the backend, whatever probes ran (a run of one probe has no
  // [device] table): its name, and its UUID and PCI bus id where the backend has them.
  std::string device_name;
  std::optional<std::string> device_uuid;
  std::optional<std::string> device_pci_bus_id;
  // [meta.gpu_state]: the GPU's state around the run (gpu_state.hpp), in this order.
  std::vector<std::pair<std::string, Value>> gpu_state;
};

// Meta for this build and the current time/host; backend and device fields left empty.
Meta default_meta();
// 13000 -> "13.0", 12040 -> "12.4"; nothing for 0.
std::optional<std::string> cuda_version_string(int version);
std::string utc_now_rfc3339();

// The document as TOML text. Tables in a stable order: meta, device, the other elements
// alphabetically, provenance (same element order), probes (by name). Keys sorted.
std::string render_topology(const Meta& meta, const std::vector<ProbeOutcome>& outcomes);


}  // namespace memtopo::host
