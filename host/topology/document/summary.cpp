#include "topology/document/summary.hpp"
#include "topology/document/role_index.hpp"
#include "topology/base/terminal_text.hpp"
#include "topology/base/text_table.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iterator>
#include <map>
#include <set>

namespace memtopo::host {

namespace {

// Room for one element's line; known keys are always shown, the others while they fit.
constexpr size_t kLineWidth = 120;
constexpr size_t kMaxArrayItems = 4;
constexpr size_t kMaxHeadlineItems = 8;  // a declared headline array (the spectrum's levels)

using Table = std::map<std::string, const ResultRecord*>;  // key (without element) -> record

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::string format_number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

// A rate in bytes per second with three significant digits in the largest unit below it.
std::string format_rate(double bytes_per_second) {
  const char* units[] = {"B/s", "kB/s", "MB/s", "GB/s", "TB/s"};
  size_t u = 0;
  while (u + 1 < std::size(units) && std::fabs(bytes_per_second) >= 1000) bytes_per_second /= 1000, ++u;
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g %s", bytes_per_second, units[u]);
  return buf;
}

std::string format_khz(int64_t khz) {
  if (khz != 0 && khz % 1000 == 0) return std::to_string(khz / 1000) + " MHz";
  return std::to_string(khz) + " kHz";
}

// One scalar of a key, formatted by the key's unit suffix.
std::string format_scalar(const std::string& key, const Value& v, size_t index) {
  const bool array = v.type == MT_VALUE_INT_ARRAY || v.type == MT_VALUE_FLOAT_ARRAY || v.type == MT_VALUE_STRING_ARRAY;
  const bool is_int = v.type == MT_VALUE_INT || v.type == MT_VALUE_INT_ARRAY;
  const int64_t i = !array ? v.i : v.type == MT_VALUE_INT_ARRAY ? v.ints[index] : 0;
  const double f = is_int ? double(i) : !array ? v.f : v.type == MT_VALUE_FLOAT_ARRAY ? v.floats[index] : 0;
  // Text from a device or a plugin: one line, no control characters (terminal_text.hpp).
  if (v.type == MT_VALUE_STRING) return terminal_text(v.s);
  if (v.type == MT_VALUE_STRING_ARRAY) return terminal_text(v.strings[index]);
  if (v.type == MT_VALUE_BOOL) return v.b ? "yes" : "no";
  if (ends_with(key, "_bytes") && is_int) return format_bytes(i);
  if (ends_with(key, "_cycles")) return format_cycles(f);
  if (ends_with(key, "_khz") && is_int) return format_khz(i);
  if (ends_with(key, "_bits") && is_int) return std::to_string(i) + " bit";
  if (ends_with(key, "_gbps")) return format_number(f) + " GB/s";
  if (ends_with(key, "_bytes_per_second")) return format_rate(f);
  if (key.find("_fraction") != std::string::npos && !is_int) return format_number(std::round(f * 1000) / 10) + " %";
  if (ends_with(key, "_s")) return format_number(f) + " s";
  return is_int ? std::to_string(i) : format_number(f);
}

// A value with its bound: ">= 240 KiB"; arrays as "a/b/c" (or their length when long).
std::string format_value(const std::string& key, const ResultRecord& r, size_t max_items = kMaxArrayItems) {
  const Value& v = r.value;
  std::string text;
  const size_t n = v.type == MT_VALUE_INT_ARRAY     ? v.ints.size()
                   : v.type == MT_VALUE_FLOAT_ARRAY ? v.floats.size()
                   : v.type == MT_VALUE_STRING_ARRAY ? v.strings.size()
                                                     : 1;
  const bool array = v.type == MT_VALUE_INT_ARRAY || v.type == MT_VALUE_FLOAT_ARRAY || v.type == MT_VALUE_STRING_ARRAY;
  if (array && n > max_items) {
    text = "[" + std::to_string(n) + " values]";
  } else if (array && n == 0) {
    text = "[]";
  } else {
    for (size_t k = 0; k < n; ++k) text += (k ? "/" : "") + format_scalar(key, v, k);
  }
  if (r.bound == MT_BOUND_AT_LEAST) return ">= " + text;
  if (r.bound == MT_BOUND_AT_MOST) return "<= " + text;
  return text;
}

// The label of a key without a known one: the name less its unit suffix (the unit is shown).
std::string plain_label(const std::string& key) {
  for (const char* unit : {"_bytes_per_second", "_bytes", "_cycles", "_khz", "_bits", "_gbps", "_s"})
    if (ends_with(key, unit)) return key.substr(0, key.size() - std::string(unit).size());
  return key;
}

// The quantities shown first for every element, in this order, before the keys the probes
// flag MT_KEY_HEADLINE: a key is one of them by its role (docs/roles.md; "l2.size_bytes" has
// cache.size_bytes@l2_cache). label "": the value alone; prefix: before the value ("+" for a
// penalty); sets and ways are joined ("sets x ways 4 x 16"); without_size: the label of an
// element without a size (a level that is no cache: DRAM, shared memory).
struct KnownQuantity {
  const char* quantity;
  const char* label;
  const char* prefix;
  const char* without_size;
};
constexpr KnownQuantity kKnown[] = {
    {"name", "", "", ""},
    {"compute_capability", "cc", "", ""},
    {"sm_count", "SMs", "", ""},
    {"sm_clock_khz", "clock", "", ""},
    {"global_memory_bytes", "memory", "", ""},
    {"size_bytes", "size", "", ""},
    {"line_bytes", "line", "", ""},
    {"fetch_granularity_bytes", "sector", "", ""},
    {"latency_cycles", "hit", "", "latency"},
    {"far_latency_cycles", "far hit", "", "far latency"},
    {"miss_penalty_cycles", "miss", "+", ""},
    {"sets", "", "", ""},
    {"ways", "", "", ""},
    {"set_mapping", "mapping", "", ""},
    {"replacement_policy", "policy", "", ""},
    {"partitions", "partitions", "", ""},
};

// A record's role; one read from a file written before keys carried roles has the shipped
// plugins' role of its key.
std::string role_of(const ResultRecord& r) {
  if (!r.role.empty()) return r.role;
  const auto it = shipped_key_roles().find(r.key);
  return it != shipped_key_roles().end() ? it->second : std::string();
}

// The quantity of a record's role ("size_bytes"), of the classes the known quantities describe
// (the GPU, caches, memories); "" for another class or a key without a role.
std::string quantity_of(const ResultRecord& r) {
  const std::string role = role_of(r);
  const auto dot = role.find('.');
  if (dot == std::string::npos) return "";
  const std::string role_class = role.substr(0, dot);
  if (role_class != "gpu" && role_class != "cache" && role_class != "memory") return "";
  return role.substr(dot + 1, role.find('@') == std::string::npos ? std::string::npos : role.find('@') - dot - 1);
}

bool is_known(const ResultRecord& r) {
  const std::string q = quantity_of(r);
  return std::any_of(std::begin(kKnown), std::end(kKnown), [&](const KnownQuantity& k) { return q == k.quantity; });
}

// The entry of a table whose role has `quantity`; end() where none has.
Table::const_iterator with_quantity(const Table& t, const std::string& quantity) {
  return std::find_if(t.begin(), t.end(), [&](const auto& e) { return quantity_of(*e.second) == quantity; });
}

bool is_headline(const ResultRecord& r) { return (r.key_flags & MT_KEY_HEADLINE) != 0; }

// The known items of one element, in kKnown's order.
std::vector<std::string> known_items(const Table& t) {
  std::vector<std::string> items;
  auto value = [&](Table::const_iterator e) { return format_value(e->first, *e->second); };
  const auto sets = with_quantity(t, "sets"), ways = with_quantity(t, "ways");
  for (const KnownQuantity& k : kKnown) {
    const auto e = with_quantity(t, k.quantity);
    if (e == t.end()) continue;
    if (e == sets || e == ways) {
      const bool both = sets != t.end() && ways != t.end();
      if (both && e == sets) items.push_back("sets x ways " + value(sets) + " x " + value(ways));
      if (!both) items.push_back(e->first + " " + value(e));
      continue;
    }
    // A hit is a cache's; a level without a size (DRAM, shared memory) has a latency.
    const bool sized = with_quantity(t, "size_bytes") != t.end();
    const std::string label = !sized && *k.without_size ? k.without_size : k.label;
    items.push_back((label.empty() ? "" : label + " ") + k.prefix + value(e));
  }
  // "present = false" says more than every other key; "true" goes without saying.
  if (auto it = with_quantity(t, "present"); it != t.end() && it->second->value.type == MT_VALUE_BOOL)
    if (!it->second->value.b) items.insert(items.begin(), "not present");
  return items;
}

std::string element_line(const std::string& element, const Table& t, size_t width) {
  std::string line = element + std::string(width > element.size() ? width - element.size() : 1, ' ');
  const size_t start = line.size();
  auto add = [&](const std::string& item) { line += (line.size() > start ? "  " : "") + item; };
  for (const auto& item : known_items(t)) add(item);
  // What the probes declare as headline values is always shown, after the known keys.
  for (const auto& [key, rec] : t)
    if (!is_known(*rec) && is_headline(*rec)) add(plain_label(key) + " " + format_value(key, *rec, kMaxHeadlineItems));
  std::vector<std::string> others;
  for (const auto& [key, rec] : t)
    if (!is_known(*rec) && !is_headline(*rec) && quantity_of(*rec) != "present")
      others.push_back(plain_label(key) + " " + format_value(key, *rec));
  size_t shown = 0;
  for (; shown < others.size(); ++shown) {
    const size_t left = others.size() - shown - 1;
    // Leave room for the count of what does not fit.
    const size_t tail = left ? std::string("  +" + std::to_string(left) + " more").size() : 0;
    if (line.size() + 2 + others[shown].size() + tail > kLineWidth) break;
    add(others[shown]);
  }
  if (shown < others.size()) add("+" + std::to_string(others.size() - shown) + " more");
  return line;
}

}  // namespace

std::string format_bytes(int64_t bytes) {
  const int64_t kib = 1024, mib = kib * 1024, gib = mib * 1024;
  if (bytes != 0 && bytes % gib == 0) return std::to_string(bytes / gib) + " GiB";
  if (bytes != 0 && bytes % mib == 0) return std::to_string(bytes / mib) + " MiB";
  if (bytes != 0 && bytes % kib == 0) return std::to_string(bytes / kib) + " KiB";
  // Past a MiB, digits nobody reads: one decimal in the largest unit (a decimal: not whole).
  if (std::llabs(bytes) >= mib) {
    char buf[32];
    const bool g = std::llabs(bytes) >= gib;
    std::snprintf(buf, sizeof buf, "%.1f %s", double(bytes) / double(g ? gib : mib), g ? "GiB" : "MiB");
    return buf;
  }
  return std::to_string(bytes) + " B";
}

std::string format_cycles(double cycles) {
  char buf[48];
  // One decimal where that is short; an exponent past a million (1e308 had 309 digits, and a
  // fixed buffer cut off the unit).
  std::snprintf(buf, sizeof buf, std::fabs(cycles) < 1e6 ? "%.1f cyc" : "%.4g cyc", cycles);
  return buf;
}

namespace {

// element -> key -> record, of the probes whose results count.
std::map<std::string, Table> tables_of(const std::vector<ProbeOutcome>& outcomes) {
  std::map<std::string, Table> tables;
  for (const auto& o : outcomes) {
    if (!keeps_results(o.status)) continue;
    for (const auto& r : o.results) {
      const auto dot = r.key.find('.');
      tables[r.key.substr(0, dot)][r.key.substr(dot + 1)] = &r;
    }
  }
  return tables;
}

// The rows of one element in a comparison: the known quantities, then the keys any column
// declares as headline values (in name order). A known row finds each column's key by its
// role's quantity, a headline row by its key.
struct RowKey {
  std::string key, label, prefix;
  bool by_quantity = false;
};
std::vector<RowKey> row_keys(const std::string& element, const std::vector<std::map<std::string, Table>>& tables) {
  std::vector<RowKey> rows;
  for (const KnownQuantity& k : kKnown) rows.push_back({k.quantity, k.label, k.prefix, true});
  std::set<std::string> headline;
  for (const auto& t : tables)
    if (auto e = t.find(element); e != t.end())
      for (const auto& [key, rec] : e->second)
        if (!is_known(*rec) && is_headline(*rec)) headline.insert(key);
  for (const auto& key : headline) rows.push_back({key, "", "", false});
  return rows;
}

// The elements of all columns: the GPU's own (keys of role class gpu, the driver's description)
// first, then the others in name order.
std::vector<std::string> element_order(const std::vector<std::map<std::string, Table>>& tables) {
  std::set<std::string> gpu, other;
  for (const auto& t : tables)
    for (const auto& [element, table] : t) {
      const bool of_gpu = std::any_of(table.begin(), table.end(),
                                      [](const auto& e) { return role_of(*e.second).rfind("gpu.", 0) == 0; });
      (of_gpu ? gpu : other).insert(element);
    }
  std::vector<std::string> order(gpu.begin(), gpu.end());
  for (const std::string& e : other)
    if (!gpu.count(e)) order.push_back(e);
  return order;
}

Table::const_iterator row_entry(const Table& t, const RowKey& k) {
  return k.by_quantity ? with_quantity(t, k.key) : t.find(k.key);
}

}  // namespace

namespace {

std::string plain_number(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.10g", v);
  return buf;
}

std::string plain_text(const Value& v) {
  auto joined = [](const auto& list, auto shown) {
    std::string out;
    for (const auto& x : list) out += (out.empty() ? "" : ";") + shown(x);
    return out;
  };
  switch (v.type) {
    case MT_VALUE_INT: return std::to_string(v.i);
    case MT_VALUE_FLOAT: return plain_number(v.f);
    case MT_VALUE_BOOL: return v.b ? "true" : "false";
    case MT_VALUE_STRING: return v.s;
    case MT_VALUE_INT_ARRAY: return joined(v.ints, [](int64_t x) { return std::to_string(x); });
    case MT_VALUE_FLOAT_ARRAY: return joined(v.floats, plain_number);
    case MT_VALUE_STRING_ARRAY: return joined(v.strings, [](const std::string& x) { return x; });
    default: return "";
  }
}

}  // namespace

std::string format_json_value(const std::string& key, const nlohmann::json& value, size_t max_items) {
  if (value.is_null()) return "-";
  const std::optional<Value> v = from_json_inferred(value);
  if (!v) return value.dump();
  // A group's median of byte counts is a float; the unit still says bytes.
  if (value.is_number_float() && ends_with(key, "_bytes") && std::fabs(value.get<double>()) < 9e18)
    return format_bytes(std::llround(value.get<double>()));
  if (!value.is_array()) return format_scalar(key, *v, 0);
  std::string out = "[";
  const size_t n = value.size();
  for (size_t k = 0; k < n && k < max_items; ++k) out += (k ? ", " : "") + format_scalar(key, *v, k);
  if (n > max_items) out += ", ... " + std::to_string(n) + " values";
  return out + "]";
}

SummaryTable summary_table(const std::vector<SummaryColumn>& columns) {
  std::vector<std::map<std::string, Table>> tables;
  for (const auto& c : columns) tables.push_back(tables_of(c.outcomes));
  const std::vector<std::string> order = element_order(tables);
  SummaryTable out;
  for (const auto& c : columns) out.header.push_back(terminal_text(c.label));
  for (const auto& element : order) {
    for (const auto& k : row_keys(element, tables)) {
      std::vector<std::string> row{element + " " + (k.label.empty() ? k.key : k.label)};
      std::vector<double> numbers;
      std::vector<std::string> plain;
      std::vector<bool> bounded;
      bool any = false;
      std::string key;  // the first column's key of the row
      for (const auto& t : tables) {
        const auto e = t.find(element);
        const auto r = e == t.end() ? Table::const_iterator() : row_entry(e->second, k);
        const bool has = e != t.end() && r != e->second.end();
        if (has && key.empty()) key = r->first;
        any = any || has;
        row.push_back(has ? k.prefix + format_value(r->first, *r->second) : "-");
        const Value* v = has ? &r->second->value : nullptr;
        numbers.push_back(!v ? NAN : v->type == MT_VALUE_INT ? double(v->i) : v->type == MT_VALUE_FLOAT ? v->f : NAN);
        const mt_bound bound = has ? r->second->bound : MT_BOUND_EXACT;
        bounded.push_back(bound != MT_BOUND_EXACT);
        // A spreadsheet reads ">=520" as text: the bound is kept, not turned into a number.
        plain.push_back(!v ? "" : (bound == MT_BOUND_AT_LEAST ? ">=" : bound == MT_BOUND_AT_MOST ? "<=" : "") + plain_text(*v));
      }
      if (!any) continue;
      out.rows.push_back(std::move(row));
      out.numbers.push_back(std::move(numbers));
      out.keys.push_back(element + "." + key);
      out.plain.push_back(std::move(plain));
      out.bounded.push_back(std::move(bounded));
    }
  }
  return out;
}

std::string render_summary_columns(const std::vector<SummaryColumn>& columns) {
  const SummaryTable t = summary_table(columns);
  std::vector<std::vector<std::string>> rows{{""}};
  rows[0].insert(rows[0].end(), t.header.begin(), t.header.end());
  rows.insert(rows.end(), t.rows.begin(), t.rows.end());
  std::vector<std::string> tally{"probes"};
  for (const auto& c : columns) tally.push_back(c.tally);
  rows.push_back(std::move(tally));
  return aligned(rows, 0);
}

std::string render_summary(const std::vector<ProbeOutcome>& outcomes) {
  const std::map<std::string, Table> tables = tables_of(outcomes);
  size_t width = 9;
  for (const auto& [element, _] : tables) width = std::max(width, element.size());
  width += 2;
  std::string out;
  for (const std::string& element : element_order({tables})) out += element_line(element, tables.at(element), width) + "\n";
  return out;
}

}  // namespace memtopo::host
