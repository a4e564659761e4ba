// Semantics of the measurement job on the simulator: replacement policies, noise and seeds,
// counted and random loads, streams and pumps, SM assignment, buffers, sparse footprints,
// request errors.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstddef>
#include <ctime>
#include <map>
#include <string>

#include "engine/jobs.hpp"
#include "memtopo/measure.hpp"
#include "sim_helpers.hpp"

using namespace simtest;

namespace {

// An L1 of 20 cycles described by `l1d` (keys of its table); every miss goes to DRAM on a
// cold L2.
std::string device_with_l1(const std::string& l1d, const std::string& sim = "") {
  return "[device]\nsm_count = 4\nl2_bytes = 1048576\n[l1d]\n" + l1d +
         "latency_cycles = 20\n[l2]\nways = 16\nlatency_cycles = 200\n[dram]\nlatency_cycles = 400\n[sim]\n" + sim;
}

// 4 sets x 4 ways x 128 B.
std::string tiny_device(const std::string& policy, const std::string& sim = "") {
  return device_with_l1("size_bytes = 2048\nline_bytes = 128\nsets = 4\nways = 4\nreplacement_policy = \"" + policy + "\"\n",
                        sim);
}

// Element index of word `word` of line `line` (32 words of 4 B per 128 B line).
uint32_t el(uint32_t line, uint32_t word) { return line * 32 + word; }

// A chase visiting `order` (element indices), then back to the first.
std::vector<uint32_t> chain(const std::vector<uint32_t>& order, uint32_t elems) {
  std::vector<uint32_t> next(elems);
  for (uint32_t i = 0; i < elems; ++i) next[i] = i;
  for (size_t i = 0; i < order.size(); ++i) next[order[i]] = order[(i + 1) % order.size()];
  return next;
}

std::vector<bool> hits(const Chase& c, uint32_t hit) {
  std::vector<bool> h;
  for (uint32_t l : c.latency) h.push_back(l == hit);
  return h;
}

// A counted chase of `a` through L1: `steps` loads after `warmup`, slow above `threshold`.
memtopo::Job counted(const memtopo::ChaseArray& a, uint64_t warmup, uint64_t steps, uint32_t threshold, uint32_t keep) {
  memtopo::Job j;
  j.space = MT_SPACE_GLOBAL_CA;
  j.array = &a;
  j.warmup_steps = warmup;
  j.steps = steps;
  j.record = MT_RECORD_COUNTS;
  j.slow_cycles = threshold;
  j.keep_steps = keep;
  return j;
}

// Random loads to the 128 B lines of `a` through L1 (threshold 100 cycles, 4096 warm-up
// loads, seed 7), keeping `keep` slow steps.
memtopo::Job random_lines(const memtopo::ChaseArray& a, uint64_t steps, uint32_t keep) {
  memtopo::Job j = counted(a, 4096, steps, 100, keep);
  j.pattern = MT_PATTERN_RANDOM;
  j.random_stride_bytes = 128;
  j.seed = 7;
  return j;
}

}  // namespace

TEST_CASE("sim: LRU keeps a re-used line that FIFO evicts", "[sim][replacement]") {
  // A B C D fill set 0; A again; X evicts the victim; A once more (cache-probes.md pattern b)
  const std::vector<uint32_t> order{el(0, 0), el(4, 0), el(8, 0), el(12, 0), el(0, 1), el(16, 0), el(0, 2)};
  const auto next = chain(order, 640);
  auto lru = fine_explicit(*open_text("lru", tiny_device("lru")), MT_SPACE_GLOBAL_CA, next, 0, 0, 7);
  auto fifo = fine_explicit(*open_text("fifo", tiny_device("fifo")), MT_SPACE_GLOBAL_CA, next, 0, 0, 7);
  CHECK(lru.index == order);
  CHECK(hits(lru, 20) == std::vector<bool>{false, false, false, false, true, false, true});
  CHECK(hits(fifo, 20) == std::vector<bool>{false, false, false, false, true, false, false});
  CHECK(lru.latency[0] == 400);  // cold: DRAM
}

TEST_CASE("sim: W+1 lines of one set miss always under LRU and FIFO, not under random policies", "[sim][replacement]") {
  const std::vector<uint32_t> order{el(0, 0), el(4, 0), el(8, 0), el(12, 0), el(16, 0)};
  const auto next = chain(order, 640);
  std::map<std::string, size_t> hit_count;
  for (const char* policy : {"lru", "fifo", "random", "non_uniform"}) {
    auto c = fine_explicit(*open_text(policy, tiny_device(policy)), MT_SPACE_GLOBAL_CA, next, 0, 10, 500);
    hit_count[policy] = 500 - misses(c.latency, 20);
  }
  CHECK(hit_count["lru"] == 0);
  CHECK(hit_count["fifo"] == 0);
  CHECK(hit_count["random"] > 50);
  CHECK(hit_count["non_uniform"] > 50);
}

TEST_CASE("sim: non-uniform victims follow the way probabilities", "[sim][replacement]") {
  // Victim census: fill 4 ways in order, bring in X, probe A B C D; the first miss is the victim.
  auto d = open_text("census", tiny_device("non_uniform", "[sim.l1d]\nvictim_probabilities = [1, 3, 1, 1]\n"));
  const std::vector<uint32_t> order{el(0, 0), el(4, 0), el(8, 0), el(12, 0), el(16, 0),
                                    el(0, 1), el(4, 1), el(8, 1), el(12, 1)};
  const auto next = chain(order, 640);
  std::vector<int> victims(4, 0);
  for (int trial = 0; trial < 600; ++trial) {
    auto c = fine_explicit(*d, MT_SPACE_GLOBAL_CA, next, 0, 0, 9);
    for (int w = 0; w < 4; ++w)
      if (c.latency[size_t(5 + w)] != 20) {
        ++victims[size_t(w)];
        break;
      }
  }
  CHECK(victims[0] + victims[1] + victims[2] + victims[3] == 600);
  CHECK(victims[1] > 240);  // expected 300
  CHECK(victims[1] < 360);
  for (int w : {0, 2, 3}) {
    CHECK(victims[size_t(w)] > 60);  // expected 100
    CHECK(victims[size_t(w)] < 140);
  }
}

TEST_CASE("sim: noise is deterministic for a seed and absent when switched off", "[sim][noise]") {
  const std::string noisy = "noise_cycles = 8\noutlier_probability = 0.01\noutlier_cycles = 1000\n";
  auto a = fine(*open_text("n1", tiny_device("lru", "seed = 7\n" + noisy)), MT_SPACE_GLOBAL_CA, 1024, 128, 8, 4000);
  auto b = fine(*open_text("n2", tiny_device("lru", "seed = 7\n" + noisy)), MT_SPACE_GLOBAL_CA, 1024, 128, 8, 4000);
  auto c = fine(*open_text("n3", tiny_device("lru", "seed = 8\n" + noisy)), MT_SPACE_GLOBAL_CA, 1024, 128, 8, 4000);
  auto quiet = fine(*open_text("n4", tiny_device("lru", "seed = 7\n")), MT_SPACE_GLOBAL_CA, 1024, 128, 8, 4000);
  CHECK(a.latency == b.latency);
  CHECK(a.latency != c.latency);
  CHECK(misses(quiet.latency, 20) == 0);
  CHECK(quiet.latency.front() == 20);
  size_t outliers = 0, spread = 0;
  for (uint32_t l : a.latency) {
    REQUIRE(l >= 20);
    if (l >= 1020) ++outliers;
    else REQUIRE(l <= 28);
    spread |= size_t(1) << (l - 20 < 9 ? l - 20 : 0);
  }
  CHECK(outliers > 10);   // about 40
  CHECK(outliers < 100);
  CHECK(spread == 0x1ff);  // every value 0..8 occurs
  // geometric noise: mean close to noise_cycles
  auto g = fine(*open_text("n5", tiny_device("lru", "noise_cycles = 10\nnoise_distribution = \"geometric\"\n")),
                MT_SPACE_GLOBAL_CA, 1024, 128, 8, 20000);
  CHECK(g.average - 20 == Approx(10).margin(1.0));
}

TEST_CASE("sim: counted loads are the recorded chase's slow loads, at the same steps", "[sim][count]") {
  // Same seed, same chase: the noisy latencies of both calls are identical, so the counts must be.
  const std::string noisy = "seed = 3\nnoise_cycles = 4\noutlier_probability = 0.01\noutlier_cycles = 1000\n";
  auto fd = open_text("c1", tiny_device("lru", noisy));
  auto cd = open_text("c2", tiny_device("lru", noisy));
  // 3 KiB at 32 B stride past a 2 KiB L1: capacity misses plus outliers.
  const Chase f = fine(*fd, MT_SPACE_GLOBAL_CA, 3072, 32, 96, 960);
  const uint32_t threshold = 40;
  const std::vector<size_t> want = miss_positions(f.latency, threshold);
  REQUIRE(want.size() > 20);
  const memtopo::Backend be(cd->backend());
  const memtopo::ChaseArray a = memtopo::ChaseArray::stride(3072, 32);
  const memtopo::JobResult r = be.run(counted(a, 96, 960, threshold, 10));
  CHECK(r.slow == want.size());
  REQUIRE(r.slow_steps.size() == 10);  // only as many steps as asked for are kept
  for (size_t i = 0; i < 10; ++i) CHECK(r.slow_steps[i] == want[i]);
  uint64_t cycles = 0;
  for (uint32_t l : f.latency) cycles += l;
  CHECK(r.cycles == cycles);
  CHECK(r.sm == 0);
}

TEST_CASE("sim: random loads hit in proportion to the lines the cache holds, under any policy", "[sim][count]") {
  // 64 lines over a 16-line L1 (4 sets x 4 ways): every set full, so a load to a random line
  // hits with probability 16/64 under LRU and random replacement alike, where a cyclic
  // chase over the same lines never hits under LRU.
  for (const std::string policy : {"lru", "random"}) {
    INFO(policy);
    auto d = open_text("rnd-" + policy, tiny_device(policy));
    const memtopo::Backend be(d->backend());
    REQUIRE(be.has(MT_CAP_RANDOM | MT_CAP_COUNTS));
    const memtopo::ChaseArray a = memtopo::ChaseArray::stride(64 * 128, 128);
    const memtopo::Job r = random_lines(a, 200000, 0);
    const memtopo::JobResult got = be.run(r);
    const double hit = 1.0 - double(got.slow) / 200000.0;
    CHECK(hit == Approx(0.25).margin(0.005));  // 5 standard errors
    memtopo::Job cyclic = r;
    cyclic.pattern = MT_PATTERN_CHASE;
    const memtopo::JobResult cyc = be.run(cyclic);
    if (policy == "lru") CHECK(cyc.slow == 200000);
    // Same seed, same draws: under LRU (no random victims) the count repeats exactly.
    if (policy == "lru") CHECK(be.run(r).slow == got.slow);
  }
}

TEST_CASE("sim: random-load streams share the loads and the time", "[sim][count]") {
  // Same 64 lines over the 16-line L1: 8 streams make as many timed loads as one, hit as
  // often, and take an eighth of the span; a gap lengthens each stream's loads.
  auto d = open_text("rnd-streams", tiny_device("lru"));
  const memtopo::Backend be(d->backend());
  REQUIRE(be.has(MT_CAP_STREAMS));
  CHECK(be.streams_max() == 32);
  const memtopo::ChaseArray a = memtopo::ChaseArray::stride(64 * 128, 128);
  memtopo::Job r = random_lines(a, 200003, 16);  // not a multiple of the streams
  const memtopo::JobResult one = be.run(r);
  r.rate.streams = 8;
  const memtopo::JobResult eight = be.run(r);
  CHECK(1.0 - double(eight.slow) / 200003.0 == Approx(0.25).margin(0.005));
  CHECK(one.span_cycles > 0);
  CHECK(double(eight.span_cycles) == Approx(double(one.span_cycles) / 8).epsilon(0.02));
  CHECK(eight.slow_steps.size() == 16);  // stream 0's, in its own step numbers
  CHECK(eight.slow_steps.back() < 200003 / 8 + 1);
  r.rate.streams = 1;
  r.rate.gap_cycles = 1000;
  const memtopo::JobResult slow = be.run(r);
  CHECK(double(slow.span_cycles) == Approx(double(one.span_cycles) + 1000.0 * 200003).epsilon(0.01));
  r.rate.streams = 33;
  CHECK_THROWS_WITH(be.run(r), Catch::Contains("33 streams"));
}

TEST_CASE("sim: staggered chase streams load a cycle as one chase does", "[sim][count]") {
  // The 16-line L1 (4 sets x 4 ways, LRU). 20 lines 128 B apart overflow every set: one
  // chase misses at every load, and so do 4 streams spread along the cycle (each line comes
  // back a whole cycle later), whereas 4 streams from one start walk in step and the 3 behind
  // the first hit the line it brought. 12 lines fit either way.
  auto d = open_text("chase-streams", tiny_device("lru"));
  const memtopo::Backend be(d->backend());
  const memtopo::ChaseArray over = memtopo::ChaseArray::stride(20 * 128, 128);
  memtopo::Job j = counted(over, 20, 80, 100, 16);
  CHECK(be.run(j).slow == 80);
  j.rate.streams = 4;
  j.stagger_streams = true;
  CHECK(be.run(j).slow == 80);
  j.stagger_streams = false;
  CHECK(be.run(j).slow <= 24);
  const memtopo::ChaseArray fits = memtopo::ChaseArray::stride(12 * 128, 128);
  memtopo::Job f = counted(fits, 12, 48, 100, 16);
  f.rate.streams = 4;
  f.stagger_streams = true;
  CHECK(be.run(f).slow == 0);
  // Stream k starts k * ceil(12 / 4) lines along the cycle.
  mt_chase_array c = fits.c();
  mt_job cj{};
  cj.array = &c;
  cj.rate.streams = 4;
  cj.stagger_streams = 1;
  cj.start = 32;  // line 1
  CHECK(memtopo::engine::stream_start(cj, 0) == 32);
  CHECK(memtopo::engine::stream_start(cj, 1) == 4 * 32);
  CHECK(memtopo::engine::stream_start(cj, 3) == 10 * 32);
  // Random loads and explicit arrays are refused, with the reason.
  memtopo::Job r = random_lines(over, 1000, 0);
  r.rate.streams = 4;
  r.stagger_streams = true;
  CHECK_THROWS_WITH(be.run(r), Catch::Contains("staggered streams"));
}

TEST_CASE("sim: a pump loads between windows of timed loads, which it leaves alone", "[sim][count]") {
  // The 64 lines over the 16-line L1 again. A pump of 32 lanes loads for 2000 cycles before
  // every 10 timed loads: the timed loads hit as often as without it, the span holds the
  // pump's windows, and the pump's loads are counted from the first window after timing began.
  auto d = open_text("rnd-pump", tiny_device("lru"));
  const memtopo::Backend be(d->backend());
  REQUIRE(be.has(MT_CAP_PUMP));
  CHECK(be.pump_warps_max() == 1);
  const memtopo::ChaseArray a = memtopo::ChaseArray::stride(64 * 128, 128);
  memtopo::Job r = random_lines(a, 100000, 0);
  const memtopo::JobResult plain = be.run(r);
  CHECK(plain.pump_loads == 0);
  r.rate.pump_warps = 1;
  r.rate.pump_lanes = 32;
  r.rate.pump_cycles = 2000;
  r.rate.probe_loads = 10;
  const memtopo::JobResult pumped = be.run(r);
  CHECK(1.0 - double(pumped.slow) / 100000.0 == Approx(0.25).margin(0.007));
  // Windows begun after the first timed load: 9999 of them, each of 2000 cycles or a little
  // more (the last load ends past it).
  const double windows = 100000 / 10 - 1;
  CHECK(double(pumped.span_cycles) > double(plain.span_cycles) + windows * 2000);
  CHECK(double(pumped.span_cycles) < double(plain.span_cycles) + windows * 2200 + 4000);
  // Each lane loads all window long: 32 lanes x 2000 cycles over the mean load's cycles.
  const double per_window = 32.0 * 2000.0 / (double(plain.span_cycles) / 100000.0);
  CHECK(double(pumped.pump_loads) == Approx(windows * per_window).epsilon(0.1));
  r.rate.pump_warps = 2;
  CHECK_THROWS_WITH(be.run(r), Catch::Contains("at most 1"));
  r.rate.pump_warps = 1;
  r.rate.streams = 2;
  CHECK_THROWS_WITH(be.run(r), Catch::Contains("one timed stream"));
}

TEST_CASE("jobs are refused for what a backend's capabilities leave out", "[sim][count]") {
  const memtopo::ChaseArray a = memtopo::ChaseArray::stride(64 * 128, 128);
  const mt_chase_array c = a.c();
  memtopo::engine::JobCall call;
  mt_job j{};
  j.struct_size = sizeof j;
  j.block = -1;
  j.space = MT_SPACE_GLOBAL_CA;
  j.pattern = MT_PATTERN_RANDOM;
  j.record = MT_RECORD_COUNTS;
  j.array = &c;
  j.random_stride_elems = 32;
  j.steps = 1000;
  j.rate.pump_warps = 1;
  j.rate.pump_lanes = 32;
  j.rate.pump_cycles = 100;
  call.jobs = {j};
  mt_device_info dev{};
  dev.sm_count = 4;
  memtopo::engine::BackendLimits no_pump{MT_CAP_COUNTS | MT_CAP_RANDOM | MT_CAP_STREAMS, 32, 0};
  CHECK_THAT(memtopo::engine::check_jobs(call, dev, no_pump), Catch::Contains("MT_CAP_PUMP"));
  call.jobs[0].rate = mt_rate{};
  CHECK(memtopo::engine::check_jobs(call, dev, no_pump).empty());
  memtopo::engine::BackendLimits no_random{MT_CAP_COUNTS, 1, 0};
  CHECK_THAT(memtopo::engine::check_jobs(call, dev, no_random), Catch::Contains("MT_CAP_RANDOM"));
  // A C++ caller reads the same from the table.
  auto d = open_text("caps", tiny_device("lru"));
  mt_backend table = *d->backend();
  table.capabilities &= ~MT_CAP_PUMP;
  const memtopo::Backend be(&table);
  CHECK_FALSE(be.has(MT_CAP_PUMP));
  CHECK(be.pump_warps_max() == 0);
  CHECK(be.has(MT_CAP_STREAMS));
}

TEST_CASE("sim: a stray line takes one way of one set of an SM's L1 for a call", "[sim]") {
  // 16 lines chased cyclically fill the 4 x 4 L1 exactly: no misses after the warm-up. With
  // stray_line_probability = 1 every SM's L1 has a way less in one set, so that set's 4
  // lines miss on every pass under LRU; with 0.5 some of the four SMs miss and some do not.
  const memtopo::ChaseArray a = memtopo::ChaseArray::stride(16 * 128, 128);
  auto slow_per_sm = [&](const std::string& sim) {
    auto d = open_text("stray", tiny_device("lru", sim));
    const memtopo::Backend be(d->backend());
    const std::vector<memtopo::Job> jobs(4, counted(a, 32, 160, 100, 0));
    std::vector<uint64_t> slow;
    for (const auto& r : be.run(jobs)) slow.push_back(r.slow);
    return slow;
  };
  for (uint64_t n : slow_per_sm("")) CHECK(n == 0);
  for (uint64_t n : slow_per_sm("stray_line_probability = 1.0\n")) CHECK(n == 40);  // 4 of 16 lines, 10 passes
  const auto half = slow_per_sm("stray_line_probability = 0.5\nseed = 3\n");
  const size_t missing = size_t(std::count(half.begin(), half.end(), uint64_t(40)));
  CHECK(missing + size_t(std::count(half.begin(), half.end(), uint64_t(0))) == 4);
  CHECK(missing >= 1);
  CHECK(missing <= 3);
}

TEST_CASE("sim: jobs get the pinned or the lowest free SM and share the L2 through one buffer", "[sim]") {
  auto d = open_text("jobs", tiny_device("lru", "timing_overhead_cycles = 5\n"));
  mt_chase_array a{sizeof(mt_chase_array), MT_ARRAY_STRIDE, nullptr, 1024, 32};
  mt_chase_array a_copy = a;
  std::vector<uint32_t> l0(8), l1(8), l2(8);
  auto job = [](const mt_chase_array* arr, int32_t sm, uint32_t* lat) {
    mt_job j{};
    j.struct_size = sizeof j;
    j.block = -1;
    j.space = MT_SPACE_GLOBAL_CG;
    j.array = arr;
    j.steps = 8;
    j.sm = sm;
    j.shared_carveout_percent = -1;
    j.out_latency = lat;
    return j;
  };
  mt_job jobs[] = {job(&a, -1, l0.data()), job(&a, 0, l1.data()), job(&a_copy, -1, l2.data())};
  mt_job* ptrs[] = {&jobs[0], &jobs[1], &jobs[2]};
  char err[256] = "";
  const mt_backend* b = d->backend();
  REQUIRE(b->run_jobs(b->self, ptrs, 3, err, sizeof err) == 0);
  CHECK(jobs[0].out.sm == 1);
  CHECK(jobs[1].out.sm == 0);
  CHECK(jobs[2].out.sm == 2);
  // interleaved: job 0 misses first, job 1 (same array) then hits in the L2; job 2's array
  // is another buffer and misses
  CHECK(l0 == std::vector<uint32_t>(8, 405));
  CHECK(l1 == std::vector<uint32_t>(8, 205));
  CHECK(l2 == std::vector<uint32_t>(8, 405));
  double overhead = 0;
  REQUIRE(b->timing_overhead(b->self, &overhead, err, sizeof err) == 0);
  CHECK(overhead == 5);
}

TEST_CASE("sim: each call starts cold, warm-up loads are not recorded", "[sim]") {
  auto d = open_text("cold", tiny_device("lru"));
  auto first = fine(*d, MT_SPACE_GLOBAL_CA, 1024, 128, 0, 16);
  auto again = fine(*d, MT_SPACE_GLOBAL_CA, 1024, 128, 0, 16);
  CHECK(first.latency == again.latency);
  CHECK(misses(first.latency, 20) == 8);  // one cold pass of 8 lines, then hits
  CHECK(first.index[8] == 0);
  auto warm = fine(*d, MT_SPACE_GLOBAL_CA, 1024, 128, 8, 16);
  CHECK(misses(warm.latency, 20) == 0);
}

TEST_CASE("sim: a sparse multi-GiB stride footprint costs no memory", "[sim]") {
  auto d = open_device("hopper-like.toml");
  auto c = fine(*d, MT_SPACE_GLOBAL_CG, uint64_t(1) << 34, 2 << 20, 8192, 1000);  // 16 GiB, 2 MiB stride
  CHECK(c.index[1] - c.index[0] == (1u << 19));
  // 8192 pages: past both TLB reaches, every load pays both TLB penalties (25 + 350)
  CHECK(misses(c.latency, 262 + 375 + 6 - 1) == 1000);
}

TEST_CASE("sim: bad requests are refused with the reason", "[sim]") {
  auto d = open_text("bad", tiny_device("lru"));
  const mt_backend* b = d->backend();
  mt_chase_array a{sizeof(mt_chase_array), MT_ARRAY_STRIDE, nullptr, 1024, 32};
  mt_job base{};
  base.struct_size = sizeof base;
  base.block = -1;
  base.space = MT_SPACE_GLOBAL_CA;
  base.array = &a;
  base.steps = 8;
  base.sm = -1;
  base.shared_carveout_percent = -1;
  char err[256] = "";
  // Runs `jobs` and returns the error message (empty when they ran).
  auto refused = [&](std::vector<mt_job> jobs) {
    std::vector<mt_job*> ptrs;
    for (mt_job& j : jobs) ptrs.push_back(&j);
    err[0] = 0;
    return b->run_jobs(b->self, ptrs.data(), ptrs.size(), err, sizeof err) != 0 ? std::string(err) : std::string();
  };
  mt_job j = base;
  j.sm = 9;
  j.record = MT_RECORD_TOTAL;
  CHECK_THAT(refused({j}), Catch::Contains("SM 9"));
  CHECK_THAT(refused({base}), Catch::Contains("out_latency"));  // samples with nowhere to go
  j = base;
  j.struct_size = 16;
  CHECK_THAT(refused({j}), Catch::Contains("struct_size 16; an mt_job has"));
  // a sequence whose jobs pin one block to two SMs, or that mixes orders with order 0
  mt_job x = base, y = base;
  x.order = 1;
  y.order = 2;
  x.block = y.block = 0;
  x.sm = 1;
  y.sm = 2;
  CHECK_THAT(refused({x, y}), Catch::Contains("block 0"));
  y.sm = -1;
  y.order = 0;
  CHECK_THAT(refused({x, y}), Catch::Contains("a call is all order 0 or a sequence"));
  // counted loads that ask to keep slow steps but give no buffer
  mt_job c = base;
  c.record = MT_RECORD_COUNTS;
  c.slow_capacity = 4;
  CHECK_THAT(refused({c}), Catch::Contains("out_slow_step"));
  // random loads through the constant path, with no stride, recorded instead of counted
  c.slow_capacity = 0;
  c.pattern = MT_PATTERN_RANDOM;
  c.space = MT_SPACE_CONSTANT;
  c.random_stride_elems = 32;
  CHECK_THAT(refused({c}), Catch::Contains("global path"));
  c.space = MT_SPACE_GLOBAL_CG;
  c.random_stride_elems = 0;
  CHECK_THAT(refused({c}), Catch::Contains("random_stride_elems is 0"));
  c.random_stride_elems = 32;
  mt_job rec = c;
  rec.record = MT_RECORD_TOTAL;
  CHECK_THAT(refused({rec}), Catch::Contains("MT_RECORD_COUNTS"));
  // more streams than the backend runs, or than the job has loads; a gap on a chase
  c.steps = 100;
  c.rate.streams = 64;
  CHECK_THAT(refused({c}), Catch::Contains("at most 32"));
  c.rate.streams = 8;
  c.steps = 5;
  CHECK_THAT(refused({c}), Catch::Contains("fewer timed loads"));
  c.steps = 100;
  mt_job gap = base;
  gap.record = MT_RECORD_COUNTS;
  gap.rate.gap_cycles = 10;
  CHECK_THAT(refused({gap}), Catch::Contains("pace counted random loads"));
  // a pump with too many warps or lanes, one that never runs, one beside several streams
  c.rate = mt_rate{0, 0, 2, 32, 100, 0};
  CHECK_THAT(refused({c}), Catch::Contains("2 pump warps; at most 1"));
  c.rate = mt_rate{0, 0, 1, 33, 100, 0};
  CHECK_THAT(refused({c}), Catch::Contains("33 pump lanes; 1 to 32"));
  c.rate = mt_rate{0, 0, 1, 32, 0, 0};
  CHECK_THAT(refused({c}), Catch::Contains("pump_cycles 0"));
  c.rate = mt_rate{2, 0, 1, 32, 100, 0};
  CHECK_THAT(refused({c}), Catch::Contains("one timed stream"));
  // a pointer chase recorded per load, or over odd elements of a global path
  mt_job p = base;
  p.pattern = MT_PATTERN_POINTERS;
  CHECK_THAT(refused({p}), Catch::Contains("MT_RECORD_TOTAL"));
  p.record = MT_RECORD_TOTAL;
  CHECK(refused({p}).empty());  // stride 32 elements from 0: every element even
  p.start = 1;
  CHECK_THAT(refused({p}), Catch::Contains("even"));
}

TEST_CASE("sim: loads per second (informational)", "[.][sim][perf]") {
  struct Case {
    const char* device;
    mt_space space;
    uint64_t footprint, stride;
  };
  // past the first-level cache: every load walks the SM cache, the TLB and the L2
  for (Case k : {Case{"hopper-like.toml", MT_SPACE_GLOBAL_CA, 300 << 10, 32}, Case{"hopper-like.toml", MT_SPACE_GLOBAL_CA, 128 << 10, 4},
                 Case{"kepler-like.toml", MT_SPACE_TEXTURE, 16 << 10, 32}, Case{"pascal-like.toml", MT_SPACE_GLOBAL_CA, 32 << 10, 128},
                 Case{"hopper-like.toml", MT_SPACE_GLOBAL_CG, 64 << 20, 128}}) {
    auto d = open_device(k.device);
    const uint64_t pass = k.footprint / k.stride;
    const std::clock_t t0 = std::clock();  // CPU time: other processes on the machine do not count
    uint64_t loads = 0;
    for (int i = 0; i < 20; ++i) {
      fine(*d, k.space, k.footprint, k.stride, pass, 20000);
      loads += 2 * (pass + 20000);  // fine + average
    }
    const double s = double(std::clock() - t0) / CLOCKS_PER_SEC;
    WARN(k.device << " space " << int(k.space) << " footprint " << k.footprint << " stride " << k.stride << ": "
                  << loads / s << " simulated loads per second");
  }
}

// A "mixed" index (sets no power of two, as an H100 L1's 482) fills every set evenly from the
// start of a buffer, so a cyclic sweep of ways x sets lines hits on its second pass; the
// carveout may leave fewer lines than sets, and then holds that many.
TEST_CASE("sim: a mixed index holds ways x sets lines from a buffer's start, the carveout fewer", "[sim]") {
  const std::string device = device_with_l1(
      "size_bytes = 246784\nline_bytes = 128\nsets = 482\nways = 4\nset_mapping = \"mixed\"\n",
      "shared_sizes_bytes = [8192, 233472]\ncarveout_l1d_size_bytes = [246784, 21504]\ncarveout_percents = [0, 72]\n");
  auto d = open_text("mixed", device);
  const uint64_t lines = 482 * 4;
  CHECK(misses(fine(*d, MT_SPACE_GLOBAL_CA, lines * 128, 128, lines, lines, -1, 0).latency, 20) == 0);
  CHECK(misses(fine(*d, MT_SPACE_GLOBAL_CA, (lines + 8) * 128, 128, lines + 8, lines + 8, -1, 0).latency, 20) > 0);
  // 72 %: 168 lines of 128 B, the 482 sets folded onto 168 of one way: a sweep of 168 lines
  // mostly hits (a run's rotation may fold a few onto one set), one of twice as many misses.
  CHECK(misses(fine(*d, MT_SPACE_GLOBAL_CA, 168 * 128, 128, 168, 168, -1, 100).latency, 20) <= 168 / 4);
  CHECK(misses(fine(*d, MT_SPACE_GLOBAL_CA, 336 * 128, 128, 336, 336, -1, 100).latency, 20) > 336 / 2);
}
