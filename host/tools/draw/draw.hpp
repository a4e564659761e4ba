// The GPU at a glance (`memtopo draw`, docs/host.md): the hierarchy of a topology as one model,
// drawn as text here and as a picture by host/report/gpu_picture.py. As lstopo draws a CPU
// machine: nesting shows sharing, the picture names the GPU and the run, and a legend says what
// the marks and colours mean.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <toml++/toml.h>

namespace memtopo::host {

// One box of the drawing: its name, its values ("241 KiB", "line 128 B", ...; each drawn whole,
// lines break between them) and what it holds. kind: "storage" (one SRAM whose children are the
// paths into it), "path", "cache", "instance" (an L2 partition, an L1.5 group), "memory",
// "info" (identity, conditions, run, loads in flight).
struct DrawNode {
  std::string label;
  std::vector<std::string> parts;
  std::string kind;
  std::vector<DrawNode> children;
};

// A strip of one cell per SM (SM 0 first): the index of the SM's GPC, near L2 partition or
// L1.5 group, -1 where the topology does not know it. same_as: the label of an earlier strip
// that splits the SMs the same way (then `cells` is that strip's), else empty.
struct DrawStrip {
  std::string label;
  std::vector<int64_t> cells;
  std::string same_as;
};

// One rung of the latency ladder: load-to-use in SM cycles (ns from the SM clock).
struct DrawRung {
  std::string label;
  double cycles = 0;
  std::string mark;  // "~" for a value of low confidence, "" else
};

// One rung of the bandwidth ladder: a level's rate over the whole GPU, and how it was had
// ("132 SMs x 200.6 B/cyc" where it is one SM's rate times the SMs).
struct DrawRate {
  std::string label;
  double bytes_per_second = 0;
  std::string note;
  std::string mark;  // a bound's ">= ", "~" for low confidence
};

struct GpuDrawing {
  std::string title;              // the device's name
  std::vector<std::string> head;  // "cc 9.0", "132 SMs", "SM clock 1980 MHz"
  std::string simulated;          // the device spec of a simulated run, else empty
  std::vector<DrawNode> facts;    // identity, conditions, run, what was not measured
  DrawNode sms;                   // "SMs": how many, in how many GPCs (empty label: unknown)
  std::vector<int64_t> gpc_sm_counts;
  int64_t sm_count = 0;           // the device's SMs (the picture draws each); 0: unknown
  int64_t strip_sms = 0;          // SMs in the strips (the first cells drawn, at most a cap)
  std::vector<DrawStrip> strips;  // per SM: GPC, near L2 partition, L1.5 group
  std::vector<DrawNode> per_sm;   // what each SM holds
  std::vector<DrawNode> shared;   // the levels the SMs share, nearest first
  double sm_clock_mhz = 0;        // ns of the ladder; 0: unknown
  std::vector<DrawRung> ladder;   // load-to-use, nearest first
  std::vector<DrawRate> rates;    // bandwidth of each level over the GPU, nearest first
  std::vector<DrawNode> extras;   // loads in flight
  std::vector<std::pair<std::string, std::string>> legend;  // mark or colour, meaning
};

GpuDrawing gpu_drawing(const toml::table& doc);
// A tree of the model as UTF-8 lines of at most kDrawColumns display columns.
constexpr size_t kDrawColumns = 120;
std::string draw_text(const GpuDrawing& g);
std::string draw_topology_text(const toml::table& doc);
// The model as one JSON object, what the picture script reads.
std::string gpu_drawing_json(const GpuDrawing& g);

}  // namespace memtopo::host
