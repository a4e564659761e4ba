#include "streams_windows.hpp"

#include <algorithm>

namespace global_throughput {

StreamRun quickest_windows(const std::vector<StreamRun>& runs) {
  if (runs.empty()) return {};
  StreamRun out = runs.front();
  const bool pairs = std::all_of(runs.begin(), runs.end(), [&](const StreamRun& r) {
    return r.long_elapsed_ns > 0 && r.short_elapsed_ns > 0 && r.window_scale == out.window_scale;
  });
  if (!pairs) return out;
  for (const StreamRun& r : runs) {
    out.long_elapsed_ns = std::min(out.long_elapsed_ns, r.long_elapsed_ns);
    out.short_elapsed_ns = std::min(out.short_elapsed_ns, r.short_elapsed_ns);
    out.long_cycles = std::min(out.long_cycles, r.long_cycles);
    out.short_cycles = std::min(out.short_cycles, r.short_cycles);
  }
  out.elapsed_ns = std::max(0.0, out.long_elapsed_ns - out.short_elapsed_ns);
  out.cycles = out.long_cycles > out.short_cycles ? out.long_cycles - out.short_cycles : 0;
  out.shortest_cycles = 0;
  return out;
}

}  // namespace global_throughput
