// Reading the topologies of a fleet: each file flattened to its element keys, bounds and
// provenance classes, read in parallel (thousands of files; docs/fleet.md, "Scale").
#include <algorithm>
#include <atomic>
#include <cctype>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <stdexcept>
#include <thread>
#include <unordered_map>

#include <toml++/toml.h>

#include "tools/fleet/fleet_duplicates.hpp"
#include "memtopo/engine.hpp"
#include "memtopo/errors.hpp"
#include "tools/fleet/fleet.hpp"
#include "topology/values/gpu_state.hpp"
#include "topology/values/nesting.hpp"
#include "topology/values/own_toml.hpp"
#include "topology/values/schema.hpp"
#include "topology/values/value.hpp"
#include "topology/document/role_index.hpp"
#include "topology/document/summary.hpp"

namespace memtopo::host {

namespace fs = std::filesystem;
using json = nlohmann::json;

const FlatValue* FleetMember::find(const std::string& key) const {
  const auto it = std::lower_bound(values.begin(), values.end(), key,
                                   [](const auto& e, const std::string& k) { return e.first < k; });
  return it != values.end() && it->first == key ? &it->second : nullptr;
}

std::string FleetMember::absent_reason(const std::string& key) const {
  const auto it = std::lower_bound(absent.begin(), absent.end(), key,
                                   [](const auto& e, const std::string& k) { return e.first < k; });
  return it != absent.end() && it->first == key ? it->second : std::string();
}

namespace {

std::string text_at(const json& doc, const char* table, const char* key) {
  const auto t = doc.find(table);
  if (t == doc.end() || !t->is_object()) return "";
  const auto v = t->find(key);
  return v != t->end() && v->is_string() ? v->get<std::string>() : "";
}

// Moves each value out of `value`: the document is not read again.
void flatten(json& value, const std::string& path, std::vector<std::pair<std::string, json>>& out) {
  if (!value.is_object()) {
    out.emplace_back(path, std::move(value));
    return;
  }
  for (auto it = value.begin(); it != value.end(); ++it) flatten(it.value(), path + "." + it.key(), out);
}

// One copy of each name for the process, never freed: the views FlatValue::probe holds stay
// valid. Each thread asks the shared pool once per name.
std::string_view interned(const std::string& name) {
  thread_local std::unordered_map<std::string, std::string_view> known;
  if (const auto it = known.find(name); it != known.end()) return it->second;
  static std::mutex guard;
  static std::set<std::string, std::less<>> pool;
  std::string_view view;
  {
    const std::lock_guard<std::mutex> lock(guard);
    view = *pool.insert(name).first;
  }
  known.emplace(name, view);
  return view;
}

// The model's group: its name, compute capability, SMs and memory, by their gpu.* roles.
std::string group_of(const json& doc, const RoleIndex& roles, const std::string& model) {
  const std::string& name_key = roles.key("gpu.name");
  const std::string table = name_key.substr(0, name_key.find('.'));
  if (const auto d = doc.find(table); d == doc.end() || !d->is_object())
    return (model.empty() ? std::string("unknown device") : model) + " (no [" + table + "] table)";
  std::string g = model.empty() ? "unnamed device" : model;
  if (const json* cc = RoleIndex::value_in(doc, roles.key("gpu.compute_capability")))
    g += ", cc " + (cc->is_string() ? cc->get<std::string>() : cc->dump());
  if (const json* sm = RoleIndex::value_in(doc, roles.key("gpu.sm_count")); sm && sm->is_number_integer())
    g += ", " + sm->dump() + " SMs";
  // A JSON integer above 2^63 - 1 is unsigned in nlohmann and would wrap to a negative size.
  if (const json* mem = RoleIndex::value_in(doc, roles.key("gpu.global_memory_bytes"));
      mem && mem->is_number_integer() && (!mem->is_number_unsigned() || mem->get<uint64_t>() <= uint64_t(INT64_MAX)))
    g += ", " + format_bytes(mem->get<int64_t>());
  return g;
}

// A text value of the key of `role`; "" where the file has none.
std::string text_of_role(const json& doc, const RoleIndex& roles, const char* role) {
  const json* v = RoleIndex::value_in(doc, roles.key(role));
  return v && v->is_string() ? v->get<std::string>() : "";
}

// The file's JSON form, nested at most kMaxNesting deep (nesting.hpp): deeper files overflowed
// the stack of the reader that met them first.
json parse_document(const std::string& file, const std::string& text) {
  if (looks_like_json(text)) return parse_json_bounded(text, file);
  if (auto doc = read_own_toml(text)) return std::move(*doc);  // the form memtopo writes, quickly
  if (const auto line = toml_too_deep_at(text)) throw std::runtime_error(toml_too_deep_message(file, *line));
  try {
    return toml_to_json(toml::parse(text, file));
  } catch (const toml::parse_error& e) {
    throw std::runtime_error(file + ":" + std::to_string(e.source().begin.line) + ": TOML syntax error: " +
                             std::string(e.description()));
  }
}

// The verdict every reader of a topology gives (schema.hpp): a NaN, or a string, boolean or
// date where a number belongs, makes the file no input to compare.
void refuse_invalid(const json& doc, const std::string& file) {
  const std::vector<SchemaError> errors = validate_topology(doc);
  if (errors.empty()) return;
  std::string more = errors.size() > 1 ? " (and " + std::to_string(errors.size() - 1) + " more)" : "";
  throw std::runtime_error(file + ": " + errors.front().text() + more + "; not compared (`memtopo validate " + file +
                           "` lists every problem)");
}

// What measured the file: the build, and the probes run with their versions and the options
// they ran with (a default run, an acceptance preset, --only, a config): values of different
// builds, probe sets or experiments are not compared.
std::string like_of(const json& doc, const FleetMember& m) {
  std::string versions;
  for (const auto& [name, state] : m.probes) versions += name + " " + state.substr(0, state.find(' ')) + ";";
  for (const auto& [name, options] : m.probe_options) versions += name + " {" + options + "};";
  const std::string commit = text_at(doc, "meta", "git_commit");
  char fingerprint[24];
  std::snprintf(fingerprint, sizeof fingerprint, "%08zx", std::hash<std::string>{}(versions) & 0xffffffffu);
  return "memtopo " + text_at(doc, "meta", "tool_version") + (commit.empty() ? "" : " (" + commit + ")") + ", " +
         std::to_string(m.probes.size()) + " probes #" + fingerprint;
}

bool is_topology_file(const fs::path& p) {
  std::string name = p.filename().string();  // .TOML and .JSON as well: names from other systems
  std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return char(std::tolower(c)); });
  auto ends = [&](const std::string& s) { return name.size() >= s.size() && name.compare(name.size() - s.size(), s.size(), s) == 0; };
  if (ends(".partial.toml")) return false;  // interrupted runs
  return ends(".toml") || ends(".json");
}

// `memtopo fleet --format json` (and `run --device all`'s fleet.json): a report, beside the
// topologies it judged, not one of them. Known by what it holds, not by its name: a GPU's own
// file may be called fleetnode01-gpu0.toml.
struct FleetReportFile : std::runtime_error {
  using std::runtime_error::runtime_error;
};
bool is_fleet_report(const json& doc) {
  return doc.is_object() && !doc.contains("meta") && doc.contains("gpus_total") && doc.contains("gpus");
}

}  // namespace

FleetMember read_fleet_member(const std::string& file) {
  std::string text;
  try {
    text = engine::read_input_file(file, "a topology file written by `memtopo run`");
  } catch (const Error& e) {
    throw std::runtime_error(e.what());
  }
  return fleet_member_of(file, text);
}

FleetMember fleet_member_of(const std::string& file, const std::string& text) {
  json doc = parse_document(file, text);
  if (is_fleet_report(doc))
    throw FleetReportFile(file + ": a fleet report (`memtopo fleet --format json`), not a topology file");
  if (!doc.is_object() || !doc.contains("meta") || !doc["meta"].is_object())
    throw std::runtime_error(file + ": not a topology file (no [meta] table); name files `memtopo run` wrote");
  refuse_invalid(doc, file);
  FleetMember m;
  m.file = file;
  m.host = text_at(doc, "meta", "host");
  m.created_utc = text_at(doc, "meta", "created_utc");
  m.device_spec = text_at(doc, "meta", "device_spec");
  m.backend = text_at(doc, "meta", "backend");
  m.device = text_at(doc, "meta", "device_label");
  if (m.device.empty()) m.device = m.device_spec;
  // [meta] names the GPU whatever probes ran; the gpu.* keys only where a probe measured them.
  const RoleIndex roles(doc);
  m.uuid = text_of_role(doc, roles, "gpu.uuid");
  if (m.uuid.empty()) m.uuid = text_at(doc, "meta", "device_uuid");
  m.model = text_of_role(doc, roles, "gpu.name");
  if (m.model.empty()) m.model = text_at(doc, "meta", "device_name");
  m.group = group_of(doc, roles, m.model);
  std::vector<std::pair<std::string, json>> flat;
  for (auto table = doc.begin(); table != doc.end(); ++table) {
    const std::string& element = table.key();
    if (!is_element_table(element)) continue;
    flat.clear();
    if (table->is_object())
      for (auto it = table->begin(); it != table->end(); ++it) flatten(it.value(), it.key(), flat);
    for (auto& [key, value] : flat) {
      FlatValue fv;
      fv.value = std::move(value);
      if (const json* p = provenance_entry(doc, element, key)) {
        fv.declared = declared_in(p);
        if (auto b = p->find("bound"); b != p->end() && b->is_string()) fv.bound = b->get<std::string>();
        if (auto probe = p->find("probe"); probe != p->end() && probe->is_string())
          fv.probe = interned(probe->get_ref<const std::string&>());
      }
      m.values.emplace_back(element + "." + key, std::move(fv));
    }
  }
  std::sort(m.values.begin(), m.values.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  m.values.shrink_to_fit();  // a fleet holds thousands of members: no vector at twice its size
  if (auto probes = doc.find("probes"); probes != doc.end() && probes->is_object())
    for (const auto& [name, entry] : probes->items()) {
      m.probes.emplace_back(name, text_at(*probes, name.c_str(), "version") + " " + text_at(*probes, name.c_str(), "status"));
      if (auto absent = entry.find("absent"); entry.is_object() && absent != entry.end() && absent->is_object())
        for (const auto& [key, why] : absent->items())
          if (why.is_string()) m.absent.emplace_back(key, why.get<std::string>());
      if (auto options = entry.find("options"); entry.is_object() && options != entry.end() && options->is_object()) {
        std::string body;
        for (const auto& [option, v] : options->items())
          if (const std::optional<Value> value = from_json_inferred(v))
            body += toml_string_literal(option) + " = " + to_toml_literal(*value) + "\n";
        if (!body.empty()) m.probe_options.emplace_back(name, body);
      }
    }
  std::sort(m.probe_options.begin(), m.probe_options.end());
  std::sort(m.absent.begin(), m.absent.end());
  if (auto meta = doc.find("meta"); meta->contains("gpu_state")) m.state_warnings = gpu_state_warnings((*meta)["gpu_state"]);
  m.like = like_of(doc, m);
  return m;
}

std::vector<FleetMember> read_fleet(const std::vector<std::string>& paths, std::vector<std::string>* errors,
                                    std::vector<std::string>* notes) {
  std::vector<std::string> files;
  std::set<std::string> listed;  // found in a folder, not named
  for (const auto& p : paths) {
    std::error_code ec;
    if (!fs::is_directory(p, ec)) {
      files.push_back(p);
      continue;
    }
    std::vector<std::string> found;
    for (auto it = fs::recursive_directory_iterator(p, ec); !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
      // What `fleet --confirm` measured again: part of no GPU's run (fleet_confirm.hpp).
      if (it->is_directory(ec) && it->path().filename() == kConfirmFolder) it.disable_recursion_pending();
      else if (it->is_regular_file(ec) && is_topology_file(it->path())) found.push_back(it->path().string());
    }
    if (ec) errors->push_back(p + ": cannot list the folder: " + ec.message());
    std::sort(found.begin(), found.end());
    if (found.empty()) errors->push_back(p + ": holds no topology files (*.toml, *.json)");
    listed.insert(found.begin(), found.end());
    files.insert(files.end(), found.begin(), found.end());
  }
  files = distinct_files(files, notes);
  std::vector<std::optional<FleetMember>> read(files.size());
  std::vector<std::string> why(files.size());
  std::vector<char> report(files.size(), 0);
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i = next++; i < files.size(); i = next++) {
      try {
        read[i] = read_fleet_member(files[i]);
      } catch (const FleetReportFile& e) {
        why[i] = e.what();
        report[i] = 1;
      } catch (const std::exception& e) {
        why[i] = e.what();
      }
    }
  };
  const size_t threads = std::clamp<size_t>(std::thread::hardware_concurrency(), 1, 16);
  std::vector<std::thread> pool;
  for (size_t t = 1; t < std::min(threads, files.size()); ++t) pool.emplace_back(work);
  work();
  for (auto& t : pool) t.join();
  std::vector<FleetMember> members;
  for (size_t i = 0; i < files.size(); ++i) {
    if (read[i]) members.push_back(std::move(*read[i]));
    else if (report[i] && listed.count(files[i])) notes->push_back(why[i] + ": skipped");
    else errors->push_back(why[i]);
  }
  return one_member_per_gpu(std::move(members), notes);
}

}  // namespace memtopo::host

namespace memtopo::host {

SummaryColumn summary_column_of(const std::string& file, const std::string& label) {
  SummaryColumn c{label, {}, ""};
  try {
    const FleetMember f = read_fleet_member(file);
    ProbeOutcome all;
    all.status = Status::Ok;
    for (const auto& [key, v] : f.values) {
      auto value = from_json_inferred(v.value);
      if (!value) continue;
      ResultRecord r;
      r.key = key;
      r.value = std::move(*value);
      r.bound = v.bound == "at_least" ? MT_BOUND_AT_LEAST : v.bound == "at_most" ? MT_BOUND_AT_MOST : MT_BOUND_EXACT;
      if (v.declared.headline) r.key_flags |= MT_KEY_HEADLINE;
      all.results.push_back(std::move(r));
    }
    c.outcomes.push_back(std::move(all));
    std::map<std::string, int> count;
    for (const auto& [_, state] : f.probes) ++count[state.substr(state.rfind(' ') + 1)];
    for (const auto& [status, n] : count) c.tally += (c.tally.empty() ? "" : ", ") + std::to_string(n) + " " + status;
  } catch (const std::exception& e) {
    c.tally = std::string(kUnreadable) + e.what();
  }
  return c;
}

}  // namespace memtopo::host
