#include "tools/compare/topology_diff.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>

#include "tools/compare/key_policy.hpp"
#include "topology/document/role_index.hpp"
#include "topology/values/schema.hpp"

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
  // Any tolerance of an infinite value would take every finite one.
  if (std::isinf(a) || std::isinf(b)) return false;
  return std::fabs(a - b) <= tolerance * std::max(std::fabs(a), std::fabs(b));
}

Comparison compare_values(const json& a, const json& b, double tolerance, bool estimate);

// Element-wise; the change shown is that of the element that changed most.
Comparison compare_arrays(const json& a, const json& b, double tolerance, bool estimate) {
  if (a.size() != b.size()) return {false, DiffKind::value, std::nullopt};
  Comparison out;
  for (size_t i = 0; i < a.size(); ++i) {
    const Comparison e = compare_values(a[i], b[i], tolerance, estimate);
    if (e.kind == DiffKind::type) return {false, DiffKind::type, std::nullopt};
    out.equal = out.equal && e.equal;
    if (e.change_percent && (!out.change_percent || std::fabs(*e.change_percent) > std::fabs(*out.change_percent)))
      out.change_percent = e.change_percent;
  }
  return out;
}

// Integers, strings, booleans exactly; a float (on either side), or an integer estimate, within
// the tolerance. An integer estimate is also equal one unit apart: a count rounded from a
// measured rate (25 or 26 loads in flight) can come no closer, whatever the tolerance.
Comparison compare_values(const json& a, const json& b, double tolerance, bool estimate) {
  if (a.is_number() && b.is_number()) {
    const double x = a.get<double>(), y = b.get<double>();
    const bool integers = !a.is_number_float() && !b.is_number_float();
    const bool discrete = !estimate && integers;
    const bool one_unit = estimate && integers && std::fabs(x - y) <= 1;
    return {discrete ? a == b : one_unit || floats_close(x, y, tolerance), DiffKind::value, change_percent(x, y)};
  }
  if (a.is_array() && b.is_array()) return compare_arrays(a, b, tolerance, estimate);
  if (a.type() != b.type()) return {false, DiffKind::type, std::nullopt};
  return {a == b, DiffKind::value, std::nullopt};
}

struct Documents {
  const json& a;
  const json& b;
};

// "method changed (...)" where the key's probe ran as another major version in each file.
std::string method_change_of(const Documents& docs, const std::string& element, const std::string& key) {
  auto probe_and_version = [&](const json& doc) -> std::pair<std::string, std::string> {
    const json* entry = provenance_entry(doc, element, key);
    const json* probe = entry ? member(entry, "probe") : nullptr;
    if (!probe || !probe->is_string()) return {};
    const json* version = member(member(member(&doc, "probes"), probe->get<std::string>()), "version");
    return {probe->get<std::string>(), version && version->is_string() ? version->get<std::string>() : ""};
  };
  const auto [probe_a, version_a] = probe_and_version(docs.a);
  const auto [probe_b, version_b] = probe_and_version(docs.b);
  return probe_a.empty() || probe_a != probe_b ? "" : method_change(probe_a, version_a, version_b);
}

// Why a difference in a key with this rule does not count ("" when it counts).
std::string not_counted_reason(const KeyRule& rule) {
  if (rule.key_class != KeyClass::measurement) return key_class_name(rule.key_class);
  return rule.varies ? "varies" : "";
}

// Why `doc` has no value for `key`: the reason its probe recorded under [probes."..".absent].
std::string absent_reason(const json& doc, const std::string& key) {
  const json* probes = member(&doc, "probes");
  if (!probes || !probes->is_object()) return "";
  for (const auto& [_, entry] : probes->items())
    if (const json* why = member(member(&entry, "absent"), key); why && why->is_string()) return why->get<std::string>();
  return "";
}

void diff_element(const std::string& name, const Element& a, const Element& b, const Documents& docs,
                  const KeyPolicy& policy, TopologyDiff& out) {
  auto rule_of = [&](const std::string& key) {
    return policy.rule(full_key(name, key), std::vector<KeyDeclared>{declared_in(provenance_entry(docs.a, name, key)),
                                                                     declared_in(provenance_entry(docs.b, name, key))});
  };
  for (const auto& [key, va] : a) {
    const KeyRule rule = rule_of(key);
    if (rule.ignore) continue;
    const auto vb = b.find(key);
    if (vb == b.end()) {
      if (rule.counts())
        out.only_in_a.push_back(
            {full_key(name, key), va, bound_of(docs.a, name, key), absent_reason(docs.b, full_key(name, key))});
      continue;
    }
    ++out.compared;
    std::string bound_a = bound_of(docs.a, name, key), bound_b = bound_of(docs.b, name, key);
    const Comparison c = compare_values(va, vb->second, rule.tolerance_percent / 100, rule.estimate);
    if (c.equal && bound_a == bound_b) continue;
    KeyDifference d{full_key(name, key), va, vb->second, std::move(bound_a), std::move(bound_b),
                    c.equal ? DiffKind::bound : c.kind, c.change_percent, not_counted_reason(rule)};
    if (const std::string changed = method_change_of(docs, name, key); !changed.empty() && d.reason.empty())
      d.reason = changed;
    (d.reason.empty() ? out.differences : out.not_counted).push_back(std::move(d));
  }
  for (const auto& [key, vb] : b) {
    if (a.count(key)) continue;
    if (rule_of(key).counts())
      out.only_in_b.push_back(
          {full_key(name, key), vb, bound_of(docs.b, name, key), absent_reason(docs.a, full_key(name, key))});
  }
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

// The options a probe ran with ([probes."..".options]), null where it ran with its defaults.
json probe_options(const json* probes, const std::string& probe) {
  const json* options = member(member(probes, probe), "options");
  return options && options->is_object() && !options->empty() ? *options : json();
}

// Probes whose version, status or options differ, or that one file only ran. With `limit`,
// only those.
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
                      probe_field(pa, name, "status"), probe_field(pb, name, "status"),
                      probe_options(pa, name), probe_options(pb, name)};
    if (p.a_version != p.b_version || p.a_status != p.b_status || p.a_options != p.b_options)
      out.probes.push_back(std::move(p));
  }
}

}  // namespace

TopologyDiff diff_topologies(const toml::table& a, const toml::table& b, const DiffOptions& options) {
  const json doc_a = toml_to_json(a), doc_b = toml_to_json(b);
  const Documents docs{doc_a, doc_b};
  const Elements elements_a = element_tables(doc_a), elements_b = element_tables(doc_b);
  const std::set<std::string> selected = selected_elements(elements_a, elements_b, options.only);
  TopologyDiff out;
  out.tolerance_percent = options.policy.default_tolerance();
  out.spreads_model = options.spreads_model;
  const Element none;
  for (const auto& name : selected) {
    const auto ea = elements_a.find(name), eb = elements_b.find(name);
    if (eb == elements_b.end()) out.tables_only_in_a.push_back(name), out.table_sizes[name] = ea->second.size();
    if (ea == elements_a.end()) out.tables_only_in_b.push_back(name), out.table_sizes[name] = eb->second.size();
    diff_element(name, ea == elements_a.end() ? none : ea->second, eb == elements_b.end() ? none : eb->second, docs,
                 options.policy, out);
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
  side.device_name = model_name(doc);
  return side;
}

std::string model_name(const toml::table& doc) {
  // [meta] names the GPU whatever probes ran; gpu.name is there where a probe measured it (as
  // fleet reads it).
  if (auto name = doc.at_path(RoleIndex(doc).key("gpu.name")).value<std::string>()) return *name;
  return doc["meta"]["device_name"].value_or(std::string());
}

}  // namespace memtopo::host
