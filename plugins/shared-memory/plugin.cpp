// shared-memory: banks and conflicts (banks.cpp), the carveout table (carveout.cpp).
#include <memtopo/probe.hpp>

#include "probes.hpp"

MEMTOPO_PLUGIN("shared-memory", "1.1.0", shmem::banks_probe(), shmem::carveout_probe())
