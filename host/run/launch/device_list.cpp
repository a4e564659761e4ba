#include "run/launch/device_list.hpp"

#include <unistd.h>

#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <set>

#include "topology/base/usage_error.hpp"
#include "memtopo/engine.hpp"
#include "run/planning/device_spec.hpp"

namespace memtopo::host::cli {

namespace {

const char* env(const char* name) {
  const char* v = std::getenv(name);
  return v && *v ? v : nullptr;
}

std::vector<std::string> split(const std::string& text, char sep) {
  std::vector<std::string> out;
  size_t start = 0;
  for (size_t i = 0; i <= text.size(); ++i)
    if (i == text.size() || text[i] == sep) out.push_back(text.substr(start, i - start)), start = i + 1;
  return out;
}

// "a,b" of CUDA_VISIBLE_DEVICES: the GPUs this process may use, as the driver numbers them.
std::vector<std::string> visible_entries() {
  const char* v = env("CUDA_VISIBLE_DEVICES");
  return v ? split(v, ',') : std::vector<std::string>{};
}

bool all_digits(const std::string& s) { return !s.empty() && s.find_first_not_of("0123456789") == std::string::npos; }

// GPU `ordinal` as this process sees it: run with CUDA_VISIBLE_DEVICES of just it.
FleetDevice cuda_device(int ordinal, const std::vector<std::string>& visible, const std::string& host) {
  const std::string entry = ordinal < static_cast<int>(visible.size()) ? visible[ordinal] : std::to_string(ordinal);
  const std::string number = all_digits(entry) ? entry : std::to_string(ordinal);
  return {"cuda:0", "cuda:" + number, entry, host + "-cuda" + number};
}

std::string sim_stem(const std::string& path) { return file_name_part(std::filesystem::path(path).stem().string()); }

// Gives each device a stem of its own: devices whose names are equal get "-1", "-2", ... in
// list order, skipping numbers that would give a name another device has (da/x.toml,
// db/x.toml and x-1.toml are sim-x-2, sim-x-3 and sim-x-1).
void make_stems_distinct(std::vector<FleetDevice>& devices) {
  std::map<std::string, int> count;
  for (const auto& d : devices) ++count[d.stem];
  std::set<std::string> taken;
  for (const auto& d : devices)
    if (count[d.stem] == 1) taken.insert(d.stem);
  std::map<std::string, int> next;
  for (auto& d : devices) {
    if (count[d.stem] == 1) continue;
    std::string suffix;
    do suffix = "-" + std::to_string(++next[d.stem]);
    while (taken.count(d.stem + suffix) || count.count(d.stem + suffix));
    taken.insert(d.stem + suffix);
    d.stem += suffix;
    d.label += suffix;
  }
}

}  // namespace

std::string file_name_part(const std::string& raw) {
  constexpr size_t kMaxBytes = 64;
  std::string out = raw.substr(0, kMaxBytes);
  for (char& c : out)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.') c = '_';
  if (out.empty()) return "_";
  if (out[0] == '.' || out[0] == '-') out[0] = '_';
  return out;
}

std::string host_file_name() {
  if (const char* forced = env("MEMTOPO_TEST_HOSTNAME")) return file_name_part(forced);
  char buf[256] = {};
  if (::gethostname(buf, sizeof buf - 1) != 0 || !buf[0]) return "host";
  return file_name_part(buf);
}

std::vector<FleetDevice> expand_devices(const DeviceChoice& device, const std::string& host) {
  const std::vector<std::string> visible = visible_entries();
  std::vector<FleetDevice> out;
  if (device.all) {
    const int count = engine::cuda_device_count();
    if (count == 0)
      throw UsageError("--device all: no CUDA GPU is available" +
                       std::string(engine::cuda_built() ? "" : " (built without the CUDA backend)") +
                       "; name simulated devices instead, e.g. --device sim:a.toml,sim:b.toml");
    for (int i = 0; i < count; ++i) out.push_back(cuda_device(i, visible, host));
    return out;
  }
  for (const DeviceSpec& spec : device.specs) {
    const std::string entry = engine::device_spec_text(spec);
    if (spec.kind == DeviceSpec::Kind::Auto)
      throw UsageError("--device " + device.text + ": 'auto' cannot be one of several devices; name each");
    if (spec.kind == DeviceSpec::Kind::Cuda) {
      const int ordinal = spec.ordinal;
      const int count = engine::cuda_device_count();
      if (ordinal < 0 || ordinal >= count)
        throw UsageError("--device " + entry + ": there is no such GPU; this host has " + std::to_string(count) +
                         " CUDA GPU(s)");
      out.push_back(cuda_device(ordinal, visible, host));
    } else {
      const std::string& path = spec.file;
      const std::string stem = path.empty() ? "sim" : "sim-" + sim_stem(path);
      out.push_back({entry, stem, "", host + "-" + stem});
    }
  }
  make_stems_distinct(out);
  return out;
}

FleetDevice device_of_rank(const std::vector<FleetDevice>& devices, const LaunchRank& rank) {
  if (devices.size() == 1) return devices.front();
  if (rank.local_rank >= static_cast<int>(devices.size()))
    throw UsageError("local rank " + std::to_string(rank.local_rank) + " of " + rank.launcher + " has no device: " +
                     std::to_string(rank.local_size) + " tasks on this node, " + std::to_string(devices.size()) +
                     " devices; start one task per GPU (srun --ntasks-per-node, mpirun -npernode)");
  return devices[rank.local_rank];
}

}  // namespace memtopo::host::cli
