#include "topology/document/document.hpp"
#include "topology/base/version.hpp"

#include <unistd.h>

#include <chrono>
#include <ctime>
#include <map>
#include <regex>
#include <stdexcept>

namespace memtopo::host {

std::optional<std::string> cuda_version_string(int version) {
  if (version <= 0) return std::nullopt;
  return std::to_string(version / 1000) + "." + std::to_string((version % 1000) / 10);
}

std::string utc_now_rfc3339() {
  const std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

Meta default_meta() {
  Meta m;
  m.tool_version = MEMTOPO_VERSION;
  m.git_commit = memtopo::host::git_commit();
  m.created_utc = utc_now_rfc3339();
  char host[256] = {0};
  if (gethostname(host, sizeof host - 1) == 0) m.host = host;
  m.abi = std::to_string(MEMTOPO_ABI_MAJOR) + "." + std::to_string(MEMTOPO_ABI_MINOR);
  return m;
}

namespace {

const char* bound_name(mt_bound b) {
  switch (b) {
    case MT_BOUND_AT_LEAST: return "at_least";
    case MT_BOUND_AT_MOST: return "at_most";
    default: return "exact";
  }
}

// Element names in document order: device first, then alphabetical.
std::vector<std::string> element_order(const std::map<std::string, std::map<std::string, const ResultRecord*>>& t) {
  std::vector<std::string> out;
  if (t.count("device")) out.push_back("device");
  for (const auto& [name, _] : t)
    if (name != "device") out.push_back(name);
  return out;
}

}  // namespace

std::string render_topology(const Meta& meta, const std::vector<ProbeOutcome>& outcomes) {
  static const std::regex datetime("^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}(\\.\\d+)?Z$");
  std::string out = "[meta]\n";
  auto line = [&](const std::string& key, const std::string& literal) { out += key + " = " + literal + "\n"; };
  line("schema_version", std::to_string(meta.schema_version));
  line("tool_version", toml_string_literal(meta.tool_version));
  line("git_commit", toml_string_literal(meta.git_commit));
  // A TOML date-time when well formed; a string otherwise would fail the schema, so insist.
  if (!std::regex_match(meta.created_utc, datetime))
    throw std::runtime_error("created_utc '" + meta.created_utc + "' is not an RFC 3339 UTC date-time");
  line("created_utc", meta.created_utc);
  line("host", toml_string_literal(meta.host));
  line("backend", toml_string_literal(meta.backend));
  line("device_spec", toml_string_literal(meta.device_spec));
  if (!meta.device_name.empty()) line("device_name", toml_string_literal(meta.device_name));
  if (meta.device_uuid) line("device_uuid", toml_string_literal(*meta.device_uuid));
  if (meta.device_pci_bus_id) line("device_pci_bus_id", toml_string_literal(*meta.device_pci_bus_id));
  if (meta.driver_version) line("driver_version", toml_string_literal(*meta.driver_version));
  if (meta.runtime_version) line("runtime_version", toml_string_literal(*meta.runtime_version));
  line("abi", toml_string_literal(meta.abi));
  if (meta.device_label) line("device_label", toml_string_literal(*meta.device_label));
  if (!meta.gpu_state.empty()) {
    out += "\n[meta.gpu_state]\n";
    for (const auto& [key, value] : meta.gpu_state) line(key, to_toml_literal(value));
  }

  // element -> key -> record, from the probes whose results count (ok, not determinable).
  std::map<std::string, std::map<std::string, const ResultRecord*>> tables;
  for (const auto& o : outcomes) {
    if (!keeps_results(o.status)) continue;
    for (const auto& r : o.results) {
      const auto dot = r.key.find('.');
      tables[r.key.substr(0, dot)][r.key.substr(dot + 1)] = &r;
    }
  }
  const auto elements = element_order(tables);
  for (const auto& element : elements) {
    out += "\n[" + element + "]\n";
    for (const auto& [key, rec] : tables[element]) line(key, to_toml_literal(rec->value));
  }
  for (const auto& element : elements) {
    out += "\n[provenance." + element + "]\n";
    for (const auto& [key, rec] : tables[element]) {
      std::string inl = "{ probe = " + toml_string_literal(rec->probe) + ", confidence = " +
                        format_double(rec->confidence) + ", bound = \"" + bound_name(rec->bound) + "\"";
      if (!rec->note.empty()) inl += ", note = " + toml_string_literal(rec->note);
      // How comparisons treat the key (diff, fleet): a measurement unless the probe says so.
      if (rec->key_flags & MT_KEY_IDENTITY) inl += ", class = \"identity\"";
      else if (rec->key_flags & MT_KEY_SETTING) inl += ", class = \"setting\"";
      else if (rec->key_flags & MT_KEY_CONFIGURATION) inl += ", class = \"configuration\"";
      if (rec->key_flags & MT_KEY_VARIES) inl += ", varies = true";
      if (rec->key_flags & MT_KEY_ESTIMATE) inl += ", estimate = true";
      if (rec->key_flags & MT_KEY_HEADLINE) inl += ", headline = true";
      if (rec->key_flags & MT_KEY_RATED) inl += ", rated = true";
      if (rec->key_flags & MT_KEY_STRUCTURE) inl += ", structure = true";
      if (rec->key_flags & MT_KEY_ALWAYS) inl += ", always = true";
      if (rec->key_flags & MT_KEY_HEALTH) inl += ", health = true";
      if (!rec->role.empty()) inl += ", role = " + toml_string_literal(rec->role);
      if (!rec->verified.empty()) {
        inl += ", verified = " + toml_string_literal(rec->verified);
        if (rec->verified == "counters") inl += ", counted_bytes = " + format_double(rec->counted_bytes);
        if (!rec->verify_note.empty()) inl += ", verify_note = " + toml_string_literal(rec->verify_note);
      }
      line(key, inl + " }");
    }
  }
  std::map<std::string, const ProbeOutcome*> by_name;
  for (const auto& o : outcomes) by_name[o.probe] = &o;
  for (const auto& [name, o] : by_name) {
    out += "\n[probes." + toml_string_literal(name) + "]\n";
    line("version", toml_string_literal(o->version));
    line("status", std::string("\"") + status_name(o->status) + "\"");
    line("reason", toml_string_literal(o->reason));
    line("duration_s", format_double(o->duration_s));
    // Every declared key without a value, and why: a key does not come and go unsaid.
    if (!o->absent_keys.empty()) {
      out += "\n[probes." + toml_string_literal(name) + ".absent]\n";
      for (const auto& [key, why] : o->absent_keys) line(toml_string_literal(key), toml_string_literal(why));
    }
    if (!o->options.empty()) {
      out += "\n[probes." + toml_string_literal(name) + ".options]\n";
      for (const auto& [option, value] : o->options) line(toml_string_literal(option), to_toml_literal(value));
    }
  }
  return out;
}

}  // namespace memtopo::host
