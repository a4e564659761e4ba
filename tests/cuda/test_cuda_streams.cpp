// CUDA backend: bandwidth streams (mt_job::stream_op, ABI 2.4) in their three shapes. [gpu]
// tests exit with the skip code when no GPU is present.
#include <catch2/catch.hpp>

#include <cstdint>

#include "memtopo/engine.hpp"
#include "memtopo/measure.hpp"
#include "open_gpu.hpp"

using memtopo::ChaseArray;
using memtopo::Job;

namespace {

// A stream of 16-byte accesses through .cg over `a`, timed as a whole.
Job stream_job(const ChaseArray& a, const memtopo::Stream& stream, uint64_t passes) {
  Job j;
  j.pattern = MT_PATTERN_CHASE;
  j.record = MT_RECORD_TOTAL;
  j.space = MT_SPACE_GLOBAL_CG;
  j.array = &a;
  j.load_bytes = 16;
  j.steps = passes;
  j.stream = stream;
  return j;
}

}  // namespace

TEST_CASE("cuda: bandwidth streams count their bytes and take longer for more passes", "[cuda][gpu]") {
  auto dev = open_gpu();
  const memtopo::Backend be(dev->backend());
  REQUIRE(be.has(MT_CAP_STREAM_OPS));
  const uint32_t sms = uint32_t(dev->info().sm_count);
  const ChaseArray a = ChaseArray::stride(uint64_t(sms) * 2 * 64 * 1024, 4);  // 64 KiB per block
  for (mt_stream_op op : {MT_STREAM_READ, MT_STREAM_WRITE, MT_STREAM_COPY, MT_STREAM_UPDATE}) {
    INFO("stream_op " << op);
    Job j = stream_job(a, {op, 2 * sms, 256, 4}, 4);
    j.warmup_steps = 1;
    const memtopo::JobResult once = be.run(j);
    const uint64_t moved = uint64_t(sms) * 2 * 64 * 1024 * 4 * (op == MT_STREAM_COPY || op == MT_STREAM_UPDATE ? 2 : 1);
    CHECK(once.stream_bytes == moved);
    CHECK(once.stream_elapsed_ns > 0);
    CHECK(once.cycles > 0);
    CHECK(once.average_cycles <= double(once.cycles));
    j.steps = 64;
    const memtopo::JobResult more = be.run(j);
    CHECK(more.stream_bytes == 16 * moved);
    CHECK(more.cycles > 4 * once.cycles);  // 16 times the passes; launch and barrier costs aside
  }
}

TEST_CASE("cuda: a grid stream moves its footprint once a pass, a shared one once per block", "[cuda][gpu]") {
  auto dev = open_gpu();
  const memtopo::Backend be(dev->backend());
  const ChaseArray a = ChaseArray::stride(64ull << 20, 4);
  const memtopo::JobResult g = be.run(stream_job(a, {MT_STREAM_WRITE, 0, 512, 2, MT_STREAM_GRID}, 3));
  CHECK(g.stream_bytes == 3 * (64ull << 20));
  CHECK(g.stream_elapsed_ns > 0);
  CHECK(g.cycles == 0);
  const ChaseArray small = ChaseArray::stride(1 << 20, 4);
  const memtopo::JobResult s = be.run(stream_job(small, {MT_STREAM_READ, 64, 256, 2, MT_STREAM_SHARED}, 3));
  CHECK(s.stream_bytes == 64ull * 3 * (1 << 20));
  CHECK(s.cycles > 0);
}

TEST_CASE("cuda: the buffers of jobs go back to the device, many times its memory in turn", "[cuda][gpu]") {
  auto dev = open_gpu();
  const memtopo::Backend be(dev->backend());
  const uint64_t device_bytes = uint64_t(dev->info().global_memory_bytes);
  REQUIRE(device_bytes > 0);
  // Footprints of an eighth of the device and more, three times the device memory in all: a
  // buffer the pool kept or lost would end in an allocation failure.
  for (int i = 0; i < 24; ++i) {
    INFO("job " << i);
    const ChaseArray a = ChaseArray::stride(device_bytes / 8 + uint64_t(i % 3) * (64u << 20), 4);
    const memtopo::JobResult r = be.run(stream_job(a, {MT_STREAM_WRITE, 0, 512, 1, MT_STREAM_GRID}, 1));
    CHECK(r.stream_bytes > 0);
  }
}
