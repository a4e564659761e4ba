// Checking the declared relations between result keys on a topology (invariants.hpp).
#include "topology/checks/invariants.hpp"

#include <cmath>
#include <optional>
#include <set>

namespace memtopo::host {

namespace {

// The value of "element.key" in `doc`, where it is an exact measurement.
const nlohmann::json* exact_value(const nlohmann::json& doc, const std::string& key) {
  const size_t dot = key.find('.');
  const std::string element = key.substr(0, dot), name = key.substr(dot + 1);
  if (!doc.is_object() || !doc.contains(element) || !doc[element].is_object() || !doc[element].contains(name))
    return nullptr;
  const nlohmann::json* prov = doc.contains("provenance") ? &doc["provenance"] : nullptr;
  if (prov && prov->is_object() && prov->contains(element) && (*prov)[element].is_object() &&
      (*prov)[element].contains(name)) {
    const nlohmann::json& p = (*prov)[element][name];
    if (p.is_object() && p.contains("bound") && p["bound"] != "exact") return nullptr;
  }
  return &doc[element][name];
}

std::optional<double> number(const nlohmann::json* v) {
  if (!v || !v->is_number()) return std::nullopt;
  const double d = v->get<double>();
  return std::isfinite(d) ? std::optional<double>(d) : std::nullopt;
}

std::string shown(double v) {
  if (v == std::floor(v) && std::fabs(v) < 1e15) return std::to_string(int64_t(v));
  nlohmann::json j = v;
  return j.dump();
}

// The text of a broken relation, or nullopt where it holds or cannot be checked.
std::optional<std::string> breach(const nlohmann::json& doc, const InvariantSpec& s) {
  const nlohmann::json* a = exact_value(doc, s.a);
  const nlohmann::json* b = exact_value(doc, s.b);
  if (!a || !b) return std::nullopt;
  switch (s.kind) {
    case MT_INVARIANT_EQUALS_COUNT: {
      if (!a->is_number_integer() || !b->is_array()) return std::nullopt;
      const int64_t want = a->get<int64_t>();
      if (want == int64_t(b->size())) return std::nullopt;
      return s.a + " is " + std::to_string(want) + ", but " + s.b + " has " + std::to_string(b->size()) + " elements";
    }
    case MT_INVARIANT_SUM_EQUALS: {
      const auto total = number(b);
      if (!a->is_array() || !total) return std::nullopt;
      double sum = 0;
      for (const auto& e : *a) {
        const auto x = number(&e);
        if (!x) return std::nullopt;
        sum += *x;
      }
      if (std::fabs(sum - *total) <= 1e-9 * std::max(1.0, std::fabs(*total))) return std::nullopt;
      return s.a + " adds up to " + shown(sum) + ", but " + s.b + " is " + shown(*total);
    }
    case MT_INVARIANT_LESS: {
      const auto x = number(a), y = number(b);
      if (!x || !y || *x < *y) return std::nullopt;
      return s.a + " (" + shown(*x) + ") is not less than " + s.b + " (" + shown(*y) + ")";
    }
  }
  return std::nullopt;
}

}  // namespace

std::vector<Invariant> invariants_of(const std::vector<const ProbeInfo*>& probes) {
  std::vector<Invariant> out;
  std::set<std::string> seen;  // a probe listed twice
  for (const ProbeInfo* p : probes)
    if (p && seen.insert(p->name).second)
      for (const auto& spec : p->invariants) out.push_back({spec, p->name});
  return out;
}

std::vector<Invariant> invariants_of(const Registry& registry) {
  std::vector<const ProbeInfo*> probes;
  for (const auto& p : registry.probes()) probes.push_back(&p);
  return invariants_of(probes);
}

std::string invariant_text(const InvariantSpec& spec) {
  switch (spec.kind) {
    case MT_INVARIANT_EQUALS_COUNT: return spec.a + " equals the element count of " + spec.b;
    case MT_INVARIANT_SUM_EQUALS: return "the sum of " + spec.a + " equals " + spec.b;
    case MT_INVARIANT_LESS: return spec.a + " is less than " + spec.b;
  }
  return spec.a + " ? " + spec.b;
}

std::vector<Contradiction> find_contradictions(const nlohmann::json& doc, const std::vector<Invariant>& invariants) {
  std::vector<Contradiction> out;
  for (const Invariant& inv : invariants)
    if (auto text = breach(doc, inv.spec))
      out.push_back({inv, *text + ": " + inv.spec.why + " (declared by " + inv.probe + ")"});
  return out;
}

}  // namespace memtopo::host
