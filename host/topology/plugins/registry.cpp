#include "topology/plugins/registry.hpp"
#include "topology/plugins/descriptor_read.hpp"
#include "topology/base/child_process.hpp"

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

// The smallest layouts the host accepts: ABI 3.0's. A later minor appends fields, read only
// where a descriptor's struct_size covers them.
constexpr size_t kPluginDescMin = sizeof(mt_plugin_desc);
constexpr size_t kProbeDescMin = offsetof(mt_probe_desc, invariants);
constexpr size_t kPluginVersionFieldsEnd = offsetof(mt_plugin_desc, abi_minor) + sizeof(uint32_t);

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
                      "." + std::to_string(MEMTOPO_ABI_MINOR) +
                      " (its entry point returned no descriptor: build it against this SDK's major version)");
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
  const std::string plugin = str_or_empty(desc->name);
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
  // Arrays are strided by their elements' own struct_size: a plugin built for a later minor
  // of a later host would have larger elements.
  const size_t probe_stride = desc->probe_count ? desc->probes[0].struct_size : 0;
  for (size_t k = 0; k < desc->probe_count; ++k) {
    const auto* pd = reinterpret_cast<const mt_probe_desc*>(reinterpret_cast<const char*>(desc->probes) +
                                                             k * probe_stride);
    if (pd->struct_size < kProbeDescMin)
      return refuse("probe #" + std::to_string(k) + " descriptor too small (struct_size " +
                    std::to_string(pd->struct_size) + ", need at least " + std::to_string(kProbeDescMin) +
                    ", ABI 3.0's)");
    ProbeInfo info;
    info.plugin = plugin;
    info.plugin_version = str_or_empty(desc->version);
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

std::map<std::string, std::string> Registry::replay_map() const {
  std::map<std::string, std::string> map;
  for (const ProbeInfo& p : probes_) map.insert(p.replays.begin(), p.replays.end());
  return map;
}

}  // namespace memtopo::host
