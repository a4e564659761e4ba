// Simulated-device presets by name: `--device sim:kepler-like` reads kepler-like.toml from the
// presets installed beside memtopo (share/memtopo/devices; the build tree holds a copy), so
// that the examples work after an install, where examples/devices/ is not at hand.
#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "run/planning/config.hpp"
#include "topology/plugins/registry.hpp"
#include "topology/base/suggest.hpp"

namespace memtopo::host {

fs::path device_preset_dir() { return (executable_dir() / ".." / "share" / "memtopo" / "devices").lexically_normal(); }

namespace {

std::string resolve_one(const std::string& entry, std::string* error) {
  if (entry.rfind("sim:", 0) != 0) return entry;
  const std::string name = entry.substr(4);
  // A path (a slash or an extension) or a file of that name here is a file, never a preset.
  std::error_code ec;
  if (name.empty() || name.find('/') != std::string::npos || name.find('.') != std::string::npos ||
      fs::exists(name, ec))
    return entry;
  const fs::path dir = device_preset_dir();
  const fs::path file = dir / (name + ".toml");
  if (fs::is_regular_file(file, ec)) return "sim:" + file.string();
  std::vector<std::string> presets;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (e.path().extension() == ".toml") presets.push_back(e.path().stem().string());
  std::sort(presets.begin(), presets.end());
  std::string list;
  for (const auto& p : presets) list += (list.empty() ? "" : ", ") + p;
  if (error)
    *error = "'" + entry + "': no file '" + name + "' here and no simulated-device preset of that name" +
             did_you_mean(name, presets) + " (" +
             (list.empty() ? "no presets in " + dir.string() : "presets: " + list + ", in " + dir.string()) +
             "); give sim:PATH to a device description, or a preset's name";
  return entry;
}

}  // namespace

std::string resolve_device_presets(const std::string& value, std::string* error) {
  std::string out;
  for (size_t start = 0; start <= value.size();) {
    const size_t end = std::min(value.find(',', start), value.size());
    out += (start ? "," : "") + resolve_one(value.substr(start, end - start), error);
    if (error && !error->empty()) return value;
    start = end + 1;
  }
  return out;
}

}  // namespace memtopo::host
