// A topology file as text (docs/format.md, "JSON"): the canonical TOML `memtopo run` writes,
// and JSON for programs that do not read TOML; the names of the forms `export` writes.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

#include <toml++/toml.h>

namespace memtopo::host {

enum class TopologyFormat { Toml, Json, AccelSim, Csv, Mt4g, Hwloc };

// "toml", "json", "accel-sim", "csv", "mt4g", "hwloc"; nothing for any other name.
std::optional<TopologyFormat> parse_topology_format(std::string_view name);
const char* topology_format_name(TopologyFormat format);

// A value the chosen form cannot hold; `line` is where it is in the parsed TOML (0: unknown).
struct TopologyExportError : std::runtime_error {
  uint32_t line = 0;
  TopologyExportError(uint32_t at_line, const std::string& what) : std::runtime_error(what), line(at_line) {}
};

// The topology as JSON (2-space indent, newline at the end): the same tables, keys and values
// as the TOML, integers as integers, floats with a fraction or exponent (262.0 stays 262.0),
// date-times as RFC 3339 strings. Tables in document order: meta, device, the other elements
// alphabetically, provenance, probes, sim. A NaN or infinite float, which JSON cannot hold,
// throws TopologyExportError naming its key.
std::string topology_json_text(const toml::table& doc);

// The topology as TOML in the layout `memtopo run` writes (the same order as the JSON, keys
// sorted, provenance entries as inline tables): a file `run` wrote comes back byte for byte.
std::string topology_toml_text(const toml::table& doc);

}  // namespace memtopo::host
