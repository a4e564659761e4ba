// What `memtopo draw` shows of a topology (docs/host.md, "memtopo draw"): the GPU's identity and
// the run's conditions, the SMs and their map, what each SM holds, the levels all SMs share,
// the latency ladder and loads in flight, and a legend. Absent values are left out, and a run
// that measured little says what it did not measure. The text tree (draw_text.cpp) and the
// picture (host/report/gpu_picture.py, from gpu_drawing_json) both draw this one model; each
// section is built by its own file (draw_internal.hpp).
#include <algorithm>
#include <sstream>

#include "topology/base/terminal_text.hpp"
#include "tools/draw/draw_internal.hpp"

namespace memtopo::host {
namespace {

// The text drawing's SM map; the picture draws the SMs inside their GPCs and partitions.
constexpr const char* kStripMarks = "0-9 A-Z ?";

void add_legend(GpuDrawing& g) {
  auto& l = g.legend;
  l.emplace_back("nesting", "a box inside another shares it: every SM has its own SRAM, whose paths use one storage");
  l.emplace_back(">= <=", "a bound: at least, at most");
  l.emplace_back("~", "the probe's confidence is under " + draw::printf_text("%.1f", draw::kUncertain));
  l.emplace_back("API", "what CUDA reports; every other value was measured");
  if (g.sm_clock_mhz > 0)
    l.emplace_back("cyc", "cycles of the SM clock; ns at its " + draw::printf_text("%.0f MHz", g.sm_clock_mhz));
  l.emplace_back("TB/s, GB/s", "10^12, 10^9 bytes per second; B/cyc: bytes per SM cycle");
  if (!g.strips.empty())
    l.emplace_back(kStripMarks, "SM map (under SMs): one character per SM, SM 0 first, 10 a group: its GPC, L2 partition, L1.5 "
                   "group or L2 slice class (A = 10), ? unknown");
}

}  // namespace

GpuDrawing gpu_drawing(const toml::table& doc) {
  const draw::Doc d{doc};
  GpuDrawing g;
  g.title = d.text(d.key("gpu.name")).empty() ? "GPU" : d.text(d.key("gpu.name"));
  if (d.has(d.key("gpu.compute_capability"))) g.head.push_back("cc " + d.text(d.key("gpu.compute_capability")));
  if (auto v = d.num(d.key("gpu.sm_count"))) {
    g.head.push_back(draw::printf_text("%.0f SMs", *v));
    if (*v > 0) g.sm_count = int64_t(std::min(*v, double(draw::kStripCells)));  // a hostile count draws the first
  }
  if (auto v = d.num(d.key("gpu.sm_clock_khz"))) g.head.push_back(draw::printf_text("%.0f MHz", *v / 1000));
  if (doc["meta"]["backend"].value_or(std::string()) == "sim")
    g.simulated = terminal_text(doc["meta"]["device_spec"].value_or(std::string("sim")));
  draw::add_facts(d, g);
  draw::add_sm_map(d, g);
  draw::add_per_sm(d, g);
  draw::add_sm_resources(d, g);
  draw::add_shared(d, g);
  draw::add_ladder(d, g);
  draw::add_rates(d, g);
  draw::add_attachment(d, g);
  draw::add_not_measured(d, g);
  add_legend(g);
  return g;
}

namespace {

toml::array string_array(const std::vector<std::string>& v) {
  toml::array a;
  for (const auto& s : v) a.push_back(s);
  return a;
}

toml::array int_array(const std::vector<int64_t>& v) {
  toml::array a;
  for (int64_t x : v) a.push_back(x);
  return a;
}

toml::table node_table(const DrawNode& n) {
  toml::array children;
  for (const DrawNode& c : n.children) children.push_back(node_table(c));
  return toml::table{{"label", n.label}, {"parts", string_array(n.parts)}, {"kind", n.kind}, {"children", children}};
}

toml::array node_array(const std::vector<DrawNode>& v) {
  toml::array a;
  for (const DrawNode& n : v) a.push_back(node_table(n));
  return a;
}

}  // namespace

std::string gpu_drawing_json(const GpuDrawing& g) {
  toml::array strips, ladder, rates, legend;
  for (const DrawStrip& s : g.strips)
    strips.push_back(toml::table{{"label", s.label}, {"cells", int_array(s.cells)}, {"same_as", s.same_as}});
  for (const DrawRung& r : g.ladder)
    ladder.push_back(toml::table{{"label", r.label}, {"cycles", r.cycles}, {"mark", r.mark}});
  for (const DrawRate& r : g.rates)
    rates.push_back(toml::table{{"label", r.label}, {"bytes_per_second", r.bytes_per_second}, {"note", r.note}, {"mark", r.mark}});
  for (const auto& [mark, meaning] : g.legend)
    if (mark != kStripMarks) legend.push_back(toml::array{mark, meaning});  // the picture nests instead
  toml::table t{{"title", g.title},
                {"head", string_array(g.head)},
                {"simulated", g.simulated},
                {"facts", node_array(g.facts)},
                {"gpc_sm_counts", int_array(g.gpc_sm_counts)},
                {"sm_count", g.sm_count},
                {"strip_sms", g.strip_sms},
                {"strips", strips},
                {"per_sm", node_array(g.per_sm)},
                {"chip_wide", node_array(g.shared)},
                {"sm_clock_mhz", g.sm_clock_mhz},
                {"ladder", ladder},
                {"rates", rates},
                {"extras", node_array(g.extras)},
                {"legend", legend}};
  if (!g.sms.label.empty()) t.insert("sms", node_table(g.sms));
  std::ostringstream o;
  o << toml::json_formatter{t} << "\n";
  return o.str();
}

}  // namespace memtopo::host
