// The run functions of the hopper-dsmem probes (their specs are in plugin.cpp).
#pragma once

#include <memtopo/context.hpp>

namespace hopper_dsmem {

void measure_clusters(memtopo::Context& ctx);
void measure_latency(memtopo::Context& ctx);
void measure_bandwidth(memtopo::Context& ctx);

}  // namespace hopper_dsmem
