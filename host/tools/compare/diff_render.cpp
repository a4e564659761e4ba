// memtopo diff's two renderings of a TopologyDiff: the aligned text and the JSON object.
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "topology/document/summary.hpp"
#include "topology/base/terminal_text.hpp"
#include "topology/base/text_table.hpp"
#include "tools/compare/topology_diff.hpp"

namespace memtopo::host {

using json = nlohmann::json;

namespace {

// In the unit the key's name carries, as the run's summary shows it ("69.0 cyc", "65.2 GiB");
// a list's first four elements.
// Texts quoted, as JSON: "9.0" against 9.0 is a change of type.
std::string shown_bounded(const std::string& key, const json& v, const std::string& bound) {
  const char* prefix = bound == "at_least" ? ">= " : bound == "at_most" ? "<= " : "";
  return prefix + (v.is_string() ? v.dump() : format_json_value(key, v, 4));
}

const char* type_of(const json& v) {
  return v.is_number_integer() || v.is_number_unsigned() ? "integer"
         : v.is_number_float()                           ? "float"
         : v.is_string()                                 ? "string"
         : v.is_boolean()                                ? "boolean"
         : v.is_array()                                  ? "array"
                                                         : "other";
}

std::string change_text(const KeyDifference& d) {
  switch (d.kind) {
    case DiffKind::type: return std::string(type_of(d.a)) + " -> " + type_of(d.b);
    case DiffKind::bound: return "bound " + d.a_bound + " -> " + d.b_bound;
    case DiffKind::value: break;
  }
  if (d.a.is_array() && d.b.is_array() && d.a.size() != d.b.size())
    return "length " + std::to_string(d.a.size()) + " -> " + std::to_string(d.b.size());
  if (const std::string n = changed_entries_text(d.a, d.b); !n.empty()) return n;
  if (d.change_percent) return (d.a.is_array() ? "up to " : "") + shown_percent(*d.change_percent);
  return "changed";
}

std::string meta_string(const json& meta, const char* key) {
  if (!meta.is_object()) return "";
  const auto v = meta.find(key);
  return v != meta.end() && v->is_string() ? v->get<std::string>() : "";
}

// "cuda:0  NVIDIA H100  driver 13.0  runtime 12.4  memtopo 0.1.0 (0123456789ab)  host builder  2026-...Z"
std::string header_text(const DiffSide& side) {
  std::vector<std::string> parts{meta_string(side.meta, "device_spec"), side.device_name};
  if (auto v = meta_string(side.meta, "driver_version"); !v.empty()) parts.push_back("driver " + v);
  if (auto v = meta_string(side.meta, "runtime_version"); !v.empty()) parts.push_back("runtime " + v);
  if (auto v = meta_string(side.meta, "tool_version"); !v.empty()) {
    const std::string commit = meta_string(side.meta, "git_commit");
    parts.push_back("memtopo " + v + (commit.empty() ? "" : " (" + commit + ")"));
  }
  if (auto v = meta_string(side.meta, "host"); !v.empty()) parts.push_back("host " + v);
  parts.push_back(meta_string(side.meta, "created_utc"));
  std::string out;
  for (const auto& p : parts)
    if (!p.empty()) out += "  " + terminal_text(p);  // a device name may hold control characters
  return out;
}

// A table wholly in one file is one line; its keys are not listed.
void render_only_in(const char* side, const std::vector<OneSidedKey>& keys, const std::vector<std::string>& tables,
                    const std::map<std::string, size_t>& sizes, std::string& out) {
  if (keys.empty() && tables.empty()) return;
  out += std::string("only in ") + side + ":\n";
  auto in_table = [](const OneSidedKey& k, const std::string& table) { return k.key.rfind(table + ".", 0) == 0; };
  for (const auto& t : tables) {
    // Every key of the table: configuration and identity keys too, which are no difference.
    const auto size = sizes.find(t);
    const size_t n = size != sizes.end() ? size->second
                                         : size_t(std::count_if(keys.begin(), keys.end(),
                                                                [&](const OneSidedKey& k) { return in_table(k, t); }));
    out += "  [" + t + "]  (" + counted(n, "key", "keys") + ")\n";
  }
  for (const auto& k : keys)
    if (std::none_of(tables.begin(), tables.end(), [&](const std::string& t) { return in_table(k, t); }))
      out += wrapped_lines("  " + k.key + " = " + shown_bounded(k.key, k.value, k.bound) +
                               (k.absent_reason.empty() ? std::string()
                                                        : std::string("  (") + (side[0] == 'A' ? "B" : "A") +
                                                              ": absent: " + terminal_text(k.absent_reason) + ")"),
                           6) +
             "\n";
}

// "2.1.0 ok", and the options it ran with other than its defaults: "2.1.0 ok, series = [...]".
std::string probe_state(const std::optional<std::string>& version, const std::optional<std::string>& status,
                        const nlohmann::json& options) {
  if (!version && !status) return "-";
  std::string out = version.value_or("") + " " + status.value_or("");
  if (options.is_object())
    for (const auto& [name, value] : options.items()) out += ", " + name + " = " + value.dump();
  return out;
}

std::string summary_line(const TopologyDiff& d) {
  char tolerance[40];
  std::snprintf(tolerance, sizeof tolerance, "%g", d.tolerance_percent);
  std::string tally = "(" + counted(d.compared, "key", "keys") + " compared, tolerance " + tolerance + " %";
  if (!d.spreads_model.empty()) tally += ", or the measured spread of " + terminal_text(d.spreads_model) + " where wider";
  tally += ")";
  if (d.equal()) return wrapped_lines("equal within tolerance " + tally, 2) + "\n";
  std::vector<std::string> parts;
  if (!d.differences.empty()) parts.push_back(counted(d.differences.size(), "key differs", "keys differ"));
  if (!d.only_in_a.empty()) parts.push_back(counted(d.only_in_a.size(), "key", "keys") + " only in A");
  if (!d.only_in_b.empty()) parts.push_back(counted(d.only_in_b.size(), "key", "keys") + " only in B");
  if (d.only_in_a.empty() && d.only_in_b.empty() && !(d.tables_only_in_a.empty() && d.tables_only_in_b.empty()))
    parts.push_back("an empty table in one file only");
  if (!d.probes.empty()) parts.push_back(counted(d.probes.size(), "probe differs", "probes differ"));
  std::string out = "not equal: ";
  for (size_t i = 0; i < parts.size(); ++i) out += (i ? ", " : "") + parts[i];
  return wrapped_lines(out + " " + tally, 2) + "\n";
}

// To 0.0001 %: the last digits of a quotient are noise, and would make golden files brittle.
double rounded(double percent) { return std::round(percent * 1e4) / 1e4; }

}  // namespace

long changed_entries(const json& a, const json& b) {
  if (!a.is_array() || !b.is_array() || a.size() != b.size() || a.empty()) return -1;
  long changed = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    if (!a[i].is_number_integer() || !b[i].is_number_integer()) return -1;
    changed += a[i] != b[i];
  }
  return changed;
}

std::string changed_entries_text(const json& a, const json& b) {
  const long n = changed_entries(a, b);
  if (n < 0) return "";
  return std::to_string(n) + " of " + std::to_string(a.size()) + (a.size() == 1 ? " entry" : " entries") + " changed";
}

std::string render_diff_text(const TopologyDiff& diff, const DiffSide& a, const DiffSide& b) {
  const size_t file_width = std::max(a.file.size(), b.file.size());
  auto header = [&](const char* label, const DiffSide& s) {
    // The file, then what ran it; on a line of its own where the two do not fit one.
    const std::string one = std::string(label) + ": " + s.file + std::string(file_width - s.file.size(), ' ') + header_text(s);
    if (one.size() <= kTextColumns) return one + "\n";
    const std::string run = header_text(s);
    const size_t start = std::min(run.size(), run.find_first_not_of(' '));
    return std::string(label) + ": " + s.file + "\n" + wrapped_lines("   " + run.substr(start), 3) + "\n";
  };
  std::string out = header("A", a) + header("B", b) + "\n";
  if (!diff.differences.empty()) {
    std::vector<std::vector<std::string>> rows{{"key", "A", "B", "change"}};
    for (const auto& d : diff.differences) {
      // A change of type in JSON's own words, where units would hide it (9.0 against "9.0").
      if (d.kind == DiffKind::type) rows.push_back({d.key, shown_value(d.a), shown_value(d.b), change_text(d)});
      else
        rows.push_back(
            {d.key, shown_bounded(d.key, d.a, d.a_bound), shown_bounded(d.key, d.b, d.b_bound), change_text(d)});
    }
    out += "differences:\n" + aligned_within(rows);
  }
  if (!diff.not_counted.empty()) {
    std::vector<std::vector<std::string>> rows{{"key", "A", "B", "why"}};
    for (const auto& d : diff.not_counted)
      rows.push_back({d.key, shown_bounded(d.key, d.a, d.a_bound), shown_bounded(d.key, d.b, d.b_bound),
                      d.reason == "varies" ? "varies between runs" : d.reason});
    out += "not counted (identities, settings, keys known to vary, method changes):\n" + aligned_within(rows);
  }
  render_only_in("A", diff.only_in_a, diff.tables_only_in_a, diff.table_sizes, out);
  render_only_in("B", diff.only_in_b, diff.tables_only_in_b, diff.table_sizes, out);
  if (!diff.probes.empty()) {
    std::vector<std::vector<std::string>> rows{{"probe", "A", "B"}};
    for (const auto& p : diff.probes)
      rows.push_back({p.probe, probe_state(p.a_version, p.a_status, p.a_options),
                      probe_state(p.b_version, p.b_status, p.b_options)});
    out += "probes:\n" + aligned_within(rows);
  }
  return out + summary_line(diff);
}

nlohmann::ordered_json diff_to_json(const TopologyDiff& diff, const DiffSide& a, const DiffSide& b) {
  using ojson = nlohmann::ordered_json;
  auto side = [](const DiffSide& s) { return ojson{{"file", s.file}, {"meta", ojson::parse(s.meta.dump())}}; };
  auto optional_text = [](const std::optional<std::string>& v) { return v ? ojson(*v) : ojson(nullptr); };
  auto listed = [](const std::vector<KeyDifference>& list, bool with_reason) {
    ojson out = ojson::array();
    for (const auto& d : list) {
      ojson row{{"key", d.key},
                {"kind", diff_kind_name(d.kind)},
                {"a", ojson::parse(d.a.dump())},
                {"b", ojson::parse(d.b.dump())},
                {"a_bound", d.a_bound},
                {"b_bound", d.b_bound},
                {"relative_change_percent", d.change_percent && changed_entries(d.a, d.b) < 0
                                                ? ojson(rounded(*d.change_percent))
                                                : ojson(nullptr)}};
      if (const long n = changed_entries(d.a, d.b); n >= 0) row["changed_entries"] = n;
      if (with_reason) row["reason"] = d.reason;
      out.push_back(std::move(row));
    }
    return out;
  };
  auto one_sided = [](const std::vector<OneSidedKey>& keys) {
    ojson list = ojson::array();
    for (const auto& k : keys) {
      ojson entry{{"key", k.key}, {"value", ojson::parse(k.value.dump())}, {"bound", k.bound}};
      if (!k.absent_reason.empty()) entry["absent_reason"] = k.absent_reason;
      list.push_back(std::move(entry));
    }
    return list;
  };
  ojson probes = ojson::array();
  for (const auto& p : diff.probes)
    probes.push_back({{"probe", p.probe},
                      {"a_version", optional_text(p.a_version)},
                      {"b_version", optional_text(p.b_version)},
                      {"a_status", optional_text(p.a_status)},
                      {"b_status", optional_text(p.b_status)},
                      {"a_options", ojson::parse(p.a_options.dump())},
                      {"b_options", ojson::parse(p.b_options.dump())}});
  return ojson{{"equal", diff.equal()},
               {"tolerance_percent", diff.tolerance_percent},
               {"spreads_model", diff.spreads_model},
               {"compared", diff.compared},
               {"a", side(a)},
               {"b", side(b)},
               {"differences", listed(diff.differences, false)},
               {"not_counted", listed(diff.not_counted, true)},
               {"only_in_a", one_sided(diff.only_in_a)},
               {"only_in_b", one_sided(diff.only_in_b)},
               {"tables_only_in_a", diff.tables_only_in_a},
               {"tables_only_in_b", diff.tables_only_in_b},
               {"probes", probes}};
}

}  // namespace memtopo::host
