// device-info: the device's properties as the driver (or the simulated device) states
// them. Nothing here is measured, so every value has confidence 1.
#include <string>

#include <memtopo/probe.hpp>

namespace {

memtopo::Probe device_properties() {
  return memtopo::Probe("device-info/properties")
      .roles({{"device.name", "gpu.name"},
              {"device.compute_capability", "gpu.compute_capability"},
              {"device.sm_count", "gpu.sm_count"},
              {"device.warp_size", "gpu.warp_size"},
              {"device.sm_clock_khz", "gpu.sm_clock_khz"},
              {"device.memory_clock_khz", "gpu.memory_clock_khz"},
              {"device.memory_bus_width_bits", "gpu.memory_bus_width_bits"},
              {"device.global_memory_bytes", "gpu.global_memory_bytes"},
              {"device.l2_bytes", "gpu.l2_bytes"},
              {"device.shared_per_sm_bytes", "gpu.shared_per_sm_bytes"},
              {"device.shared_per_block_bytes", "gpu.shared_per_block_bytes"},
              {"device.shared_per_block_optin_bytes", "gpu.shared_per_block_optin_bytes"},
              {"device.constant_memory_bytes", "gpu.constant_memory_bytes"},
              {"device.registers_per_sm", "gpu.registers_per_sm"},
              {"device.registers_per_block", "gpu.registers_per_block"},
              {"device.max_threads_per_sm", "gpu.max_threads_per_sm"},
              {"device.max_threads_per_block", "gpu.max_threads_per_block"},
              {"device.max_blocks_per_sm", "gpu.max_blocks_per_sm"},
              {"device.uuid", "gpu.uuid"},
              {"device.pci_bus_id", "gpu.pci_bus_id"}})
      .summary("Device name, compute capability, SMs, clocks, memory sizes and limits from the driver")
      .provides({"device.name", "device.compute_capability", "device.sm_count", "device.warp_size",
                 "device.sm_clock_khz", "device.memory_clock_khz", "device.memory_bus_width_bits",
                 "device.global_memory_bytes", "device.l2_bytes", "device.shared_per_sm_bytes",
                 "device.shared_per_block_bytes", "device.shared_per_block_optin_bytes",
                 "device.constant_memory_bytes", "device.registers_per_sm", "device.registers_per_block",
                 "device.max_threads_per_sm", "device.max_threads_per_block", "device.max_blocks_per_sm",
                 "device.uuid", "device.pci_bus_id"})
      // They name this GPU: two GPUs always differ in them, which is no difference.
      .key("device.uuid", MT_VALUE_STRING, "", "the GPU's UUID (GPU-...)", MT_KEY_IDENTITY)
      .key("device.pci_bus_id", MT_VALUE_STRING, "", "the GPU's PCI bus id (domain:bus:device.function)", MT_KEY_IDENTITY)
      .run([](memtopo::Context& ctx) {
        const mt_device_info& d = ctx.device();
        ctx.result("device.name", std::string(d.name));
        ctx.result("device.compute_capability", std::to_string(d.cc_major) + "." + std::to_string(d.cc_minor));
        ctx.result("device.sm_count", d.sm_count);
        ctx.result("device.warp_size", d.warp_size);
        ctx.result("device.sm_clock_khz", d.sm_clock_khz);
        ctx.result("device.memory_clock_khz", d.memory_clock_khz);
        ctx.result("device.memory_bus_width_bits", d.memory_bus_width_bits);
        ctx.result("device.global_memory_bytes", d.global_memory_bytes);
        ctx.result("device.l2_bytes", d.l2_bytes);
        ctx.result("device.shared_per_sm_bytes", d.shared_per_sm_bytes);
        ctx.result("device.shared_per_block_bytes", d.shared_per_block_bytes);
        ctx.result("device.shared_per_block_optin_bytes", d.shared_per_block_optin_bytes);
        ctx.result("device.constant_memory_bytes", d.constant_memory_bytes);
        ctx.result("device.registers_per_sm", d.registers_per_sm);
        ctx.result("device.registers_per_block", d.registers_per_block);
        ctx.result("device.max_threads_per_sm", d.max_threads_per_sm);
        ctx.result("device.max_threads_per_block", d.max_threads_per_block);
        ctx.result("device.max_blocks_per_sm", d.max_blocks_per_sm);
        const std::string lacks = std::string("the ") + d.backend + " backend has none for this device";
        if (d.uuid[0]) ctx.result("device.uuid", std::string(d.uuid));
        else ctx.absent("device.uuid", lacks);
        if (d.pci_bus_id[0]) ctx.result("device.pci_bus_id", std::string(d.pci_bus_id));
        else ctx.absent("device.pci_bus_id", lacks);
      });
}

}  // namespace

MEMTOPO_PLUGIN("device-info", "1.0.0", device_properties())
