// The fleet's shipped table of least tolerances per GPU model (host/data/fleet_spreads.toml,
// written by scripts/fleet-spreads from healthy GPUs' runs; docs/fleet.md, "Tolerances").
#include "memtopo_host/fleet.hpp"

#include <map>

#include <toml++/toml.h>

namespace memtopo::host {

std::string_view fleet_spreads_text();  // fleet_spreads_text.cpp, generated

namespace {

using Table = std::map<std::string, std::vector<std::pair<std::string, double>>>;

Table parse_spreads() {
  Table out;
  const toml::table doc = toml::parse(fleet_spreads_text(), std::string_view("fleet_spreads.toml"));
  const toml::table* models = doc["models"].as_table();
  if (!models) return out;
  for (const auto& [model, body] : *models) {
    const toml::table* least = body.as_table() ? (*body.as_table())["least_tolerance_percent"].as_table() : nullptr;
    if (!least) continue;
    auto& keys = out[std::string(model.str())];
    for (const auto& [key, value] : *least)
      if (auto v = value.value<double>()) keys.emplace_back(std::string(key.str()), *v);
  }
  return out;
}

}  // namespace

const std::vector<std::pair<std::string, double>>& shipped_spreads(const std::string& model) {
  static const Table table = parse_spreads();
  static const std::vector<std::pair<std::string, double>> none;
  const auto it = table.find(model);
  return it == table.end() ? none : it->second;
}

}  // namespace memtopo::host
