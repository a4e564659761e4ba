// A CUDA GPU in its host: where it sits (NVML, the host's hardware locality) and copies over
// its links timed with events (mt_backend::attachment, time_link_copies).
#pragma once

#include <string>

#include "memtopo/measure.h"

namespace memtopo::cuda {

// What NVML and hwloc tell of GPU `ordinal` (PCI bus id `bus_id`); a field neither can tell
// stays -1 or "". The PCIe generation and width are read while a copy keeps the link busy.
void read_attachment(int ordinal, const char* bus_id, mt_attachment& out);
// Times `c` (measure.h): 0, or MT_LINK_UNAVAILABLE with `why` (one NUMA node, no peer).
// Throws memtopo::Error on a CUDA failure.
int time_link_copies(int ordinal, const char* bus_id, mt_link_copy& c, std::string& why);

}  // namespace memtopo::cuda
