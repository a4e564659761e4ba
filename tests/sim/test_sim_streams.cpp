// Bandwidth streams (mt_job::stream_op, ABI 2.4) on the simulated GPU: the requests refused, and
// the model of docs/simulator.md ("Bandwidth streams"): the level the footprint decides, the
// peak rates of [throughput], Little's law below them, reads and writes adding their times.
#include <catch2/catch.hpp>

#include <memory>
#include <string>
#include <vector>

#include "memtopo/measure.hpp"
#include "sim_helpers.hpp"

using namespace simtest;

namespace {

// 4 SMs at 1 GHz; a 64 KiB L1 at 20 cycles, a 1 MiB L2 at 200, DRAM at 400 cycles.
std::string stream_device(const std::string& extra = "") {
  return R"([device]
sm_count = 4
sm_clock_khz = 1000000
l2_bytes = 1048576
max_threads_per_sm = 2048
max_blocks_per_sm = 16
max_threads_per_block = 1024
[l1d]
size_bytes = 65536
line_bytes = 128
ways = 4
latency_cycles = 20
[l2]
ways = 16
latency_cycles = 200
[dram]
latency_cycles = 400
[mlp]
sm_l2_loads_in_flight = 64
sm_dram_loads_in_flight = 32
[throughput]
l1_read_bytes_per_cycle_per_sm = 64.0
l2_read_bytes_per_cycle = 100.0
l2_write_bytes_per_cycle = 50.0
dram_read_bytes_per_second = 20000000000.0
dram_write_bytes_per_second = 10000000000.0
)" + extra;
}

memtopo::Job stream(mt_stream_op op, const memtopo::ChaseArray& a, uint32_t blocks, uint32_t threads, uint32_t ilp) {
  memtopo::Job j;
  j.pattern = MT_PATTERN_CHASE;
  j.record = MT_RECORD_TOTAL;
  j.space = MT_SPACE_GLOBAL_CG;
  j.array = &a;
  j.load_bytes = 16;
  j.steps = 2;
  j.stream = {op, blocks, threads, ilp};
  return j;
}

double per_cycle(const memtopo::JobResult& r) { return double(r.stream_bytes) / double(r.cycles); }

}  // namespace

TEST_CASE("sim streams: the footprint picks the level, and its peak or Little's law the rate", "[sim][streams]") {
  auto d = open_text("streams", stream_device());
  const memtopo::Backend b(d->backend());
  REQUIRE(b.has(MT_CAP_STREAM_OPS));
  const auto dram = memtopo::ChaseArray::stride(64 << 20, 4), l2 = memtopo::ChaseArray::stride(256 << 10, 4);
  // Plenty in flight: the peaks. DRAM 20 GB/s at 1 GHz is 20 bytes per cycle.
  const memtopo::JobResult r = b.run(stream(MT_STREAM_READ, dram, 16, 256, 4));
  CHECK(r.stream_bytes == 2ull * (64 << 20));
  CHECK(per_cycle(r) == Approx(20.0).epsilon(0.001));
  CHECK(double(r.stream_bytes) / double(r.stream_elapsed_ns) == Approx(20.0).epsilon(0.001));  // bytes per ns
  CHECK(per_cycle(b.run(stream(MT_STREAM_READ, l2, 16, 256, 4))) == Approx(100.0).epsilon(0.001));
  CHECK(per_cycle(b.run(stream(MT_STREAM_WRITE, l2, 16, 256, 4))) == Approx(50.0).epsilon(0.001));
  // A copy reads and writes as much: 1 / (1/20 + 1/10) of the bytes moved per cycle, twice.
  CHECK(per_cycle(b.run(stream(MT_STREAM_COPY, dram, 16, 256, 4))) == Approx(2.0 / (1.0 / 20 + 1.0 / 10)).epsilon(0.001));
  // One warp per SM, one 16-byte access each: 4 SMs x 512 bytes in flight over 400 cycles.
  CHECK(per_cycle(b.run(stream(MT_STREAM_READ, dram, 4, 32, 1))) == Approx(4 * 512.0 / 400).epsilon(0.001));
  // Reads through L1 of slices within it: the L1's rate of every SM.
  memtopo::Job l1 = stream(MT_STREAM_READ, memtopo::ChaseArray::stride(4 * 16384, 4), 4, 256, 2);
  const auto l1_array = memtopo::ChaseArray::stride(4 * 16384, 4);
  l1.array = &l1_array;
  l1.space = MT_SPACE_GLOBAL_CA;
  CHECK(per_cycle(b.run(l1)) == Approx(4 * 64.0).epsilon(0.001));
}

TEST_CASE("sim streams: a grid of a block per round, and blocks that each read the whole footprint", "[sim][streams]") {
  auto d = open_text("streams-shapes", stream_device());
  const memtopo::Backend b(d->backend());
  const auto dram = memtopo::ChaseArray::stride(64 << 20, 4), small = memtopo::ChaseArray::stride(32 << 10, 4);
  memtopo::Job grid = stream(MT_STREAM_READ, dram, 0, 256, 2);
  grid.stream.shape = MT_STREAM_GRID;
  const memtopo::JobResult g = b.run(grid);
  CHECK(g.stream_bytes == 2ull * (64 << 20));  // every round once a pass, whatever stream_blocks says
  CHECK(g.cycles == 0);                        // a grid's blocks keep no clocks
  CHECK(double(g.stream_bytes) / double(g.stream_elapsed_ns) == Approx(20.0).epsilon(0.001));
  // 16 blocks each read 32 KiB twice; through .ca it fits every SM's L1.
  memtopo::Job shared = stream(MT_STREAM_READ, small, 16, 256, 2);
  shared.stream.shape = MT_STREAM_SHARED;
  const memtopo::JobResult h = b.run(shared);
  CHECK(h.stream_bytes == 16ull * 2 * (32 << 10));
  CHECK(h.stream_blocks_per_sm == 8);  // 2048 threads per SM in blocks of 256
  CHECK(per_cycle(h) == Approx(100.0).epsilon(0.001));  // the L2's peak
  shared.space = MT_SPACE_GLOBAL_CA;
  CHECK(per_cycle(b.run(shared)) == Approx(4 * 64.0).epsilon(0.001));  // every SM's L1
}

TEST_CASE("sim streams: a shape the ABI does not know is refused", "[sim][streams]") {
  // Through the C job: the field is a uint32_t, and 7 is no mt_stream_shape.
  auto d = open_text("streams-shape", stream_device());
  const auto a = memtopo::ChaseArray::stride(1 << 20, 4);
  const mt_chase_array ca = a.c();
  mt_job raw{};
  raw.struct_size = sizeof raw;
  raw.sm = -1;
  raw.block = -1;
  raw.shared_carveout_percent = -1;
  raw.space = MT_SPACE_GLOBAL_CG;
  raw.pattern = MT_PATTERN_CHASE;
  raw.record = MT_RECORD_TOTAL;
  raw.array = &ca;
  raw.steps = 2;
  raw.load_bytes = 16;
  raw.stream_op = MT_STREAM_READ;
  raw.stream_blocks = 4;
  raw.stream_threads = 256;
  raw.stream_ilp = 2;
  raw.stream_shape = 7;
  mt_job* jobs[] = {&raw};
  char err[256] = "";
  const mt_backend* b = d->backend();
  CHECK(b->run_jobs(b->self, jobs, 1, err, sizeof err) != 0);
  CHECK_THAT(std::string(err), Catch::Contains("unknown stream_shape 7"));
}

TEST_CASE("sim streams: the loads in flight of [mlp] cap Little's law", "[sim][streams]") {
  auto d = open_text("streams-mlp", stream_device());
  const memtopo::Backend b(d->backend());
  const auto dram = memtopo::ChaseArray::stride(64 << 20, 4);
  // Without [throughput]'s peak, 32 lines of 128 B per SM over 400 cycles: 4 x 4096 / 400.
  auto open = open_text("streams-nopeak", stream_device().substr(0, stream_device().find("[throughput]")));
  const memtopo::Backend nb(open->backend());
  CHECK(per_cycle(nb.run(stream(MT_STREAM_READ, dram, 16, 256, 4))) == Approx(4 * 4096.0 / 400).epsilon(0.001));
}

TEST_CASE("sim streams: bad stream requests are refused with the reason", "[sim][streams]") {
  auto d = open_text("streams-bad", stream_device());
  const memtopo::Backend b(d->backend());
  const auto a = memtopo::ChaseArray::stride(1 << 20, 4);
  auto refused = [&](const std::vector<memtopo::Job>& jobs) {
    try {
      b.run(jobs);
    } catch (const std::exception& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  const memtopo::Job ok = stream(MT_STREAM_READ, a, 4, 256, 2);
  CHECK(refused({ok}) == "");
  CHECK_THAT(refused({ok, ok}), Catch::Contains("a stream job is alone in its call"));
  memtopo::Job j = ok;
  j.sm = 1;
  CHECK_THAT(refused({j}), Catch::Contains("over every SM"));
  j = ok;
  j.stream.threads = 100;
  CHECK_THAT(refused({j}), Catch::Contains("stream_threads 100; a multiple of 32"));
  j = ok;
  j.stream.ilp = 3;
  CHECK_THAT(refused({j}), Catch::Contains("stream_ilp 3"));
  j = ok;
  j.space = MT_SPACE_TEXTURE;
  CHECK_THAT(refused({j}), Catch::Contains("GLOBAL_CA or GLOBAL_CG"));
  j = ok;
  j.record = MT_RECORD_COUNTS;
  CHECK_THAT(refused({j}), Catch::Contains("timed as a whole"));
  j = ok;
  j.stream.shape = MT_STREAM_SHARED;
  j.stream.op = MT_STREAM_WRITE;
  CHECK_THAT(refused({j}), Catch::Contains("in read streams only"));
  const auto tiny = memtopo::ChaseArray::stride(4096, 4);
  j = ok;
  j.array = &tiny;
  CHECK_THAT(refused({j}), Catch::Contains("less than one round"));
}
