// Reading the topology file a command names (validate, diff, export, report, draw, compare): TOML,
// or the JSON `run --format json` writes, read as the same tables. What is wrong with it goes to
// stderr in one form everywhere, FILE:LINE:COL for a TOML syntax error.
#include <cstdint>
#include <iostream>
#include <memory>

#include <nlohmann/json.hpp>

#include "cli/cli_internal.hpp"
#include "memtopo/engine.hpp"
#include "memtopo/errors.hpp"
#include "topology/values/nesting.hpp"
#include "topology/base/terminal_text.hpp"

namespace memtopo::host::cli {

namespace {

constexpr int kDeepestJson = int(kMaxNesting);

// A JSON value as TOML (what `run --format json` wrote, read back as the TOML it was): objects
// are tables, integers stay integers; [meta].created_utc is a date-time again. Throws
// std::runtime_error naming the key path where the JSON has what TOML has not (null).
std::unique_ptr<toml::node> json_to_node(const nlohmann::json& j, const std::string& path, int depth) {
  if (depth > kDeepestJson) throw std::runtime_error(path + ": nested deeper than " + std::to_string(kDeepestJson) + " levels");
  switch (j.type()) {
    case nlohmann::json::value_t::object: {
      auto t = std::make_unique<toml::table>();
      for (const auto& [key, value] : j.items()) t->insert(key, std::move(*json_to_node(value, path + "/" + key, depth + 1)));
      return t;
    }
    case nlohmann::json::value_t::array: {
      auto a = std::make_unique<toml::array>();
      for (size_t i = 0; i < j.size(); ++i)
        a->push_back(std::move(*json_to_node(j[i], path + "/" + std::to_string(i), depth + 1)));
      return a;
    }
    case nlohmann::json::value_t::string: {
      const std::string s = j.get<std::string>();
      if (path == "/meta/created_utc")
        if (auto parsed = toml::parse("d = " + s)["d"].value<toml::date_time>()) return std::make_unique<toml::value<toml::date_time>>(*parsed);
      return std::make_unique<toml::value<std::string>>(s);
    }
    case nlohmann::json::value_t::boolean: return std::make_unique<toml::value<bool>>(j.get<bool>());
    case nlohmann::json::value_t::number_integer: return std::make_unique<toml::value<int64_t>>(j.get<int64_t>());
    case nlohmann::json::value_t::number_unsigned: {
      const uint64_t u = j.get<uint64_t>();
      if (u > uint64_t(INT64_MAX)) return std::make_unique<toml::value<double>>(double(u));
      return std::make_unique<toml::value<int64_t>>(int64_t(u));
    }
    case nlohmann::json::value_t::number_float: return std::make_unique<toml::value<double>>(j.get<double>());
    default: throw std::runtime_error((path.empty() ? "/" : path) + ": null (TOML has no null); remove the key");
  }
}

std::optional<toml::table> json_as_toml(const std::string& text, const std::string& file) {
  nlohmann::json j;
  try {
    j = parse_json_bounded(text, file);  // its messages name the file
  } catch (const std::runtime_error& e) {
    std::cerr << terminal_text(e.what()) << "\n";
    return std::nullopt;
  }
  try {
    return std::move(*json_to_node(j, "", 0)->as_table());
  } catch (const std::runtime_error& e) {
    std::cerr << terminal_text(file + ": " + e.what()) << "\n";
  }
  return std::nullopt;
}

// The header `memtopo export --format csv` and `compare --format csv` write, or any first line
// of comma-separated names without '=' or '[' (which no TOML line is).
bool looks_like_csv_export(const std::string& text) {
  const std::string first = text.substr(0, text.find('\n'));
  if (first.rfind("element,key,value,unit", 0) == 0 || first.rfind("key,unit,", 0) == 0) return true;
  return first.find(',') != std::string::npos && first.find('=') == std::string::npos &&
         first.find('[') == std::string::npos && first.find('"') == std::string::npos;
}

}  // namespace

std::optional<toml::table> read_toml_or_report(const std::string& file, const std::string& what_to_name) {
  std::string text;
  try {
    text = engine::read_input_file(file, what_to_name);
  } catch (const Error& e) {
    std::cerr << terminal_text(e.what()) << "\n";
    return std::nullopt;
  }
  if (looks_like_json(text)) return json_as_toml(text, file);
  if (const auto line = toml_too_deep_at(text)) {
    std::cerr << terminal_text(toml_too_deep_message(file, *line)) << "\n";
    return std::nullopt;
  }
  try {
    return toml::parse(text, file);
  } catch (const toml::parse_error& e) {
    if (looks_like_csv_export(text)) {
      std::cerr << terminal_text(file) << ": a CSV table (`memtopo export --format csv` writes these), not a topology: "
                << "memtopo reads topologies as TOML (what `memtopo run` writes) or JSON (`run --format json`, "
                   "`export --format json`); CSV is an output only, without the provenance's classes and the probes' "
                   "statuses, so it cannot be read back. Name the TOML or JSON file it was exported from\n";
      return std::nullopt;
    }
    const auto& b = e.source().begin;
    std::cerr << terminal_text(file + ":" + std::to_string(b.line) + ":" + std::to_string(b.column) +
                               ": TOML syntax error: " + std::string(e.description()))
              << "\n";
    return std::nullopt;
  }
}

std::optional<toml::table> read_topology_or_report(const std::string& file, const std::string& what_for) {
  std::optional<toml::table> doc = read_toml_or_report(file, "a topology file; " + what_for);
  if (!doc) return std::nullopt;
  if (!(*doc)["meta"].is_table()) {
    std::cerr << terminal_text(file) << ": not a topology file (no [meta] table); name a file `memtopo run` wrote"
              << (doc->contains("device") ? " (this looks like a simulated device description)" : "") << "\n";
    return std::nullopt;
  }
  return doc;
}

}  // namespace memtopo::host::cli
