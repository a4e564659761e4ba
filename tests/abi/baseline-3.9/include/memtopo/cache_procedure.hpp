// The cache-measurement procedure shared by every cache probe (docs/cache-probes.md):
// size, fetch granularity, line, sets and ways, replacement policy, latency and miss
// penalty of one cache reached through one memory path. A probe picks the path and the
// element name; the steps live in the SDK once, so the L1, texture, read-only and constant
// probes cannot drift apart.
//   memtopo/cache/measurer.hpp  Target, Footprint, Measurer (runs and classifies footprints)
//   memtopo/cache/steps.hpp     find_size, find_occupancy, find_line, find_geometry, ...
//   memtopo/cache/element.hpp   ElementSpec and element_probes (the probe factory)
#pragma once

#include "memtopo/cache/element.hpp"
#include "memtopo/cache/measurer.hpp"
#include "memtopo/cache/steps.hpp"
