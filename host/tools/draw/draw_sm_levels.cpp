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
  const auto shared = [&](const char* quantity) { return d.key(std::string("memory.") + quantity + "@shared"); };
  Parts p;
  if (auto v = d.num(d.key("gpu.shared_per_sm_bytes"))) p.add("up to " + bytes_text(*v) + " (API)");
  if (auto b = d.num(shared("banks")), w = d.num(shared("bank_bytes")); b && w)
    p.add(printf_text("%.0f banks", *b) + " x " + bytes_text(*w));
  if (auto v = d.num(shared("latency_cycles"))) p.add("hit " + d.mark(shared("latency_cycles")) + cycles_text(*v));
  if (auto v = d.num(shared("bytes_per_cycle_per_sm"))) p.add(printf_text("%.1f B/cyc per SM", *v));
  if (auto v = d.num(d.key("memory.latency_cycles@distributed_shared"))) {
    const auto rates = d.nums(d.key("memory.sm_to_sm_gbps@distributed_shared"));
    p.add("another SM's (DSMEM) hit " + cycles_text(*v) +
          (rates.empty() ? "" : printf_text(", %.1f GB/s per SM", *std::max_element(rates.begin(), rates.end()))));
  }
  return {"shared memory", p.v, "path", {}};
}

// A cache by its subject ("texture_cache") is drawn where its size or latency is known.
bool drawn(const Doc& d, const std::string& subject) {
  return d.has(d.cache(subject, "size_bytes")) || d.has(d.cache(subject, "latency_cycles"));
}

// The L1 path: the cache procedure's values and its read rate, per SM and over all SMs.
DrawNode l1_path(const Doc& d) {
  auto parts = cache_parts(d, "l1_cache");
  if (auto v = d.num(d.key("cache.read_bytes_per_cycle_per_sm@l1_cache"))) {
    const auto all = d.num(d.key("cache.read_bytes_per_second@l1_cache"));
    parts.push_back("read " + printf_text("%.1f B/cyc per SM", *v) + (all ? ", " + rate_text(*all) + " in all" : ""));
  } else if (auto all = d.num(d.key("cache.read_bytes_per_second@l1_cache"))) {
    parts.push_back("read " + rate_text(*all) + " in all");
  }
  return {cache_label("l1_cache"), parts, "path", {}};
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
  const Carveout c{d.ints(d.key("memory.carveout_shared_bytes@shared")), d.ints(d.key("memory.carveout_l1_bytes@shared"))};
  const auto l1_size = d.num(d.cache("l1_cache", "size_bytes"));
  const bool l1_drawn = drawn(d, "l1_cache");
  // A storage value names the element of the cache whose storage a path uses ("l1d").
  const std::string l1 = d.element("l1_cache");
  DrawNode sram{"SRAM", {}, "storage", {}};
  std::vector<DrawNode> own;
  if (l1_drawn) sram.children.push_back(l1_path(d));
  const std::string texture_storage = d.text(d.cache("texture_cache", "storage"));
  for (const char* subject : {"texture_cache", "readonly_cache", "constant_cache"}) {
    if (!drawn(d, subject)) continue;
    const std::string storage = d.text(d.cache(subject, "storage"));
    // Read-only loads may use the texture path's storage, which may be the L1's.
    const bool in_l1 = l1_drawn && (storage == l1 || (storage == d.element("texture_cache") && texture_storage == l1));
    // A path into the L1's storage has its size; drawn again only where it differs.
    const std::string& size_key = d.cache(subject, "size_bytes");
    const auto size = d.num(size_key);
    const bool with_size = !in_l1 || !size || !l1_size || *size != *l1_size || !d.bound(size_key).empty();
    DrawNode n{cache_label(subject), cache_parts(d, subject, with_size), in_l1 ? "path" : "cache", {}};
    (in_l1 ? sram.children : own).push_back(std::move(n));
  }
  DrawNode shared = shared_memory(d);
  const bool shared_in_sram = c.known() && l1_drawn;
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
