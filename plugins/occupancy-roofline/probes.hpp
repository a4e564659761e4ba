// The run functions of the occupancy-roofline probes (their specs are in plugin.cpp).
#pragma once

#include <memtopo/context.hpp>

namespace occupancy_roofline {

void measure_instructions(memtopo::Context& ctx);  // the compute types
void measure_loads(memtopo::Context& ctx);         // the load types
void measure_divergence(memtopo::Context& ctx);

}  // namespace occupancy_roofline
