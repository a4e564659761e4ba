// tlb: the probes of the plugin (plugin.cpp registers them).
#pragma once

#include <memtopo/probe.hpp>

namespace tlb {
memtopo::Probe levels_probe();
memtopo::Probe sets_probe();
memtopo::Probe virtual_tag_probe();
}  // namespace tlb
