#include "memtopo_host/validate.hpp"

#include <algorithm>
#include <regex>

namespace memtopo::host {

KeyCatalog KeyCatalog::of(const Registry& registry) {
  KeyCatalog c;
  for (const auto& p : registry.probes()) {  // by name: the first provider wins, as in a plan
    for (const auto& key : p.provided) c.providers.emplace(key, p.name);
    for (const auto& spec : p.keys) c.declared.emplace(spec.key, Declared{p.name, spec});
  }
  c.invariants = invariants_of(registry);
  return c;
}

const std::set<std::string>& schema_element_tables() {
  static const std::set<std::string> tables = [] {
    std::set<std::string> out;
    const auto schema = nlohmann::json::parse(topology_schema_text());
    for (const auto& [name, _] : schema.at("properties").items())
      if (name != "meta" && name != "provenance" && name != "probes" && name != "sim") out.insert(name);
    return out;
  }();
  return tables;
}

bool json_has_type(const nlohmann::json& v, mt_value_type type) {
  auto all = [&](auto pred) { return v.is_array() && std::all_of(v.begin(), v.end(), pred); };
  switch (type) {
    case MT_VALUE_INT: return v.is_number_integer();
    case MT_VALUE_FLOAT: return v.is_number();
    case MT_VALUE_STRING: return v.is_string();
    case MT_VALUE_BOOL: return v.is_boolean();
    case MT_VALUE_INT_ARRAY: return all([](const nlohmann::json& e) { return e.is_number_integer(); });
    case MT_VALUE_FLOAT_ARRAY: return all([](const nlohmann::json& e) { return e.is_number(); });
    case MT_VALUE_STRING_ARRAY: return all([](const nlohmann::json& e) { return e.is_string(); });
    default: return false;
  }
}

namespace {

bool reserved(const std::string& table) {
  return table == "meta" || table == "provenance" || table == "probes" || table == "sim";
}

std::string pointer(const std::string& table, const std::string& key) { return "/" + table + "/" + key; }

std::string shown(const nlohmann::json& v) {
  std::string text = v.dump();
  if (text.size() > 40) text = text.substr(0, 37) + "...";
  const char* kind = v.is_number_integer() ? "integer "
                     : v.is_number()       ? "float "
                     : v.is_string()       ? "string "
                     : v.is_boolean()      ? "boolean "
                     : v.is_array()        ? "array "
                                           : "";
  return kind + text;
}

// Removes what nothing here can check (tables and keys no installed plugin provides, outside
// the schema's tables) from `doc`, noting each; checks declared keys against their declaration.
void prune_and_check_declared(nlohmann::json& doc, const KeyCatalog& catalog, Validation& out) {
  static const std::regex name("^[a-z][a-z0-9_]*$");
  std::set<std::string> provided_tables;
  for (const auto& [key, _] : catalog.providers) provided_tables.insert(key.substr(0, key.find('.')));
  std::vector<std::string> drop_tables;
  for (auto& [table, body] : doc.items()) {
    if (reserved(table) || !std::regex_match(table, name) || !body.is_object()) continue;
    const bool schema_knows = schema_element_tables().count(table) > 0;
    if (!schema_knows && !provided_tables.count(table)) {
      out.not_checked.push_back("[" + table + "] (no installed plugin provides it)");
      drop_tables.push_back(table);
      continue;
    }
    std::vector<std::string> drop_keys;
    for (const auto& [key, value] : body.items()) {
      const std::string full = table + "." + key;
      if (auto d = catalog.declared.find(full); d != catalog.declared.end()) {
        const KeySpec& spec = d->second.spec;
        if (!json_has_type(value, spec.type))
          out.errors.push_back({pointer(table, key), d->second.probe + " declares " + type_name(spec.type) +
                                                         (spec.unit.empty() ? "" : " (" + spec.unit + ")") + ", got " +
                                                         shown(value)});
      } else if (!schema_knows && !catalog.providers.count(full)) {
        out.not_checked.push_back(full + " (no installed plugin provides it)");
        drop_keys.push_back(key);
      }
    }
    for (const auto& k : drop_keys) body.erase(k);
  }
  for (const auto& t : drop_tables) doc.erase(t);
}

}  // namespace

Validation validate_with_plugins(const nlohmann::json& doc, const KeyCatalog& catalog) {
  Validation out;
  out.errors = non_finite_numbers(doc);  // in tables no plugin provides too: export refuses them
  nlohmann::json pruned = doc;
  if (pruned.is_object()) prune_and_check_declared(pruned, catalog, out);
  // The declaration's message is the more precise one for a value both disagree with.
  for (auto& e : validate_topology(pruned)) {
    const bool said = std::any_of(out.errors.begin(), out.errors.end(), [&](const SchemaError& d) { return d.path == e.path; });
    if (!said) out.errors.push_back(std::move(e));
  }
  out.contradictions = find_contradictions(doc, catalog.invariants);
  return out;
}

}  // namespace memtopo::host
