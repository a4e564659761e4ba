#include "topology/checks/validate.hpp"

#include <algorithm>
#include <regex>

#include "topology/base/suggest.hpp"

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

// The keys the installed plugins provide or declare, by table: "l1d" -> {"size_bytes", ...}.
std::map<std::string, std::vector<std::string>> keys_by_table(const KeyCatalog& catalog) {
  std::map<std::string, std::set<std::string>> sets;
  auto add = [&](const std::string& key) {
    const size_t dot = key.find('.');
    if (dot != std::string::npos) sets[key.substr(0, dot)].insert(key.substr(dot + 1));
  };
  for (const auto& [key, _] : catalog.providers) add(key);
  for (const auto& [key, _] : catalog.declared) add(key);
  std::map<std::string, std::vector<std::string>> out;
  for (const auto& [table, keys] : sets) out[table].assign(keys.begin(), keys.end());
  return out;
}

// Provenance of a key the file holds no value for: a key renamed or removed by hand.
void check_provenance_has_values(const nlohmann::json& doc, Validation& out) {
  const auto prov = doc.find("provenance");
  if (prov == doc.end() || !prov->is_object()) return;
  for (const auto& [table, entries] : prov->items()) {
    if (!entries.is_object()) continue;
    const auto values = doc.find(table);
    if (values == doc.end() || !values->is_object()) {
      out.errors.push_back({"/provenance/" + table, "describes [" + table + "], which the file does not hold (a table "
                                                    "renamed or removed?); remove [provenance." + table + "] or restore it"});
      continue;
    }
    for (const auto& [key, _] : entries.items())
      if (!values->contains(key))
        out.errors.push_back({"/provenance/" + table + "/" + key,
                              "describes " + table + "." + key +
                                  ", which the file holds no value for (a key renamed or removed?); remove the entry or "
                                  "restore the value"});
  }
}

// Removes what nothing here can check (tables and keys no installed plugin provides, outside
// the schema's tables) from `doc`, noting each; checks declared keys against their declaration.
// A table or key one typo from one the plugins provide is an error naming that one.
void prune_and_check_declared(nlohmann::json& doc, const KeyCatalog& catalog, Validation& out) {
  static const std::regex name("^[a-z][a-z0-9_]*$");
  const auto known_keys = keys_by_table(catalog);
  std::vector<std::string> known_tables(schema_element_tables().begin(), schema_element_tables().end());
  for (const auto& [table, _] : known_keys) known_tables.push_back(table);
  std::vector<std::string> drop_tables;
  for (auto& [table, body] : doc.items()) {
    if (reserved(table) || !std::regex_match(table, name) || !body.is_object()) continue;
    const bool schema_knows = schema_element_tables().count(table) > 0;
    const auto keys = known_keys.find(table);
    if (!schema_knows && keys == known_keys.end()) {
      if (const std::string near = nearest_name(table, known_tables); !near.empty())
        out.errors.push_back({"/" + table, "no installed plugin provides [" + table + "] and the schema does not know it; "
                                           "did you mean [" + near + "]?"});
      else
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
      } else if (!catalog.providers.count(full)) {
        const std::string near = keys == known_keys.end() ? "" : nearest_name(key, keys->second);
        if (!near.empty())
          out.errors.push_back({pointer(table, key), "no installed plugin declares " + full + "; did you mean " + table +
                                                         "." + near + "?"});
        else if (!schema_knows || keys != known_keys.end())
          out.not_checked.push_back(full + " (no installed plugin provides it)");
        if (!schema_knows) drop_keys.push_back(key);
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
  if (doc.is_object()) check_provenance_has_values(doc, out);
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
