// memtopo probe SDK: a probe's specification (name, keys, options, needs, run function) and
// the registration macro that turns specs into the C descriptors of abi.h.
//
// Exceptions never cross the boundary: the trampoline turns memtopo::Skip into
// MT_STATUS_SKIPPED, memtopo::NotDeterminable into MT_STATUS_NOT_DETERMINABLE and any other
// exception into MT_STATUS_FAILED with its message. Compile a plugin source with
// -DMEMTOPO_STATIC_PLUGIN_FN=some_name to link it statically into a test: the macro then
// defines `const mt_plugin_desc* some_name(uint32_t, uint32_t)` instead of the exported
// entry point.
#pragma once

#include <cstddef>
#include <cstdio>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "memtopo/abi.h"
#include "memtopo/context.hpp"
#include "memtopo/errors.hpp"

namespace memtopo {

class Probe {
 public:
  using RunFn = std::function<void(Context&)>;
  struct Option {
    std::string name;
    mt_value_type type;
    std::string default_value;
    std::string help;
    std::string min_value, max_value;  // "" for no limit on that side
  };
  // What one provided key holds (mt_key_desc). type MT_VALUE_NONE: only replays_as is known.
  struct KeyDoc {
    std::string key;
    mt_value_type type;
    std::string unit;
    std::string meaning;
    uint32_t flags;  // MT_KEY_* bits
    std::optional<std::string> replays_as;  // nullopt: the description key of the same path
  };
  // How the report draws a raw series (mt_series_desc): Plot::heatmap("dram_read", "threads",
  // "blocks_per_sm", "bytes_per_second").marks("cell:throughput.{series}_best_config").
  struct Plot {
    std::string series;
    mt_plot_kind kind = MT_PLOT_LINES;
    std::string x, y, value, group, panel, annotate, labels, mark_list;
    static Plot heatmap(std::string series, std::string x, std::string y, std::string value) {
      Plot p{std::move(series), MT_PLOT_HEATMAP};
      p.x = std::move(x), p.y = std::move(y), p.value = std::move(value);
      return p;
    }
    static Plot bars(std::string series, std::string x, std::string y) {
      Plot p{std::move(series), MT_PLOT_BARS};
      p.x = std::move(x), p.y = std::move(y);
      return p;
    }
    static Plot panels(std::string series, std::string panel, std::string x, std::string y, std::string group) {
      Plot p{std::move(series), MT_PLOT_PANELS};
      p.panel = std::move(panel), p.x = std::move(x), p.y = std::move(y), p.group = std::move(group);
      return p;
    }
    static Plot lines(std::string series) { return Plot{std::move(series), MT_PLOT_LINES}; }
    // The generic plot with its axes and a line per value of `group` chosen by the probe.
    static Plot lines(std::string series, std::string x, std::string y, std::string group) {
      Plot p{std::move(series), MT_PLOT_LINES};
      p.x = std::move(x), p.y = std::move(y), p.group = std::move(group);
      return p;
    }
    Plot& annotated(std::string column) { annotate = std::move(column); return *this; }
    // "a,b,c": bars or panels 0, 1, 2; "@element.key": a string array of the topology;
    // "column=a,b;other=c,d": the values 0, 1, ... of named columns (a method, a scope).
    Plot& named(std::string names) { labels = std::move(names); return *this; }
    Plot& marks(std::string list) { mark_list = std::move(list); return *this; }
  };

  struct Invariant {
    mt_invariant_kind kind;
    std::string a, b, why;
  };

  explicit Probe(std::string name) : name_(std::move(name)) {}
  Probe& summary(std::string s) { summary_ = std::move(s); return *this; }
  Probe& provides(std::vector<std::string> k) { provides_ = std::move(k); return *this; }
  Probe& requires_keys(std::vector<std::string> k) { requires_ = std::move(k); return *this; }
  Probe& uses(std::vector<std::string> k) { uses_ = std::move(k); return *this; }
  Probe& option(std::string name, mt_value_type type, std::string def, std::string help) {
    options_.push_back({std::move(name), type, std::move(def), std::move(help), {}, {}});
    return *this;
  }
  // The values the option declared last accepts, in text form ("" for no limit on that side;
  // for an array option, each element's): .option("rounds", MT_VALUE_INT, "512", "...")
  // .range("1", "65536"). The host refuses a config value outside them before the probe runs.
  Probe& range(std::string min, std::string max) {
    if (!options_.empty()) {
      options_.back().min_value = std::move(min);
      options_.back().max_value = std::move(max);
    }
    return *this;
  }
  Probe& run(RunFn fn) { run_ = std::move(fn); return *this; }
  // The backends the probe runs on (MT_BACKEND_* bits; default: all) and why no others: a probe
  // whose kernels the simulated GPU cannot run says backends(MT_BACKEND_CUDA, "TMA bulk copies
  // are not modelled by the simulated GPU"); the host skips it there with that reason.
  Probe& backends(uint32_t mask, std::string reason) {
    backends_ = mask;
    backends_reason_ = std::move(reason);
    return *this;
  }
  // The lowest compute capability the probe's kernels need (e.g. 9, 0 for clusters).
  Probe& min_compute_capability(int major, int minor = 0) {
    min_cc_major_ = major;
    min_cc_minor_ = minor;
    return *this;
  }
  // The wall time the probe needs at most on any device it runs on; past its time limit
  // (this budget unless the config sets time_limit_s) the host kills it and records a failure.
  Probe& budget_seconds(double s) { budget_s_ = s; return *this; }
  // Runs in a worker process of its own (MT_PROBE_OWN_PROCESS): nothing an earlier probe left
  // in the process reaches the measurement.
  Probe& own_process() { flags_ |= MT_PROBE_OWN_PROCESS; return *this; }
  // Not in a default run (MT_PROBE_OPT_IN): it runs when named, by itself or by a key.
  Probe& opt_in() { flags_ |= MT_PROBE_OPT_IN; return *this; }
  // Type, unit and meaning of a provided key: validates a drop-in plugin's tables. `flags`
  // (MT_KEY_IDENTITY, MT_KEY_SETTING, MT_KEY_VARIES) says how comparisons treat it.
  Probe& key(std::string name, mt_value_type type, std::string unit, std::string meaning, uint32_t flags = 0) {
    for (KeyDoc& k : keys_)
      if (k.key == name && k.type == MT_VALUE_NONE) {  // replays() came first
        k.type = type, k.unit = std::move(unit), k.meaning = std::move(meaning), k.flags = flags;
        return *this;
      }
    keys_.push_back({std::move(name), type, std::move(unit), std::move(meaning), flags, std::nullopt});
    return *this;
  }
  // What a provided key sets when a topology replays as a simulated device (mt_key_desc::
  // replays_as): the path of a device description key, or MT_REPLAY_NONE ("") for nothing.
  Probe& replays(const std::string& name, std::string target) {
    for (KeyDoc& k : keys_)
      if (k.key == name) {
        k.replays_as = std::move(target);
        return *this;
      }
    keys_.push_back({name, MT_VALUE_NONE, "", "", 0, std::move(target)});
    return *this;
  }
  // The same for several keys that replay as nothing (the simulator derives them).
  Probe& not_replayed(const std::vector<std::string>& names) {
    for (const std::string& n : names) replays(n, MT_REPLAY_NONE);
    return *this;
  }
  Probe& plot(Plot p) {
    plots_.push_back(std::move(p));
    return *this;
  }
  // A relation between two result keys, one of them the probe's, that every GPU keeps
  // (mt_invariant_desc): .invariant(MT_INVARIANT_EQUALS_COUNT, "l2.partitions",
  // "l2.partition_sm_counts", "one partition per group of SMs near it"). The host warns at the
  // end of a run that breaks it, and `memtopo validate` refuses such a file.
  Probe& invariant(mt_invariant_kind kind, std::string a, std::string b, std::string why) {
    invariants_.push_back({kind, std::move(a), std::move(b), std::move(why)});
    return *this;
  }
  // What a provided key is in the host's vocabulary (mt_key_role, docs/roles.md):
  // .role("l2.partitions", "cache.partitions@l2_cache"). The exports, the drawing and the
  // summary find the key by its role; a key declared twice keeps the last role.
  Probe& role(const std::string& key, std::string role) {
    for (auto& r : roles_)
      if (r.first == key) {
        r.second = std::move(role);
        return *this;
      }
    roles_.emplace_back(key, std::move(role));
    return *this;
  }
  // Several at once: .roles({{"l2.partitions", "cache.partitions@l2_cache"}, ...}).
  Probe& roles(const std::vector<std::pair<std::string, std::string>>& key_roles) {
    for (const auto& [key, r] : key_roles) role(key, r);
    return *this;
  }

  const std::string& name() const { return name_; }
  const std::string& summary() const { return summary_; }
  const std::vector<std::string>& provided() const { return provides_; }
  const std::vector<std::string>& required() const { return requires_; }
  const std::vector<std::string>& used() const { return uses_; }
  const std::vector<Option>& options() const { return options_; }
  const RunFn& fn() const { return run_; }
  uint32_t backend_mask() const { return backends_; }
  const std::string& backends_reason() const { return backends_reason_; }
  const std::vector<Plot>& plots() const { return plots_; }
  const std::vector<Invariant>& invariants() const { return invariants_; }
  const std::vector<std::pair<std::string, std::string>>& roles() const { return roles_; }
  int min_cc_major() const { return min_cc_major_; }
  int min_cc_minor() const { return min_cc_minor_; }
  const std::vector<KeyDoc>& keys() const { return keys_; }
  double budget_s() const { return budget_s_; }
  uint32_t flags() const { return flags_; }

 private:
  std::string name_, summary_;
  std::vector<std::string> provides_, requires_, uses_;
  std::vector<Option> options_;
  std::vector<KeyDoc> keys_;
  std::vector<Plot> plots_;
  std::vector<Invariant> invariants_;
  std::vector<std::pair<std::string, std::string>> roles_;  // key, role
  uint32_t backends_ = 0;
  std::string backends_reason_;
  int min_cc_major_ = 0, min_cc_minor_ = 0;
  double budget_s_ = 0;
  uint32_t flags_ = 0;
  RunFn run_;
};

namespace detail {

inline void copy_message(char* dst, size_t size, const char* src) {
  if (!dst || size == 0) return;
  std::snprintf(dst, size, "%s", src ? src : "");
}

// Runs a probe's C++ function; exceptions become status codes here, at the boundary.
inline int trampoline(const mt_context* ctx, void* user, char* message, size_t message_size) {
  const Probe* probe = static_cast<const Probe*>(user);
  try {
    if (!probe->fn()) throw Error("probe has no run function");
    Context c(ctx);
    probe->fn()(c);
    return MT_STATUS_OK;
  } catch (const Skip& e) {
    copy_message(message, message_size, e.what());
    return MT_STATUS_SKIPPED;
  } catch (const NotDeterminable& e) {
    copy_message(message, message_size, e.what());
    return MT_STATUS_NOT_DETERMINABLE;
  } catch (const std::exception& e) {
    copy_message(message, message_size, e.what());
    return MT_STATUS_FAILED;
  } catch (...) {
    copy_message(message, message_size, "unknown exception");
    return MT_STATUS_FAILED;
  }
}

// Owns the C descriptors built from Probe specs; lives as long as the library.
class PluginHolder {
 public:
  PluginHolder(const char* name, const char* version, std::vector<Probe> probes)
      : name_(name), version_(version), probes_(std::move(probes)) {
    keys_.resize(probes_.size());
    opts_.resize(probes_.size());
    docs_.resize(probes_.size());
    series_.resize(probes_.size());
    invariants_.resize(probes_.size());
    roles_.resize(probes_.size());
    extensions_.resize(probes_.size());
    for (size_t i = 0; i < probes_.size(); ++i) {
      const Probe& p = probes_[i];
      auto& k = keys_[i];
      k.provided = terminated(p.provided());
      k.required = terminated(p.required());
      k.used = terminated(p.used());
      for (const auto& o : p.options()) {
        mt_option_desc d{};
        d.struct_size = sizeof(d);
        d.name = o.name.c_str();
        d.type = o.type;
        d.default_value = o.default_value.c_str();
        d.help = o.help.c_str();
        d.min_value = o.min_value.empty() ? nullptr : o.min_value.c_str();
        d.max_value = o.max_value.empty() ? nullptr : o.max_value.c_str();
        opts_[i].push_back(d);
      }
      for (const auto& kd : p.keys()) {
        mt_key_desc d{};
        d.struct_size = sizeof(d);
        d.key = kd.key.c_str();
        d.type = kd.type;
        d.unit = kd.unit.c_str();
        d.meaning = kd.meaning.c_str();
        d.flags = kd.flags;
        d.replays_as = kd.replays_as ? kd.replays_as->c_str() : nullptr;
        docs_[i].push_back(d);
      }
      for (const auto& pl : p.plots()) {
        mt_series_desc d{};
        d.struct_size = sizeof(d);
        d.series = pl.series.c_str();
        d.kind = pl.kind;
        d.x = pl.x.c_str();
        d.y = pl.y.c_str();
        d.value = pl.value.c_str();
        d.group = pl.group.c_str();
        d.panel = pl.panel.c_str();
        d.annotate = pl.annotate.c_str();
        d.labels = pl.labels.c_str();
        d.marks = pl.mark_list.c_str();
        series_[i].push_back(d);
      }
      for (const auto& inv : p.invariants()) {
        mt_invariant_desc d{};
        d.struct_size = sizeof(d);
        d.kind = inv.kind;
        d.a = inv.a.c_str();
        d.b = inv.b.c_str();
        d.why = inv.why.c_str();
        invariants_[i].push_back(d);
      }
      add_extensions(i, p);
      mt_probe_desc d{};
      d.struct_size = sizeof(d);
      d.name = p.name().c_str();
      d.summary = p.summary().c_str();
      d.provided_keys = k.provided.data();
      d.required_keys = k.required.data();
      d.used_keys = k.used.data();
      d.options = opts_[i].data();
      d.option_count = opts_[i].size();
      d.run = &trampoline;
      d.user = const_cast<Probe*>(&probes_[i]);
      d.backends = p.backend_mask();
      d.min_cc_major = p.min_cc_major();
      d.min_cc_minor = p.min_cc_minor();
      d.keys = docs_[i].empty() ? nullptr : docs_[i].data();
      d.key_count = docs_[i].size();
      d.budget_s = p.budget_s();
      d.flags = p.flags();
      d.backends_reason = p.backends_reason().empty() ? nullptr : p.backends_reason().c_str();
      d.series = series_[i].empty() ? nullptr : series_[i].data();
      d.series_count = series_[i].size();
      d.invariants = invariants_[i].empty() ? nullptr : invariants_[i].data();
      d.invariant_count = invariants_[i].size();
      d.extensions = extensions_[i].empty() ? nullptr : extensions_[i].data();
      d.extension_count = extensions_[i].size();
      descs_.push_back(d);
    }
    desc_.struct_size = sizeof(desc_);
    desc_.abi_major = MEMTOPO_ABI_MAJOR;
    desc_.abi_minor = MEMTOPO_ABI_MINOR;
    desc_.name = name_.c_str();
    desc_.version = version_.c_str();
    desc_.probes = descs_.data();
    desc_.probe_count = descs_.size();
  }
  PluginHolder(const PluginHolder&) = delete;
  PluginHolder& operator=(const PluginHolder&) = delete;
  const mt_plugin_desc* desc() const { return &desc_; }

 private:
  struct Keys {
    std::vector<const char*> provided, required, used;
  };
  // The probe's extensions (mt_extension_desc): its key roles, where it declares any.
  void add_extensions(size_t i, const Probe& p) {
    for (const auto& [key, role] : p.roles()) {
      mt_key_role r{};
      r.struct_size = sizeof(r);
      r.key = key.c_str();
      r.role = role.c_str();
      roles_[i].push_back(r);
    }
    if (roles_[i].empty()) return;
    mt_extension_desc e{};
    e.struct_size = sizeof(e);
    e.name = MT_EXTENSION_KEY_ROLES;
    e.version = 1;
    e.data = roles_[i].data();
    e.count = roles_[i].size();
    extensions_[i].push_back(e);
  }
  static std::vector<const char*> terminated(const std::vector<std::string>& v) {
    std::vector<const char*> out;
    for (const auto& s : v) out.push_back(s.c_str());
    out.push_back(nullptr);
    return out;
  }
  std::string name_, version_;
  std::vector<Probe> probes_;
  std::vector<Keys> keys_;
  std::vector<std::vector<mt_option_desc>> opts_;
  std::vector<std::vector<mt_key_desc>> docs_;
  std::vector<std::vector<mt_series_desc>> series_;
  std::vector<std::vector<mt_invariant_desc>> invariants_;
  std::vector<std::vector<mt_key_role>> roles_;
  std::vector<std::vector<mt_extension_desc>> extensions_;
  std::vector<mt_probe_desc> descs_;
  mt_plugin_desc desc_{};
};

}  // namespace detail
}  // namespace memtopo

namespace memtopo::detail {
// The entry point's answer to a host: the descriptor, or none for a host of another major
// ABI, whose structs are laid out otherwise. A host of an older minor gets the descriptor and
// decides itself (it refuses a plugin newer than it, naming both versions).
inline const mt_plugin_desc* descriptor_for_host(const mt_plugin_desc* desc, uint32_t host_major,
                                                 uint32_t /*host_minor*/) {
  return host_major == MEMTOPO_ABI_MAJOR ? desc : nullptr;
}
}  // namespace memtopo::detail

#define MEMTOPO_DETAIL_DESCRIPTOR_(NAME, VERSION, ...)                                       \
  static const mt_plugin_desc* memtopo_detail_descriptor_() {                                \
    static const ::memtopo::detail::PluginHolder holder(NAME, VERSION, {__VA_ARGS__});       \
    return holder.desc();                                                                    \
  }

#ifdef MEMTOPO_STATIC_PLUGIN_FN
// Linked statically into a test: a named function instead of the exported entry point.
#define MEMTOPO_PLUGIN(NAME, VERSION, ...)                                                   \
  MEMTOPO_DETAIL_DESCRIPTOR_(NAME, VERSION, __VA_ARGS__)                                     \
  const mt_plugin_desc* MEMTOPO_STATIC_PLUGIN_FN(uint32_t host_major, uint32_t host_minor) {  \
    return ::memtopo::detail::descriptor_for_host(memtopo_detail_descriptor_(), host_major,  \
                                                  host_minor);                               \
  }
#else
#define MEMTOPO_PLUGIN(NAME, VERSION, ...)                                                   \
  MEMTOPO_DETAIL_DESCRIPTOR_(NAME, VERSION, __VA_ARGS__)                                     \
  extern "C" MEMTOPO_EXPORT const mt_plugin_desc* memtopo_plugin_entry(uint32_t host_major,  \
                                                                       uint32_t host_minor)  \
  {                                                                                          \
    return ::memtopo::detail::descriptor_for_host(memtopo_detail_descriptor_(), host_major,  \
                                                  host_minor);                               \
  }
#endif
