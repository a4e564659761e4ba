// What each SM holds, as `memtopo draw` shows it (docs/host.md): the storages first, each with
// the paths whose loads use it. Where the topology says texture and read-only loads use the
// L1's storage (`storage = "l1d"`, cache-sharing/storage) and the carveout trades L1 for
// shared memory, those are one SRAM: drawn as one box with the L1, texture, read-only and
// shared-memory paths inside, the carveout an attribute of it (three 241 KiB caches side by
// side said the SM had 723 KiB). A path with its own storage is a cache of its own.
#include <algorithm>

#include "tools/draw/draw_internal.hpp"

namespace memtopo::host::draw {
namespace {

struct Carveout {
  std::vector<int64_t> shared, l1;
  bool known() const { return shared.size() > 1 && shared.size() == l1.size(); }
};

DrawNode shared_memory(const Doc& d) {
  Parts p;
  if (auto v = d.num("device", "shared_per_sm_bytes")) p.add("up to " + bytes_text(*v) + " (API)");
  if (auto b = d.num(key("shared_banks")), w = d.num(key("shared_bank_bytes")); b && w)
    p.add(printf_text("%.0f banks", *b) + " x " + bytes_text(*w));
  if (auto v = d.num(key("shared_latency"))) p.add("hit " + d.mark(key("shared_latency")) + cycles_text(*v));
  if (auto v = d.num(key("shared_bytes_per_sm_cycle"))) p.add(printf_text("%.1f B/cyc per SM", *v));
  if (auto v = d.num(key("dsmem_remote_latency"))) {
    const auto rates = d.nums(key("dsmem_sm_to_sm_gbps"));
    p.add("another SM's (DSMEM) hit " + cycles_text(*v) +
          (rates.empty() ? "" : printf_text(", %.1f GB/s per SM", *std::max_element(rates.begin(), rates.end()))));
  }
  return {"shared memory", p.v, "path", {}};
}

bool drawn(const Doc& d, const std::string& e) { return d.has(e, "size_bytes") || d.has(e, "latency_cycles"); }

// The L1 path: the cache procedure's values and its read rate, per SM and over all SMs.
DrawNode l1_path(const Doc& d, const std::string& l1) {
  auto parts = cache_parts(d, l1);
  if (auto v = d.num(key("l1_read_bytes_per_sm_cycle"))) {
    const auto all = d.num(key("l1_read_rate"));
    parts.push_back("read " + printf_text("%.1f B/cyc per SM", *v) + (all ? ", " + rate_text(*all) + " in all" : ""));
  } else if (auto all = d.num(key("l1_read_rate"))) {
    parts.push_back("read " + rate_text(*all) + " in all");
  }
  return {label("l1_cache"), parts, "path", {}};
}

// The SRAM's own values: its bytes (L1 plus shared memory, the same at every carveout setting on
// the GPUs measured), and the carveout's settings.
std::vector<std::string> sram_parts(const Carveout& c, const std::vector<std::string>& paths) {
  Parts p;
  if (c.known()) {
    int64_t lo = INT64_MAX, hi = 0;
    for (size_t i = 0; i < c.l1.size(); ++i) lo = std::min(lo, c.l1[i] + c.shared[i]), hi = std::max(hi, c.l1[i] + c.shared[i]);
    p.add(lo == hi ? bytes_text(double(hi)) : "up to " + bytes_text(double(hi)));
  }
  std::string names;
  for (size_t i = 0; i < paths.size(); ++i)
    names += (i == 0 ? "" : i + 1 == paths.size() ? " and " : ", ") + paths[i];
  p.add("one storage: " + names);
  if (c.known())
    p.add("carveout " + std::to_string(c.l1.size()) + " settings, L1 " + bytes_text(double(c.l1.front())) +
          " + shared " + bytes_text(double(c.shared.front())) + " to L1 " + bytes_text(double(c.l1.back())) +
          " + shared " + bytes_text(double(c.shared.back())));
  return p.v;
}

}  // namespace

void add_per_sm(const Doc& d, GpuDrawing& g) {
  const std::string& l1 = element("l1_cache");
  const Carveout c{d.ints(key("carveout_shared")), d.ints(key("carveout_l1"))};
  const auto l1_size = d.num(l1, "size_bytes");
  DrawNode sram{"SRAM", {}, "storage", {}};
  std::vector<DrawNode> own;
  if (drawn(d, l1)) sram.children.push_back(l1_path(d, l1));
  const std::string texture_storage = d.text(key("texture_storage"));
  for (const char* role : {"texture_cache", "readonly_cache", "constant_cache"}) {
    const std::string& e = element(role);
    if (!drawn(d, e)) continue;
    const std::string storage = d.text(std::string(role) == "texture_cache"    ? key("texture_storage")
                                       : std::string(role) == "readonly_cache" ? key("readonly_storage")
                                                                               : key("constant_storage"));
    // Read-only loads may use the texture path's storage, which may be the L1's.
    const bool in_l1 = drawn(d, l1) && (storage == l1 || (storage == element("texture_cache") && texture_storage == l1));
    // A path into the L1's storage has its size; drawn again only where it differs.
    const auto size = d.num(e, "size_bytes");
    const bool with_size = !in_l1 || !size || !l1_size || *size != *l1_size || !d.bound(e, "size_bytes").empty();
    DrawNode n{label(role), cache_parts(d, e, with_size), in_l1 ? "path" : "cache", {}};
    (in_l1 ? sram.children : own).push_back(std::move(n));
  }
  DrawNode shared = shared_memory(d);
  const bool shared_in_sram = c.known() && drawn(d, l1);
  if (shared_in_sram) sram.children.push_back(std::move(shared));
  else if (!shared.parts.empty()) own.insert(own.begin(), std::move(shared));
  if (sram.children.size() > 1) {
    std::vector<std::string> names;
    for (const DrawNode& n : sram.children) names.push_back(n.label);
    sram.parts = sram_parts(c, names);
    g.per_sm.push_back(std::move(sram));
  } else {
    for (DrawNode& n : sram.children) own.insert(own.begin(), std::move(n));
  }
  for (DrawNode& n : own) {
    if (n.kind == "path") n.kind = "cache";
    g.per_sm.push_back(std::move(n));
  }
}

}  // namespace memtopo::host::draw
