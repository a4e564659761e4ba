// Reading one probe descriptor into the host's ProbeInfo (descriptor_read.hpp).
#include "topology/plugins/descriptor_read.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <regex>

#include "topology/values/value.hpp"
#include "topology/plugins/option_range.hpp"

namespace memtopo::host {

namespace {

std::vector<std::string> key_list(const char* const* keys) {
  std::vector<std::string> out;
  if (!keys) return out;
  for (size_t k = 0; keys[k]; ++k) out.emplace_back(keys[k]);
  return out;
}

// A plugin (C) may store any int in an enum field; loading one outside the C++ enum's range
// is undefined behaviour, so the field's bits are read as an int and checked first.
std::optional<mt_value_type> value_type_field(const mt_value_type& field, int& raw) {
  static_assert(sizeof(mt_value_type) == sizeof(int));
  std::memcpy(&raw, &field, sizeof raw);
  if (raw < MT_VALUE_NONE || raw > MT_VALUE_STRING_ARRAY) return std::nullopt;
  return static_cast<mt_value_type>(raw);
}

std::optional<std::string> read_options(const mt_probe_desc& pd, ProbeInfo& info) {
  if (pd.option_count && !pd.options) return "probe " + info.name + ": option list is null";
  const size_t option_stride = pd.option_count ? pd.options[0].struct_size : 0;
  for (size_t o = 0; o < pd.option_count; ++o) {
    const auto* od = reinterpret_cast<const mt_option_desc*>(reinterpret_cast<const char*>(pd.options) +
                                                              o * option_stride);
    if (od->struct_size < sizeof(mt_option_desc))
      return "probe " + info.name + ": option #" + std::to_string(o) + " descriptor too small";
    OptionSpec spec;
    spec.name = str_or_empty(od->name);
    int raw = 0;
    const auto type = value_type_field(od->type, raw);
    if (!type) return "probe " + info.name + ": option " + spec.name + ": unknown type " + std::to_string(raw);
    spec.type = *type;
    spec.default_text = str_or_empty(od->default_value);
    spec.help = str_or_empty(od->help);
    if (spec.name.empty()) return "probe " + info.name + ": option #" + std::to_string(o) + " has no name";
    if (info.option(spec.name)) return "probe " + info.name + ": option " + spec.name + " declared twice";
    std::string err;
    auto def = parse_text(spec.type, spec.default_text, &err);
    if (!def) return "probe " + info.name + ": option " + spec.name + ": default " + err;
    spec.default_value = *def;
    if (auto bad = read_option_range(*od, spec)) return "probe " + info.name + ": " + *bad;
    info.options.push_back(std::move(spec));
  }
  return std::nullopt;
}

// Backends (and why only those), compute capability, time budget and flags.
std::optional<std::string> read_needs(const mt_probe_desc& pd, ProbeInfo& info) {
  info.backends = pd.backends;
  info.backends_reason = str_or_empty(pd.backends_reason);
  info.min_cc_major = pd.min_cc_major;
  info.min_cc_minor = pd.min_cc_minor;
  constexpr uint32_t known = MT_BACKEND_CUDA | MT_BACKEND_SIM;
  if (info.backends & ~known)
    return "probe " + info.name + ": backends holds unknown bits (" + std::to_string(info.backends) +
           "); use MT_BACKEND_CUDA, MT_BACKEND_SIM or 0 for all";
  info.budget_s = pd.budget_s;
  info.own_process = (pd.flags & MT_PROBE_OWN_PROCESS) != 0;
  info.opt_in = (pd.flags & MT_PROBE_OPT_IN) != 0;
  if (!(info.budget_s >= 0) || std::isinf(info.budget_s))
    return "probe " + info.name + ": budget_s must be a finite number of seconds >= 0 (0: none declared), got " +
           std::to_string(info.budget_s);
  if (info.min_cc_major < 0 || info.min_cc_minor < 0)
    return "probe " + info.name + ": negative minimum compute capability " + std::to_string(info.min_cc_major) +
           "." + std::to_string(info.min_cc_minor);
  return std::nullopt;
}

// A description key a measured key replays as: "table.key" or "table.sub.key", each part a
// lowercase name.
bool replay_target(const std::string& t) {
  static const std::regex path("[a-z][a-z0-9_]*(\\.[a-z][a-z0-9_]*){1,2}");
  return std::regex_match(t, path);
}

// Descriptions of provided keys: each describes a provided key once, with a unit and type its
// name allows, or (type MT_VALUE_NONE) only how the key replays.
std::optional<std::string> read_key_docs(const mt_probe_desc& pd, ProbeInfo& info) {
  if (pd.key_count == 0) return std::nullopt;
  const std::string where = "probe " + info.name + ": ";
  if (!pd.keys) return where + "key_count is " + std::to_string(pd.key_count) + " but the key list is null";
  const size_t stride = pd.keys[0].struct_size;
  for (size_t k = 0; k < pd.key_count; ++k) {
    const auto* kd = reinterpret_cast<const mt_key_desc*>(reinterpret_cast<const char*>(pd.keys) + k * stride);
    if (kd->struct_size < sizeof(mt_key_desc)) return where + "key description #" + std::to_string(k) + " too small";
    int raw = 0;
    const auto type = value_type_field(kd->type, raw);
    if (!type) return where + "key " + str_or_empty(kd->key) + ": declares unknown type " + std::to_string(raw);
    KeySpec spec{str_or_empty(kd->key), *type, str_or_empty(kd->unit), str_or_empty(kd->meaning), kd->flags};
    if (spec.flags & ~kKnownKeyFlags)
      return where + "key " + spec.key + ": flags hold unknown bits (" + std::to_string(spec.flags) +
             "); use MT_KEY_IDENTITY, MT_KEY_SETTING, MT_KEY_VARIES, MT_KEY_ESTIMATE, MT_KEY_HEADLINE, "
                    "MT_KEY_CONFIGURATION, MT_KEY_RATED, MT_KEY_STRUCTURE, MT_KEY_ALWAYS, MT_KEY_HEALTH or 0";
    if (std::find(info.provided.begin(), info.provided.end(), spec.key) == info.provided.end())
      return where + "key " + spec.key + ": described, but not one of the keys it provides";
    if (info.key_spec(spec.key) || info.replays.count(spec.key)) return where + "key " + spec.key + ": described twice";
    if (kd->replays_as) {
      const std::string target = kd->replays_as;
      if (!target.empty() && !replay_target(target))
        return where + "key " + spec.key + ": replays_as \"" + target +
               "\" is not a description key (\"table.key\" or \"table.sub.key\"; \"\" for none)";
      info.replays[spec.key] = target;
    }
    if (spec.type == MT_VALUE_NONE) {
      if (!kd->replays_as) return where + "key " + spec.key + ": no type, and no replays_as either";
      continue;  // only how it replays
    }
    if (auto bad = check_key_declaration(spec.key, spec.type, spec.unit)) return where + "key " + spec.key + ": " + *bad;
    info.keys.push_back(std::move(spec));
  }
  return std::nullopt;
}

// Plot hints of raw series: each names a series once ("*" for all), with a kind it knows.
std::optional<std::string> read_series(const mt_probe_desc& pd, ProbeInfo& info) {
  if (pd.series_count == 0) return std::nullopt;
  const std::string where = "probe " + info.name + ": ";
  if (!pd.series) return where + "series_count is " + std::to_string(pd.series_count) + " but the series list is null";
  const size_t stride = pd.series[0].struct_size;
  for (size_t k = 0; k < pd.series_count; ++k) {
    const auto* sd = reinterpret_cast<const mt_series_desc*>(reinterpret_cast<const char*>(pd.series) + k * stride);
    if (sd->struct_size < sizeof(mt_series_desc)) return where + "series description #" + std::to_string(k) + " too small";
    int kind = 0;
    static_assert(sizeof(mt_plot_kind) == sizeof(int));
    std::memcpy(&kind, &sd->kind, sizeof kind);
    if (kind < MT_PLOT_LINES || kind > MT_PLOT_PANELS)
      return where + "series " + str_or_empty(sd->series) + ": unknown plot kind " + std::to_string(kind);
    PlotSpec p{str_or_empty(sd->series),   kind,
               str_or_empty(sd->x),        str_or_empty(sd->y),
               str_or_empty(sd->value),    str_or_empty(sd->group),
               str_or_empty(sd->panel),    str_or_empty(sd->annotate),
               str_or_empty(sd->labels),   str_or_empty(sd->marks)};
    if (p.series.empty()) return where + "series description #" + std::to_string(k) + " names no series";
    for (const PlotSpec& other : info.plots)
      if (other.series == p.series) return where + "series " + p.series + ": described twice";
    info.plots.push_back(std::move(p));
  }
  return std::nullopt;
}

// What an invariant needs of a key the probe describes: the kind of value its side takes.
std::optional<std::string> invariant_side_type(const ProbeInfo& info, const std::string& key, bool array) {
  const KeySpec* spec = info.key_spec(key);
  if (!spec) return std::nullopt;
  const bool is_array = spec->type == MT_VALUE_INT_ARRAY || spec->type == MT_VALUE_FLOAT_ARRAY ||
                        spec->type == MT_VALUE_STRING_ARRAY;
  const bool is_number = spec->type == MT_VALUE_INT || spec->type == MT_VALUE_FLOAT;
  if (array ? is_array : is_number) return std::nullopt;
  return key + " is declared " + type_name(spec->type) + ", but this side takes " + (array ? "an array" : "a number");
}

// Relations between two keys (ABI 3.3): a known kind, two distinct keys of which the probe
// provides one, a sentence, and sides whose declared types fit the kind.
std::optional<std::string> read_invariants(const mt_probe_desc& pd, ProbeInfo& info) {
  if (pd.struct_size < offsetof(mt_probe_desc, invariant_count) + sizeof(size_t) || pd.invariant_count == 0)
    return std::nullopt;
  const std::string where = "probe " + info.name + ": ";
  if (!pd.invariants)
    return where + "invariant_count is " + std::to_string(pd.invariant_count) + " but the invariant list is null";
  const size_t stride = pd.invariants[0].struct_size;
  for (size_t k = 0; k < pd.invariant_count; ++k) {
    const auto* d = reinterpret_cast<const mt_invariant_desc*>(reinterpret_cast<const char*>(pd.invariants) + k * stride);
    const std::string which = where + "invariant #" + std::to_string(k) + ": ";
    if (d->struct_size < sizeof(mt_invariant_desc)) return which + "descriptor too small";
    int kind = 0;
    static_assert(sizeof(mt_invariant_kind) == sizeof(int));
    std::memcpy(&kind, &d->kind, sizeof kind);
    if (kind < MT_INVARIANT_EQUALS_COUNT || kind > MT_INVARIANT_LESS)
      return which + "unknown kind " + std::to_string(kind);
    InvariantSpec spec{static_cast<mt_invariant_kind>(kind), str_or_empty(d->a), str_or_empty(d->b), str_or_empty(d->why)};
    for (const std::string* key : {&spec.a, &spec.b})
      if (auto bad = check_key(*key)) return which + *bad;
    if (spec.a == spec.b) return which + "relates " + spec.a + " to itself";
    auto provided = [&](const std::string& key) {
      return std::find(info.provided.begin(), info.provided.end(), key) != info.provided.end();
    };
    if (!provided(spec.a) && !provided(spec.b))
      return which + "relates " + spec.a + " and " + spec.b + ", but the probe provides neither (the probe that "
             "provides one of them declares it)";
    if (spec.why.empty()) return which + "says no reason (why: one sentence)";
    const bool a_array = spec.kind == MT_INVARIANT_SUM_EQUALS, b_array = spec.kind == MT_INVARIANT_EQUALS_COUNT;
    if (auto bad = invariant_side_type(info, spec.a, a_array)) return which + *bad;
    if (auto bad = invariant_side_type(info, spec.b, b_array)) return which + *bad;
    info.invariants.push_back(std::move(spec));
  }
  return std::nullopt;
}

}  // namespace

// Fills `info` (plugin, version and file already set) from one descriptor; says what is wrong.
std::optional<std::string> read_probe(const mt_probe_desc& pd, ProbeInfo& info) {
  info.name = str_or_empty(pd.name);
  const std::string prefix = info.plugin + "/";
  if (info.name.size() <= prefix.size() || info.name.compare(0, prefix.size(), prefix) != 0 ||
      info.name.find('/', prefix.size()) != std::string::npos)
    return "probe name '" + info.name + "' must be '" + prefix + "<probe>'";
  if (!pd.run) return "probe " + info.name + " has no run function";
  info.summary = str_or_empty(pd.summary);
  info.provided = key_list(pd.provided_keys);
  info.required = key_list(pd.required_keys);
  info.used = key_list(pd.used_keys);
  info.run = pd.run;
  info.user = pd.user;
  for (const auto* list : {&info.provided, &info.required, &info.used})
    for (const auto& key : *list)
      if (auto bad = check_key(key)) return "probe " + info.name + ": " + *bad;
  if (auto bad = read_options(pd, info)) return bad;
  if (auto bad = read_needs(pd, info)) return bad;
  if (auto bad = read_key_docs(pd, info)) return bad;
  if (auto bad = read_series(pd, info)) return bad;
  if (auto bad = read_invariants(pd, info)) return bad;
  return read_extensions(pd, info);
}


}  // namespace memtopo::host
