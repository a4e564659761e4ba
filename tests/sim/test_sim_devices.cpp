// The shipped devices (examples/devices/*.toml): the fine-grained chase shows the hit/miss
// pattern each description implies. Expected values are read from the files themselves.
#include <catch2/catch.hpp>

#include <set>

#include "memtopo/measure.hpp"
#include "sim_helpers.hpp"

using namespace simtest;

namespace {
const char* const kDevices[] = {"hopper-like.toml", "kepler-like.toml", "pascal-like.toml"};
}

TEST_CASE("sim: the built-in device is the Hopper-like file", "[sim]") {
  auto builtin = memtopo::engine::open_sim("");
  auto file = open_device("hopper-like.toml");
  CHECK(builtin->description() == "sim (built-in)");
  CHECK(std::string(builtin->info().name) == file->info().name);
  CHECK(std::string(builtin->info().backend) == "sim");
  CHECK(builtin->info().sm_count == 8);
  CHECK(builtin->info().cc_major == 9);
  CHECK(timing_overhead(*builtin) == 6);
  auto a = fine(*builtin, MT_SPACE_GLOBAL_CA, 1 << 20, 128, 8192, 4096);
  auto b = fine(*file, MT_SPACE_GLOBAL_CA, 1 << 20, 128, 8192, 4096);
  CHECK(a.latency == b.latency);
}

TEST_CASE("sim: a warm footprint below each cache hits at its latency plus the timing overhead", "[sim]") {
  const std::string name = GENERATE(kDevices[0], kDevices[1], kDevices[2]);
  INFO(name);
  auto d = open_device(name);
  const toml::table t = read_device_file(name);
  const uint32_t overhead = uint32_t(timing_overhead(*d));
  REQUIRE(overhead > 0);
  struct Path {
    mt_space space;
    const char* element;
  };
  for (Path p : {Path{MT_SPACE_GLOBAL_CA, "l1d"}, Path{MT_SPACE_TEXTURE, "texture"}, Path{MT_SPACE_READONLY, "readonly"},
                 Path{MT_SPACE_CONSTANT, "constant_l1"}}) {
    INFO(p.element);
    const uint64_t size = uint64_t(key(t, p.element, "size_bytes"));
    const uint64_t line = uint64_t(key(t, p.element, "line_bytes"));
    const uint32_t latency = uint32_t(key(t, p.element, "latency_cycles"));
    const uint64_t loads = size / 2 / line;
    auto c = fine(*d, p.space, size / 2, line, loads, 2 * loads);
    CHECK(misses(c.latency, latency + overhead) == 0);
    CHECK(c.latency.front() == latency + overhead);
    CHECK(c.average == Approx(latency));  // the plain P-chase carries no timing overhead
  }
  // Shared memory: the same latency from the first load on.
  auto s = fine(*d, MT_SPACE_SHARED, 4096, 4, 0, 64);
  CHECK(s.latency.front() == key(t, "shared", "latency_cycles") + overhead);
  CHECK(misses(s.latency, s.latency.front()) == 0);
}

TEST_CASE("sim: one line past the L1 capacity gives periodic misses under LRU", "[sim]") {
  const std::string name = GENERATE(kDevices[0], kDevices[1]);
  INFO(name);
  auto d = open_device(name);
  const toml::table t = read_device_file(name);
  const uint64_t size = uint64_t(key(t, "l1d", "size_bytes")), line = uint64_t(key(t, "l1d", "line_bytes"));
  const uint32_t hit = uint32_t(key(t, "l1d", "latency_cycles") + int64_t(timing_overhead(*d)));
  const uint64_t pass = size / line + 1;
  auto c = fine(*d, MT_SPACE_GLOBAL_CA, size + line, line, 2 * pass, 2 * pass, -1, 0);
  std::vector<uint32_t> first(c.latency.begin(), c.latency.begin() + long(pass)), second(c.latency.begin() + long(pass), c.latency.end());
  // every line of the overfull set misses, the same ones in every pass
  CHECK(misses(first, hit) == uint64_t(key(t, "l1d", "ways")) + 1);
  CHECK(miss_positions(first, hit) == miss_positions(second, hit));
}

TEST_CASE("sim: non-uniform replacement makes misses past the capacity aperiodic", "[sim]") {
  auto d = open_device("pascal-like.toml");
  const toml::table t = read_device_file("pascal-like.toml");
  const uint64_t size = uint64_t(key(t, "l1d", "size_bytes")), line = uint64_t(key(t, "l1d", "line_bytes"));
  const uint64_t ways = uint64_t(key(t, "l1d", "ways"));
  const uint32_t hit = uint32_t(key(t, "l1d", "latency_cycles") + int64_t(timing_overhead(*d)));
  const uint64_t pass = size / line + 1, passes = 16;
  auto c = fine(*d, MT_SPACE_GLOBAL_CA, size + line, line, 2 * pass, passes * pass);
  std::set<std::vector<size_t>> patterns;
  size_t total = 0;
  for (uint64_t p = 0; p < passes; ++p) {
    std::vector<uint32_t> one(c.latency.begin() + long(p * pass), c.latency.begin() + long((p + 1) * pass));
    patterns.insert(miss_positions(one, hit));
    total += misses(one, hit);
  }
  CHECK(patterns.size() > 1);               // LRU would repeat one pattern
  CHECK(total < passes * (ways + 1));       // and miss on every line of the set
  CHECK(total >= passes);                   // the set is overfull: at least one miss a pass
}

TEST_CASE("sim: stride 4 B past the capacity misses once per fetch unit", "[sim]") {
  struct Case {
    const char* device;
    mt_space space;
    const char* element;
  };
  const Case k = GENERATE(Case{"hopper-like.toml", MT_SPACE_GLOBAL_CA, "l1d"}, Case{"kepler-like.toml", MT_SPACE_GLOBAL_CA, "l1d"},
                          Case{"kepler-like.toml", MT_SPACE_TEXTURE, "texture"});
  INFO(k.device << " " << k.element);
  auto d = open_device(k.device);
  const toml::table t = read_device_file(k.device);
  const uint64_t size = uint64_t(key(t, k.element, "size_bytes"));
  const uint64_t fetch = uint64_t(key(t, k.element, "fetch_granularity_bytes"));
  const uint32_t hit = uint32_t(key(t, k.element, "latency_cycles") + int64_t(timing_overhead(*d)));
  auto c = fine(*d, k.space, 2 * size, 4, 2 * size / 4, 4096, -1, 0);
  auto pos = miss_positions(c.latency, hit);
  REQUIRE(pos.size() == 4096 * 4 / fetch);
  for (size_t i = 1; i < pos.size(); ++i) CHECK(pos[i] - pos[i - 1] == fetch / 4);
  // one load per fetch unit: every load misses
  auto s = fine(*d, k.space, 2 * size, fetch, 2 * size / fetch, 1024, -1, 0);
  CHECK(misses(s.latency, hit) == 1024);
}

TEST_CASE("sim: the shared-memory carveout shrinks a unified L1", "[sim]") {
  auto d = open_device("hopper-like.toml");
  const uint32_t hit = 33 + 6;
  // 64 KiB fits the full 256 KiB L1, not the 16 KiB left at the largest carveout
  CHECK(misses(fine(*d, MT_SPACE_GLOBAL_CA, 65536, 128, 1024, 512, -1, 0).latency, hit) == 0);
  CHECK(misses(fine(*d, MT_SPACE_GLOBAL_CA, 65536, 128, 1024, 512, -1, 100).latency, hit) == 512);
  CHECK(misses(fine(*d, MT_SPACE_GLOBAL_CA, 16384, 128, 128, 512, -1, 100).latency, hit) == 0);
  // 1 % asks for 2.3 KiB and gets the next listed size, 8 KiB: 248 KiB of L1 are left, as
  // 1984 lines over 128 sets (the first 64 sets keep 16 ways, the others 15)
  CHECK(misses(fine(*d, MT_SPACE_GLOBAL_CA, 248 << 10, 128, 1984, 1984, -1, 1).latency, hit) == 0);
  CHECK(misses(fine(*d, MT_SPACE_GLOBAL_CA, 249 << 10, 128, 1992, 1992, -1, 1).latency, hit) > 0);
  // Kepler-like: 64 KiB split 48/16 .. 16/48
  auto k = open_device("kepler-like.toml");
  const uint32_t khit = 64 + 16;
  CHECK(misses(fine(*k, MT_SPACE_GLOBAL_CA, 32768, 128, 256, 256, -1, 0).latency, khit) == 0);
  CHECK(misses(fine(*k, MT_SPACE_GLOBAL_CA, 32768, 128, 256, 256, -1, 100).latency, khit) > 0);
  CHECK(misses(fine(*k, MT_SPACE_GLOBAL_CA, 16384, 128, 256, 256, -1, 100).latency, khit) == 0);
}

TEST_CASE("sim: constant L1 then the per-GPC constant L1.5", "[sim]") {
  const std::string name = GENERATE(kDevices[0], kDevices[1], kDevices[2]);
  INFO(name);
  auto d = open_device(name);
  const toml::table t = read_device_file(name);
  const uint32_t overhead = uint32_t(timing_overhead(*d));
  const uint32_t c15 = uint32_t(key(t, "constant_l15", "latency_cycles"));
  // 16 KiB at the constant L1's line: past the L1, inside the L1.5
  auto c = fine(*d, MT_SPACE_CONSTANT, 16384, 64, 256, 256);
  for (uint32_t l : c.latency) REQUIRE(l == c15 + overhead);
  // A block of another SM of the same GPC finds the data in the L1.5; one of another GPC does not.
  const int64_t sm_per_gpc = key(t, "sim", "sm_per_gpc");
  const memtopo::ChaseArray a = memtopo::ChaseArray::stride(8192, 64);
  // Block 0 on SM 0 fills the L1.5; block 1 (SM 1, same GPC) and block 2 (first SM of the
  // next GPC) re-read it, timed.
  std::vector<memtopo::Job> jobs(3);
  for (int k = 0; k < 3; ++k) {
    jobs[k].space = MT_SPACE_CONSTANT;
    jobs[k].array = &a;
    jobs[k].steps = 128;
    jobs[k].order = uint32_t(k + 1);
    jobs[k].block = k;
    jobs[k].sm = k == 2 ? int32_t(sm_per_gpc) : k;
    jobs[k].timed = k > 0;
  }
  const auto r = memtopo::Backend(d->backend()).run(jobs);
  const std::vector<uint32_t>& same = r[1].latency;
  const std::vector<uint32_t>& other = r[2].latency;
  const int32_t sms[3] = {r[0].sm, r[1].sm, r[2].sm};
  CHECK(sms[2] == sm_per_gpc);
  for (uint32_t l : same) REQUIRE(l == c15 + overhead);
  // the other GPC's L1.5 misses once per L1.5 line (then holds the line)
  const uint32_t loads_per_line = uint32_t(key(t, "constant_l15", "line_bytes") / 64);
  CHECK(misses(other, c15 + overhead) == 128 / loads_per_line);
  CHECK(other[0] > c15 + overhead);
}

TEST_CASE("sim: a constant array reaches into the kernel parameters on Volta and later", "[sim]") {
  // As the CUDA backend: 64 KiB of constant memory, then 31 KiB of kernel parameters from
  // compute capability 7.0 on; the Kepler-like device (3.5) stops at constant memory.
  const std::string name = GENERATE(kDevices[0], kDevices[1]);
  INFO(name);
  auto d = open_device(name);
  const int64_t mem = d->info().constant_memory_bytes;
  const int64_t reach = d->info().constant_reach_bytes;
  CHECK(mem == 65536);
  CHECK(reach == (d->info().cc_major >= 7 ? 65536 + 31744 : 65536));
  // The whole reach is one cache footprint: every L1.5 line misses once, then hits.
  auto c = fine(*d, MT_SPACE_CONSTANT, uint64_t(reach), 256, 0, uint64_t(reach) / 256);
  CHECK(c.index.size() == uint64_t(reach) / 256);
  CHECK_THROWS_WITH(fine(*d, MT_SPACE_CONSTANT, uint64_t(reach) + 256, 256, 0, 16),
                    Catch::Contains("do not fit in constant memory") &&
                        (d->info().cc_major >= 7 ? Catch::Contains("97280 with the kernel-parameter bank")
                                                 : Catch::Contains("65536 bytes)")));
  // A description may set the reach (a backend without the parameter bank).
  const std::string text = "[device]\nsm_count = 2\ncompute_capability = \"9.0\"\nconstant_memory_bytes = 65536\n"
                           "constant_reach_bytes = 65536\n";
  auto own = memtopo::engine::open_sim(write_temp("reach", text));
  CHECK(own->info().constant_reach_bytes == 65536);
}

TEST_CASE("sim: Kepler-like texture cache has 4 partitions chosen by warp", "[sim]") {
  auto d = open_device("kepler-like.toml");
  const uint32_t hit = 108 + 16;
  // lane 0 fills 10 KiB of its 12 KiB partition, another lane fills 10 KiB, lane 0 re-reads
  auto run = [&](uint32_t other_lane) {
    const memtopo::ChaseArray a = memtopo::ChaseArray::stride(10240, 32), b = memtopo::ChaseArray::stride(10240, 32);
    std::vector<memtopo::Job> jobs(3);
    for (int k = 0; k < 3; ++k) {
      jobs[k].space = MT_SPACE_TEXTURE;
      jobs[k].array = k == 1 ? &b : &a;
      jobs[k].steps = 320;
      jobs[k].order = uint32_t(k + 1);
      jobs[k].block = 0;
      jobs[k].lane = k == 1 ? other_lane : 0;
      jobs[k].timed = k == 2;
    }
    const auto r = memtopo::Backend(d->backend()).run(jobs);
    CHECK(r[0].sm == r[1].sm);
    const std::vector<uint32_t>& lat = r[2].latency;
    return misses(lat, hit);
  };
  CHECK(run(1) > 0);     // same warp: same partition, evicted
  CHECK(run(31) > 0);
  CHECK(run(32) == 0);   // warps 1, 2, 3: partitions 1, 2, 3
  CHECK(run(64) == 0);
  CHECK(run(96) == 0);
  CHECK(run(128) > 0);   // warp 4 is back on partition 0
}

TEST_CASE("sim: L2 hits cost more in the far partition", "[sim]") {
  auto d = open_device("hopper-like.toml");
  const uint32_t near = 262 + 6, far = 420 + 6;
  for (int32_t sm : {0, 7}) {
    auto c = fine(*d, MT_SPACE_GLOBAL_CG, 1 << 20, 128, 8192, 8192, sm);
    CHECK(c.sm == sm);
    size_t n = 0, f = 0;
    for (size_t i = 0; i < c.latency.size(); ++i) {
      // 4 KiB chunks alternate between the partitions; SM 0 is near partition 0, SM 7 near 1
      const bool chunk_in_p0 = ((uint64_t(c.index[i]) * 4) >> 12) % 2 == 0;
      const bool expect_near = chunk_in_p0 == (sm == 0);
      CHECK(c.latency[i] == (expect_near ? near : far));
      (c.latency[i] == near ? n : f)++;
    }
    CHECK(n == f);
  }
}

TEST_CASE("sim: L1 TLB misses are visible past its reach", "[sim]") {
  auto d = open_device("hopper-like.toml");
  const uint64_t page = 2 << 20;
  // 32 entries x 2 MiB: no TLB cost; one page more: every load misses the L1 TLB (+25).
  // One line more than a page per step, so that the lines fall into different L2 sets.
  const uint64_t step = page + 128;
  auto within = fine(*d, MT_SPACE_GLOBAL_CG, 32 * step, step, 64, 64, 0);
  auto past = fine(*d, MT_SPACE_GLOBAL_CG, 33 * step, step, 66, 66, 0);
  for (size_t i = 0; i < 64; ++i) {
    const uint32_t l2 = (within.index[i] * 4ull >> 12) % 2 == 0 ? 268 : 426;
    CHECK(within.latency[i] == l2);
  }
  for (size_t i = 0; i < 66; ++i) {
    const uint32_t l2 = (past.index[i] * 4ull >> 12) % 2 == 0 ? 268 : 426;
    CHECK(past.latency[i] == l2 + 25);
  }
}

TEST_CASE("sim: the L2 TLB has unequal sets (Mei and Chu)", "[sim]") {
  const std::string name = GENERATE(kDevices[1], kDevices[2]);
  INFO(name);
  auto d = open_device(name);
  const toml::table t = read_device_file(name);
  const int64_t overhead = int64_t(timing_overhead(*d));
  const int64_t l2 = key(t, "l2", "latency_cycles"), dram = key(t, "dram", "latency_cycles");
  const int64_t p1 = key(t, "tlb", "l1_miss_penalty_cycles"), p2 = key(t, "tlb", "l2_miss_penalty_cycles");
  const uint64_t page = 2 << 20;
  // L2 TLB misses per pass over N pages (2 MiB stride), every load missing the 16-entry L1 TLB
  auto l2_tlb_misses = [&](uint64_t pages) {
    auto c = fine(*d, MT_SPACE_GLOBAL_CG, pages * page, page, 2 * pages, pages);
    size_t n = 0;
    for (uint32_t lat : c.latency) {
      const int64_t extra = int64_t(lat) - overhead;
      const bool l2_miss = extra == l2 + p1 + p2 || extra == dram + p1 + p2;
      REQUIRE((l2_miss || extra == l2 + p1 || extra == dram + p1));
      n += l2_miss;
    }
    return n;
  };
  CHECK(l2_tlb_misses(65) == 0);   // 17 + 6 x 8 entries hold 65 pages
  CHECK(l2_tlb_misses(66) == 18);  // the large set overflows: all its 18 pages miss
  CHECK(l2_tlb_misses(67) == 27);  // then a small set: 9 more
  CHECK(l2_tlb_misses(68) == 36);
}

TEST_CASE("sim: a pointer chase follows a stride array past 2^32 elements, an index chase may not", "[sim]") {
  auto d = open_device("kepler-like.toml");
  const memtopo::Backend b(d->backend());
  REQUIRE(b.has(MT_CAP_WIDE_STRIDE));
  // 40 loads 1 GiB apart: a 40 GiB footprint, 10 x 2^32 elements.
  const memtopo::ChaseArray a = memtopo::ChaseArray::stride(uint64_t(40) << 30, uint64_t(1) << 30);
  memtopo::Job j;
  j.space = MT_SPACE_GLOBAL_CG;
  j.pattern = MT_PATTERN_POINTERS;
  j.record = MT_RECORD_TOTAL;
  j.array = &a;
  j.warmup_steps = 40;
  j.steps = 80;
  // Every load misses the 16-entry L1 TLB, hits the 65-entry L2 TLB and, after the warm-up,
  // the L2: each address is translated at its own place, far past 16 GiB.
  const toml::table t = read_device_file("kepler-like.toml");
  const double want = double(key(t, "l2", "latency_cycles") + key(t, "tlb", "l1_miss_penalty_cycles"));
  CHECK(b.run(j).average_cycles == Approx(want));
  j.pattern = MT_PATTERN_CHASE;
  CHECK_THROWS_WITH(b.run(j), Catch::Contains("followed by pointer only"));
  j.pattern = MT_PATTERN_POINTERS;
  j.space = MT_SPACE_TEXTURE;
  CHECK_THROWS_WITH(b.run(j), Catch::Contains("on a global path only"));
}

TEST_CASE("sim: with far_copies_near a far L2 hit leaves a copy in the near partition", "[sim]") {
  const std::string text = toml_text_of(device_path("hopper-like.toml"));
  const std::string plain = "[sim.l2]\ninterleave_bytes = 4096\n";
  REQUIRE(text.find(plain) != std::string::npos);
  const auto run = [&](bool copies) {
    std::string desc = text;
    if (copies) desc.replace(desc.find(plain), plain.size(), plain + "far_copies_near = true\n");
    auto d = memtopo::engine::open_sim(write_temp(copies ? "far-copies" : "far-stays", desc));
    // 64 lines 4 KiB apart: every other one in the far partition for SM 0.
    return fine(*d, MT_SPACE_GLOBAL_CG, 64 * 4096, 4096, 64, 64, 0);
  };
  const auto stays = run(false), copies = run(true);
  const uint32_t near = 268, far = 426;  // hits plus the timing overhead of 6
  size_t far_stays = 0;
  for (uint32_t l : stays.latency) far_stays += l == far;
  CHECK(far_stays == 32);
  for (uint32_t l : copies.latency) CHECK(l == near);
}

TEST_CASE("sim: streams past the SM's loads in flight queue", "[sim]") {
  auto d = open_device("kepler-like.toml");  // [sim.memory] 24 DRAM requests in flight per SM
  const memtopo::Backend b(d->backend());
  REQUIRE(b.streams_max() >= 32);
  const memtopo::ChaseArray a = memtopo::ChaseArray::stride(uint64_t(1) << 30, 128);  // DRAM
  const double overhead = timing_overhead(*d);
  auto latency = [&](uint32_t streams) {
    memtopo::Job j;
    j.space = MT_SPACE_GLOBAL_CG;
    j.pattern = MT_PATTERN_RANDOM;
    j.record = MT_RECORD_COUNTS;
    j.array = &a;
    j.random_stride_bytes = 128;
    j.slow_cycles = 0xfffffffeu;
    j.steps = 9600;
    j.rate.streams = streams;
    const auto r = b.run(j);
    CHECK(r.slow == 0);
    return double(r.cycles) / double(j.steps) - overhead;
  };
  const double one = latency(1);
  CHECK(latency(24) == Approx(one).epsilon(0.02));  // 24 chains: none waits
  CHECK(latency(32) == Approx(one * 32 / 24).epsilon(0.03));  // each load waits its turn
}

TEST_CASE("sim: [sim.l2] interleave = \"hashed\" gives runs of one home of one or two chunks", "[sim]") {
  const std::string text = toml_text_of(device_path("hopper-like.toml"));
  const std::string plain = "[sim.l2]\ninterleave_bytes = 4096\n";
  REQUIRE(text.find(plain) != std::string::npos);
  const auto run = [&](bool hashed) {
    std::string desc = text;
    if (hashed) desc.replace(desc.find(plain), plain.size(), plain + "interleave = \"hashed\"\n");
    auto d = memtopo::engine::open_sim(write_temp(hashed ? "interleave-hashed" : "interleave-alternating", desc));
    return fine(*d, MT_SPACE_GLOBAL_CG, 64 * 4096, 4096, 64, 64, 0);  // one line per chunk, warm
  };
  const auto alternating = run(false), hashed = run(true);
  const auto far_count = [](const Chase& c) { return std::count(c.latency.begin(), c.latency.end(), 426u); };
  const auto repeats = [](const Chase& c) {  // neighbouring chunks with the same home
    size_t n = 0;
    for (size_t i = 1; i < c.latency.size(); ++i) n += c.latency[i] == c.latency[i - 1];
    return n;
  };
  CHECK(far_count(alternating) == 32);
  CHECK(repeats(alternating) == 0);
  CHECK(far_count(hashed) == 32);  // every pair of chunks still has one chunk in each partition
  CHECK(repeats(hashed) > 0);
  for (size_t i = 2; i < hashed.latency.size(); ++i)  // never three chunks of one home in a row
    CHECK_FALSE((hashed.latency[i] == hashed.latency[i - 1] && hashed.latency[i] == hashed.latency[i - 2]));
}

TEST_CASE("sim: a texture line longer than its shared L1 storage's takes whole texture lines there", "[sim]") {
  const std::string text = toml_text_of(device_path("hopper-like.toml"));
  const std::string tex = "line_bytes = 128\nfetch_granularity_bytes = 32\nsets = 128\nways = 16\nreplacement_policy = "
                          "\"lru\"\nlatency_cycles = 38\n";
  REQUIRE(text.find(tex) != std::string::npos);
  std::string desc = text;
  desc.replace(desc.find(tex), tex.size(), "line_bytes = 256\nfetch_granularity_bytes = 32\nsets = 64\nways = 16\n"
                                           "replacement_policy = \"lru\"\nlatency_cycles = 38\n");
  auto d = memtopo::engine::open_sim(write_temp("texture-line-256", desc));
  // 1536 loads 384 B apart: 1536 lines of the 2048-line L1, but 3072 where each takes 256 B.
  const auto ca = fine(*d, MT_SPACE_GLOBAL_CA, 1536 * 384, 384, 1536, 1536, 0);
  const auto texture = fine(*d, MT_SPACE_TEXTURE, 1536 * 384, 384, 1536, 1536, 0);
  CHECK(misses(ca.latency, 100) == 0);
  CHECK(misses(texture.latency, 100) == 1536);
}
