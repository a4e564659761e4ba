// A topology as one flat CSV table (docs/host.md, "export"): one row per measured value with
// its element, key, unit (from the key's name), bound, confidence, probe and note, for
// spreadsheets and data frames. RFC 4180: comma-separated, fields with a comma or a quote
// quoted, quotes doubled, control characters as escapes; arrays in one field, elements
// separated by ';'.
#include <charconv>
#include <string>

#include "topology/base/csv.hpp"
#include "topology/base/terminal_text.hpp"
#include "tools/export/topology_export.hpp"
#include "topology/values/value.hpp"

namespace memtopo::host {

namespace {

// Shortest round-trip text of a double, with a fraction or exponent (262.0 stays 262.0).
std::string number_text(double v) {
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  std::string s(buf, r.ptr);
  if (s.find_first_of(".eEn") == std::string::npos) s += ".0";
  return s;
}

std::string scalar_text(const toml::node& n) {
  if (auto v = n.as_integer()) return std::to_string(v->get());
  if (auto v = n.as_floating_point()) return number_text(v->get());
  if (auto v = n.as_boolean()) return v->get() ? "true" : "false";
  if (auto v = n.as_string()) return v->get();
  std::string out;
  if (auto a = n.as_array())
    for (const auto& e : *a) out += (out.empty() ? "" : ";") + scalar_text(e);
  return out;
}

const toml::table* provenance_of(const toml::table& doc, const std::string& element, const std::string& key) {
  const toml::table* prov = doc["provenance"][element][key].as_table();
  return prov;
}

std::string text_at(const toml::table* t, const char* key) {
  if (!t || !t->contains(key)) return "";
  return scalar_text(*t->get(key));
}

void element_rows(const toml::table& doc, const std::string& element, const std::string& prefix,
                  const toml::table& t, std::string& out) {
  for (const auto& [k, v] : t) {
    const std::string key = prefix + std::string(k.str());
    if (const toml::table* sub = v.as_table()) {
      element_rows(doc, element, key + ".", *sub, out);
      continue;
    }
    const toml::table* prov = provenance_of(doc, element, key);
    const bool text = v.is_string() || (v.is_array() && v.as_array()->is_homogeneous(toml::node_type::string));
    out += csv_field(element) + "," + csv_field(key) + "," + (text ? csv_field(scalar_text(v)) : scalar_text(v)) +
           "," + csv_field(unit_of_key(key)) + "," + csv_field(text_at(prov, "bound")) + "," + text_at(prov, "confidence") +
           "," + csv_field(text_at(prov, "probe")) + "," + csv_field(text_at(prov, "note")) + "\n";
  }
}

}  // namespace

std::string topology_csv_text(const toml::table& doc) {
  std::string out = "element,key,value,unit,bound,confidence,probe,note\n";
  // The device first, then the elements alphabetically (the order of the JSON form).
  if (const toml::table* device = doc["device"].as_table()) element_rows(doc, "device", "", *device, out);
  for (const auto& [k, v] : doc) {
    const std::string element(k.str());
    if (element == "device" || element == "meta" || element == "provenance" || element == "probes" || element == "sim")
      continue;
    if (const toml::table* t = v.as_table()) element_rows(doc, element, "", *t, out);
  }
  return out;
}

}  // namespace memtopo::host
