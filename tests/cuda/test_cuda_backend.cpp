// CUDA backend: chase order, pinned SMs, recording passes, every memory path, sequences,
// and the messages of bad requests. [gpu] tests skip visibly when no GPU is present.
#include <catch2/catch.hpp>

#include <algorithm>
#include <memory>
#include <numeric>
#include <random>
#include <set>
#include <vector>

#include "memtopo/engine.hpp"
#include "memtopo/probe.hpp"

using memtopo::ChaseArray;
using memtopo::ChaseSpec;
using Catch::Matchers::Contains;

namespace {

std::unique_ptr<memtopo::engine::Device> open_gpu() {
  if (memtopo::engine::cuda_device_count() == 0) return nullptr;
  return memtopo::engine::open_cuda(0);
}

#define REQUIRE_GPU(dev)                 \
  auto dev = open_gpu();                 \
  if (!dev) {                            \
    WARN("no CUDA device; skipping");    \
    return;                              \
  }

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
// Random loads to 128 B lines of `a` through L2 only, on SM 0, with threshold 0: every timed
// load counts as slow, and 16 of their steps are kept.
memtopo::RandomCountSpec l2_hits_counted_slow(const ChaseArray& a, uint64_t warmup, uint64_t steps) {
  ChaseSpec chase;
  chase.space = MT_SPACE_GLOBAL_CG;
  chase.array = &a;
  chase.warmup_steps = warmup;
  chase.steps = steps;
  chase.sm = 0;
  return memtopo::RandomCountSpec{memtopo::CountSpec{chase, 0, 0, 16}, 128, 3};
}

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

TEST_CASE("cuda: fine_chase records the chase order and positive latencies", "[cuda][gpu]") {
  REQUIRE_GPU(dev);
  const memtopo::Backend be(dev->backend());
  const ChaseArray a = random_cycle(4096, 7);
  ChaseSpec s;
  s.array = &a;
  s.start = 5;
  s.warmup_steps = 100;
  s.steps = 1300;  // three recording passes
  const memtopo::ChaseSamples r = be.fine_chase(s);
  CHECK(r.index == expected_order(a, 5, 100, 1300));
  CHECK(std::all_of(r.latency.begin(), r.latency.end(), [](uint32_t c) { return c > 0; }));
  CHECK(r.sm >= 0);
  CHECK(r.sm < dev->info().sm_count);
}

TEST_CASE("cuda: every memory path follows the chase", "[cuda][gpu]") {
  REQUIRE_GPU(dev);
  const memtopo::Backend be(dev->backend());
  const ChaseArray explicit_array = random_cycle(2048, 11);
  const ChaseArray stride_array = ChaseArray::stride(8 << 10, 128);
  for (mt_space space : {MT_SPACE_GLOBAL_CA, MT_SPACE_GLOBAL_CG, MT_SPACE_READONLY, MT_SPACE_TEXTURE,
                         MT_SPACE_CONSTANT, MT_SPACE_SHARED}) {
    for (const ChaseArray* a : {&explicit_array, &stride_array}) {
      INFO("space " << int(space) << (a == &stride_array ? ", stride array" : ", explicit array"));
      ChaseSpec s;
      s.space = space;
      s.array = a;
      s.start = 3;
      s.warmup_steps = 64;
      s.steps = 600;
      const memtopo::ChaseSamples r = be.fine_chase(s);
      CHECK(r.index == expected_order(*a, 3, 64, 600));
      CHECK(*std::min_element(r.latency.begin(), r.latency.end()) > 0);
      CHECK(be.average_chase(s) > 0);
    }
  }
}

TEST_CASE("cuda: count_chase counts slow loads where fine_chase sees them", "[cuda][gpu]") {
  REQUIRE_GPU(dev);
  const memtopo::Backend be(dev->backend());
  // 64 MiB at 128 B stride through L2 only: every load goes past the L1, most past the L2 too.
  // A threshold of 0 cycles makes every load slow; an unreachable one, none.
  const ChaseArray big = ChaseArray::stride(64 << 20, 128);
  memtopo::CountSpec spec;
  spec.chase.space = MT_SPACE_GLOBAL_CG;
  spec.chase.array = &big;
  spec.chase.warmup_steps = 1000;
  spec.chase.steps = 3000;
  spec.slow_cycles = 0;
  memtopo::CountResult all = be.count_chase(spec);
  CHECK(all.slow == 3000);
  REQUIRE(all.slow_steps.size() == 1024);  // the device keeps 1024 steps
  for (uint32_t i = 0; i < 1024; ++i) CHECK(all.slow_steps[i] == i);
  CHECK(all.cycles > 3000);
  spec.slow_cycles = 4000000000u;
  const memtopo::CountResult none = be.count_chase(spec);
  CHECK(none.slow == 0);
  CHECK(none.slow_steps.empty());
  // A warm 16 KiB footprint through L1: the hit level sits far below the miss level, so a
  // threshold between them counts (almost) nothing; the average matches the fine chase's.
  const ChaseArray small = ChaseArray::stride(16 << 10, 32);
  ChaseSpec f;
  f.array = &small;
  f.warmup_steps = 1024;
  f.steps = 4096;
  const memtopo::ChaseSamples fr = be.fine_chase(f);
  std::vector<uint32_t> sorted = fr.latency;
  std::sort(sorted.begin(), sorted.end());
  spec.chase = f;
  spec.slow_cycles = sorted[sorted.size() / 2] * 3;
  const memtopo::CountResult warm = be.count_chase(spec);
  CHECK(warm.slow < 40);
  const double mean = double(warm.cycles) / 4096.0;
  CHECK(mean == Approx(double(sorted[sorted.size() / 2])).epsilon(0.2));
}

TEST_CASE("cuda: random-load streams share the loads and overlap in time", "[cuda][gpu]") {
  REQUIRE_GPU(dev);
  const memtopo::Backend be(dev->backend());
  REQUIRE(be.has_random_rate());
  CHECK(be.random_streams_max() == 32);
  // 1 MiB of 128 B lines through L2 only, warm: every load hits. Eight streams make the
  // timed loads one stream makes (threshold 0: each one counted slow) in much less time.
  const ChaseArray a = ChaseArray::stride(1 << 20, 128);
  memtopo::RandomCountSpec r = l2_hits_counted_slow(a, 40000, 100003);
  const memtopo::CountResult one = be.random_count({r})[0];
  CHECK(one.slow == 100003);
  CHECK(one.sm == 0);
  REQUIRE(one.span_cycles > 0);
  CHECK(double(one.span_cycles) >= double(one.cycles) * 0.9);  // the loads follow one another
  r.streams = 8;
  const memtopo::CountResult eight = be.random_count({r})[0];
  CHECK(eight.slow == 100003);
  CHECK(eight.slow_steps.size() == 16);  // stream 0's
  CHECK(eight.span_cycles * 3 < one.span_cycles);
  // Time per load at one stream is near the hit latency; a gap adds to it.
  r.streams = 1;
  r.gap_cycles = 2000;
  r.count.chase.steps = 20000;
  const memtopo::CountResult slow = be.random_count({r})[0];
  CHECK(double(slow.span_cycles) / 20000.0 > 2000.0);
  CHECK(double(slow.span_cycles) / 20000.0 < 2000.0 + 4.0 * double(one.span_cycles) / 100003.0);
  r.streams = 33;
  CHECK_THROWS_WITH(be.random_count({r}), Contains("33 streams"));
}

TEST_CASE("cuda: a pumped count times one stream between the pump's windows", "[cuda][gpu]") {
  REQUIRE_GPU(dev);
  const memtopo::Backend be(dev->backend());
  REQUIRE(be.has_pump());
  CHECK(be.pump_warps_max() == 31);
  // 1 MiB of 128 B lines through L2 only, warm: every load hits (threshold 0: each timed
  // load counted slow). 512 pump lanes load for 20000 cycles before every 32 timed loads.
  const ChaseArray a = ChaseArray::stride(1 << 20, 128);
  memtopo::RandomCountSpec r = l2_hits_counted_slow(a, 64, 3200);
  const memtopo::CountResult plain = be.random_count({r})[0];
  r.pump_warps = 16;
  r.pump_lanes = 32;
  r.pump_cycles = 20000;
  r.probe_loads = 32;
  const memtopo::CountResult pumped = be.random_count({r})[0];
  CHECK(pumped.slow == 3200);
  CHECK(pumped.slow_steps.size() == 16);
  CHECK(pumped.sm == 0);
  // Windows begun after the first timed load: at steps 96 .. 3232, 99 of them.
  CHECK(double(pumped.span_cycles) > 99.0 * 20000.0 + 0.5 * double(plain.span_cycles));
  CHECK(pumped.pump_loads >= 99u * 512u);  // every lane loads at least once a window
  // The timed loads do not queue behind the pump's: their mean is no slower than one
  // stream's alone (on the H100 it was faster: 297 against 359 cycles).
  CHECK(double(pumped.cycles) < 1.1 * double(plain.cycles));
  r.pump_warps = 32;
  CHECK_THROWS_WITH(be.random_count({r}), Contains("at most 31 pump warps"));
}

TEST_CASE("cuda: jobs with different kernel configurations in one call", "[cuda][gpu]") {
  REQUIRE_GPU(dev);
  const memtopo::Backend be(dev->backend());
  const ChaseArray a = ChaseArray::stride(64 << 10, 256);
  const ChaseArray big_shared = ChaseArray::stride(96 << 10, 132);  // past the 48 KiB default
  std::vector<ChaseSpec> specs(4);
  for (auto& s : specs) {
    s.array = &a;
    s.steps = 520;
  }
  specs[0].shared_carveout_percent = 0;
  specs[1].shared_carveout_percent = 100;
  specs[2].space = MT_SPACE_SHARED;
  specs[2].array = &big_shared;
  specs[3].space = MT_SPACE_CONSTANT;
  specs[3].array = &big_shared;  // refused: 96 KiB do not fit in constant memory
  CHECK_THROWS_WITH(be.fine_chase(specs), Contains("job 3") && Contains("constant memory"));
  specs.pop_back();
  const auto r = be.fine_chase(specs);
  for (size_t i = 0; i < r.size(); ++i) {
    INFO("job " << i);
    CHECK(r[i].index == expected_order(*specs[i].array, 0, 0, 520));
  }
}

TEST_CASE("cuda: a constant chase past constant memory reads its tail from the kernel parameters", "[cuda][gpu]") {
  REQUIRE_GPU(dev);
  const memtopo::Backend be(dev->backend());
  const int64_t mem = dev->info().constant_memory_bytes, reach = dev->info().constant_reach_bytes;
  if (reach <= mem) {
    WARN("no kernel-parameter bank on this device; skipping");
    return;
  }
  // A random cycle over the whole reach: consecutive loads cross between the banks at random.
  const ChaseArray wide = random_cycle(uint32_t(reach / 4), 11);
  ChaseSpec s;
  s.array = &wide;
  s.space = MT_SPACE_CONSTANT;
  s.warmup_steps = 3000;
  s.steps = 3000;
  const auto f = be.fine_chase(s);
  CHECK(f.index == expected_order(wide, 0, 3000, 3000));
  CHECK(*std::min_element(f.latency.begin(), f.latency.end()) > 0);
  // The counting chase times the same loads: its mean is the fine chase's typical load.
  std::vector<uint32_t> sorted = f.latency;
  std::sort(sorted.begin(), sorted.end());
  memtopo::CountSpec c;
  c.chase = s;
  c.slow_cycles = sorted[sorted.size() / 2];
  const auto counted = be.count_chase(std::vector<memtopo::CountSpec>{c})[0];
  CHECK(double(counted.cycles) / 3000.0 == Approx(double(sorted[sorted.size() / 2])).epsilon(0.2));
  CHECK(be.average_chase(s) > 0);
  // A sequence phase follows the same chase.
  const mt_chase_array wc = wide.c();
  const mt_actor actor{0, 0, -1};
  std::vector<uint32_t> index(700), latency(700);
  mt_phase ph{sizeof(mt_phase), 0, &wc, 5, 700, index.data(), latency.data()};
  mt_sequence_job job{sizeof(mt_sequence_job), MT_SPACE_CONSTANT, &actor, 1, &ph, 1, -1, nullptr};
  be.sequence_chase(job);
  CHECK(index == expected_order(wide, 5, 0, 700));
  // It must be the only constant array of its call, in either order.
  const ChaseArray small = ChaseArray::stride(1024, 4);
  ChaseSpec t = s;
  t.array = &small;
  CHECK_THROWS_WITH(be.fine_chase({s, t}), Contains("job 1") && Contains("the only array"));
  CHECK_THROWS_WITH(be.fine_chase({t, s}), Contains("job 1") && Contains("the only array"));
  // One element more than the reach is refused before anything runs.
  const ChaseArray too_long = ChaseArray::stride(uint64_t(reach) + 4, 4);
  s.array = &too_long;
  CHECK_THROWS_WITH(be.fine_chase(s), Contains("do not fit in constant memory"));
}

TEST_CASE("cuda: jobs run on the SMs they are pinned to, each on its own SM", "[cuda][gpu]") {
  REQUIRE_GPU(dev);
  const memtopo::Backend be(dev->backend());
  const int sms = dev->info().sm_count;
  const ChaseArray a = ChaseArray::stride(16 << 10, 64);
  std::vector<ChaseSpec> specs;
  const std::vector<int> pins = {sms - 1, 0, sms / 2};
  for (int pin : pins) {
    ChaseSpec s;
    s.array = &a;
    s.steps = 700;
    s.sm = pin;
    specs.push_back(s);
  }
  ChaseSpec any = specs[0];
  any.sm = -1;
  specs.insert(specs.end(), std::size_t(std::min(sms - 3, 8)), any);
  const auto r = be.fine_chase(specs);
  std::set<int> seen;
  for (size_t i = 0; i < r.size(); ++i) {
    if (i < pins.size()) CHECK(r[i].sm == pins[i]);
    CHECK(seen.insert(r[i].sm).second);
    CHECK(r[i].index == expected_order(a, 0, 0, 700));
  }
}

TEST_CASE("cuda: a sequence runs its phases in order on the actors' SMs", "[cuda][gpu]") {
  REQUIRE_GPU(dev);
  const memtopo::Backend be(dev->backend());
  const ChaseArray fill = ChaseArray::stride(32 << 10, 32);
  const ChaseArray probe = random_cycle(1024, 3);
  const mt_chase_array fill_c = fill.c(), probe_c = probe.c();
  const int last = dev->info().sm_count - 1;
  const mt_actor actors[3] = {{0, 0, last}, {0, 5, -1}, {7, 0, -1}};  // two lanes of block 0, block 7
  std::vector<uint32_t> index[3], latency[3];
  mt_phase phases[4];
  const uint32_t actor_of[4] = {0, 2, 1, 0};
  for (int p = 0; p < 4; ++p) {
    phases[p] = mt_phase{};
    phases[p].struct_size = sizeof(mt_phase);
    phases[p].actor = actor_of[p];
    phases[p].array = p == 1 ? &fill_c : &probe_c;
    phases[p].start = uint32_t(p);
    phases[p].steps = p == 0 ? 100 : 700;  // 700 > one shared-memory buffer: flushes mid-phase
    if (p > 0) {
      index[p - 1].resize(700);
      latency[p - 1].resize(700);
      phases[p].out_index = index[p - 1].data();
      phases[p].out_latency = latency[p - 1].data();
    }
  }
  int32_t actor_sm[3] = {-9, -9, -9};
  mt_sequence_job job{};
  job.struct_size = sizeof job;
  job.space = MT_SPACE_GLOBAL_CA;
  job.actors = actors;
  job.actor_count = 3;
  job.phases = phases;
  job.phase_count = 4;
  job.shared_carveout_percent = 0;
  job.out_actor_sm = actor_sm;
  be.sequence_chase(job);
  CHECK(actor_sm[0] == last);
  CHECK(actor_sm[1] == last);  // same block, same SM
  CHECK(actor_sm[2] >= 0);
  CHECK(actor_sm[2] != last);
  CHECK(index[0] == expected_order(fill, 1, 0, 700));
  CHECK(index[1] == expected_order(probe, 2, 0, 700));
  CHECK(index[2] == expected_order(probe, 3, 0, 700));
  for (const auto& l : latency) CHECK(*std::min_element(l.begin(), l.end()) > 0);
}

TEST_CASE("cuda: timing overhead is positive and measured once", "[cuda][gpu]") {
  REQUIRE_GPU(dev);
  const memtopo::Backend be(dev->backend());
  const double first = be.timing_overhead();
  CHECK(first > 0);
  CHECK(be.timing_overhead() == first);
}

TEST_CASE("cuda: bad requests get a message that names the primitive and the job", "[cuda][gpu]") {
  REQUIRE_GPU(dev);
  const memtopo::Backend be(dev->backend());
  const ChaseArray a = ChaseArray::stride(4096, 4);
  ChaseSpec s;
  s.array = &a;
  s.steps = 10;

  SECTION("start past the end") {
    s.start = 5000;
    CHECK_THROWS_WITH(be.fine_chase(s), Contains("fine_chase: job 0: start 5000"));
  }
  SECTION("an SM that does not exist") {
    s.sm = dev->info().sm_count;
    CHECK_THROWS_WITH(be.average_chase(s), Contains("average_chase: job 0: SM"));
  }
  SECTION("an explicit array pointing outside itself") {
    ChaseArray bad = random_cycle(64, 1);
    bad.next[17] = 64;
    s.array = &bad;
    CHECK_THROWS_WITH(be.fine_chase(s), Contains("job 0: element 17") && Contains("past its 64 elements"));
  }
  SECTION("a texture larger than the 1D linear texture limit") {
    const ChaseArray huge = ChaseArray::stride(uint64_t(4) << 30, 4096);  // 2^30 elements
    s.array = &huge;
    s.space = MT_SPACE_TEXTURE;
    CHECK_THROWS_WITH(be.fine_chase(s), Contains("cudaDevAttrMaxTexture1DLinearWidth"));
  }
  SECTION("constant arrays that do not fit together") {
    const ChaseArray c1 = ChaseArray::stride(40 << 10, 4), c2 = ChaseArray::stride(40 << 10, 8);
    ChaseSpec s1 = s, s2 = s;
    s1.array = &c1;
    s2.array = &c2;
    s1.space = s2.space = MT_SPACE_CONSTANT;
    CHECK_THROWS_WITH(be.fine_chase({s1, s2}), Contains("job 1") && Contains("constant buffer"));
  }
  SECTION("two pins for one block of a sequence") {
    const mt_chase_array c = a.c();
    const mt_actor actors[2] = {{0, 0, 1}, {0, 1, 2}};
    mt_phase ph{};
    ph.struct_size = sizeof ph;
    ph.array = &c;
    ph.steps = 4;
    mt_sequence_job job{};
    job.struct_size = sizeof job;
    job.actors = actors;
    job.actor_count = 2;
    job.phases = &ph;
    job.phase_count = 1;
    job.shared_carveout_percent = -1;
    CHECK_THROWS_WITH(be.sequence_chase(job), Contains("sequence_chase: actor 1") && Contains("share one SM"));
  }
  // The device still works after a refused request.
  ChaseSpec good;
  good.array = &a;
  good.steps = 10;
  CHECK(be.fine_chase(good).index == expected_order(a, 0, 0, 10));
}
