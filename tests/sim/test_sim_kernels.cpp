// Probe kernels on the simulated GPU (sim/kernel/): kernels written with the device toolkit,
// compiled here as plain C++ and run by the simulator, give what the shipped devices describe:
// each path's load-to-use latency, bank turns, barriers, atomics, SM placement, clusters, the
// DRAM rate of a stream and an SM's loads in flight; and a kernel's mistakes are named.
#include <catch2/catch.hpp>

#include <algorithm>
#include <numeric>
#include <set>
#include <vector>

#include "kernel_context.hpp"
#include "memtopo/device/kernel.hpp"
#include "sim/kernel/fiber.hpp"
#include "sim_helpers.hpp"
#include "sweep_kernel.hpp"

namespace md = memtopo::device;
using md::Path;
using simtest::KernelContext;
using simtest::sweep_stream;

namespace {

template <Path P>
MEMTOPO_KERNEL void chase(unsigned long long start, unsigned warm, unsigned loads, unsigned long long* cycles) {
  MEMTOPO_SHARED_VAR(unsigned, sink);
  const unsigned long long slot = md::shared_address(&sink);
  unsigned long long p = start;
  for (unsigned i = 0; i < warm; ++i) p = md::follow<P>(p);
  const unsigned long long t0 = md::clock_after(unsigned(p), slot);
  for (unsigned i = 0; i < loads; ++i) p = md::follow<P>(p);
  if (md::thread_index() == 0) *cycles = md::clock_after(unsigned(p), slot) - t0;
}

// Cycles per load of a pointer chase over `footprint` bytes, 128 B apart, on path P.
template <Path P>
double chase_cycles(KernelContext& k, uint64_t footprint) {
  const uint64_t lines = footprint / 128, words = 16;
  md::Buffer<unsigned long long> buf(k.ctx(), footprint / 8);
  std::vector<unsigned long long> chain(footprint / 8, 0);
  for (uint64_t i = 0; i < lines; ++i)
    chain[i * words] = reinterpret_cast<unsigned long long>(buf.get() + (5 * i + 1) % lines * words);
  buf.upload(chain);
  md::Buffer<unsigned long long> cycles(k.ctx(), 1);
  md::launch<chase<P>>(k.ctx(), "chase", md::LaunchConfig{}, reinterpret_cast<unsigned long long>(buf.get()),
                       unsigned(2 * lines), 1024u, cycles.get());
  return double(cycles.download()[0]) / 1024;
}

// Each lane loads the shared word lane x stride; out[lane] = its cycles.
MEMTOPO_KERNEL void bank_load(unsigned stride, unsigned* out) {
  MEMTOPO_SHARED(unsigned, words, 32 * 33);
  const unsigned lane = md::thread_index();
  uint32_t cycles = 0;
  MEMTOPO_SHARED_VAR(unsigned, sink);
  md::timed_load<Path::Shared>(md::shared_address(&words[lane * stride % (32 * 33)]), 0, md::shared_address(&sink),
                               cycles);
  out[lane] = cycles;
}

// Thread t spends t cycles, then all meet; out[t] = the clock after the barrier.
MEMTOPO_KERNEL void meet(unsigned long long* out) {
  const unsigned t = md::thread_index();
  md::spend_cycles(t * 10);
  md::sync_block();
  out[t] = md::clock_now();
}

MEMTOPO_KERNEL void count_all(unsigned* counter, unsigned* sm_of_block) {
  md::atomic_add(counter, 1u);
  if (md::thread_index() == 0) sm_of_block[md::block_index()] = md::smid();
}

// Rank 0 of each cluster chases the ring of the block at distance 1; out: cycles per load.
MEMTOPO_KERNEL void cluster_chase(unsigned loads, unsigned long long* out, unsigned* ranks) {
  MEMTOPO_SHARED(uint32_t, ring, 64);
  const uint32_t rank = md::cluster_rank(), n = md::cluster_blocks();
  for (unsigned i = md::thread_index(); i < 64; i += md::block_threads())
    ring[i] = md::cluster_address(md::shared_address(&ring[(i + 1) % 64]), rank);
  if (md::thread_index() == 0) ranks[md::block_index()] = rank * 100 + n;
  md::cluster_sync();
  if (rank == 0 && md::thread_index() == 0) {
    uint32_t p = md::cluster_address(md::shared_address(&ring[0]), 1);
    const unsigned long long t0 = md::clock_now();
    for (unsigned i = 0; i < loads; ++i) p = md::follow32<Path::Cluster>(p);
    out[md::block_index() / n] = (md::clock_now() - t0) / loads;
  }
  md::cluster_sync();
}

// Every thread reads its 16-byte slices of `bytes` at `base`, one load at a time.
MEMTOPO_KERNEL void read_stream(unsigned long long base, unsigned long long bytes, unsigned* sink) {
  const unsigned long long threads = uint64_t(md::grid_blocks()) * md::block_threads();
  const unsigned long long me = uint64_t(md::block_index()) * md::block_threads() + md::thread_index();
  uint32_t acc = 0;
  for (unsigned long long off = me * 16; off < bytes; off += threads * 16)
    acc ^= md::load_wide<Path::GlobalCg, 16>(base + off);
  md::keep_if(acc, sink, unsigned(acc == 0x5eed));
}

// K chains of random .cg loads per thread over `lines` lines; tallies summed into out[0..3].
template <uint32_t K>
MEMTOPO_KERNEL void chains_kernel(const char* base, unsigned lines, unsigned long long steps, unsigned long long* out) {
  MEMTOPO_SHARED_VAR(unsigned, sink);
  md::RandomPlaces places[K];
  const unsigned me = md::block_index() * md::block_threads() + md::thread_index();
  for (uint32_t c = 0; c < K; ++c)
    places[c] = {md::RandomPlaces::stream_state(md::RandomPlaces::mix(5), me + 1024 * c), lines, 128};
  const md::ChainTally y = md::random_chains<Path::GlobalCg, K>(base, places, 0, 64, steps, 0, md::shared_address(&sink));
  md::atomic_add(out + 0, (unsigned long long)y.cycles);
  md::atomic_add(out + 1, (unsigned long long)(steps * K));  // loads of one thread: summed, all threads'
  md::atomic_max(out + 2, (unsigned long long)y.last);
}

// `loads` loads of each thread to random lines of `lines` 128-byte lines at `base` (.cg).
MEMTOPO_KERNEL void random_lines(unsigned long long base, unsigned lines, unsigned loads, unsigned* sink) {
  uint64_t x = 0x9e3779b97f4a7c15ull * (1 + md::block_index() * md::block_threads() + md::thread_index());
  uint32_t acc = 0;
  for (unsigned i = 0; i < loads; ++i) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    acc += md::load<Path::GlobalCg>(base + (x % lines) * 128, 0);
  }
  md::keep_if(acc, sink, unsigned(acc == 0x5eed));
}

MEMTOPO_KERNEL void load_outside(unsigned long long address) { md::load<Path::GlobalCa>(address, 0); }

// Block 0's first warp waits for its block, its second for the cluster: neither barrier is
// ever reached by all it waits for.
MEMTOPO_KERNEL void split_barriers() {
  if (md::block_index() != 0) return;
  if (md::thread_index() < 32)
    md::sync_block();
  else
    md::cluster_sync();
}

}  // namespace

TEST_CASE("sim kernels: a pointer chase of each path costs the description's hit latency", "[sim][kernels]") {
  for (const char* name : {"hopper-like.toml", "kepler-like.toml", "pascal-like.toml"}) {
    INFO(name);
    KernelContext k(simtest::open_device(name));
    const toml::table t = simtest::read_device_file(name);
    CHECK(chase_cycles<Path::Readonly>(k, 16384) == double(simtest::key(t, "readonly", "latency_cycles")));
    if (t["l1d"]["latency_cycles"].is_value() && simtest::key(t, "l1d", "size_bytes") >= 16384)
      CHECK(chase_cycles<Path::GlobalCa>(k, 16384) == double(simtest::key(t, "l1d", "latency_cycles")));
  }
  // Past the L1, in the L2: the near and far partitions' latencies, lines spread over both.
  KernelContext k(simtest::open_device("hopper-like.toml"));
  const double l2 = chase_cycles<Path::GlobalCg>(k, uint64_t(1) << 20);
  CHECK(l2 == Approx((262 + 420) / 2.0).epsilon(0.02));
}

TEST_CASE("sim kernels: a warp's shared-memory words take the banks' turns", "[sim][kernels]") {
  KernelContext k(simtest::open_device("hopper-like.toml"));
  md::Buffer<unsigned> out(k.ctx(), 32);
  md::LaunchConfig cfg;
  cfg.block = {32};
  // 32 banks of 4 bytes, 29 cycles, 2 per further turn, 6 of timing overhead.
  for (const auto& [stride, turns] : std::vector<std::pair<unsigned, int>>{{1, 1}, {2, 2}, {32, 32}, {33, 1}, {0, 1}}) {
    INFO("stride " << stride);
    md::launch<bank_load>(k.ctx(), "bank_load", cfg, stride, out.get());
    const auto cycles = out.download();
    CHECK(cycles[0] == unsigned(29 + 2 * (turns - 1) + 6));
    CHECK(std::all_of(cycles.begin(), cycles.end(), [&](unsigned c) { return c == cycles[0]; }));
  }
}

TEST_CASE("sim kernels: a barrier lets every thread go on at the last arrival", "[sim][kernels]") {
  KernelContext k(simtest::open_device("hopper-like.toml"));
  md::Buffer<unsigned long long> out(k.ctx(), 64);
  md::LaunchConfig cfg;
  cfg.block = {64};
  md::launch<meet>(k.ctx(), "meet", cfg, out.get());
  const auto clocks = out.download();
  CHECK(std::all_of(clocks.begin(), clocks.end(), [&](unsigned long long c) { return c == clocks[0]; }));
  CHECK(clocks[0] >= 630);
}

TEST_CASE("sim kernels: atomics count every thread and blocks spread over the SMs", "[sim][kernels]") {
  KernelContext k(simtest::open_device("hopper-like.toml"));
  const uint32_t sms = uint32_t(k.info().sm_count);
  md::Buffer<unsigned> counter(k.ctx(), 1), sm_of(k.ctx(), sms);
  counter.zero();
  md::LaunchConfig cfg;
  cfg.grid = {sms};
  cfg.block = {96};
  cfg.warmup_launches = 0;
  md::launch<count_all>(k.ctx(), "count_all", cfg, counter.get(), sm_of.get());
  CHECK(counter.download()[0] == 96 * sms);
  const auto placed = sm_of.download();
  CHECK(std::set<unsigned>(placed.begin(), placed.end()).size() == sms);
}

TEST_CASE("sim kernels: clusters see each other's shared memory at the cluster latency", "[sim][kernels]") {
  KernelContext k(simtest::open_device("hopper-like.toml"));
  md::LaunchConfig cfg;
  cfg.cluster = {4};
  cfg.grid = {8};
  cfg.block = {64};
  CHECK(md::max_active_clusters<cluster_chase>(k.ctx(), "cluster_chase", cfg) > 0);
  md::Buffer<unsigned long long> out(k.ctx(), 2);
  md::Buffer<unsigned> ranks(k.ctx(), 8);
  md::launch<cluster_chase>(k.ctx(), "cluster_chase", cfg, 256u, out.get(), ranks.get());
  // No [sim.cluster] latency in the description: six times the shared-memory latency.
  for (unsigned long long c : out.download()) CHECK(c == 6 * 29);
  const auto r = ranks.download();
  for (unsigned b = 0; b < 8; ++b) CHECK(r[b] == (b % 4) * 100 + 4);
  // Blocks of 1024 threads: two an SM, eight a GPC of four SMs; a cluster of 16 fits nowhere.
  cfg.block = {1024};
  cfg.cluster = {8};
  CHECK(md::max_active_clusters<cluster_chase>(k.ctx(), "cluster_chase", cfg) == 2);
  cfg.cluster = {16};
  cfg.grid = {16};
  CHECK(md::max_active_clusters<cluster_chase>(k.ctx(), "cluster_chase", cfg) == 0);  // more than 8: not portable
  cfg.non_portable_cluster = true;
  CHECK(md::max_active_clusters<cluster_chase>(k.ctx(), "cluster_chase", cfg) == 0);
  CHECK_THROWS_AS(md::launch<cluster_chase>(k.ctx(), "cluster_chase", cfg, 1u, out.get(), ranks.get()),
                  md::LaunchRefused);
}

TEST_CASE("sim kernels: a stream past the L2 reads at the description's DRAM rate", "[sim][kernels]") {
  KernelContext k(simtest::open_device("hopper-like.toml"));
  const uint64_t bytes = uint64_t(16) << 20;  // twice the L2
  md::Buffer<unsigned char> buf(k.ctx(), bytes);
  md::Buffer<unsigned> sink(k.ctx(), 1);
  md::LaunchConfig cfg;
  cfg.grid = {uint32_t(k.info().sm_count) * 2};
  cfg.block = {512};
  const auto r = md::launch<read_stream>(k.ctx(), "read_stream", cfg, reinterpret_cast<unsigned long long>(buf.get()),
                                         bytes, sink.get());
  CHECK(double(bytes) / (r.elapsed_ms / 1e3) == Approx(200e9).epsilon(0.05));
  // As access programs (one per lane): the same rate; writes at the write rate.
  md::Buffer<unsigned char> dst(k.ctx(), bytes);
  const auto src = reinterpret_cast<const char*>(buf.get());
  auto* out = reinterpret_cast<char*>(dst.get());
  const auto rate = [&](const md::LaunchReport& x) { return double(bytes) / (x.elapsed_ms / 1e3); };
  CHECK(rate(md::launch<sweep_stream<MT_SWEEP_READ>>(k.ctx(), "sweep", cfg, src, out, bytes, sink.get())) ==
        Approx(200e9).epsilon(0.05));
  CHECK(rate(md::launch<sweep_stream<MT_SWEEP_WRITE>>(k.ctx(), "sweep", cfg, src, out, bytes, sink.get())) ==
        Approx(210e9).epsilon(0.05));
  // A copy reads and writes as much: its bytes share DRAM's time, a read at one rate, a write
  // (of each dirty line the L2 evicts) at the other.
  CHECK(2 * rate(md::launch<sweep_stream<MT_SWEEP_COPY>>(k.ctx(), "sweep", cfg, src, out, bytes, sink.get())) ==
        Approx(2 / (1 / 200e9 + 1 / 210e9)).epsilon(0.05));
  CHECK(2 * rate(md::launch<sweep_stream<MT_SWEEP_UPDATE>>(k.ctx(), "sweep", cfg, out, out, bytes, sink.get())) ==
        Approx(2 / (1 / 200e9 + 1 / 210e9)).epsilon(0.05));
}

TEST_CASE("sim kernels: sweeps read, write, copy and update what they say", "[sim][kernels]") {
  KernelContext k(simtest::open_device("hopper-like.toml"));
  const uint64_t bytes = 64 * 1024;
  md::Buffer<uint32_t> a(k.ctx(), bytes / 4), b(k.ctx(), bytes / 4);
  md::Buffer<unsigned> sink(k.ctx(), 1);
  std::vector<uint32_t> words(bytes / 4);
  std::iota(words.begin(), words.end(), 100u);
  a.upload(words);
  md::LaunchConfig cfg;
  cfg.grid = {2};
  cfg.block = {64};
  cfg.warmup_launches = 0;
  const auto src = reinterpret_cast<const char*>(a.get());
  auto* dst = reinterpret_cast<char*>(b.get());
  md::launch<sweep_stream<MT_SWEEP_COPY>>(k.ctx(), "copy", cfg, src, dst, bytes, sink.get());
  CHECK(b.download() == words);
  md::launch<sweep_stream<MT_SWEEP_UPDATE>>(k.ctx(), "update", cfg, dst, dst, bytes, sink.get());
  std::vector<uint32_t> expected = words;
  for (size_t e = 0; e < expected.size(); e += 4) ++expected[e];  // the first word of each 16 bytes
  CHECK(b.download() == expected);
  md::launch<sweep_stream<MT_SWEEP_WRITE>>(k.ctx(), "write", cfg, src, dst, bytes, sink.get());
  for (size_t e = 0; e < expected.size(); ++e) expected[e] = uint32_t(e / 4 + 7);  // element index + value
  CHECK(b.download() == expected);
}

// Zeros over whole pages are handed back to the host (kernel_memory.cpp): they read as zeros,
// and the bytes around them, in partial pages, are zeroed as asked and no further.
TEST_CASE("sim kernels: a zero fill of many pages reads as zeros, its edges exact", "[sim][kernels]") {
  KernelContext k(simtest::open_device("hopper-like.toml"));
  const size_t bytes = (size_t(4) << 20) + 100;
  md::Buffer<unsigned char> b(k.ctx(), bytes);
  k.ctx().backend().fill_buffer(b.get(), 0xab, bytes);
  k.ctx().backend().fill_buffer(b.get() + 1, 0, bytes - 51);
  const std::vector<unsigned char> got = b.download();
  std::vector<unsigned char> want(bytes, 0);
  want.front() = 0xab;
  std::fill(want.end() - 50, want.end(), 0xab);
  CHECK(got == want);
  // Written again after the fill: the pages hold what the kernel or a copy wrote.
  k.ctx().backend().fill_buffer(b.get(), 0x5a, bytes);
  CHECK(b.download() == std::vector<unsigned char>(bytes, 0x5a));
}

TEST_CASE("sim kernels: random chains keep an SM's loads in flight and time each step", "[sim][kernels]") {
  KernelContext k(simtest::open_device("hopper-like.toml"));
  const unsigned lines = 2048;
  md::Buffer<unsigned char> buf(k.ctx(), uint64_t(lines) * 128);
  md::Buffer<unsigned long long> out(k.ctx(), 4);
  const auto base = reinterpret_cast<const char*>(buf.get());
  md::LaunchConfig cfg;
  cfg.warmup_launches = 0;
  cfg.block = {256};
  md::launch<chains_kernel<8>>(k.ctx(), "warm", cfg, base, lines, 64ull, out.get());  // every line into the L2
  // One chain of one thread: a step is one L2 hit (near or far) and the timing overhead (6).
  out.zero();
  cfg.block = {1};
  md::launch<chains_kernel<1>>(k.ctx(), "one", cfg, base, lines, 1024ull, out.get());
  auto o = out.download();
  const double latency = double(o[0]) / double(o[1]) - 6;
  CHECK(latency > 262);
  CHECK(latency < 420);
  // 128 threads of 8 chains: far more loads than [sim.memory]'s 256 in flight; the SM makes 256 loads
  // per latency (Little's law).
  out.zero();
  cfg.block = {128};
  const auto r = md::launch<chains_kernel<8>>(k.ctx(), "many", cfg, base, lines, 64ull, out.get());
  o = out.download();
  const double cycles = r.elapsed_ms * 1e6 * double(k.info().sm_clock_khz) / 1e6;
  const double loads = double(o[1]) * (64 + 64) / 64;  // the 64 warm-up steps ran in the launch too
  CHECK(loads / cycles * latency == Approx(256).epsilon(0.15));
}

// Even warps chase random lines of buffer a, odd warps of buffer b (4 chains a lane); tallies
// summed into out[0..1].
MEMTOPO_KERNEL void two_buffer_chains(const char* a, const char* b, unsigned lines, unsigned long long* out) {
  MEMTOPO_SHARED_VAR(unsigned, sink);
  md::RandomPlaces places[4];
  const unsigned me = md::block_index() * md::block_threads() + md::thread_index();
  for (uint32_t c = 0; c < 4; ++c)
    places[c] = {md::RandomPlaces::stream_state(md::RandomPlaces::mix(9), me + 1024 * c), lines, 128};
  const char* base = (me / 32) % 2 ? b : a;
  const md::ChainTally y = md::random_chains<Path::GlobalCg, 4>(base, places, 0, 16, 64, 0, md::shared_address(&sink));
  md::atomic_add(out + 0, (unsigned long long)y.cycles);
  md::atomic_max(out + 1, (unsigned long long)y.last);
}

// The caches, TLBs and partitions see a buffer's simulated address, not the host's (which
// changes from run to run): two simulated GPUs of one description, the second with 34 MiB of
// host memory taken between its two buffers, take the same cycles for the same launch.
// Kepler-like's second TLB level has unequal sets chosen by page number: the two buffers'
// 48 pages of 2 MiB overflow its first level and share its sets by where they lie.
TEST_CASE("sim kernels: a launch takes the same cycles wherever the host's memory lies", "[sim][kernels]") {
  const uint64_t bytes = uint64_t(48) << 20;
  std::vector<unsigned long long> tally[2];
  double elapsed_ms[2] = {0, 0};
  for (int i = 0; i < 2; ++i) {
    KernelContext k(simtest::open_device("kepler-like.toml"));
    md::Buffer<char> a(k.ctx(), bytes);
    std::vector<char> spacer(i == 1 ? (34u << 20) : 0u);  // host memory, not the simulated GPU's
    md::Buffer<char> b(k.ctx(), bytes);
    md::Buffer<unsigned long long> out(k.ctx(), 2);
    out.zero();
    md::LaunchConfig cfg;
    cfg.warmup_launches = 0;
    cfg.block = {128};
    elapsed_ms[i] = md::launch<two_buffer_chains>(k.ctx(), "chains", cfg, a.get(), b.get(), unsigned(bytes / 128),
                                                  out.get()).elapsed_ms;
    tally[i] = out.download();
  }
  CHECK(tally[0][0] > 0);
  CHECK(tally[0] == tally[1]);
  CHECK(elapsed_ms[0] == elapsed_ms[1]);
}

TEST_CASE("sim kernels: a kernel's mistakes are named with its block and thread", "[sim][kernels]") {
  KernelContext k(simtest::open_device("hopper-like.toml"));
  md::LaunchConfig cfg;
  cfg.warmup_launches = 0;
  try {
    md::launch<load_outside>(k.ctx(), "load_outside", cfg, 0x1000ull);
    FAIL("a load outside every buffer ran");
  } catch (const memtopo::Error& e) {
    CHECK_THAT(e.what(), Catch::Contains("kernel load_outside") && Catch::Contains("thread (0,0,0)") &&
                             Catch::Contains("lies in no buffer"));
  }
  cfg.block = {64};
  cfg.grid = {2};
  cfg.cluster = {2};
  CHECK_THROWS_WITH(md::launch<split_barriers>(k.ctx(), "split_barriers", cfg),
                    Catch::Contains("64 thread(s) wait at a barrier"));
  cfg.block = {4096};
  CHECK_THROWS_WITH(md::launch<split_barriers>(k.ctx(), "split_barriers", cfg), Catch::Contains("at most 1024"));
}

// A large GPU keeps more threads resident (132 SMs x 2048) than a process may have mappings
// (vm.max_map_count, 65530 by default) if each stack had its own guard page.
TEST_CASE("sim kernels: stacks for every resident thread of a large GPU, overflows named", "[sim][kernels]") {
  memtopo::sim::kernel::StackPool pool(64 * 1024);
  std::vector<void*> stacks;
  for (int i = 0; i < 132 * 2048; ++i) stacks.push_back(pool.take());
  CHECK(std::set<void*>(stacks.begin(), stacks.end()).size() == stacks.size());
  static_cast<char*>(stacks.back())[pool.bytes() - 1] = 1;  // a frame at the top: in bounds
  CHECK(pool.unused_bottom(stacks.back()));
  static_cast<char*>(stacks[100000])[8] = 1;  // the lowest bytes: the thread ran past its end
  CHECK_FALSE(pool.unused_bottom(stacks[100000]));
}
