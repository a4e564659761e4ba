// The probes of the shared-memory plugin (plugin.cpp registers them).
#pragma once

#include <memtopo/probe.hpp>

namespace shmem {
memtopo::Probe banks_probe();
memtopo::Probe carveout_probe();
}  // namespace shmem
