// The L2-specific probes of the data-cache plugin (l2_probes.cpp): the latency levels of a
// footprint sweep, the hit latency per partition, and the sizes the occupancy may confirm.
#pragma once

#include <vector>

#include <memtopo/cache_procedure.hpp>
#include <memtopo/probe.hpp>

namespace data_cache {

memtopo::Probe l2_levels();
memtopo::Probe l2_latency();
std::vector<memtopo::cache::SizeCandidate> l2_size_candidates(const memtopo::Context& ctx);

}  // namespace data_cache
