#include "memtopo_host/registry.hpp"
#include "planning/option_range.hpp"
#include "memtopo_host/child_process.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <cstddef>
#include <cstdlib>
#include <optional>
#include <set>
#include <sstream>

#include <boost/dll/runtime_symbol_info.hpp>
#include <boost/dll/shared_library.hpp>

namespace memtopo::host {

namespace {

// Libraries are never unloaded (see docs/abi.md): descriptors, strings and code of a plugin
// stay valid until the process exits. Intentionally leaked.
std::vector<boost::dll::shared_library>& permanent_libraries() {
  static auto* libs = new std::vector<boost::dll::shared_library>();
  return *libs;
}

// The smallest layouts the host accepts (the 1.0 fields). Fields appended since (a probe's
// needs and key descriptions) are read only where a descriptor's struct_size covers them.
constexpr size_t kPluginDescMin = offsetof(mt_plugin_desc, probe_count) + sizeof(size_t);
constexpr size_t kPluginVersionFieldsEnd = offsetof(mt_plugin_desc, abi_minor) + sizeof(uint32_t);
constexpr size_t kProbeDescMin = offsetof(mt_probe_desc, user) + sizeof(void*);
constexpr size_t kOptionDescMin = offsetof(mt_option_desc, help) + sizeof(const char*);
constexpr size_t kKeyDescMin = offsetof(mt_key_desc, meaning) + sizeof(const char*);

std::vector<std::string> key_list(const char* const* keys) {
  std::vector<std::string> out;
  if (!keys) return out;
  for (size_t k = 0; keys[k]; ++k) out.emplace_back(keys[k]);
  return out;
}

std::string str(const char* s) { return s ? std::string(s) : std::string(); }

void add_dir(std::vector<fs::path>& out, std::set<std::string>& seen, const fs::path& dir) {
  std::error_code ec;
  if (dir.empty() || !fs::is_directory(dir, ec)) return;
  const fs::path canonical = fs::canonical(dir, ec);
  if (ec) return;
  if (seen.insert(canonical.string()).second) out.push_back(canonical);
}

}  // namespace

const OptionSpec* ProbeInfo::option(const std::string& option_name) const {
  for (const auto& o : options)
    if (o.name == option_name) return &o;
  return nullptr;
}

const KeySpec* ProbeInfo::key_spec(const std::string& key_name) const {
  for (const auto& k : keys)
    if (k.key == key_name) return &k;
  return nullptr;
}

fs::path executable_dir() {
  std::error_code ec;
  fs::path p = boost::dll::program_location(ec);
  if (ec || p.empty()) p = fs::read_symlink("/proc/self/exe", ec);
  return p.parent_path();
}

std::vector<fs::path> plugin_search_dirs(const SearchPaths& paths) {
  std::vector<fs::path> out;
  std::set<std::string> seen;
  for (const auto& d : paths.plugin_path_args) add_dir(out, seen, d);
  if (paths.use_environment) {
    if (const char* env = std::getenv("MEMTOPO_PLUGIN_PATH")) {
      std::stringstream ss(env);
      std::string part;
      while (std::getline(ss, part, ':'))
        if (!part.empty()) add_dir(out, seen, part);
    }
  }
  if (paths.exe_dir) {
    add_dir(out, seen, *paths.exe_dir / ".." / MEMTOPO_PLUGIN_SUBDIR);
    add_dir(out, seen, *paths.exe_dir / "plugins");
  }
  if (paths.use_install_prefix) add_dir(out, seen, MEMTOPO_INSTALL_PLUGIN_DIR);
  return out;
}

void Registry::load_all(const SearchPaths& paths) {
  for (const auto& dir : plugin_search_dirs(paths)) load_directory(dir);
}

void Registry::load_directory(const fs::path& dir) {
  std::vector<fs::path> files;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->path().extension() == ".so" && !it->is_directory()) files.push_back(it->path());
  }
  if (ec) {
    errors_.push_back(dir.string() + ": cannot list the folder: " + ec.message());
    return;
  }
  std::sort(files.begin(), files.end());
  for (const auto& f : files) load_file(f);
}

bool Registry::load_file(const fs::path& file) {
  std::error_code ec;
  const fs::path canonical = fs::weakly_canonical(file, ec);
  const std::string key = ec ? file.string() : canonical.string();
  // The same file reached through two search folders (or a symlink) is one plugin.
  if (std::find(loaded_files_.begin(), loaded_files_.end(), key) != loaded_files_.end()) return false;
  loaded_files_.push_back(key);

  const std::string name = file.string();
  // Loading runs the library's static constructors: a child tries first, so one that crashes
  // or exits is refused by name instead of ending the host.
  if (auto bad = check_library_loads(file)) {
    errors_.push_back(name + ": " + *bad);
    return false;
  }
  boost::dll::shared_library lib;
  boost::dll::fs::error_code load_ec;
  ::dlerror();  // clear any stale message
  lib.load(file, boost::dll::load_mode::rtld_lazy | boost::dll::load_mode::rtld_local, load_ec);
  if (load_ec || !lib.is_loaded()) {
    const char* why = ::dlerror();
    errors_.push_back(name + ": not a shared library: " + (why ? why : load_ec.message()));
    return false;
  }
  permanent_libraries().push_back(lib);
  if (!lib.has(MEMTOPO_ENTRY_POINT_NAME)) {
    errors_.push_back(name + ": not a memtopo probe (no " MEMTOPO_ENTRY_POINT_NAME ")");
    return false;
  }
  auto entry = lib.get<const mt_plugin_desc*(uint32_t, uint32_t)>(MEMTOPO_ENTRY_POINT_NAME);
  const mt_plugin_desc* desc = entry(MEMTOPO_ABI_MAJOR, MEMTOPO_ABI_MINOR);
  if (!desc) {
    errors_.push_back(name + ": the plugin declined to work with host ABI " + std::to_string(MEMTOPO_ABI_MAJOR) +
                      "." + std::to_string(MEMTOPO_ABI_MINOR) + " (its entry point returned no descriptor)");
    return false;
  }
  return add_descriptor(desc, name, file.stem().string());
}

bool Registry::add_static(mt_plugin_entry_fn entry, const std::string& origin) {
  const mt_plugin_desc* desc = entry ? entry(MEMTOPO_ABI_MAJOR, MEMTOPO_ABI_MINOR) : nullptr;
  const std::string name = "static:" + origin;
  if (!desc) {
    errors_.push_back(name + ": the plugin returned no descriptor");
    return false;
  }
  return add_descriptor(desc, name, "");
}

bool Registry::add_static(const mt_plugin_desc* desc, const std::string& origin) {
  if (!desc) {
    errors_.push_back("static:" + origin + ": no descriptor");
    return false;
  }
  return add_descriptor(desc, "static:" + origin, "");
}

namespace {

// Whether the descriptor has the field that ends at `end` (its struct_size says so).
bool has_field(const mt_probe_desc& pd, size_t end) { return pd.struct_size >= end; }

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
    if (od->struct_size < kOptionDescMin)
      return "probe " + info.name + ": option #" + std::to_string(o) + " descriptor too small";
    OptionSpec spec;
    spec.name = str(od->name);
    int raw = 0;
    const auto type = value_type_field(od->type, raw);
    if (!type) return "probe " + info.name + ": option " + spec.name + ": unknown type " + std::to_string(raw);
    spec.type = *type;
    spec.default_text = str(od->default_value);
    spec.help = str(od->help);
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

// Backends, compute capability and time budget, read only where the descriptor has them.
std::optional<std::string> read_needs(const mt_probe_desc& pd, ProbeInfo& info) {
  if (has_field(pd, offsetof(mt_probe_desc, backends) + sizeof(pd.backends))) info.backends = pd.backends;
  if (has_field(pd, offsetof(mt_probe_desc, min_cc_minor) + sizeof(pd.min_cc_minor))) {
    info.min_cc_major = pd.min_cc_major;
    info.min_cc_minor = pd.min_cc_minor;
  }
  constexpr uint32_t known = MT_BACKEND_CUDA | MT_BACKEND_SIM;
  if (info.backends & ~known)
    return "probe " + info.name + ": backends holds unknown bits (" + std::to_string(info.backends) +
           "); use MT_BACKEND_CUDA, MT_BACKEND_SIM or 0 for all";
  if (has_field(pd, offsetof(mt_probe_desc, budget_s) + sizeof(pd.budget_s))) info.budget_s = pd.budget_s;
  if (has_field(pd, offsetof(mt_probe_desc, flags) + sizeof(pd.flags)))
    info.own_process = (pd.flags & MT_PROBE_OWN_PROCESS) != 0;
  if (!(info.budget_s >= 0) || std::isinf(info.budget_s))
    return "probe " + info.name + ": budget_s must be a finite number of seconds >= 0 (0: none declared), got " +
           std::to_string(info.budget_s);
  if (info.min_cc_major < 0 || info.min_cc_minor < 0)
    return "probe " + info.name + ": negative minimum compute capability " + std::to_string(info.min_cc_major) +
           "." + std::to_string(info.min_cc_minor);
  return std::nullopt;
}

// Descriptions of provided keys, read only where the descriptor has them; each must describe
// a provided key once, with a unit and type its name allows.
std::optional<std::string> read_key_docs(const mt_probe_desc& pd, ProbeInfo& info) {
  if (!has_field(pd, offsetof(mt_probe_desc, key_count) + sizeof(pd.key_count)) || pd.key_count == 0)
    return std::nullopt;
  const std::string where = "probe " + info.name + ": ";
  if (!pd.keys) return where + "key_count is " + std::to_string(pd.key_count) + " but the key list is null";
  const size_t stride = pd.keys[0].struct_size;
  for (size_t k = 0; k < pd.key_count; ++k) {
    const auto* kd = reinterpret_cast<const mt_key_desc*>(reinterpret_cast<const char*>(pd.keys) + k * stride);
    if (kd->struct_size < kKeyDescMin) return where + "key description #" + std::to_string(k) + " too small";
    int raw = 0;
    const auto type = value_type_field(kd->type, raw);
    if (!type) return where + "key " + str(kd->key) + ": declares unknown type " + std::to_string(raw);
    KeySpec spec{str(kd->key), *type, str(kd->unit), str(kd->meaning), 0};
    if (kd->struct_size >= offsetof(mt_key_desc, flags) + sizeof(kd->flags)) spec.flags = kd->flags;
    constexpr uint32_t known = MT_KEY_IDENTITY | MT_KEY_SETTING | MT_KEY_VARIES | MT_KEY_ESTIMATE;
    if (spec.flags & ~known)
      return where + "key " + spec.key + ": flags hold unknown bits (" + std::to_string(spec.flags) +
             "); use MT_KEY_IDENTITY, MT_KEY_SETTING, MT_KEY_VARIES, MT_KEY_ESTIMATE or 0";
    if (std::find(info.provided.begin(), info.provided.end(), spec.key) == info.provided.end())
      return where + "key " + spec.key + ": described, but not one of the keys it provides";
    if (info.key_spec(spec.key)) return where + "key " + spec.key + ": described twice";
    if (auto bad = check_key_declaration(spec.key, spec.type, spec.unit)) return where + "key " + spec.key + ": " + *bad;
    info.keys.push_back(std::move(spec));
  }
  return std::nullopt;
}

// Fills `info` (plugin, version and file already set) from one descriptor; says what is wrong.
std::optional<std::string> read_probe(const mt_probe_desc& pd, ProbeInfo& info) {
  info.name = str(pd.name);
  const std::string prefix = info.plugin + "/";
  if (info.name.size() <= prefix.size() || info.name.compare(0, prefix.size(), prefix) != 0 ||
      info.name.find('/', prefix.size()) != std::string::npos)
    return "probe name '" + info.name + "' must be '" + prefix + "<probe>'";
  if (!pd.run) return "probe " + info.name + " has no run function";
  info.summary = str(pd.summary);
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
  return read_key_docs(pd, info);
}

}  // namespace

bool Registry::add_descriptor(const mt_plugin_desc* desc, const std::string& origin, const std::string& stem) {
  auto refuse = [&](const std::string& why) {
    errors_.push_back(origin + ": " + why);
    return false;
  };
  if (desc->struct_size < kPluginVersionFieldsEnd)
    return refuse("plugin descriptor too small (struct_size " + std::to_string(desc->struct_size) +
                  "): not built with the memtopo SDK");
  const std::string host_abi = std::to_string(MEMTOPO_ABI_MAJOR) + "." + std::to_string(MEMTOPO_ABI_MINOR);
  const std::string plugin_abi = std::to_string(desc->abi_major) + "." + std::to_string(desc->abi_minor);
  if (desc->abi_major != MEMTOPO_ABI_MAJOR || desc->abi_minor > MEMTOPO_ABI_MINOR)
    return refuse("built for ABI " + plugin_abi + ", host supports " + host_abi +
                  (desc->abi_major != MEMTOPO_ABI_MAJOR ? " (the major version must match; rebuild the plugin)"
                                                        : " (the plugin needs a newer host; update memtopo)"));
  if (desc->struct_size < kPluginDescMin)
    return refuse("plugin descriptor too small for ABI " + plugin_abi + " (struct_size " +
                  std::to_string(desc->struct_size) + ", need at least " + std::to_string(kPluginDescMin) + ")");
  const std::string plugin = str(desc->name);
  if (plugin.empty()) return refuse("the plugin has no name");
  if (!stem.empty() && plugin != stem)
    return refuse("plugin name '" + plugin + "' differs from the file name; the library must be named " + plugin +
                  ".so");
  for (const auto& p : plugins_)
    if (p.name == plugin)
      return refuse("plugin name '" + plugin + "' is already taken by " + p.file +
                    "; this copy is ignored (the first one found wins)");
  if (desc->probe_count && !desc->probes) return refuse("probe_count is " + std::to_string(desc->probe_count) +
                                                        " but the probe list is null");

  std::vector<ProbeInfo> accepted;
  // Arrays are strided by their elements' own struct_size: a plugin built for an older minor
  // has smaller elements than this host's.
  const size_t probe_stride = desc->probe_count ? desc->probes[0].struct_size : 0;
  for (size_t k = 0; k < desc->probe_count; ++k) {
    const auto* pd = reinterpret_cast<const mt_probe_desc*>(reinterpret_cast<const char*>(desc->probes) +
                                                             k * probe_stride);
    if (pd->struct_size < kProbeDescMin)
      return refuse("probe #" + std::to_string(k) + " descriptor too small (struct_size " +
                    std::to_string(pd->struct_size) + ", need at least " + std::to_string(kProbeDescMin) + ")");
    ProbeInfo info;
    info.plugin = plugin;
    info.plugin_version = str(desc->version);
    info.file = origin;
    if (auto bad = read_probe(*pd, info)) return refuse(*bad);
    for (const auto& other : accepted)
      if (other.name == info.name) return refuse("probe " + info.name + " declared twice");
    if (const ProbeInfo* existing = find(info.name))
      return refuse("probe name " + info.name + " is already taken by " + existing->file +
                    "; this copy is ignored (the first one found wins)");
    accepted.push_back(std::move(info));
  }
  plugins_.push_back({plugin, origin});
  for (auto& p : accepted) probes_.push_back(std::move(p));
  std::sort(probes_.begin(), probes_.end(), [](const ProbeInfo& a, const ProbeInfo& b) { return a.name < b.name; });
  return true;
}

const ProbeInfo* Registry::find(const std::string& probe_name) const {
  for (const auto& p : probes_)
    if (p.name == probe_name) return &p;
  return nullptr;
}

bool Registry::has_plugin(const std::string& plugin_name) const {
  for (const auto& p : plugins_)
    if (p.name == plugin_name) return true;
  return false;
}

}  // namespace memtopo::host
