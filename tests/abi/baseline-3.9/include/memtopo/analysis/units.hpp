// Units for probes: binary byte units, and conversions for probes that time with the SM clock.
#pragma once

#include <cstdint>

namespace memtopo::analysis {

// Byte units for sizes and footprints, defined once for every plugin.
inline constexpr uint64_t KiB = 1024, MiB = 1024 * KiB, GiB = 1024 * MiB;

// Throughput in GB/s (1e9 bytes per second) of `bytes` moved in `cycles` of an SM clock
// running at `clock_mhz`; 0 when no cycles passed.
inline double gbps_from_cycles(double bytes, double cycles, double clock_mhz) {
  return cycles > 0 ? bytes / cycles * clock_mhz * 1e6 / 1e9 : 0.0;
}

// Nanoseconds of `cycles` at `clock_mhz`.
inline double ns_from_cycles(double cycles, double clock_mhz) { return clock_mhz > 0 ? cycles * 1e3 / clock_mhz : 0.0; }

}  // namespace memtopo::analysis
