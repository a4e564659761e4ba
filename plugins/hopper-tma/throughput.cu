// hopper-tma/throughput: bytes per second moved from global memory (held in L2) into shared
// memory by one SM and by every SM at once, by transfer size and transfers in flight, for
// cp.async.bulk against cp.async (LDGSTS) and ld.global + st.shared; and the transfer size from
// which the bulk copy wins.
#include <algorithm>
#include <string>
#include <vector>

#include <memtopo/analysis.hpp>
#include <memtopo/device/kernel.hpp>
#include <memtopo/probe.hpp>

#include "probes.hpp"
#include "tma_analysis.hpp"
#include "tma_ptx.cuh"

namespace hopper_tma {
namespace {

constexpr unsigned kThreads = 1024;
constexpr uint64_t kSourceBytes = 16ull << 20;  // all blocks read this much: it stays in L2

// Where transfer `i` of block `b` reads: spread over the source, 128 B aligned.
__device__ __forceinline__ const char* source_of(const char* src, unsigned b, unsigned i, unsigned size) {
  const unsigned long long slots = (kSourceBytes - size) / 128;
  return src + ((unsigned long long)(b) * 7919u + (unsigned long long)(i) * (size / 128 + 1)) % slots * 128;
}

__device__ __forceinline__ void note_time(unsigned long long* out, unsigned long long c0, unsigned long long g0) {
  out[3 * blockIdx.x] = memtopo::device::clock_now() - c0;
  out[3 * blockIdx.x + 1] = g0;
  out[3 * blockIdx.x + 2] = memtopo::device::globaltimer_ns();
}

// cp.async.bulk: thread 0 keeps `stages` copies in flight, each on its own barrier.
__global__ void __launch_bounds__(kThreads) fill_bulk(const char* src, unsigned size, unsigned stages,
                                                      unsigned transfers, unsigned long long* out) {
  extern __shared__ __align__(1024) unsigned char buf[];
  __shared__ __align__(8) unsigned long long bars[4];
  if (threadIdx.x == 0) {
    for (unsigned s = 0; s < stages; ++s) barrier_init(cta_address(&bars[s]), 1);
    barrier_init_fence();
  }
  __syncthreads();
  if (threadIdx.x != 0) return;
  const unsigned long long c0 = memtopo::device::clock_now(), g0 = memtopo::device::globaltimer_ns();
  for (unsigned i = 0; i < transfers; ++i) {
    const unsigned slot = i % stages, use = i / stages;
    const uint32_t bar = cta_address(&bars[slot]);
    if (use > 0) barrier_wait(bar, (use - 1) & 1);
    barrier_expect(bar, size);
    bulk_copy(cta_address(buf + slot * size), source_of(src, blockIdx.x, i, size), size, bar);
  }
  for (unsigned i = transfers > stages ? transfers - stages : 0; i < transfers; ++i)
    barrier_wait(cta_address(&bars[i % stages]), (i / stages) & 1);
  note_time(out, c0, g0);
}

// cp.async (LDGSTS): every thread copies 16 B pieces; one commit group per transfer, and the
// block waits for the oldest when `Stages` are in flight, as a consumer of each transfer would.
template <int Stages>
__global__ void __launch_bounds__(kThreads) fill_ldgsts(const char* src, unsigned size, unsigned transfers,
                                                        unsigned long long* out) {
  extern __shared__ __align__(1024) unsigned char buf[];
  __syncthreads();
  const unsigned long long c0 = memtopo::device::clock_now(), g0 = memtopo::device::globaltimer_ns();
  for (unsigned i = 0; i < transfers; ++i) {
    const char* from = source_of(src, blockIdx.x, i, size);
    const uint32_t dst = cta_address(buf + (i % Stages) * size);
    for (unsigned off = threadIdx.x * 16; off < size; off += kThreads * 16) async_copy_16(dst + off, from + off);
    async_commit();
    async_wait<Stages - 1>();
    __syncthreads();
  }
  async_wait<0>();
  __syncthreads();
  if (threadIdx.x == 0) note_time(out, c0, g0);
}

// ld.global (L2 only) + st.shared, 16 B per thread, the whole block, a barrier per transfer.
__global__ void __launch_bounds__(kThreads) fill_load_store(const char* src, unsigned size, unsigned transfers,
                                                            unsigned long long* out) {
  extern __shared__ __align__(1024) unsigned char buf[];
  __syncthreads();
  const unsigned long long c0 = memtopo::device::clock_now(), g0 = memtopo::device::globaltimer_ns();
  uint4* dst = reinterpret_cast<uint4*>(buf);
  for (unsigned i = 0; i < transfers; ++i) {
    const uint4* from = reinterpret_cast<const uint4*>(source_of(src, blockIdx.x, i, size));
#pragma unroll 4
    for (unsigned w = threadIdx.x; w < size / 16; w += kThreads) dst[w] = __ldcg(from + w);
    __syncthreads();
  }
  if (threadIdx.x == 0) note_time(out, c0, g0);
}

struct Point {
  Method method;
  Scope scope;
  unsigned size, stages;
};

struct Runner {
  const memtopo::Context& ctx;
  const char* src;
  unsigned shared_bytes;  // dynamic shared memory of every launch: one block per SM
  memtopo::device::Buffer<unsigned long long>& out;

  // The median of three windows: one window of one SM moved at one size between runs where its
  // neighbours did not (docs/results/log/h100.md, "Validity": tma.sm_bulk_gbps).
  double gbps(const Point& p) const {
    double w[3] = {window_gbps(p), window_gbps(p), window_gbps(p)};
    std::sort(w, w + 3);
    return w[1];
  }

  double window_gbps(const Point& p) const {
    const unsigned transfers = std::clamp(unsigned((4u << 20) / p.size), 256u, 4096u);
    memtopo::device::LaunchConfig cfg;
    cfg.grid = {p.scope == Scope::Sm ? 1u : unsigned(ctx.device().sm_count)};
    cfg.block = {kThreads};
    cfg.dynamic_shared_bytes = shared_bytes;
    memtopo::device::LaunchReport r;
    if (p.method == Method::Bulk) {
      r = memtopo::device::launch_cuda(ctx, "fill_bulk", fill_bulk, cfg, src, p.size, p.stages, transfers, out.get());
    } else if (p.method == Method::LoadStore) {
      r = memtopo::device::launch_cuda(ctx, "fill_load_store", fill_load_store, cfg, src, p.size, transfers, out.get());
    } else {
      using K = void (*)(const char*, unsigned, unsigned, unsigned long long*);
      static const K kernels[4] = {fill_ldgsts<1>, fill_ldgsts<2>, fill_ldgsts<3>, fill_ldgsts<4>};
      r = memtopo::device::launch_cuda(ctx, "fill_ldgsts", kernels[p.stages - 1], cfg, src, p.size, transfers, out.get());
    }
    const std::vector<unsigned long long> t = out.download();
    const double bytes = double(transfers) * p.size;
    if (p.scope == Scope::Sm)
      return memtopo::analysis::gbps_from_cycles(bytes, double(t[0]), 0.5 * (r.sm_clock_mhz_before + r.sm_clock_mhz_after));
    unsigned long long first = ~0ull, last = 0;
    for (unsigned b = 0; b < cfg.grid.x; ++b) {
      first = std::min(first, t[3 * b + 1]);
      last = std::max(last, t[3 * b + 2]);
    }
    return last > first ? bytes * cfg.grid.x / double(last - first) : 0.0;  // bytes per ns: GB/s
  }
};

void store_crossover(memtopo::Context& ctx, const std::string& key, const std::vector<int64_t>& sizes,
                     const std::vector<double>& tma, const std::vector<double>& other, double ceiling_gbps,
                     const std::string& against, std::vector<std::string>& absent) {
  const auto c = crossover(sizes, tma, other, kCrossoverMargin, ceiling_gbps);
  if (!c) {
    absent.push_back(key + ": cp.async.bulk is not faster than " + against + " at " + std::to_string(sizes.back()) +
                     " B, the largest size measured, or both reach the ceiling there");
    return;
  }
  ctx.result(key, c->from_bytes,
             {0.9, c->at_smallest ? memtopo::Bound::AtMost : memtopo::Bound::Exact,
              "smallest size from which cp.async.bulk (best of 1-4 in flight) beats " + against +
                  " by 5 % at that and every larger size, where both are not within 90 % of the highest rate "
                  "measured (a tie)" +
                  (c->at_smallest ? "; it wins at the smallest size measured" : "")});
}

}  // namespace

void measure_throughput(memtopo::Context& ctx) {
  int optin = 0;
  memtopo::device::cuda_check(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, ctx.device().ordinal),
                       "fill_bulk", "cudaDeviceGetAttribute");
  const unsigned shared_bytes = unsigned(optin - 1024) / 1024 * 1024;
  memtopo::device::Buffer<char> src(ctx, kSourceBytes);
  src.zero();
  memtopo::device::Buffer<unsigned long long> out(ctx, 3 * size_t(ctx.device().sm_count));
  const Runner run{ctx, static_cast<const char*>(src.get()), shared_bytes, out};
  std::vector<int64_t> sizes;
  for (int64_t s = 256; s <= int64_t(shared_bytes); s *= 2) sizes.push_back(s);
  std::vector<ThroughputPoint> points;
  std::vector<double> rows;
  for (Scope scope : {Scope::Sm, Scope::Gpu}) {
    for (int64_t size : sizes) {
      for (Method m : {Method::Bulk, Method::Ldgsts, Method::LoadStore}) {
        for (unsigned stages = 1; stages <= (m == Method::LoadStore ? 1u : 4u); ++stages) {
          if (uint64_t(stages) * uint64_t(size) > shared_bytes) break;
          const double g = run.gbps({m, scope, unsigned(size), stages});
          points.push_back({m, scope, size, int64_t(stages), g});
          rows.insert(rows.end(), {double(int(m)), double(int(scope)), double(size), double(stages), g});
        }
      }
    }
    ctx.progress(scope == Scope::Sm ? 0.4 : 0.9, "throughput");
  }
  ctx.raw("throughput", {"method", "scope", "bytes_per_transfer", "stages", "gbps"}, rows);  // method 0 bulk, 1 LDGSTS, 2 ld+st; scope 0 one SM, 1 GPU
  const std::string how = "from a 16 MiB source held in L2 into shared memory, one block of 1024 threads per SM; ";
  ctx.result("tma.throughput_sizes_bytes", sizes);
  std::vector<std::string> absent;
  for (Scope scope : {Scope::Sm, Scope::Gpu}) {
    const std::string p = scope == Scope::Sm ? "tma.sm_" : "tma.gpu_", who = scope == Scope::Sm ? "one SM" : "every SM";
    const auto bulk = best_over_stages(points, Method::Bulk, scope, sizes);
    const auto ldgsts = best_over_stages(points, Method::Ldgsts, scope, sizes);
    const auto ldst = best_over_stages(points, Method::LoadStore, scope, sizes);
    ctx.result(p + "bulk_gbps", bulk, {0.9, memtopo::Bound::Exact, who + ", cp.async.bulk, best of 1-4 copies in flight; " + how});
    ctx.result(p + "ldgsts_gbps", ldgsts, {0.9, memtopo::Bound::Exact, who + ", cp.async 16 B, best of 1-4 groups in flight; " + how});
    ctx.result(p + "ld_st_gbps", ldst, {0.9, memtopo::Bound::Exact, who + ", ld.global.cg + st.shared 16 B per thread; " + how});
    const double ceiling = scope_ceiling(points, scope);
    store_crossover(ctx, p + "bulk_beats_ldgsts_from_bytes", sizes, bulk, ldgsts, ceiling, "cp.async (LDGSTS)", absent);
    store_crossover(ctx, p + "bulk_beats_ld_st_from_bytes", sizes, bulk, ldst, ceiling, "ld.global + st.shared", absent);
  }
  if (!absent.empty()) {
    std::string why;
    for (const std::string& a : absent) why += (why.empty() ? "" : "; ") + a;
    throw memtopo::NotDeterminable(why);
  }
}

}  // namespace hopper_tma
