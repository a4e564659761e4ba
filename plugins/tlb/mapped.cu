// tlb/mapped-levels (CUDA): the TLB levels of 2 MiB pages the driver cannot merge. Physical
// blocks of the mapping granularity (2 MiB) are each mapped at many virtual pages one block
// apart (cuMemCreate, cuMemAddressReserve, cuMemMap; page k maps block k / (block / line)), and
// a pointer chase reads line k mod (block / line) of page k, spread over the block (line()):
// the lines are distinct, all in the L2, and every page needs its own translation, since pages
// that alias one block cannot be coalesced into a larger one. The cycles per load against N
// show a level where the pages outgrow a TLB level (sweep_levels). docs/tlb.md.
#include <algorithm>
#include <chrono>
#include <numeric>
#include <string>
#include <vector>

#include <memtopo/device/kernel.hpp>
#include <memtopo/device/virtual_memory.hpp>
#include <memtopo/probe.hpp>

#include "probes.hpp"
#include "tlb_analysis.hpp"

namespace tlb {
namespace {

constexpr uint64_t kLine = 128;
constexpr uint64_t kMinLines = 64;  // lines a chase's time is made of at least
constexpr uint64_t kLineSpread = 1031;  // lines between consecutive slots of a block (see line())

__global__ void chase_pages(unsigned long long start, unsigned warm, unsigned steps, unsigned long long* out) {
  unsigned long long p = start;
  for (unsigned i = 0; i < warm; ++i) p = memtopo::device::follow<memtopo::device::Path::GlobalCg>(p);
  const unsigned long long t0 = memtopo::device::clock_now();
  for (unsigned i = 0; i < steps; ++i) p = memtopo::device::follow<memtopo::device::Path::GlobalCg>(p);
  const unsigned long long t1 = memtopo::device::clock_now();
  out[0] = t1 - t0;
  out[1] = p;  // keeps the chase
}

void check(CUresult r, const char* what) {
  if (r != CUDA_SUCCESS) throw memtopo::Error(std::string(what) + " failed (CUresult " + std::to_string(int(r)) + ")");
}

// Physical blocks in `device`'s memory, pinned.
CUmemAllocationProp device_blocks(int device) {
  CUmemAllocationProp prop{};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = device;
  return prop;
}

// The driver's mapping granularity: bytes of each physical block.
uint64_t mapping_granularity(const CUmemAllocationProp& prop) {
  size_t g = 0;
  check(memtopo::device::virtual_memory_driver().granularity(&g, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM),
        "cuMemGetAllocationGranularity");
  return g;
}

// Physical blocks, each mapped at block / line consecutive virtual pages one block apart;
// unmapped and freed on destruction.
class AliasedPages {
 public:
  // `aliases`: pages aliasing one block (0: as many as it has lines).
  AliasedPages(int device, uint64_t pages, uint64_t aliases) : pages_(pages), per_block_(aliases) {
    const CUmemAllocationProp prop = device_blocks(device);
    const memtopo::device::VirtualMemoryDriver& d = memtopo::device::virtual_memory_driver();
    block_ = mapping_granularity(prop);
    if (!per_block_ || per_block_ > block_ / kLine) per_block_ = block_ / kLine;
    const uint64_t blocks = (pages_ + per_block() - 1) / per_block();
    for (uint64_t b = 0; b < blocks; ++b) {
      handles_.push_back(0);
      check(d.create(&handles_.back(), block_, &prop, 0), "cuMemCreate");
    }
    check(d.reserve(&base_, pages_ * block_, block_, 0, 0), "cuMemAddressReserve");
    for (uint64_t k = 0; k < pages_; ++k, ++mapped_)
      check(d.map(base_ + k * block_, block_, 0, handles_[k / per_block()], 0), "cuMemMap");
    CUmemAccessDesc access{};
    access.location = prop.location;
    access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    check(d.set_access(base_, pages_ * block_, &access, 1), "cuMemSetAccess");
  }
  ~AliasedPages() {
    const memtopo::device::VirtualMemoryDriver& d = memtopo::device::virtual_memory_driver();
    for (uint64_t k = 0; k < mapped_; ++k) d.unmap(base_ + k * block_, block_);
    if (base_) d.address_free(base_, pages_ * block_);
    for (CUmemGenericAllocationHandle h : handles_) d.release(h);
  }
  AliasedPages(const AliasedPages&) = delete;
  AliasedPages& operator=(const AliasedPages&) = delete;
  uint64_t block() const { return block_; }
  uint64_t per_block() const { return per_block_; }  // pages aliasing one block
  // Round j of a chase over n pages `stride` pages apart: line (k + j n) mod per_block of page
  // k x stride. Rounds past the first read other lines of the same pages.
  unsigned long long slot(uint64_t k, uint64_t j, uint64_t n, uint64_t stride = 1) const {
    return base_ + k * stride * block_ + line(k, j, n) * kLine;
  }
  // The line of slot (k, j) within its block: consecutive slots lie kLineSpread lines apart
  // (odd, so every line of the block is reached once), so that a few pages' lines sample the
  // whole block, its 4 KiB partition granules and 256 B slice units, not its first 8 KiB.
  uint64_t line(uint64_t k, uint64_t j, uint64_t n) const {
    const uint64_t spread = std::gcd(kLineSpread, per_block()) == 1 ? kLineSpread : 1;
    return ((k + j * n) % per_block()) * spread % per_block();
  }
  // Rounds of a chase over n pages: enough that at least kMinLines lines make its time, since
  // a few lines' L2 slices (near or far, by where the block landed) would set it.
  uint64_t rounds(uint64_t n) const {
    return std::max<uint64_t>(1, std::min<uint64_t>((kMinLines + n - 1) / n, per_block() / std::max<uint64_t>(n, 1)));
  }
  // Writes the cycle over pages 0, stride, ... (n of them), rounds(n) times with other lines
  // (slot (k, j) holds the next slot's address), each block through the first page that maps it.
  void link(uint64_t n, uint64_t stride = 1) const {
    std::vector<unsigned long long> words(block_ / 8);
    const uint64_t r = rounds(n), last_page = (n - 1) * stride;
    for (uint64_t first = 0; first <= last_page; first += per_block()) {
      std::fill(words.begin(), words.end(), 0ull);
      const uint64_t end = std::min(last_page + 1, first + per_block());
      for (uint64_t k = (first + stride - 1) / stride; k * stride < end; ++k)
        for (uint64_t j = 0; j < r; ++j) {
          const uint64_t next_k = (k + 1) % n, next_j = next_k == 0 ? (j + 1) % r : j;
          words[line(k, j, n) * kLine / 8] = slot(next_k, next_j, n, stride);
        }
      memtopo::device::cuda_check(cudaMemcpy(reinterpret_cast<void*>(base_ + first * block_), words.data(), block_,
                                      cudaMemcpyHostToDevice),
                           "chase_pages", "cudaMemcpy");
    }
  }

 private:
  uint64_t pages_, per_block_, block_ = 0, mapped_ = 0;
  std::vector<CUmemGenericAllocationHandle> handles_;
  CUdeviceptr base_ = 0;
};

// Pages of `page_bytes` that cover the device's memory, at least 2.
uint64_t memory_pages(const mt_device_info& d, uint64_t page_bytes) {
  return std::max<uint64_t>(2, (uint64_t(std::max<int64_t>(d.global_memory_bytes, 0)) + page_bytes - 1) / page_bytes);
}

double cycles_per_load(const AliasedPages& m, uint64_t n, unsigned long long* out, uint64_t stride = 1) {
  m.link(n, stride);
  const uint64_t cycle = n * m.rounds(n);
  const unsigned steps = unsigned(std::max<uint64_t>(cycle, 2048) / cycle * cycle);
  chase_pages<<<1, 1>>>(m.slot(0, 0, n, stride), unsigned(2 * cycle), steps, out);
  memtopo::device::cuda_check(cudaGetLastError(), "chase_pages", "launch");
  unsigned long long host[2];
  memtopo::device::cuda_check(cudaMemcpy(host, out, sizeof host, cudaMemcpyDeviceToHost), "chase_pages", "cudaMemcpy");
  return double(host[0]) / steps;
}

void measure_mapped(memtopo::Context& ctx) {
  memtopo::device::use_cuda_device(ctx, "chase_pages");
  const int64_t asked = ctx.option<int64_t>("max_pages");
  if (asked == 1) throw memtopo::Error("option max_pages: 1; at least 2 (or 0: the device's memory)");
  // 0: as many pages as the device's memory has; a program without aliases has no more.
  const uint64_t max_pages =
      asked ? uint64_t(asked) : memory_pages(ctx.device(), mapping_granularity(device_blocks(ctx.device().ordinal)));
  const auto t0 = std::chrono::steady_clock::now();
  AliasedPages m(ctx.device().ordinal, max_pages, uint64_t(std::max<int64_t>(0, ctx.option<int64_t>("pages_per_block"))));
  ctx.debug("mapped " + std::to_string(max_pages) + " pages in " +
            std::to_string(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count()) + " s");
  memtopo::device::Buffer<unsigned long long> out(ctx, 2);
  const std::vector<uint64_t> grid = page_grid(max_pages);
  std::vector<double> cycles, rows;
  for (uint64_t n : grid) {
    ctx.progress(double(n) / double(max_pages), std::to_string(n) + " aliased pages");
    cycles.push_back(cycles_per_load(m, n, out.get()));
    rows.insert(rows.end(), {double(n), cycles.back()});
  }
  ctx.raw("sweep", {"pages", "cycles_per_load"}, rows);
  ctx.debug("swept " + std::to_string(grid.size()) + " page counts by " +
            std::to_string(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count()) + " s");
  const SweepLevels lv = sweep_levels(grid, cycles);
  std::string note = std::to_string(m.block()) + "-byte blocks, each mapped at " + std::to_string(m.per_block()) +
                     " pages one block apart, 1 to " + std::to_string(max_pages) + " pages chased, levels at";
  for (double c : lv.cycles) note += " " + std::to_string(int(c + 0.5));
  note += " cycles per load (pointer chase, .cg)";
  if (lv.cycles.empty()) throw memtopo::NotDeterminable(lv.reason);
  // Each level's step measured again, with the pages one and two apart (half and three
  // quarters of the lower level's last page count, and where the sweep missed), as tlb/levels
  // does: a plateau one sweep or one spacing shows is no level, and one whose pages two apart
  // pass the pages mapped cannot be checked.
  const ConfirmedLevels confirmed = confirm_levels(lv, cycles, [&](size_t k) {
    const uint64_t held = lv.last_hit_pages[k - 1];
    const uint64_t missed = first_missing_pages(grid, cycles, held, lv.cycles[k - 1], lv.cycles[k]);
    Remeasured r;
    if ((missed - 1) * 2 >= max_pages) {
      r.unmeasurable = std::to_string(missed) + " pages two pages apart pass the " + std::to_string(max_pages) +
                       " pages mapped";
      return r;
    }
    for (uint64_t stride : {1, 2}) {
      r.held.push_back(cycles_per_load(m, std::max<uint64_t>(held / 2, 1), out.get(), stride));
      r.missed.push_back(cycles_per_load(m, missed, out.get(), stride));
    }
    r.held.push_back(cycles_per_load(m, std::max<uint64_t>(held * 3 / 4, 1), out.get()));
    return r;
  });
  if (!confirmed.why.empty()) note += "; not a level: " + confirmed.why;
  const memtopo::ResultInfo info{0.8, memtopo::Bound::Exact, note};
  ctx.result("tlb.mapped_page_bytes", int64_t(m.block()), info);
  const size_t found = confirmed.count;
  const bool rising = lv.ends_on_ramp && found == lv.last_hit_pages.size();
  ctx.result("tlb.mapped_level_count", int64_t(found),
             memtopo::ResultInfo{0.8, rising || !found ? memtopo::Bound::AtLeast : memtopo::Bound::Exact, note});
  if (!rising)  // no level (or no further one kept) within the sweep: its reach is a bound
    ctx.result("tlb.mapped_reach_bytes", int64_t(max_pages * m.block()),
               memtopo::ResultInfo{0.8, memtopo::Bound::AtLeast,
                                   "no further level kept up to " + std::to_string(max_pages) + " aliased pages; " +
                                       note});
  else
    ctx.absent("tlb.mapped_reach_bytes", "the sweep ends on the rise of a level it found: no bound past it");
  std::vector<int64_t> entries;
  std::vector<double> penalties;
  for (size_t k = 0; k < found; ++k) {
    entries.push_back(int64_t(lv.last_hit_pages[k]));
    penalties.push_back(lv.cycles[k + 1] - lv.cycles[k]);
  }
  if (found) {
    ctx.result("tlb.mapped_entries", entries, info);
    ctx.result("tlb.mapped_miss_penalty_cycles", penalties, info);
  } else {
    const std::string why = "no level found up to " + std::to_string(max_pages) + " aliased pages (" + note + ")";
    ctx.absent("tlb.mapped_entries", why);
    ctx.absent("tlb.mapped_miss_penalty_cycles", why);
  }
}

}  // namespace

memtopo::Probe mapped_levels_probe() {
  return memtopo::Probe("tlb/mapped-levels")
      .roles({{"tlb.mapped_page_bytes", "translation.page_bytes@mapped"},
              {"tlb.mapped_reach_bytes", "translation.reach_bytes@mapped"}})
      .summary("TLB levels of 2 MiB pages that alias one physical block, so the driver cannot merge them")
      .provides({"tlb.mapped_page_bytes", "tlb.mapped_level_count", "tlb.mapped_entries",
                 "tlb.mapped_miss_penalty_cycles", "tlb.mapped_reach_bytes"})
      // Informational: the simulator's chases go through the tlb levels.
      .not_replayed({"tlb.mapped_page_bytes", "tlb.mapped_level_count", "tlb.mapped_entries",
                     "tlb.mapped_miss_penalty_cycles", "tlb.mapped_reach_bytes"})
      .key("tlb.mapped_page_bytes", MT_VALUE_INT, "bytes", "the mapping granularity: bytes of each aliased page")
      .key("tlb.mapped_level_count", MT_VALUE_INT, "", "latency levels past the first in the sweep of aliased pages",
           MT_KEY_HEADLINE | MT_KEY_STRUCTURE)
      .key("tlb.mapped_entries", MT_VALUE_INT_ARRAY, "",
           "per level, the most aliased pages still on it (entries of that TLB level, at page granularity)")
      .key("tlb.mapped_miss_penalty_cycles", MT_VALUE_FLOAT_ARRAY, "cycles", "per level, the cycles the next level adds")
      .key("tlb.mapped_reach_bytes", MT_VALUE_INT, "bytes",
           "at least: the pages chased x page bytes, where no further level showed")
      .option("max_pages", MT_VALUE_INT, "0",
              "most aliased pages chased (0: as many as cover the device's memory)")
      .range("0", "1048576")
      .option("pages_per_block", MT_VALUE_INT, "0",
              "pages that alias one physical block (0: one per line of the block, 16384 at 2 MiB)")
      .range("0", "1048576")
      .backends(MT_BACKEND_CUDA, "aliased mappings of one physical page through the CUDA driver's virtual memory API, which the simulated GPU has not")
      .budget_seconds(60)
      .run(measure_mapped);
}

}  // namespace tlb
