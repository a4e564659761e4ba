#include "run/planning/config.hpp"
#include "topology/base/suggest.hpp"
#include "run/planning/device_spec.hpp"

#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <optional>
#include <sstream>

#include "memtopo/engine.hpp"
#include "memtopo/errors.hpp"
#include "topology/values/nesting.hpp"
#include "run/planning/plan.hpp"
#include "topology/values/schema.hpp"
#include "topology/base/terminal_text.hpp"

namespace memtopo::host {

namespace {

std::string join_messages(const std::vector<std::string>& m) {
  std::string out;
  for (const auto& s : m) out += (out.empty() ? "" : "\n") + s;
  return out;
}

struct Checker {
  std::string name;
  std::vector<std::string> errors;

  // A message quotes names from the file (probes, keys): as terminal_text, never raw.
  void error(const toml::node& at, const std::string& message) {
    errors.push_back(terminal_text(name + ":" + std::to_string(at.source().begin.line) + ": " + message));
  }

  // A time limit: a number of seconds > 0 and at most kMaxTimeLimitS (a limit the clock
  // cannot hold would fire at once).
  std::optional<double> time_limit(const toml::node& node, const std::string& where) {
    std::optional<double> v;
    if (auto i = node.as_integer()) v = static_cast<double>(i->get());
    else if (auto f = node.as_floating_point()) v = f->get();
    if (v && *v > 0 && *v <= kMaxTimeLimitS) return v;
    error(node, where + " must be a number of seconds > 0 and at most " + format_double(kMaxTimeLimitS) +
                    " (about 11.6 days), e.g. 600");
    return std::nullopt;
  }

  std::vector<std::string> string_list(const toml::node& node, const std::string& where) {
    std::vector<std::string> out;
    const toml::array* a = node.as_array();
    if (!a) {
      error(node, where + " must be an array of strings, e.g. [\"device-info\"]");
      return out;
    }
    for (const auto& e : *a) {
      if (auto s = e.as_string()) out.push_back(s->get());
      else error(e, where + " entries must be strings");
    }
    return out;
  }
};

}  // namespace

ConfigError::ConfigError(std::vector<std::string> msgs)
    : std::runtime_error(join_messages(msgs)), messages(std::move(msgs)) {}

namespace {

// [run]: the probe lists, device and raw folder.
void read_run_table(const toml::node& node, const Registry& registry, Checker& c, Config& cfg) {
  const toml::table* run = node.as_table();
  if (!run) {
    c.error(node, "run must be a table ([run])");
    return;
  }
  for (const auto& [rk, rn] : *run) {
    const std::string r(rk.str());
    if (r == "probes" || r == "skip") {
      // [run] probes may also name result keys (as --only does); [run] skip only probes and plugins.
      const bool keys = r == "probes";
      auto list = c.string_list(rn, "[run] " + r);
      if (const toml::array* arr = rn.as_array()) {
        for (const auto& entry : *arr) {
          const auto* s = entry.as_string();
          if (!s || registry.find(s->get()) || registry.has_plugin(s->get()) ||
              (keys && provider_of_key(registry, s->get())))
            continue;
          c.error(entry, "[run] " + r + (keys ? ": unknown probe, plugin or result key '" : ": unknown probe or plugin '") +
                             s->get() + "'" + did_you_mean(s->get(), selectable_names(registry, keys)) +
                             " (memtopo list shows the loaded ones)");
        }
      }
      // An empty list would select nothing, which the planner reads as "everything".
      if (keys && rn.is_array() && rn.as_array()->empty())
        c.error(rn, "[run] probes is empty; remove the key to run every probe, or name the probes to run");
      (keys ? cfg.probes : cfg.skip) = list;
    } else if (r == "device" || r == "raw_dir") {
      if (auto s = rn.as_string()) {
        if (r == "device") {
          std::string problem = device_arg_error(s->get());
          if (problem.empty()) cfg.device = resolve_device_presets(s->get(), &problem);
          if (!problem.empty()) c.error(rn, "[run] device: " + problem);
        } else if (s->get().empty()) {
          c.error(rn, "[run] raw_dir is empty; name a folder, or remove the key to write no raw series");
        } else {
          cfg.raw_dir = s->get();
        }
      } else {
        c.error(rn, "[run] " + r + " must be a string");
      }
    } else if (r == "time_limit_s") {
      if (auto limit = c.time_limit(rn, "[run] time_limit_s")) cfg.time_limit_s = *limit;
    } else if (r == "isolation") {
      if (auto b = rn.as_boolean()) cfg.isolation = b->get();
      else c.error(rn, "[run] isolation must be true or false");
    } else if (r == "verify") {
      if (auto b = rn.as_boolean()) cfg.verify = b->get();
      else c.error(rn, "[run] verify must be true or false");
    } else if (r == "jobs") {
      const auto n = rn.as_integer();
      if (n && n->get() >= 1 && n->get() <= 64) cfg.jobs = unsigned(n->get());
      else c.error(rn, "[run] jobs must be a whole number from 1 to 64 (probes at once on the simulated GPU)");
    } else {
      c.error(rn, "unknown key '" + r + "' in [run] (known: probes, skip, device, raw_dir, time_limit_s, isolation, verify, jobs)");
    }
  }
}

// [probes."<plugin>/<probe>"]: options, each known to its probe and of its declared type.
void read_probe_options(const toml::node& node, const Registry& registry, Checker& c, Config& cfg) {
  const toml::table* probes = node.as_table();
  if (!probes) {
    c.error(node, "probes must be a table of [probes.\"<plugin>/<probe>\"] tables");
    return;
  }
  for (const auto& [pk, pn] : *probes) {
    const std::string pname(pk.str());
    const ProbeInfo* probe = registry.find(pname);
    if (!probe) {
      c.error(pn, "[probes.\"" + pname + "\"]: unknown probe '" + pname +
                      "' (options are set per probe, \"<plugin>/<probe>\"; memtopo list shows them)");
      continue;
    }
    const toml::table* opts = pn.as_table();
    if (!opts) {
      c.error(pn, "probes.\"" + pname + "\" must be a table of options");
      continue;
    }
    for (const auto& [ok, on] : *opts) {
      const std::string oname(ok.str());
      if (oname == "time_limit_s") {  // the host's setting, not an option of the probe
        if (auto limit = c.time_limit(on, "[probes.\"" + pname + "\"] time_limit_s")) cfg.probe_time_limits_s[pname] = *limit;
        continue;
      }
      const OptionSpec* spec = probe->option(oname);
      if (!spec) {
        std::string known;
        for (const auto& o : probe->options) known += (known.empty() ? "" : ", ") + o.name;
        c.error(on, "unknown option '" + oname + "' for probe " + pname +
                        (known.empty() ? " (it has no options)" : " (known: " + known + ")"));
        continue;
      }
      std::string err;
      auto v = from_toml(on, spec->type, &err);
      if (!v) {
        c.error(on, "option " + oname + " of " + pname + ": " + err);
        continue;
      }
      if (auto bad = spec->out_of_range(*v)) {
        c.error(on, "[probes.\"" + pname + "\"] " + *bad + " (memtopo list -v shows each option's range)");
        continue;
      }
      cfg.options[pname][oname] = *v;
    }
  }
}

}  // namespace

Config parse_config(const std::string& text, const std::string& name, const Registry& registry) {
  if (const auto line = toml_too_deep_at(text)) throw ConfigError({toml_too_deep_message(name, *line)});
  toml::table root;
  try {
    root = toml::parse(text, name);
  } catch (const toml::parse_error& e) {
    const auto& b = e.source().begin;
    throw ConfigError({name + ":" + std::to_string(b.line) + ":" + std::to_string(b.column) +
                       ": TOML syntax error: " + std::string(e.description())});
  }
  Config cfg;
  cfg.file = name;
  Checker c{name, {}};
  for (const auto& [key, node] : root) {
    const std::string k(key.str());
    if (k == "run") read_run_table(node, registry, c, cfg);
    else if (k == "probes") read_probe_options(node, registry, c, cfg);
    else c.error(node, "unknown key '" + k + "' (a config file has [run] and [probes.\"<name>\"] tables)");
  }
  if (c.errors.empty()) {
    // The schema is the published authority; the checks above give the better messages, so
    // it only speaks when they missed something.
    for (const auto& e : validate_config(toml_to_json(root))) {
      const toml::node* at = node_at(root, e.path);
      c.errors.push_back(name + ":" + std::to_string(at ? at->source().begin.line : 1) + ": " + e.text());
    }
  }
  if (!c.errors.empty()) throw ConfigError(c.errors);
  if (cfg.raw_dir && std::filesystem::path(*cfg.raw_dir).is_relative())
    cfg.raw_dir = (std::filesystem::path(name).parent_path() / *cfg.raw_dir).lexically_normal().string();
  return cfg;
}

Config load_config(const std::filesystem::path& file, const Registry& registry) {
  std::string text;
  try {
    text = engine::read_input_file(file.string(), "the config's TOML file (--config FILE)");
  } catch (const Error& e) {
    throw ConfigError({e.what()});
  }
  return parse_config(text, file.string(), registry);
}

}  // namespace memtopo::host
