// The topology as JSON and as canonical TOML (topology_text.hpp). Both walk the parsed TOML
// in one document order; JSON values come from toml_to_json, the mapping the schema check uses.
#include <cctype>
#include <cmath>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "topology/values/gpu_state.hpp"
#include "topology/values/schema.hpp"
#include "topology/values/topology_text.hpp"
#include "topology/values/value.hpp"

namespace memtopo::host {

std::optional<TopologyFormat> parse_topology_format(std::string_view name) {
  if (name == "toml") return TopologyFormat::Toml;
  if (name == "json") return TopologyFormat::Json;
  if (name == "accel-sim") return TopologyFormat::AccelSim;
  if (name == "csv") return TopologyFormat::Csv;
  if (name == "mt4g") return TopologyFormat::Mt4g;
  if (name == "hwloc") return TopologyFormat::Hwloc;
  return std::nullopt;
}

const char* topology_format_name(TopologyFormat format) {
  switch (format) {
    case TopologyFormat::Json: return "json";
    case TopologyFormat::AccelSim: return "accel-sim";
    case TopologyFormat::Csv: return "csv";
    case TopologyFormat::Mt4g: return "mt4g";
    case TopologyFormat::Hwloc: return "hwloc";
    default: return "toml";
  }
}

namespace {

using Path = std::vector<std::string>;

struct KeyOrder {
  std::vector<std::string> first, last;
};

// Where a table's keys do not simply sort: the order render_topology writes.
KeyOrder preferred_order(const Path& path) {
  if (path.empty()) return {{"meta", "device"}, {"provenance", "probes", "sim"}};
  if (path.size() == 1 && path[0] == "meta")
    return {{"schema_version", "tool_version", "git_commit", "created_utc", "host", "backend", "device_spec",
             "device_name", "device_uuid", "device_pci_bus_id", "driver_version", "runtime_version", "abi",
             "device_label"},
            {}};
  if (path.size() == 2 && path[0] == "meta" && path[1] == "gpu_state") return {gpu_state_key_order(), {}};
  if (path.size() == 1 && path[0] == "provenance") return {{"device"}, {}};
  if (path.size() == 3 && path[0] == "provenance")
    return {{"probe", "confidence", "bound", "note", "class", "varies", "estimate", "headline", "rated", "structure",
             "always", "health", "role", "verified", "counted_bytes", "verify_note"},
            {}};  // as run writes them
  if (path.size() == 2 && path[0] == "probes") return {{"version", "status", "reason", "duration_s"}, {}};
  return {};
}

bool contains(const std::vector<std::string>& v, const std::string& s) {
  for (const auto& x : v)
    if (x == s) return true;
  return false;
}

// The keys of the table at `path` in document order: preferred ones first, then the others
// sorted (toml++ keeps a table sorted), then the preferred last ones.
std::vector<std::string> ordered_keys(const Path& path, const toml::table& t) {
  const KeyOrder order = preferred_order(path);
  std::vector<std::string> out;
  for (const auto& k : order.first)
    if (t.contains(k)) out.push_back(k);
  for (const auto& [k, v] : t) {
    const std::string key(k.str());
    if (!contains(order.first, key) && !contains(order.last, key)) out.push_back(key);
  }
  for (const auto& k : order.last)
    if (t.contains(k)) out.push_back(k);
  return out;
}

std::string dotted(const Path& path) {
  std::string out;
  for (const auto& p : path) out += (out.empty() ? "" : ".") + p;
  return out;
}

// --------------------------------------------------------------------------- JSON

nlohmann::ordered_json to_ordered_json(const toml::node& node, Path& path) {
  if (const auto* t = node.as_table()) {
    nlohmann::ordered_json j = nlohmann::ordered_json::object();
    for (const auto& key : ordered_keys(path, *t)) {
      path.push_back(key);
      j[key] = to_ordered_json(*t->get(key), path);
      path.pop_back();
    }
    return j;
  }
  if (const auto* a = node.as_array()) {
    nlohmann::ordered_json j = nlohmann::ordered_json::array();
    for (size_t i = 0; i < a->size(); ++i) {
      path.push_back(std::to_string(i));
      j.push_back(to_ordered_json(*a->get(i), path));
      path.pop_back();
    }
    return j;
  }
  if (const auto* f = node.as_floating_point(); f && !std::isfinite(f->get()))
    throw TopologyExportError(node.source().begin.line,
                              dotted(path) + " is " + format_double(f->get()) +
                                  ", which JSON cannot hold (its numbers are finite); give the key a finite value or "
                                  "remove it");
  return nlohmann::ordered_json(toml_to_json(node));
}

// --------------------------------------------------------------------------- TOML

std::string toml_key(const std::string& key) {
  bool bare = !key.empty();
  for (char c : key)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-')) bare = false;
  return bare ? key : toml_string_literal(key);
}

// Provenance entries are inline tables, as `run` writes them; so is any table the input wrote inline.
bool written_inline(const Path& path, const toml::table& t) {
  return t.is_inline() || (path.size() == 3 && path[0] == "provenance");
}

class TomlWriter {
 public:
  std::string text() const { return out_; }

  void table(const toml::table& t, Path& path) {
    std::vector<std::string> values, subtables;
    for (const auto& key : ordered_keys(path, t)) {
      const toml::table* sub = t.get(key)->as_table();
      path.push_back(key);
      (sub && !written_inline(path, *sub) ? subtables : values).push_back(key);
      path.pop_back();
    }
    if (!path.empty() && (!values.empty() || subtables.empty())) {
      std::string header;
      for (const auto& p : path) header += (header.empty() ? "" : ".") + toml_key(p);
      out_ += (out_.empty() ? "[" : "\n[") + header + "]\n";
    }
    for (const auto& key : values) {
      path.push_back(key);
      out_ += toml_key(key) + " = " + literal(*t.get(key), path) + "\n";
      path.pop_back();
    }
    for (const auto& key : subtables) {
      path.push_back(key);
      table(*t.get(key)->as_table(), path);
      path.pop_back();
    }
  }

 private:
  std::string literal(const toml::node& node, Path& path) {
    if (const auto* t = node.as_table()) {
      std::string out;
      for (const auto& key : ordered_keys(path, *t)) {
        path.push_back(key);
        out += (out.empty() ? "" : ", ") + toml_key(key) + " = " + literal(*t->get(key), path);
        path.pop_back();
      }
      return out.empty() ? "{}" : "{ " + out + " }";
    }
    if (const auto* a = node.as_array()) {
      std::string out = "[";
      for (size_t i = 0; i < a->size(); ++i) {
        path.push_back(std::to_string(i));
        out += (i ? ", " : "") + literal(*a->get(i), path);
        path.pop_back();
      }
      return out + "]";
    }
    if (const auto* s = node.as_string()) return toml_string_literal(s->get());
    if (const auto* i = node.as_integer()) return std::to_string(i->get());
    if (const auto* f = node.as_floating_point()) return format_double(f->get());
    if (const auto* b = node.as_boolean()) return b->get() ? "true" : "false";
    std::ostringstream os;  // dates and times: TOML's own text (RFC 3339 for date-times)
    if (const auto* v = node.as_date_time()) os << v->get();
    else if (const auto* v = node.as_date()) os << v->get();
    else if (const auto* v = node.as_time()) os << v->get();
    return os.str();
  }

  std::string out_;
};

}  // namespace

std::string topology_json_text(const toml::table& doc) {
  Path path;
  return to_ordered_json(doc, path).dump(2) + "\n";
}

std::string topology_toml_text(const toml::table& doc) {
  TomlWriter writer;
  Path path;
  writer.table(doc, path);
  return writer.text();
}

}  // namespace memtopo::host
