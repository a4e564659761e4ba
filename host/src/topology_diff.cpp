#include "memtopo_host/topology_diff.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>

#include "memtopo_host/schema.hpp"
#include "memtopo_host/terminal_text.hpp"

namespace memtopo::host {

using json = nlohmann::json;

const char* diff_kind_name(DiffKind kind) {
  switch (kind) {
    case DiffKind::value: return "value";
    case DiffKind::bound: return "bound";
    case DiffKind::type: return "type";
  }
  return "value";
}

bool TopologyDiff::equal() const {
  return differences.empty() && only_in_a.empty() && only_in_b.empty() && tables_only_in_a.empty() &&
         tables_only_in_b.empty() && probes.empty();
}

namespace {

// Tables that are not measured values: the header shows [meta], [probes] is compared on its
// own, [provenance] only supplies the bounds, [sim] holds a simulated device's model parameters.
bool reserved_table(const std::string& name) { return !is_element_table(name); }

// One element table: key within it ("latency_cycles"; a nested table's keys dotted) -> value.
using Element = std::map<std::string, json>;
using Elements = std::map<std::string, Element>;

void flatten(const json& value, const std::string& path, Element& out) {
  if (!value.is_object()) {
    out[path] = value;
    return;
  }
  for (const auto& [k, v] : value.items()) flatten(v, path.empty() ? k : path + "." + k, out);
}

// A top-level value that is not a table (not a valid topology, but still compared) is an
// element of one key, named "".
Elements element_tables(const json& doc) {
  Elements out;
  for (const auto& [name, body] : doc.items())
    if (!reserved_table(name)) flatten(body, "", out[name]);
  return out;
}

std::string full_key(const std::string& element, const std::string& key) {
  return key.empty() ? element : element + "." + key;
}

const json* member(const json* j, const std::string& name) {
  if (!j || !j->is_object()) return nullptr;
  const auto it = j->find(name);
  return it == j->end() ? nullptr : &*it;
}

// [provenance.<element>].<key>.bound; a value without one is exact.
std::string bound_of(const json& doc, const std::string& element, const std::string& key) {
  const json* b = member(member(member(member(&doc, "provenance"), element), key), "bound");
  return b && b->is_string() ? b->get<std::string>() : "exact";
}

struct Comparison {
  bool equal = true;
  DiffKind kind = DiffKind::value;
  std::optional<double> change_percent;
};

std::optional<double> change_percent(double a, double b) {
  if (a == 0 || !std::isfinite(a) || !std::isfinite(b)) return std::nullopt;
  return (b - a) / std::fabs(a) * 100;
}

bool floats_close(double a, double b, double tolerance) {
  if (a == b) return true;  // also equal infinities
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  return std::fabs(a - b) <= tolerance * std::max(std::fabs(a), std::fabs(b));
}

Comparison compare_values(const json& a, const json& b, double tolerance);

// Element-wise; the change shown is that of the element that changed most.
Comparison compare_arrays(const json& a, const json& b, double tolerance) {
  if (a.size() != b.size()) return {false, DiffKind::value, std::nullopt};
  Comparison out;
  for (size_t i = 0; i < a.size(); ++i) {
    const Comparison e = compare_values(a[i], b[i], tolerance);
    if (e.kind == DiffKind::type) return {false, DiffKind::type, std::nullopt};
    out.equal = out.equal && e.equal;
    if (e.change_percent && (!out.change_percent || std::fabs(*e.change_percent) > std::fabs(*out.change_percent)))
      out.change_percent = e.change_percent;
  }
  return out;
}

// Integers, strings, booleans exactly; a float (on either side) within the tolerance.
Comparison compare_values(const json& a, const json& b, double tolerance) {
  if (a.is_number() && b.is_number()) {
    const double x = a.get<double>(), y = b.get<double>();
    const bool discrete = !a.is_number_float() && !b.is_number_float();
    return {discrete ? a == b : floats_close(x, y, tolerance), DiffKind::value, change_percent(x, y)};
  }
  if (a.is_array() && b.is_array()) return compare_arrays(a, b, tolerance);
  if (a.type() != b.type()) return {false, DiffKind::type, std::nullopt};
  return {a == b, DiffKind::value, std::nullopt};
}

struct Documents {
  const json& a;
  const json& b;
};

void diff_element(const std::string& name, const Element& a, const Element& b, const Documents& docs,
                  double tolerance, TopologyDiff& out) {
  for (const auto& [key, va] : a) {
    const auto vb = b.find(key);
    if (vb == b.end()) {
      out.only_in_a.push_back({full_key(name, key), va, bound_of(docs.a, name, key)});
      continue;
    }
    ++out.compared;
    std::string bound_a = bound_of(docs.a, name, key), bound_b = bound_of(docs.b, name, key);
    const Comparison c = compare_values(va, vb->second, tolerance);
    if (c.equal && bound_a == bound_b) continue;
    out.differences.push_back({full_key(name, key), va, vb->second, std::move(bound_a), std::move(bound_b),
                               c.equal ? DiffKind::bound : c.kind, c.change_percent});
  }
  for (const auto& [key, vb] : b)
    if (!a.count(key)) out.only_in_b.push_back({full_key(name, key), vb, bound_of(docs.b, name, key)});
}

std::string joined(const std::set<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out.empty() ? "none" : out;
}

// The element tables to compare: all of both files, or those --only names (each must exist).
std::set<std::string> selected_elements(const Elements& a, const Elements& b, const std::vector<std::string>& only) {
  std::set<std::string> all;
  for (const auto& [name, _] : a) all.insert(name);
  for (const auto& [name, _] : b) all.insert(name);
  if (only.empty()) return all;
  for (const auto& name : only) {
    if (reserved_table(name))
      throw DiffError("--only " + name + ": [" + name + "] is not an element table (diff compares element tables such as l2; "
                      "the header shows [meta], probes are compared with their tables)");
    if (!all.count(name))
      throw DiffError("--only " + name + ": neither file has an element table [" + name + "]; their tables are " +
                      joined(all));
  }
  return {only.begin(), only.end()};
}

// The probes named in [provenance] of the given element tables.
void add_probes_of(const json& doc, const std::set<std::string>& elements, std::set<std::string>& out) {
  const json* provenance = member(&doc, "provenance");
  for (const auto& element : elements)
    if (const json* table = member(provenance, element); table && table->is_object())
      for (const auto& [_, entry] : table->items())
        if (const json* probe = member(&entry, "probe"); probe && probe->is_string()) out.insert(probe->get<std::string>());
}

std::optional<std::string> probe_field(const json* probes, const std::string& probe, const char* field) {
  const json* entry = member(probes, probe);
  if (!entry) return std::nullopt;
  const json* v = member(entry, field);
  return v && v->is_string() ? v->get<std::string>() : std::string();
}

// Probes whose version or status differs, or that one file only ran. With `limit`, only those.
void diff_probes(const Documents& docs, const std::optional<std::set<std::string>>& limit, TopologyDiff& out) {
  const json* pa = member(&docs.a, "probes");
  const json* pb = member(&docs.b, "probes");
  std::set<std::string> names;
  for (const json* probes : {pa, pb})
    if (probes && probes->is_object())
      for (const auto& [name, _] : probes->items()) names.insert(name);
  for (const auto& name : names) {
    if (limit && !limit->count(name)) continue;
    ProbeDifference p{name, probe_field(pa, name, "version"), probe_field(pb, name, "version"),
                      probe_field(pa, name, "status"), probe_field(pb, name, "status")};
    if (p.a_version != p.b_version || p.a_status != p.b_status) out.probes.push_back(std::move(p));
  }
}

}  // namespace

TopologyDiff diff_topologies(const toml::table& a, const toml::table& b, const DiffOptions& options) {
  const json doc_a = toml_to_json(a), doc_b = toml_to_json(b);
  const Documents docs{doc_a, doc_b};
  const Elements elements_a = element_tables(doc_a), elements_b = element_tables(doc_b);
  const std::set<std::string> selected = selected_elements(elements_a, elements_b, options.only);
  TopologyDiff out;
  out.tolerance_percent = options.tolerance_percent;
  const double tolerance = options.tolerance_percent / 100;
  const Element none;
  for (const auto& name : selected) {
    const auto ea = elements_a.find(name), eb = elements_b.find(name);
    if (eb == elements_b.end()) out.tables_only_in_a.push_back(name);
    if (ea == elements_a.end()) out.tables_only_in_b.push_back(name);
    diff_element(name, ea == elements_a.end() ? none : ea->second, eb == elements_b.end() ? none : eb->second, docs,
                 tolerance, out);
  }
  std::optional<std::set<std::string>> probe_limit;
  if (!options.only.empty()) {
    probe_limit.emplace();
    add_probes_of(doc_a, selected, *probe_limit);
    add_probes_of(doc_b, selected, *probe_limit);
  }
  diff_probes(docs, probe_limit, out);
  return out;
}

DiffSide diff_side(const std::string& file, const toml::table& doc) {
  DiffSide side{file, json::object(), ""};
  if (const toml::table* meta = doc["meta"].as_table()) side.meta = toml_to_json(*meta);
  if (auto name = doc["device"]["name"].value<std::string>()) side.device_name = *name;
  return side;
}

// --------------------------------------------------------------------------- rendering

namespace {

// Six significant digits: a difference beyond any useful tolerance shows; a float keeps a
// decimal point so that 33.0 does not read as an integer.
std::string shown_number(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  std::string s = buf;
  if (std::isfinite(v) && s.find_first_of(".e") == std::string::npos) s += ".0";
  return s;
}

std::string shown_value(const json& v) {
  if (v.is_number_float()) return shown_number(v.get<double>());
  if (!v.is_array()) return v.dump();
  // Whole elements up to about 40 characters, then how many there are: a table cell stays short.
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) {
    const std::string element = shown_value(v[i]);
    if (i > 0 && s.size() + element.size() > 36) return s + ", ... " + std::to_string(v.size()) + " values]";
    s += (i ? ", " : "") + element;
  }
  return s + "]";
}

std::string shown_bounded(const json& v, const std::string& bound) {
  const char* prefix = bound == "at_least" ? ">= " : bound == "at_most" ? "<= " : "";
  return prefix + shown_value(v);
}

const char* type_of(const json& v) {
  return v.is_number_integer() || v.is_number_unsigned() ? "integer"
         : v.is_number_float()                           ? "float"
         : v.is_string()                                 ? "string"
         : v.is_boolean()                                ? "boolean"
         : v.is_array()                                  ? "array"
                                                         : "other";
}

std::string shown_percent(double p) {
  char buf[40];
  std::snprintf(buf, sizeof buf, std::fabs(p) >= 0.1 ? "%+.1f %%" : "%+.2g %%", p);
  return buf;
}

std::string change_text(const KeyDifference& d) {
  switch (d.kind) {
    case DiffKind::type: return std::string(type_of(d.a)) + " -> " + type_of(d.b);
    case DiffKind::bound: return "bound " + d.a_bound + " -> " + d.b_bound;
    case DiffKind::value: break;
  }
  if (d.a.is_array() && d.b.is_array() && d.a.size() != d.b.size())
    return "length " + std::to_string(d.a.size()) + " -> " + std::to_string(d.b.size());
  if (d.change_percent) return (d.a.is_array() ? "up to " : "") + shown_percent(*d.change_percent);
  return "changed";
}

// Rows of cells, columns padded to their widest cell, two spaces apart, indented by two.
std::string aligned(const std::vector<std::vector<std::string>>& rows) {
  std::vector<size_t> width;
  for (const auto& row : rows)
    for (size_t c = 0; c < row.size(); ++c) {
      if (width.size() <= c) width.push_back(0);
      width[c] = std::max(width[c], row[c].size());
    }
  std::string out;
  for (const auto& row : rows) {
    std::string line = " ";
    for (size_t c = 0; c < row.size(); ++c) line += " " + row[c] + (c + 1 < row.size() ? std::string(width[c] - row[c].size() + 1, ' ') : "");
    out += line + "\n";
  }
  return out;
}

std::string meta_string(const json& meta, const char* key) {
  const json* v = member(&meta, key);
  return v && v->is_string() ? v->get<std::string>() : "";
}

// "cuda:0  NVIDIA H100  driver 13.0  runtime 12.4  memtopo 0.1.0 (0123456789ab)  host builder  2026-...Z"
std::string header_text(const DiffSide& side) {
  std::vector<std::string> parts{meta_string(side.meta, "device_spec"), side.device_name};
  if (auto v = meta_string(side.meta, "driver_version"); !v.empty()) parts.push_back("driver " + v);
  if (auto v = meta_string(side.meta, "runtime_version"); !v.empty()) parts.push_back("runtime " + v);
  if (auto v = meta_string(side.meta, "tool_version"); !v.empty()) {
    const std::string commit = meta_string(side.meta, "git_commit");
    parts.push_back("memtopo " + v + (commit.empty() ? "" : " (" + commit + ")"));
  }
  if (auto v = meta_string(side.meta, "host"); !v.empty()) parts.push_back("host " + v);
  parts.push_back(meta_string(side.meta, "created_utc"));
  std::string out;
  for (const auto& p : parts)
    if (!p.empty()) out += "  " + terminal_text(p);  // a device name may hold control characters
  return out;
}

std::string counted(size_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

// A table wholly in one file is one line; its keys are not listed.
void render_only_in(const char* side, const std::vector<OneSidedKey>& keys, const std::vector<std::string>& tables,
                    std::string& out) {
  if (keys.empty() && tables.empty()) return;
  out += std::string("only in ") + side + ":\n";
  auto in_table = [](const OneSidedKey& k, const std::string& table) { return k.key.rfind(table + ".", 0) == 0; };
  for (const auto& t : tables) {
    const size_t n = std::count_if(keys.begin(), keys.end(), [&](const OneSidedKey& k) { return in_table(k, t); });
    out += "  [" + t + "]  (" + counted(n, "key", "keys") + ")\n";
  }
  for (const auto& k : keys)
    if (std::none_of(tables.begin(), tables.end(), [&](const std::string& t) { return in_table(k, t); }))
      out += "  " + k.key + " = " + shown_bounded(k.value, k.bound) + "\n";
}

std::string probe_state(const std::optional<std::string>& version, const std::optional<std::string>& status) {
  if (!version && !status) return "-";
  return version.value_or("") + " " + status.value_or("");
}

std::string summary_line(const TopologyDiff& d) {
  char tolerance[40];
  std::snprintf(tolerance, sizeof tolerance, "%g", d.tolerance_percent);
  const std::string tally = "(" + counted(d.compared, "key", "keys") + " compared, tolerance " + tolerance + " %)";
  if (d.equal()) return "equal within tolerance " + tally + "\n";
  std::vector<std::string> parts;
  if (!d.differences.empty()) parts.push_back(counted(d.differences.size(), "key differs", "keys differ"));
  if (!d.only_in_a.empty()) parts.push_back(counted(d.only_in_a.size(), "key", "keys") + " only in A");
  if (!d.only_in_b.empty()) parts.push_back(counted(d.only_in_b.size(), "key", "keys") + " only in B");
  if (d.only_in_a.empty() && d.only_in_b.empty() && !(d.tables_only_in_a.empty() && d.tables_only_in_b.empty()))
    parts.push_back("an empty table in one file only");
  if (!d.probes.empty()) parts.push_back(counted(d.probes.size(), "probe differs", "probes differ"));
  std::string out = "not equal: ";
  for (size_t i = 0; i < parts.size(); ++i) out += (i ? ", " : "") + parts[i];
  return out + " " + tally + "\n";
}

// To 0.0001 %: the last digits of a quotient are noise, and would make golden files brittle.
double rounded(double percent) { return std::round(percent * 1e4) / 1e4; }

}  // namespace

std::string render_diff_text(const TopologyDiff& diff, const DiffSide& a, const DiffSide& b) {
  const size_t file_width = std::max(a.file.size(), b.file.size());
  auto header = [&](const char* label, const DiffSide& s) {
    return std::string(label) + ": " + s.file + std::string(file_width - s.file.size(), ' ') + header_text(s) + "\n";
  };
  std::string out = header("A", a) + header("B", b) + "\n";
  if (!diff.differences.empty()) {
    std::vector<std::vector<std::string>> rows{{"key", "A", "B", "change"}};
    for (const auto& d : diff.differences)
      rows.push_back({d.key, shown_bounded(d.a, d.a_bound), shown_bounded(d.b, d.b_bound), change_text(d)});
    out += "differences:\n" + aligned(rows);
  }
  render_only_in("A", diff.only_in_a, diff.tables_only_in_a, out);
  render_only_in("B", diff.only_in_b, diff.tables_only_in_b, out);
  if (!diff.probes.empty()) {
    std::vector<std::vector<std::string>> rows{{"probe", "A", "B"}};
    for (const auto& p : diff.probes)
      rows.push_back({p.probe, probe_state(p.a_version, p.a_status), probe_state(p.b_version, p.b_status)});
    out += "probes:\n" + aligned(rows);
  }
  return out + summary_line(diff);
}

nlohmann::ordered_json diff_to_json(const TopologyDiff& diff, const DiffSide& a, const DiffSide& b) {
  using ojson = nlohmann::ordered_json;
  auto side = [](const DiffSide& s) { return ojson{{"file", s.file}, {"meta", ojson::parse(s.meta.dump())}}; };
  auto optional_text = [](const std::optional<std::string>& v) { return v ? ojson(*v) : ojson(nullptr); };
  ojson differences = ojson::array();
  for (const auto& d : diff.differences)
    differences.push_back({{"key", d.key},
                           {"kind", diff_kind_name(d.kind)},
                           {"a", ojson::parse(d.a.dump())},
                           {"b", ojson::parse(d.b.dump())},
                           {"a_bound", d.a_bound},
                           {"b_bound", d.b_bound},
                           {"relative_change_percent", d.change_percent ? ojson(rounded(*d.change_percent)) : ojson(nullptr)}});
  auto one_sided = [](const std::vector<OneSidedKey>& keys) {
    ojson list = ojson::array();
    for (const auto& k : keys) list.push_back({{"key", k.key}, {"value", ojson::parse(k.value.dump())}, {"bound", k.bound}});
    return list;
  };
  ojson probes = ojson::array();
  for (const auto& p : diff.probes)
    probes.push_back({{"probe", p.probe},
                      {"a_version", optional_text(p.a_version)},
                      {"b_version", optional_text(p.b_version)},
                      {"a_status", optional_text(p.a_status)},
                      {"b_status", optional_text(p.b_status)}});
  return ojson{{"equal", diff.equal()},
               {"tolerance_percent", diff.tolerance_percent},
               {"compared", diff.compared},
               {"a", side(a)},
               {"b", side(b)},
               {"differences", differences},
               {"only_in_a", one_sided(diff.only_in_a)},
               {"only_in_b", one_sided(diff.only_in_b)},
               {"tables_only_in_a", diff.tables_only_in_a},
               {"tables_only_in_b", diff.tables_only_in_b},
               {"probes", probes}};
}

}  // namespace memtopo::host
