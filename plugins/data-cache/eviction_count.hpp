// The L2 eviction sets' ways checked by the hardware counters (eviction_count.cu).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <memtopo/probe.hpp>

#include "eviction_analysis.hpp"

namespace data_cache {

// Cycles x with its W lines, then x with W - 1 of them, through the L2 under the counters, in
// up to 4 complete sets. Marks `info` verified where the counts agree with `ways`, unverified
// where nothing was counted; false (and `why`) where the counts refute the ways. `policy`: the
// sets' measured replacement ("lru" and "fifo" miss on every load of W + 1 lines).
bool verify_l2_ways(const memtopo::Context& ctx, const LineSpace& space, const std::vector<EvictionSet>& sets,
                    uint32_t ways, const std::string& policy, memtopo::ResultInfo& info, std::string& why);

}  // namespace data_cache
