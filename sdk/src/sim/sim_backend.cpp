// The simulated GPU (minimal: the [device] table). The memory-hierarchy model arrives with
// the measurement-engine issue; until then the primitives report that they are missing.
#include <cstdio>
#include <cstring>
#include <memory>
#include <sstream>
#include <string>

#include <toml++/toml.h>

#include "memtopo/engine.hpp"
#include "memtopo/probe.hpp"

namespace memtopo::engine {
namespace {

const char* const kBuiltinDevice = R"(# built-in simulated GPU
[device]
name = "memtopo simulated GPU"
compute_capability = "9.0"
sm_count = 8
warp_size = 32
sm_clock_khz = 1755000
memory_clock_khz = 2619000
memory_bus_width_bits = 5120
global_memory_bytes = 8589934592
l2_bytes = 4194304
shared_per_sm_bytes = 233472
shared_per_block_bytes = 49152
shared_per_block_optin_bytes = 232448
constant_memory_bytes = 65536
registers_per_sm = 65536
registers_per_block = 65536
max_threads_per_sm = 2048
max_threads_per_block = 1024
max_blocks_per_sm = 32
)";

int not_yet(char* err, size_t n) {
  std::snprintf(err, n, "the simulated GPU has no memory-hierarchy model yet");
  return 1;
}
int sim_fine(void*, mt_chase_job*, size_t, char* err, size_t n) { return not_yet(err, n); }
int sim_avg(void*, mt_chase_job*, size_t, char* err, size_t n) { return not_yet(err, n); }
int sim_seq(void*, mt_sequence_job*, char* err, size_t n) { return not_yet(err, n); }
int sim_overhead(void*, double* c, char*, size_t) { *c = 0; return 0; }

class SimDevice final : public Device {
 public:
  SimDevice(const toml::table& t, std::string origin) : origin_(std::move(origin)) {
    info_.struct_size = sizeof(info_);
    std::snprintf(info_.backend, sizeof info_.backend, "sim");
    const toml::table* dev = t["device"].as_table();
    if (!dev) throw Error(origin_ + ": no [device] table; a simulated device needs one");
    auto str = [&](const char* key, char* dst, size_t n) {
      if (auto v = (*dev)[key].value<std::string>()) std::snprintf(dst, n, "%s", v->c_str());
    };
    auto num = [&](const char* key, auto& dst) {
      const toml::node* node = dev->get(key);
      if (!node) return;
      auto v = node->value<int64_t>();
      if (!v) {
        std::ostringstream m;
        m << origin_ << ":" << node->source().begin.line << ": device." << key << " must be an integer";
        throw Error(m.str());
      }
      dst = static_cast<std::remove_reference_t<decltype(dst)>>(*v);
    };
    str("name", info_.name, sizeof info_.name);
    if (auto cc = (*dev)["compute_capability"].value<std::string>()) {
      if (std::sscanf(cc->c_str(), "%d.%d", &info_.cc_major, &info_.cc_minor) != 2)
        throw Error(origin_ + ": device.compute_capability must look like \"9.0\"");
    }
    num("sm_count", info_.sm_count);
    num("warp_size", info_.warp_size);
    num("sm_clock_khz", info_.sm_clock_khz);
    num("memory_clock_khz", info_.memory_clock_khz);
    num("memory_bus_width_bits", info_.memory_bus_width_bits);
    num("global_memory_bytes", info_.global_memory_bytes);
    num("l2_bytes", info_.l2_bytes);
    num("shared_per_sm_bytes", info_.shared_per_sm_bytes);
    num("shared_per_block_bytes", info_.shared_per_block_bytes);
    num("shared_per_block_optin_bytes", info_.shared_per_block_optin_bytes);
    num("constant_memory_bytes", info_.constant_memory_bytes);
    num("registers_per_sm", info_.registers_per_sm);
    num("registers_per_block", info_.registers_per_block);
    num("max_threads_per_sm", info_.max_threads_per_sm);
    num("max_threads_per_block", info_.max_threads_per_block);
    num("max_blocks_per_sm", info_.max_blocks_per_sm);
    if (info_.sm_count <= 0) throw Error(origin_ + ": device.sm_count must be a positive integer");
    backend_.struct_size = sizeof(backend_);
    backend_.self = this;
    backend_.name = "sim";
    backend_.fine_chase = &sim_fine;
    backend_.average_chase = &sim_avg;
    backend_.sequence_chase = &sim_seq;
    backend_.timing_overhead = &sim_overhead;
  }
  const mt_backend* backend() const override { return &backend_; }
  const mt_device_info& info() const override { return info_; }
  std::string description() const override { return origin_; }

 private:
  std::string origin_;
  mt_device_info info_{};
  mt_backend backend_{};
};

}  // namespace

std::unique_ptr<Device> open_sim(const std::string& path) {
  try {
    if (path.empty()) return std::make_unique<SimDevice>(toml::parse(kBuiltinDevice), "sim (built-in)");
    return std::make_unique<SimDevice>(toml::parse_file(path), "sim:" + path);
  } catch (const toml::parse_error& e) {
    std::ostringstream m;
    m << (path.empty() ? "built-in device" : path) << ":" << e.source().begin.line << ":"
      << e.source().begin.column << ": " << e.description();
    throw Error(m.str());
  }
}

}  // namespace memtopo::engine
