// Plugin discovery and loading (docs/host.md, docs/abi.md).
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "memtopo/abi.h"
#include "topology/values/value.hpp"

namespace memtopo::host {

namespace fs = std::filesystem;

// Option values set in the config file: probe name -> option name -> value.
using OptionOverrides = std::map<std::string, std::map<std::string, Value>>;

struct OptionSpec {
  std::string name;
  mt_value_type type = MT_VALUE_NONE;
  Value default_value;
  std::string default_text;
  std::string help;
  // The declared range: an INT or FLOAT Value, none for no limit on that side.
  std::optional<Value> min, max;

  // Why `v` is outside the declared range ("rounds must be between 1 and 65536, got 0"), for
  // an array each element; nullopt when it is inside.
  std::optional<std::string> out_of_range(const Value& v) const;
  // "1..65536", ">= 0", "<= 8", or "" without a range.
  std::string range_text() const;
};

// What one provided key holds (mt_key_desc), as the probe declared it.
struct KeySpec {
  std::string key;  // "l1d.size_bytes"
  mt_value_type type = MT_VALUE_NONE;
  std::string unit;  // "bytes", "cycles", ...; "" when the value has none
  std::string meaning;
  uint32_t flags = 0;  // MT_KEY_*; 0 for a measurement
};

// How the report draws one raw series (mt_series_desc); empty strings where the kind takes none.
struct PlotSpec {
  std::string series;  // a put_raw name, or "*"
  int kind = MT_PLOT_LINES;
  std::string x, y, value, group, panel, annotate, labels, marks;
};

// A relation between two result keys that every topology keeps (mt_invariant_desc), as the
// probe declared it.
struct InvariantSpec {
  mt_invariant_kind kind = MT_INVARIANT_EQUALS_COUNT;
  std::string a, b;  // result keys
  std::string why;   // one sentence
};

// One probe as the host sees it, after its plugin passed every check.
struct ProbeInfo {
  std::string name;  // "<plugin>/<probe>"
  std::string summary;
  std::string plugin;
  std::string plugin_version;
  std::string file;  // library path, or "static:<origin>" for a statically linked plugin
  std::vector<std::string> provided, required, used;  // result keys
  std::vector<OptionSpec> options;
  // What it needs of the device (0: no requirement); fields a plugin's descriptor lacks stay 0.
  uint32_t backends = 0;  // MT_BACKEND_* bits
  std::string backends_reason;  // why no other backend
  int min_cc_major = 0, min_cc_minor = 0;
  double budget_s = 0;  // declared time budget; 0: none
  bool own_process = false;  // MT_PROBE_OWN_PROCESS: a worker of its own
  bool opt_in = false;       // MT_PROBE_OPT_IN: runs only when named (ABI 3.7)
  std::vector<KeySpec> keys;  // descriptions of provided keys (possibly fewer than provided)
  // Provided keys that declare what they set when a topology replays as a simulated device:
  // a description key's path, or "" for nothing (mt_key_desc::replays_as). The others set the
  // description key of their own path.
  std::map<std::string, std::string> replays;
  std::vector<PlotSpec> plots;  // how the report draws its raw series
  std::vector<InvariantSpec> invariants;  // relations of its keys to others (ABI 3.3)
  // What provided keys are in the host's vocabulary (ABI 3.9, mt_key_role; docs/roles.md):
  // key -> "cache.size_bytes@l1_cache".
  std::map<std::string, std::string> roles;
  mt_probe_run_fn run = nullptr;  // from the plugin's descriptor
  void* user = nullptr;

  const OptionSpec* option(const std::string& option_name) const;
  const KeySpec* key_spec(const std::string& key) const;
};

// Where plugins are looked for, in order. Each folder is searched for files ending in .so.
struct SearchPaths {
  std::vector<fs::path> plugin_path_args;  // --plugin-path, first
  bool use_environment = true;             // MEMTOPO_PLUGIN_PATH (colon-separated)
  std::optional<fs::path> exe_dir;         // exe_dir/../lib/memtopo/plugins and exe_dir/plugins
  bool use_install_prefix = true;          // the plugin folder of the install prefix
};

// The folders to search, in order, without duplicates (by canonical path) and without
// folders that do not exist.
std::vector<fs::path> plugin_search_dirs(const SearchPaths& paths);

// The folder holding the running executable.
fs::path executable_dir();

class Registry {
 public:
  // Loads every *.so in `dir` (sorted by file name). Errors are recorded, never thrown.
  void load_directory(const fs::path& dir);
  void load_all(const SearchPaths& paths);
  // Loads one library. Returns true when its plugin was accepted.
  bool load_file(const fs::path& file);
  // A plugin linked into the program (tests): `origin` stands in for the file name.
  bool add_static(mt_plugin_entry_fn entry, const std::string& origin);
  bool add_static(const mt_plugin_desc* desc, const std::string& origin);

  // Accepted probes, sorted by name. Pointers into this list are invalidated by later loads:
  // load everything, then plan.
  const std::vector<ProbeInfo>& probes() const { return probes_; }
  const ProbeInfo* find(const std::string& probe_name) const;
  bool has_plugin(const std::string& plugin_name) const;
  // What the accepted probes declare a measured key replays as on the simulated GPU
  // (ProbeInfo::replays): measured key path -> description key path, "" for nothing. The
  // first provider of a key, by probe name, wins.
  std::map<std::string, std::string> replay_map() const;
  // One line per refused file or plugin, each starting with the file name.
  const std::vector<std::string>& errors() const { return errors_; }

 private:
  bool add_descriptor(const mt_plugin_desc* desc, const std::string& origin, const std::string& stem);
  struct PluginRecord {
    std::string name, file;
  };
  std::vector<ProbeInfo> probes_;
  std::vector<PluginRecord> plugins_;
  std::vector<std::string> loaded_files_;  // canonical paths already handled
  std::vector<std::string> errors_;
};

// "" when `role` has the form <class>.<quantity>[@<subject>] (lowercase letters, digits and
// '_', each part starting with a letter), else what is wrong.
std::string role_form_error(const std::string& role);

}  // namespace memtopo::host
