// `memtopo validate`: the schema's checks, plus what the installed plugins say about their
// keys. A table no installed plugin provides and the schema does not know is reported as not
// checked, never as an error (docs/format.md, "Validation").
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "topology/checks/invariants.hpp"
#include "topology/plugins/registry.hpp"
#include "topology/values/schema.hpp"

namespace memtopo::host {

// What the installed plugins say about result keys.
struct KeyCatalog {
  std::map<std::string, std::string> providers;  // key -> probe providing it
  struct Declared {
    std::string probe;
    KeySpec spec;
  };
  std::map<std::string, Declared> declared;  // key -> its description
  std::vector<Invariant> invariants;         // relations between keys the probes declare

  static KeyCatalog of(const Registry& registry);
};

// The element tables the built-in topology schema names ("device", "l1d", ...).
const std::set<std::string>& schema_element_tables();

struct Validation {
  std::vector<SchemaError> errors;
  // "[foo] (no installed plugin provides it)", "foo.extra (no installed plugin provides it)"
  std::vector<std::string> not_checked;
  // Declared relations between keys the file breaks (each names both keys): errors too.
  std::vector<Contradiction> contradictions;
};

Validation validate_with_plugins(const nlohmann::json& doc, const KeyCatalog& catalog);

// Whether a JSON value has a declared value type (an integer is accepted for a float).
bool json_has_type(const nlohmann::json& v, mt_value_type type);

}  // namespace memtopo::host
