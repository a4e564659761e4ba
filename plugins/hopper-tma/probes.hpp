// The run functions of the hopper-tma probes (their specs are in plugin.cpp).
#pragma once

#include <memtopo/context.hpp>

namespace hopper_tma {

void measure_latency(memtopo::Context& ctx);
void measure_throughput(memtopo::Context& ctx);

}  // namespace hopper_tma
