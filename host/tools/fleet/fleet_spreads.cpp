// The fleet's shipped table of least tolerances per GPU model (host/data/fleet_spreads.toml,
// written by scripts/fleet-spreads from healthy GPUs' runs; docs/fleet.md, "Tolerances").
#include "tools/fleet/fleet.hpp"

#include <map>

#include <toml++/toml.h>

namespace memtopo::host {

std::string_view fleet_spreads_text();  // fleet_spreads_text.cpp, generated

namespace {

using Table = std::map<std::string, ShippedSpreads>;

Table parse_spreads() {
  Table out;
  const toml::table doc = toml::parse(fleet_spreads_text(), std::string_view("fleet_spreads.toml"));
  const toml::table* models = doc["models"].as_table();
  if (!models) return out;
  for (const auto& [model, body] : *models) {
    const toml::table* entry = body.as_table();
    const toml::table* least = entry ? (*entry)["least_tolerance_percent"].as_table() : nullptr;
    if (!least) continue;
    ShippedSpreads& s = out[std::string(model.str())];
    s.gpus = static_cast<size_t>((*entry)["gpus"].value_or(int64_t{0}));
    s.runs = static_cast<size_t>((*entry)["runs"].value_or(int64_t{0}));
    for (const auto& [key, value] : *least)
      if (auto v = value.value<double>()) s.least_tolerance_percent.emplace_back(std::string(key.str()), *v);
  }
  return out;
}

}  // namespace

bool ShippedSpreads::rates() const { return gpus >= kRatingMinGpus && runs >= kRatingMinRuns; }

const ShippedSpreads& shipped_spreads(const std::string& model) {
  static const Table table = parse_spreads();
  static const ShippedSpreads none;
  const auto it = table.find(model);
  return it == table.end() ? none : it->second;
}

}  // namespace memtopo::host
