// memtopo probe SDK: everything a probe plugin includes.
//
// A plugin is a handful of probe specs plus one registration macro:
//
//   #include <memtopo/probe.hpp>
//   static memtopo::Probe line_probe() {
//     return memtopo::Probe("data-cache/l1d-line")
//         .summary("L1 data cache line and sector size")
//         .provides({"l1d.line_bytes", "l1d.fetch_granularity_bytes"})
//         .requires_keys({"l1d.size_bytes"})
//         .option("max_stride_bytes", MT_VALUE_INT, "1024", "largest stride tried")
//         .run([](memtopo::Context& ctx) { ... ctx.result("l1d.line_bytes", 128); });
//   }
//   MEMTOPO_PLUGIN("data-cache", "1.0.0", line_probe())
//
// The parts: errors.hpp (Skip, NotDeterminable, Error, ResultInfo), measure.hpp (the
// measurement job and backend), context.hpp (what a running probe sees), plugin.hpp (the
// probe spec and MEMTOPO_PLUGIN), verify.hpp (a value checked against the hardware counters).
// Probes with their own kernels add memtopo/device/kernel.hpp.
#pragma once

#include "memtopo/context.hpp"
#include "memtopo/errors.hpp"
#include "memtopo/measure.hpp"
#include "memtopo/plugin.hpp"
#include "memtopo/verify.hpp"
