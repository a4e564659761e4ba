// tlb: the probes of the plugin (plugin.cpp registers them).
#pragma once

#include <memtopo/probe.hpp>

namespace tlb {
memtopo::Probe levels_probe();
memtopo::Probe sets_probe();
memtopo::Probe virtual_tag_probe();
#ifdef MEMTOPO_TLB_MAPPED
memtopo::Probe mapped_levels_probe();  // mapped.cu, built with CUDA only
#endif
}  // namespace tlb
