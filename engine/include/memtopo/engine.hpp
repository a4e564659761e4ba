// memtopo measurement engine, host side: opening a device and its backend.
//
// Only the host (and tests) use this header; probes see the engine through
// mt_context::backend (measure.h) and the C++ wrapper in probe.hpp.
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "memtopo/abi.h"

namespace memtopo::engine {

// An opened device: its properties and the primitives that measure it.
class Device {
 public:
  virtual ~Device() = default;
  virtual const mt_backend* backend() const = 0;
  virtual const mt_device_info& info() const = 0;
  // Where the device came from, e.g. "cuda:0", "sim (built-in)", "sim:devices/kepler.toml".
  virtual std::string description() const = 0;
  // Empty while the device is usable; else the error that poisons it for this process (CUDA:
  // a sticky error such as an illegal address, which every later call returns).
  virtual std::string sticky_error() const { return {}; }
  // Called before each probe. The simulated GPU goes back to the state it was opened in, so
  // that a probe measures the same whichever probes ran before it in this process (and a
  // run's probes may run in several processes); a real GPU keeps its state.
  virtual void begin_probe() {}
};

// The most bytes an input file may hold (a config, a device description, a topology, a
// journal): far above any real one, far below what would exhaust memory.
constexpr size_t kMaxInputFileBytes = size_t{64} << 20;

// The whole text of a file a user named as input. Refuses, with memtopo::Error
// "PATH: <why>; name <what>", a missing file, anything that is not a regular file (a folder, a
// FIFO, a device: opening a FIFO would block) and a file over `max_bytes`.
std::string read_input_file(const std::string& path, const std::string& what,
                            size_t max_bytes = kMaxInputFileBytes);

// The most levels a file memtopo reads may nest tables, dotted keys or arrays: TOML++ and the
// readers after it recurse once per level (50,000 levels overflowed the stack). A topology
// nests four ([provenance.l2.size_bytes] and its fields), a config or a description a few more.
constexpr size_t kMaxNesting = 64;
// The line of TOML `text` where tables, dotted keys and arrays first nest deeper than
// kMaxNesting, or nothing: a scan before TOML++ parses that counts every dot of a key and
// every open bracket outside strings and comments, never fewer levels than the parser makes.
std::optional<size_t> toml_too_deep_at(std::string_view text);
// "FILE:LINE: nested deeper than 64 levels (...); ..." for that line of `file`.
std::string toml_too_deep_message(const std::string& file, size_t line);

// Whether GPUs' hardware counters check values in this process (mt_backend::count; off by
// default: CUPTI's start and its passes cost seconds). The simulated GPU counts by its model
// whatever this says. A worker forked after the call inherits it.
void set_hardware_counters(bool on);

// Whether this build has the CUDA backend.
bool cuda_built();
// Number of CUDA devices usable now (0 without the backend, a driver or a GPU).
int cuda_device_count();

// What the measured keys of a topology set when it is read as a simulated device, as the loaded
// plugins declare it (mt_key_desc::replays_as): measured key path -> description key path, ""
// for nothing. Keys not in it are description keys of their own path.
using ReplayMap = std::map<std::string, std::string>;

// The simulated GPU described by a topology TOML file (empty path: the built-in device), its
// measured keys replayed by `replay`. Throws memtopo::Error naming the file, line and key of
// any problem.
std::unique_ptr<Device> open_sim(const std::string& path, const ReplayMap& replay = {});
// Reads and checks a description as open_sim does (limits included), without building the
// simulated GPU. Throws memtopo::Error naming the file, line and key of the first problem.
void check_sim_description(const std::string& path, const ReplayMap& replay = {});
// The text of the built-in simulated device's description (what open_sim("") reads).
const char* sim_builtin_description();
// CUDA device `ordinal`. Throws memtopo::Error with the CUDA message.
std::unique_ptr<Device> open_cuda(int ordinal);

// The device to open, as the host's command line and config name it (parsed there only).
struct DeviceSpec {
  enum class Kind { Auto, Cuda, Sim };
  Kind kind = Kind::Auto;
  int ordinal = 0;   // Cuda: the GPU's number; -1 for a number no GPU can have
  std::string file;  // Sim: a description file; "" for the built-in simulated GPU
};
// The one grammar of a device: auto, cuda, cuda:N, sim or sim:FILE (a file name of one line);
// nothing for any other form. cuda:N with N of 2^20 and above gives ordinal -1.
std::optional<DeviceSpec> parse_device_spec(const std::string& text);
// "auto", "cuda:N", "sim" or "sim:FILE": the spec as the command line writes it.
std::string device_spec_text(const DeviceSpec& spec);

// Auto: GPU 0 if one exists, else the built-in simulated GPU (*fallback_reason says why);
// Cuda: GPU `ordinal`; Sim: the description `file`, its measured keys replayed by `replay`.
// Throws memtopo::Error naming the spec and what to use instead.
std::unique_ptr<Device> open_device(const DeviceSpec& spec, std::string* fallback_reason = nullptr,
                                    const ReplayMap& replay = {});

}  // namespace memtopo::engine
