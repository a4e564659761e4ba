// Running the real memtopo executable with the real plugins on a simulated device, as a user
// would: the round-trip and replay tests measure through it.
#pragma once

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <toml++/toml.h>

namespace probetest {

std::filesystem::path device_file(const std::string& name);  // examples/devices/<name>
// plugins/*/tests/devices/<name>: devices unlike the shipped ones, private to the tests so
// that they stay a test of the probes' generality.
std::filesystem::path test_device_file(const std::string& name);
std::filesystem::path scratch(const std::string& name);      // a file under the build tree

// `memtopo run -q --device sim:<device> [--only <only>] [--skip <skip>] [<extra>]`; returns the
// topology it wrote (REQUIREs that it wrote one). `tag` names the output and log files in scratch().
toml::table run_memtopo(const std::filesystem::path& device, const std::string& tag, const std::string& only,
                        const std::string& skip = "", const std::string& extra = "");
// The same `--only <only>` run measured once per build (tests/shipped/measured-run): tests that
// read one run share it, a test that asks while another measures waits. `tag` names its folder.
toml::table shared_run(const std::filesystem::path& device, const std::string& tag, const std::string& only);
// The loaded probes `memtopo list` marks [opt-in]: left out of a default run (ABI 3.7).
std::vector<std::string> opt_in_probes();
// Every probe `memtopo list` shows: what this build loads (one without CUDA lacks the Hopper
// plugins).
std::vector<std::string> loaded_probes();

// The integers of a TOML array (-1 for an element that is not one); empty when not an array.
inline std::vector<int64_t> ints(const toml::node_view<const toml::node>& v) {
  std::vector<int64_t> out;
  if (const toml::array* a = v.as_array())
    for (const auto& e : *a) out.push_back(e.value_or(int64_t(-1)));
  return out;
}

// The stream probes' rates in topology `got` against the description `ref` it measured: the
// peak rates of [sim.memory] within 5 % (the model gives them once enough is in flight), a copy
// at the harmonic mean of read and write, the DRAM read's fraction of the theoretical peak.
void check_peak_rates(const toml::table& ref, const toml::table& got);

// Measurement noise on: two cycles either way, and rare outliers of 2000 cycles.
void add_noise(toml::table& t, int64_t seed);

// A device file changed by `edit`, written to scratch(); its path.
template <class Edit>
std::string write_variant_of(const std::filesystem::path& file, const std::string& tag, Edit edit) {
  toml::table t = toml::parse_file(file.string());
  edit(t);
  const std::filesystem::path p = scratch(tag + "-" + file.filename().string());
  std::ofstream(p) << t;
  return p.string();
}

// A shipped device (examples/devices/<name>) changed by `edit`, written to scratch(); its path.
template <class Edit>
std::string write_variant(const std::string& name, const std::string& tag, Edit edit) {
  return write_variant_of(device_file(name), tag, edit);
}

}  // namespace probetest
