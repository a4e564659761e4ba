// The probes of the global-throughput plugin (registered in plugin.cpp).
#pragma once

#include <memtopo/probe.hpp>

namespace global_throughput {

memtopo::Probe latency_spectrum_probe();
memtopo::Probe streams_probe();
memtopo::Probe l1_streams_probe();

}  // namespace global_throughput
