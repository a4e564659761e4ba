// A topology file in the forms other programs read (docs/accel-sim.md, docs/mt4g.md,
// docs/links.md): the cache and latency lines of a GPGPU-Sim / Accel-Sim gpgpusim.config, CSV,
// MT4G's JSON, hwloc's XML. The topology's own TOML and JSON: topology_text.hpp.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <toml++/toml.h>

#include "topology/values/topology_text.hpp"

namespace memtopo::host {

// The gpgpusim.config lines the topology determines (docs/accel-sim.md): each option with a
// `#` comment naming the memtopo key it comes from, or `default:` for values memtopo does not
// measure; an option that cannot be derived is left out with a comment saying why.
// `source` names the topology in the header comment.
std::string accel_sim_config_text(const toml::table& doc, const std::string& source);

// A complete gpgpusim.config: `base` (the text of a config such as Accel-Sim's
// configs/tested-cfgs/SM90_H100/gpgpusim.config, named `base_name` in the header) with each
// option of `ours` (accel_sim_config_text) that the topology determines in place of the base's
// line, which stays beside it as a comment; ours marked "default:" only where the base lacks
// the option; options the base lacks are appended, then what the topology did not determine.
std::string accel_sim_on_base(const std::string& base, const std::string& base_name, const std::string& ours);

// The topology as one CSV table (header `element,key,value,unit,bound,confidence,probe,note`):
// a row per value of every element table (the device first, then the others alphabetically;
// meta, provenance, probes and sim left out), keys of nested tables dotted, arrays as one field with ';' between elements, the
// unit the key's name carries, the rest from the value's provenance entry (empty without one).
std::string topology_csv_text(const toml::table& doc);

// The topology in MT4G's JSON result layout as sys-sage's MT4G parser reads it (docs/mt4g.md),
// 4-space indent, keys sorted; `source` names the topology in meta. A value sys-sage requires
// that the topology lacks throws TopologyExportError naming it.
std::string mt4g_json_text(const toml::table& doc, const std::string& source);

// This host's hwloc topology as XML with each GPU of `gpus` (a name for its source and its
// topology) attached to its PCI device as Misc objects: the GPU, its DRAM, every element with a
// size (largest first) and shared memory, their values as info attributes (docs/links.md). A GPU
// without a PCI device here hangs from the root. Throws TopologyExportError where hwloc fails or
// the build has no hwloc (hwloc_export_built).
std::string hwloc_xml_text(const std::vector<std::pair<std::string, const toml::table*>>& gpus);
bool hwloc_export_built();

}  // namespace memtopo::host
