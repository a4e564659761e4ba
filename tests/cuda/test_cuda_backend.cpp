// CUDA backend: chase order, pinned SMs, recording passes, every memory path, counted and
// random loads, pumps, sequences, pointer chases, buffers for probe kernels, and the messages
// of bad requests. [gpu] tests exit with the skip code (77, CTest's SKIP_RETURN_CODE) when no
// GPU is present, so ctest shows them as skipped.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <numeric>
#include <random>
#include <set>
#include <vector>

#include "memtopo/engine.hpp"
#include "memtopo/measure.hpp"
#include "open_gpu.hpp"
#include "cuda/device_memory.hpp"

using memtopo::ChaseArray;
using memtopo::Job;
using Catch::Matchers::Contains;

namespace {

// A random single cycle over n elements (Sattolo's algorithm).
ChaseArray random_cycle(uint32_t n, uint32_t seed) {
  std::vector<uint32_t> order(n);
  std::iota(order.begin(), order.end(), 0u);
  std::mt19937 rng(seed);
  for (uint32_t i = n - 1; i > 0; --i) std::swap(order[i], order[std::uniform_int_distribution<uint32_t>(0, i - 1)(rng)]);
  ChaseArray a;
  a.next.assign(n, 0);
  for (uint32_t i = 0; i < n; ++i) a.next[order[i]] = order[(i + 1) % n];
  return a;
}

// The positions a chase loads after `skip` loads from `start`.
std::vector<uint32_t> expected_order(const ChaseArray& a, uint32_t start, uint64_t skip, uint64_t steps) {
  const mt_chase_array c = a.c();
  std::vector<uint32_t> out;
  uint64_t j = start;
  for (uint64_t k = 0; k < skip + steps; ++k) {
    if (k >= skip) out.push_back(uint32_t(j));
    j = c.kind == MT_ARRAY_STRIDE ? (j + c.stride_elems) % c.elems : c.next[j];
  }
  return out;
}

Job chase(const ChaseArray& a, uint64_t steps, mt_space space = MT_SPACE_GLOBAL_CA) {
  Job j;
  j.space = space;
  j.array = &a;
  j.steps = steps;
  return j;
}

// Random loads to 128 B lines of `a` through L2 only, on SM 0, with threshold 0: every timed
// load counts as slow, and 16 of their steps are kept.
Job l2_hits_counted_slow(const ChaseArray& a, uint64_t warmup, uint64_t steps) {
  Job j = chase(a, steps, MT_SPACE_GLOBAL_CG);
  j.pattern = MT_PATTERN_RANDOM;
  j.record = MT_RECORD_COUNTS;
  j.random_stride_bytes = 128;
  j.seed = 3;
  j.warmup_steps = warmup;
  j.sm = 0;
  j.keep_steps = 16;
  return j;
}

double median(std::vector<uint32_t> v) {
  std::sort(v.begin(), v.end());
  return double(v[v.size() / 2]);
}

}  // namespace

TEST_CASE("cuda: the backend is built in", "[cuda]") { CHECK(memtopo::engine::cuda_built()); }

TEST_CASE("cuda: opening a device that does not exist names the problem", "[cuda]") {
  const int count = memtopo::engine::cuda_device_count();
  try {
    memtopo::engine::open_cuda(count + 3);
    FAIL("open_cuda succeeded on a device that does not exist");
  } catch (const memtopo::Error& e) {
    const std::string msg = e.what();
    CHECK_THAT(msg, Contains("cuda:" + std::to_string(count + 3)));
    if (count == 0)
      CHECK_THAT(msg, Contains("no CUDA device can be used") && Contains("--device sim"));
    else
      CHECK_THAT(msg, Contains("no such device"));
  }
}

TEST_CASE("cuda: a recorded chase follows the array with positive latencies", "[cuda][gpu]") {
  auto dev = open_gpu();
  const memtopo::Backend be(dev->backend());
  CHECK(be.has(MT_CAP_SAMPLES | MT_CAP_TOTAL | MT_CAP_COUNTS | MT_CAP_RANDOM | MT_CAP_POINTERS | MT_CAP_STREAMS |
               MT_CAP_PUMP | MT_CAP_SEQUENCE | MT_CAP_KERNELS));
  const ChaseArray a = random_cycle(4096, 7);
  Job s = chase(a, 1300);  // three recording passes
  s.start = 5;
  s.warmup_steps = 100;
  const memtopo::JobResult r = be.run(s);
  CHECK(r.index == expected_order(a, 5, 100, 1300));
  CHECK(std::all_of(r.latency.begin(), r.latency.end(), [](uint32_t c) { return c > 0; }));
  CHECK(r.sm >= 0);
  CHECK(r.sm < dev->info().sm_count);
}

TEST_CASE("cuda: every memory path follows the chase, by index and by pointer", "[cuda][gpu]") {
  auto dev = open_gpu();
  const memtopo::Backend be(dev->backend());
  const ChaseArray explicit_array = random_cycle(2048, 11);
  const ChaseArray stride_array = ChaseArray::stride(8 << 10, 128);
  const ChaseArray even = ChaseArray::stride(16 << 10, 64);  // visited elements even: pointers fit
  for (mt_space space : {MT_SPACE_GLOBAL_CA, MT_SPACE_GLOBAL_CG, MT_SPACE_READONLY, MT_SPACE_TEXTURE,
                         MT_SPACE_CONSTANT, MT_SPACE_SHARED}) {
    for (const ChaseArray* a : {&explicit_array, &stride_array}) {
      INFO("space " << int(space) << (a == &stride_array ? ", stride array" : ", explicit array"));
      Job s = chase(*a, 600, space);
      s.start = 3;
      s.warmup_steps = 64;
      const memtopo::JobResult r = be.run(s);
      CHECK(r.index == expected_order(*a, 3, 64, 600));
      CHECK(*std::min_element(r.latency.begin(), r.latency.end()) > 0);
      s.record = MT_RECORD_TOTAL;
      CHECK(be.run(s).average_cycles > 0);
    }
    // A warm pointer chase takes about what the recorded samples of the same chase show; where
    // every load hits one level (the paths with an SM cache) it is faster, since the samples
    // add the timing's own cost to every load.
    INFO("space " << int(space) << ", pointer chase");
    Job w = chase(even, 4096, space);
    w.warmup_steps = 2 * 256;
    const double recorded = median(be.run(w).latency);
    w.pattern = MT_PATTERN_POINTERS;
    w.record = MT_RECORD_TOTAL;
    const double load_to_use = be.run(w).average_cycles;
    CHECK(load_to_use > 0.5 * recorded);
    CHECK(load_to_use < 1.1 * recorded);
    if (space != MT_SPACE_GLOBAL_CG) CHECK(load_to_use < recorded);
  }
}

TEST_CASE("cuda: a pointer chase over an explicit array of even elements", "[cuda][gpu]") {
  auto dev = open_gpu();
  const memtopo::Backend be(dev->backend());
  // A random cycle over the even elements of 8192: an explicit array in pointer form.
  const ChaseArray half = random_cycle(4096, 5);
  ChaseArray a;
  a.next.assign(8192, 0);
  for (uint32_t i = 0; i < 4096; ++i) a.next[2 * i] = 2 * half.next[i];
  Job j = chase(a, 8192, MT_SPACE_GLOBAL_CG);
  j.pattern = MT_PATTERN_POINTERS;
  j.record = MT_RECORD_TOTAL;
  j.warmup_steps = 4096;
  CHECK(be.run(j).average_cycles > 0);
  a.next[0] = 1;  // an odd element in the chase is refused
  a.next[1] = 2 * half.next[0];
  CHECK_THROWS_WITH(be.run(j), Contains("job 0") && Contains("even"));
}

TEST_CASE("cuda: counted loads are slow where the recorded chase sees them", "[cuda][gpu]") {
  auto dev = open_gpu();
  const memtopo::Backend be(dev->backend());
  // 64 MiB at 128 B stride through L2 only: every load goes past the L1, most past the L2 too.
  // A threshold of 0 cycles makes every load slow; an unreachable one, none.
  const ChaseArray big = ChaseArray::stride(64 << 20, 128);
  Job spec = chase(big, 3000, MT_SPACE_GLOBAL_CG);
  spec.warmup_steps = 1000;
  spec.record = MT_RECORD_COUNTS;
  spec.slow_cycles = 0;
  const memtopo::JobResult all = be.run(spec);
  CHECK(all.slow == 3000);
  REQUIRE(all.slow_steps.size() == 1024);  // the device keeps 1024 steps
  for (uint32_t i = 0; i < 1024; ++i) CHECK(all.slow_steps[i] == i);
  CHECK(all.cycles > 3000);
  spec.slow_cycles = 4000000000u;
  const memtopo::JobResult none = be.run(spec);
  CHECK(none.slow == 0);
  CHECK(none.slow_steps.empty());
  // A warm 16 KiB footprint through L1: the hit level sits far below the miss level, so a
  // threshold between them counts (almost) nothing; the average matches the recorded chase's.
  const ChaseArray small = ChaseArray::stride(16 << 10, 32);
  Job f = chase(small, 4096);
  f.warmup_steps = 1024;
  const double typical = median(be.run(f).latency);
  f.record = MT_RECORD_COUNTS;
  f.slow_cycles = uint32_t(typical * 3);
  const memtopo::JobResult warm = be.run(f);
  CHECK(warm.slow < 40);
  CHECK(double(warm.cycles) / 4096.0 == Approx(typical).epsilon(0.2));
}

TEST_CASE("cuda: random-load streams share the loads and overlap in time", "[cuda][gpu]") {
  auto dev = open_gpu();
  const memtopo::Backend be(dev->backend());
  CHECK(be.streams_max() == 32);
  // 1 MiB of 128 B lines through L2 only, warm: every load hits. Eight streams make the
  // timed loads one stream makes (threshold 0: each one counted slow) in much less time.
  const ChaseArray a = ChaseArray::stride(1 << 20, 128);
  Job r = l2_hits_counted_slow(a, 40000, 100003);
  const memtopo::JobResult one = be.run(r);
  CHECK(one.slow == 100003);
  CHECK(one.sm == 0);
  REQUIRE(one.span_cycles > 0);
  CHECK(double(one.span_cycles) >= double(one.cycles) * 0.9);  // the loads follow one another
  r.rate.streams = 8;
  const memtopo::JobResult eight = be.run(r);
  CHECK(eight.slow == 100003);
  CHECK(eight.slow_steps.size() == 16);  // stream 0's
  CHECK(eight.span_cycles * 3 < one.span_cycles);
  // Time per load at one stream is near the hit latency; a gap adds to it.
  r.rate.streams = 1;
  r.rate.gap_cycles = 2000;
  r.steps = 20000;
  const memtopo::JobResult slow = be.run(r);
  CHECK(double(slow.span_cycles) / 20000.0 > 2000.0);
  CHECK(double(slow.span_cycles) / 20000.0 < 2000.0 + 4.0 * double(one.span_cycles) / 100003.0);
  r.rate.streams = 33;
  CHECK_THROWS_WITH(be.run(r), Contains("33 streams"));
}

TEST_CASE("cuda: a pump loads between windows of one timed stream", "[cuda][gpu]") {
  auto dev = open_gpu();
  const memtopo::Backend be(dev->backend());
  CHECK(be.pump_warps_max() == 31);
  // 1 MiB of 128 B lines through L2 only, warm: every load hits (threshold 0: each timed
  // load counted slow). 512 pump lanes load for 20000 cycles before every 32 timed loads.
  const ChaseArray a = ChaseArray::stride(1 << 20, 128);
  Job r = l2_hits_counted_slow(a, 64, 3200);
  const memtopo::JobResult plain = be.run(r);
  r.rate.pump_warps = 16;
  r.rate.pump_lanes = 32;
  r.rate.pump_cycles = 20000;
  r.rate.probe_loads = 32;
  const memtopo::JobResult pumped = be.run(r);
  CHECK(pumped.slow == 3200);
  CHECK(pumped.slow_steps.size() == 16);
  CHECK(pumped.sm == 0);
  // Windows begun after the first timed load: at steps 96 .. 3232, 99 of them.
  CHECK(double(pumped.span_cycles) > 99.0 * 20000.0 + 0.5 * double(plain.span_cycles));
  CHECK(pumped.pump_loads >= 99u * 512u);  // every lane loads at least once a window
  // The timed loads do not queue behind the pump's: their mean is no slower than one
  // stream's alone.
  CHECK(double(pumped.cycles) < 1.1 * double(plain.cycles));
  r.rate.pump_warps = 32;
  CHECK_THROWS_WITH(be.run(r), Contains("32 pump warps; at most 31"));
}

TEST_CASE("cuda: jobs with different kernel configurations in one call", "[cuda][gpu]") {
  auto dev = open_gpu();
  const memtopo::Backend be(dev->backend());
  const ChaseArray a = ChaseArray::stride(64 << 10, 256);
  const ChaseArray big_shared = ChaseArray::stride(96 << 10, 132);  // past the 48 KiB default
  std::vector<Job> jobs(5, chase(a, 520));
  jobs[0].shared_carveout_percent = 0;
  jobs[1].shared_carveout_percent = 100;
  jobs[2].space = MT_SPACE_SHARED;
  jobs[2].array = &big_shared;
  jobs[3].record = MT_RECORD_COUNTS;  // another kernel in the same call
  jobs[4].space = MT_SPACE_CONSTANT;
  jobs[4].array = &big_shared;  // refused: 96 KiB do not fit in constant memory
  CHECK_THROWS_WITH(be.run(jobs), Contains("job 4") && Contains("constant memory"));
  jobs.pop_back();
  const auto r = be.run(jobs);
  for (size_t i = 0; i < 3; ++i) {
    INFO("job " << i);
    CHECK(r[i].index == expected_order(*jobs[i].array, 0, 0, 520));
  }
  CHECK(r[3].cycles > 0);
}

TEST_CASE("cuda: a constant chase past constant memory reads its tail from the kernel parameters", "[cuda][gpu]") {
  auto dev = open_gpu();
  const memtopo::Backend be(dev->backend());
  const int64_t mem = dev->info().constant_memory_bytes, reach = dev->info().constant_reach_bytes;
  if (reach <= mem) {
    WARN("no kernel-parameter bank on this device");
    return;
  }
  // A random cycle over the whole reach: consecutive loads cross between the banks at random.
  const ChaseArray wide = random_cycle(uint32_t(reach / 4), 11);
  Job s = chase(wide, 3000, MT_SPACE_CONSTANT);
  s.warmup_steps = 3000;
  const auto f = be.run(s);
  CHECK(f.index == expected_order(wide, 0, 3000, 3000));
  CHECK(*std::min_element(f.latency.begin(), f.latency.end()) > 0);
  // The counted chase times the same loads: its mean is the recorded chase's typical load.
  Job c = s;
  c.record = MT_RECORD_COUNTS;
  c.slow_cycles = uint32_t(median(f.latency));
  CHECK(double(be.run(c).cycles) / 3000.0 == Approx(median(f.latency)).epsilon(0.2));
  c.record = MT_RECORD_TOTAL;
  CHECK(be.run(c).average_cycles > 0);
  // A job of a sequence follows the same chase.
  Job ph = chase(wide, 700, MT_SPACE_CONSTANT);
  ph.start = 5;
  ph.order = 1;
  ph.block = 0;
  CHECK(be.run(ph).index == expected_order(wide, 5, 0, 700));
  // It must be the only constant array of its call, in either order.
  const ChaseArray small = ChaseArray::stride(1024, 4);
  const Job t = chase(small, 3000, MT_SPACE_CONSTANT);
  CHECK_THROWS_WITH(be.run({s, t}), Contains("job 1") && Contains("the only array"));
  CHECK_THROWS_WITH(be.run({t, s}), Contains("job 1") && Contains("the only array"));
  // One element more than the reach is refused before anything runs.
  const ChaseArray too_long = ChaseArray::stride(uint64_t(reach) + 4, 4);
  s.array = &too_long;
  CHECK_THROWS_WITH(be.run(s), Contains("do not fit in constant memory"));
}

TEST_CASE("cuda: jobs run on the SMs they are pinned to, each on its own SM", "[cuda][gpu]") {
  auto dev = open_gpu();
  const memtopo::Backend be(dev->backend());
  const int sms = dev->info().sm_count;
  const ChaseArray a = ChaseArray::stride(16 << 10, 64);
  std::vector<Job> jobs;
  const std::vector<int> pins = {sms - 1, 0, sms / 2};
  for (int pin : pins) {
    Job s = chase(a, 700);
    s.sm = pin;
    jobs.push_back(s);
  }
  Job any = jobs[0];
  any.sm = -1;
  jobs.insert(jobs.end(), std::size_t(std::min(sms - 3, 8)), any);
  const auto r = be.run(jobs);
  std::set<int> seen;
  for (size_t i = 0; i < r.size(); ++i) {
    if (i < pins.size()) CHECK(r[i].sm == pins[i]);
    CHECK(seen.insert(r[i].sm).second);
    CHECK(r[i].index == expected_order(a, 0, 0, 700));
  }
}

TEST_CASE("cuda: a sequence runs its jobs in order on their blocks' SMs", "[cuda][gpu]") {
  auto dev = open_gpu();
  const memtopo::Backend be(dev->backend());
  const ChaseArray fill = ChaseArray::stride(32 << 10, 32);
  const ChaseArray probe = random_cycle(1024, 3);
  const int last = dev->info().sm_count - 1;
  // Jobs in array order 4, 1, 3, 2: two lanes (0 and 5) of block 0 pinned to the last SM,
  // block 7 anywhere else; the job of order 3 reads its array through another path.
  std::vector<Job> jobs(4, chase(probe, 700));
  const uint32_t order[4] = {4, 1, 3, 2};
  const int32_t block[4] = {0, 0, 0, 7};
  const uint32_t lane[4] = {0, 0, 5, 0};
  for (size_t k = 0; k < 4; ++k) {
    jobs[k].order = order[k];
    jobs[k].block = block[k];
    jobs[k].lane = lane[k];
    jobs[k].start = order[k];
    jobs[k].shared_carveout_percent = 0;
  }
  jobs[0].sm = last;
  jobs[1].timed = false;  // the first job only loads
  jobs[1].steps = 100;
  jobs[3].array = &fill;
  jobs[2].space = MT_SPACE_GLOBAL_CG;
  const auto r = be.run(jobs);
  CHECK(r[0].sm == last);
  CHECK(r[1].sm == last);
  CHECK(r[2].sm == last);  // lane 5 of the same block, the same SM
  CHECK(r[3].sm >= 0);
  CHECK(r[3].sm != last);
  CHECK(r[3].index == expected_order(fill, 2, 0, 700));  // 700 > one buffer: flushes mid-job
  CHECK(r[2].index == expected_order(probe, 3, 0, 700));
  CHECK(r[0].index == expected_order(probe, 4, 0, 700));
  CHECK(r[1].latency.empty());
  for (size_t k : {0, 2, 3}) CHECK(*std::min_element(r[k].latency.begin(), r[k].latency.end()) > 0);
}

TEST_CASE("cuda: an untimed job of a sequence loads its lines", "[cuda][gpu]") {
  auto dev = open_gpu();
  const memtopo::Backend be(dev->backend());
  // 32 constant lines 256 B apart: the re-read misses the constant L1 and hits the L1.5 only
  // if the first job really loaded them. Timed and untimed fills must leave the same caches.
  const ChaseArray lines = ChaseArray::stride(8 << 10, 256);
  auto reread_after = [&](bool timed_fill) {
    std::vector<Job> jobs(2, chase(lines, 32, MT_SPACE_CONSTANT));
    for (size_t k = 0; k < 2; ++k) {
      jobs[k].order = uint32_t(k + 1);
      jobs[k].block = 0;
      jobs[k].sm = 0;
    }
    jobs[0].steps = 64;
    jobs[0].timed = timed_fill;
    return median(be.run(jobs)[1].latency);
  };
  const double after_timed = reread_after(true), after_untimed = reread_after(false);
  INFO("re-read after a timed fill " << after_timed << " cycles, after an untimed one " << after_untimed);
  CHECK(after_untimed <= 1.2 * after_timed);
}

TEST_CASE("cuda: the next job of a sequence in the same block finds the L1 lines of the last", "[cuda][gpu]") {
  auto dev = open_gpu();
  const memtopo::Backend be(dev->backend());
  // 16 KiB of .ca lines: a re-read in the second job costs what one within a job costs (an L1
  // hit), not an L2 hit, so handing one phase to the next keeps the SM's L1.
  const ChaseArray lines = ChaseArray::stride(16 << 10, 128);
  std::vector<Job> jobs(2, chase(lines, 128, MT_SPACE_GLOBAL_CA));
  for (size_t k = 0; k < 2; ++k) {
    jobs[k].order = uint32_t(k + 1);
    jobs[k].block = 0;
    jobs[k].sm = 0;
  }
  jobs[0].timed = false;
  const double reread = median(be.run(jobs)[1].latency);
  Job one = chase(lines, 128, MT_SPACE_GLOBAL_CA);
  one.sm = 0;
  one.warmup_steps = 256;
  const double within = median(be.run(one).latency);
  INFO("re-read in the next job " << reread << " cycles, within one job " << within);
  CHECK(reread <= 1.3 * within);
}

TEST_CASE("cuda: buffers for probe kernels come from the pool", "[cuda][gpu]") {
  auto dev = open_gpu();
  const memtopo::Backend be(dev->backend());
  void* p = be.alloc_buffer(3 << 20);
  REQUIRE(p != nullptr);
  CHECK(reinterpret_cast<uintptr_t>(p) % (2u << 20) == 0);  // 2 MiB aligned
  void* q = be.alloc_buffer(1);
  CHECK(q != p);
  be.free_buffer(p);
  be.free_buffer(q);
  be.free_buffer(nullptr);  // harmless
}

TEST_CASE("cuda: a full pool frees the buffers given back longest ago, not the newest", "[cuda]") {
  // No GPU needed: buffers that own no memory (cudaFree(nullptr) releases them).
  memtopo::cuda::DevicePool pool;
  const uint64_t gib = uint64_t(1) << 30;
  std::vector<uint32_t*> data;
  for (uintptr_t i = 1; i <= 5; ++i) {
    memtopo::cuda::DeviceBuffer b;
    b.data = reinterpret_cast<uint32_t*>(i << 32);
    b.capacity = 2 * gib;  // four fit the pool's 8 GiB
    data.push_back(b.data);
    pool.give_back(b);
  }
  CHECK_FALSE(pool.holds(data[0]));  // the oldest made room
  for (size_t i = 1; i < 5; ++i) CHECK(pool.holds(data[i]));
  CHECK(pool.cached_bytes() == 8 * gib);
  memtopo::cuda::DeviceBuffer huge;
  huge.data = reinterpret_cast<uint32_t*>(uintptr_t(9) << 32);
  huge.capacity = 9 * gib;  // larger than the whole cache: not kept, nothing else freed
  pool.give_back(huge);
  CHECK_FALSE(pool.holds(huge.data));
  CHECK(pool.cached_bytes() == 8 * gib);
}

TEST_CASE("cuda: timing overhead is positive and measured once", "[cuda][gpu]") {
  auto dev = open_gpu();
  const memtopo::Backend be(dev->backend());
  const double first = be.timing_overhead();
  CHECK(first > 0);
  CHECK(be.timing_overhead() == first);
}

TEST_CASE("cuda: bad requests get a message that names the job", "[cuda][gpu]") {
  auto dev = open_gpu();
  const memtopo::Backend be(dev->backend());
  const ChaseArray a = ChaseArray::stride(4096, 4);
  Job s = chase(a, 10);

  SECTION("start past the end") {
    s.start = 5000;
    CHECK_THROWS_WITH(be.run(s), Contains("run_jobs: job 0: start 5000"));
  }
  SECTION("an SM that does not exist") {
    s.sm = dev->info().sm_count;
    s.record = MT_RECORD_TOTAL;
    CHECK_THROWS_WITH(be.run(s), Contains("run_jobs: job 0: SM"));
  }
  SECTION("an explicit array pointing outside itself") {
    ChaseArray bad = random_cycle(64, 1);
    bad.next[17] = 64;
    s.array = &bad;
    CHECK_THROWS_WITH(be.run(s), Contains("job 0: element 17") && Contains("past its 64 elements"));
  }
  SECTION("a texture larger than the 1D linear texture limit") {
    const ChaseArray huge = ChaseArray::stride(uint64_t(4) << 30, 4096);  // 2^30 elements
    s.array = &huge;
    s.space = MT_SPACE_TEXTURE;
    CHECK_THROWS_WITH(be.run(s), Contains("cudaDevAttrMaxTexture1DLinearWidth"));
  }
  SECTION("constant arrays that do not fit together") {
    const ChaseArray c1 = ChaseArray::stride(40 << 10, 4), c2 = ChaseArray::stride(40 << 10, 8);
    Job s1 = chase(c1, 10, MT_SPACE_CONSTANT), s2 = chase(c2, 10, MT_SPACE_CONSTANT);
    CHECK_THROWS_WITH(be.run({s1, s2}), Contains("job 1") && Contains("constant buffer"));
  }
  SECTION("one array chased by index and by pointer in one call") {
    const ChaseArray even = ChaseArray::stride(4096, 8);
    Job p = chase(even, 10);
    p.pattern = MT_PATTERN_POINTERS;
    p.record = MT_RECORD_TOTAL;
    s.array = &even;
    CHECK_THROWS_WITH(be.run({s, p}), Contains("by index and by address"));
  }
  SECTION("two pins for one block of a sequence") {
    Job x = chase(a, 4), y = chase(a, 4);
    x.order = 1;
    y.order = 2;
    x.block = y.block = 0;
    x.sm = 1;
    y.sm = 2;
    CHECK_THROWS_WITH(be.run({x, y}), Contains("run_jobs: job 1") && Contains("share one SM"));
  }
  // The device still works after a refused request.
  CHECK(be.run(chase(a, 10)).index == expected_order(a, 0, 0, 10));
}

TEST_CASE("cuda: streams are chains of their own", "[cuda][gpu]") {
  auto dev = open_gpu();
  const memtopo::Backend be(dev->backend());
  const ChaseArray a = ChaseArray::stride(1 << 20, 128);
  Job r = l2_hits_counted_slow(a, 40000, 32768);
  const memtopo::JobResult one = be.run(r);
  r.rate.streams = 8;
  const memtopo::JobResult eight = be.run(r);
  CHECK(eight.slow == 32768);  // every timed load counted once
  REQUIRE(eight.span_cycles > 0);
  CHECK(eight.span_cycles * 4 < one.span_cycles);  // many more loads in flight
  r.rate.pump_warps = 1;
  r.rate.pump_lanes = 1;
  r.rate.pump_cycles = 100;
  CHECK_THROWS_WITH(be.run(r), Contains("a pump runs with one timed stream"));
}

TEST_CASE("cuda: a pointer chase follows a stride array past 2^32 elements", "[cuda][gpu]") {
  auto dev = open_gpu();
  const memtopo::Backend be(dev->backend());
  REQUIRE(be.has(MT_CAP_WIDE_STRIDE));
  // 18 GiB in 9 loads 2 GiB apart: past what 32-bit indices reach.
  const ChaseArray a = ChaseArray::stride(uint64_t(18) << 30, uint64_t(2) << 30);
  Job j = chase(a, 90, MT_SPACE_GLOBAL_CG);
  j.pattern = MT_PATTERN_POINTERS;
  j.record = MT_RECORD_TOTAL;
  j.warmup_steps = 9;
  const memtopo::JobResult r = be.run(j);
  CHECK(r.average_cycles > 50);
  CHECK(r.average_cycles < 5000);
  j.pattern = MT_PATTERN_CHASE;
  CHECK_THROWS_WITH(be.run(j), Contains("followed by pointer only"));
}
