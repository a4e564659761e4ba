// The GPU at a glance (`memtopo draw`, docs/host.md): the hierarchy of a topology as one model,
// drawn as text here and as a picture by host/report/gpu_picture.py.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <toml++/toml.h>

namespace memtopo::host {

// One level of the hierarchy: its name, its values as one line ("241 KiB, line 128 B, ..."),
// and the SMs of each instance where the topology says (L2 partitions, L1.5 groups).
struct DrawLevel {
  std::string label, text;
  std::vector<int64_t> instances_sm_counts;
};

// The chip and its memory levels with size, line, latency and bandwidth; levels and values the
// topology lacks are left out.
struct GpuDrawing {
  std::string title;              // the device's name
  std::vector<std::string> head;  // "cc 9.0", "132 SMs", "1980 MHz"
  std::string simulated;          // the device spec of a simulated run, else empty
  std::string gpc_text, gpc_bound;  // "8, SMs in each: ...", ">= " for a bound
  std::vector<int64_t> gpc_sm_counts;
  std::vector<DrawLevel> per_sm;  // what each SM holds
  std::vector<DrawLevel> shared;  // the levels the SMs share, nearest first
};

GpuDrawing gpu_drawing(const toml::table& doc);
// A tree of the model as UTF-8 lines.
std::string draw_text(const GpuDrawing& g);
std::string draw_topology_text(const toml::table& doc);
// The model as one JSON object, what the picture script reads.
std::string gpu_drawing_json(const GpuDrawing& g);

}  // namespace memtopo::host
