// global-throughput: how fast memory answers many loads at once, and the latency of every level
// one chase meets. docs/global-throughput.md.
#include <memtopo/probe.hpp>

#include "probes.hpp"

// 2: throughput.l2_read_* became every SM reading its own lines (docs/writing-a-probe.md, "Versions").
MEMTOPO_PLUGIN("global-throughput", "2.1.0", global_throughput::streams_probe(), global_throughput::l1_streams_probe(),
               global_throughput::latency_spectrum_probe())
