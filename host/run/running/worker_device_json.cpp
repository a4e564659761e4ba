// mt_device_info through the worker's hello message: every field, so the parent plans and
// writes [meta] from exactly what the worker opened.
#include <cstdio>
#include <stdexcept>

#include "run/running/worker.hpp"

namespace memtopo::host {

namespace {

// One entry per field: the JSON name and how to copy it each way.
template <class F>
void each_field(F&& f) {
  f("name", &mt_device_info::name);
  f("backend", &mt_device_info::backend);
  f("ordinal", &mt_device_info::ordinal);
  f("cc_major", &mt_device_info::cc_major);
  f("cc_minor", &mt_device_info::cc_minor);
  f("sm_count", &mt_device_info::sm_count);
  f("warp_size", &mt_device_info::warp_size);
  f("sm_clock_khz", &mt_device_info::sm_clock_khz);
  f("memory_clock_khz", &mt_device_info::memory_clock_khz);
  f("memory_bus_width_bits", &mt_device_info::memory_bus_width_bits);
  f("global_memory_bytes", &mt_device_info::global_memory_bytes);
  f("l2_bytes", &mt_device_info::l2_bytes);
  f("shared_per_sm_bytes", &mt_device_info::shared_per_sm_bytes);
  f("shared_per_block_bytes", &mt_device_info::shared_per_block_bytes);
  f("shared_per_block_optin_bytes", &mt_device_info::shared_per_block_optin_bytes);
  f("constant_memory_bytes", &mt_device_info::constant_memory_bytes);
  f("registers_per_sm", &mt_device_info::registers_per_sm);
  f("registers_per_block", &mt_device_info::registers_per_block);
  f("max_threads_per_sm", &mt_device_info::max_threads_per_sm);
  f("max_threads_per_block", &mt_device_info::max_threads_per_block);
  f("max_blocks_per_sm", &mt_device_info::max_blocks_per_sm);
  f("driver_version", &mt_device_info::driver_version);
  f("runtime_version", &mt_device_info::runtime_version);
  f("uuid", &mt_device_info::uuid);
  f("pci_bus_id", &mt_device_info::pci_bus_id);
  f("constant_reach_bytes", &mt_device_info::constant_reach_bytes);
}

}  // namespace

nlohmann::json device_info_to_json(const mt_device_info& info) {
  nlohmann::json j = nlohmann::json::object();
  each_field([&](const char* name, auto member) {
    const auto& v = info.*member;
    if constexpr (std::is_array_v<std::remove_reference_t<decltype(v)>>) j[name] = std::string(v);
    else j[name] = v;
  });
  return j;
}

mt_device_info device_info_from_json(const nlohmann::json& j) {
  mt_device_info info{};
  info.struct_size = sizeof info;
  each_field([&](const char* name, auto member) {
    auto& v = info.*member;
    if (!j.contains(name)) return;
    try {
      if constexpr (std::is_array_v<std::remove_reference_t<decltype(v)>>)
        std::snprintf(v, sizeof v, "%s", j.at(name).get<std::string>().c_str());
      else
        v = j.at(name).get<std::remove_reference_t<decltype(v)>>();
    } catch (const nlohmann::json::exception& e) {
      throw std::runtime_error(std::string("device field ") + name + ": " + e.what());
    }
  });
  return info;
}

}  // namespace memtopo::host
