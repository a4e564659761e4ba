// Threads past the stacks they may own at once (sim/kernel/thread_stacks.hpp) share stacks: a
// waiting thread's frames are copied out while another runs there, and back before it goes on.
// Every resident thread of a launch keeps values in its frames across barriers, a load and its
// warp's program (whose operands and results lie in those frames): each must end with what it
// computed.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "kernel_context.hpp"
#include "memtopo/device/kernel.hpp"
#include "sim/kernel/kernel_runtime.hpp"
#include "sim/kernel/thread_stacks.hpp"
#include "sim_helpers.hpp"

namespace md = memtopo::device;
using md::Path;
using simtest::KernelContext;

namespace {

uint32_t word_of(uint64_t i) { return uint32_t(i * 2654435761ull + 12345); }

MEMTOPO_KERNEL void keep_frames(const uint32_t* data, unsigned long long* out) {
  const unsigned me = md::block_index() * md::block_threads() + md::thread_index();
  uint32_t v[8];
  for (unsigned i = 0; i < 8; ++i) v[i] = me * 7919u + i;
  md::sync_block();
  const uint32_t loaded = md::load<Path::GlobalCg>(reinterpret_cast<unsigned long long>(data + 4 * me), 0);
  const uint32_t fold = md::sweep<MT_SWEEP_READ, Path::GlobalCg, 16, 1>(data, nullptr, me, me + 1, 1, 1, 0);
  md::sync_block();
  unsigned long long sum = 0;
  for (unsigned i = 0; i < 8; ++i) sum += v[i];
  out[me] = (sum << 32) ^ (unsigned long long)(loaded) << 16 ^ fold;
}

}  // namespace

TEST_CASE("sim kernels: threads past the stacks of their own keep their frames", "[sim][kernels]") {
  KernelContext k(simtest::open_device("hopper-like.toml"));
  const uint32_t threads = uint32_t(k.info().sm_count) * uint32_t(k.info().max_threads_per_sm);
  // Every thread resident: past kOwnStacks most share a stack (a sanitized build gives each
  // its own, kOwnStacks unbounded, and the launch checks the plain path).
  CHECK(threads >= 4 * std::min<size_t>(memtopo::sim::kernel::ThreadStacks::kOwnStacks, 4096));
  std::vector<uint32_t> words(size_t(threads) * 4);
  for (size_t i = 0; i < words.size(); ++i) words[i] = word_of(i);
  md::Buffer<uint32_t> data(k.ctx(), words.size());
  data.upload(words);
  md::Buffer<unsigned long long> out(k.ctx(), threads);
  md::LaunchConfig cfg;
  cfg.grid = {threads / 256};
  cfg.block = {256};
  cfg.warmup_launches = 0;
  const md::LaunchReport all = md::launch<keep_frames>(k.ctx(), "keep_frames", cfg, data.get(), out.get());
  const std::vector<unsigned long long> got = out.download();
  size_t right = 0;
  for (uint32_t me = 0; me < threads; ++me) {
    unsigned long long sum = 0;
    for (unsigned i = 0; i < 8; ++i) sum += me * 7919ull % (1ull << 32) + i;
    const uint32_t fold = words[4 * me] ^ words[4 * me + 1] ^ words[4 * me + 2] ^ words[4 * me + 3];
    right += got[me] == ((sum << 32) ^ (unsigned long long)(words[4 * me]) << 16 ^ fold) ? 1 : 0;
  }
  CHECK(right == threads);
  CHECK(all.elapsed_ms > 0);
}

TEST_CASE("sim kernels: a shared stack holds one thread's frames at a time", "[sim][kernels]") {
  using memtopo::sim::kernel::Thread;
  memtopo::sim::kernel::ThreadStacks stacks(64 * 1024, 1);
  Thread a, b;
  REQUIRE(stacks.make_ready(&a, nullptr));  // a's first run: the one stack of its own
  auto* top = static_cast<unsigned char*>(a.context.stack) + a.context.stack_bytes;
  // a waits with 256 bytes of frames, its pending load's addresses among them.
  a.context.at = top - 256;
  for (int i = 0; i < 256; ++i) top[i - 256] = static_cast<unsigned char>(i);
  const auto* addresses = reinterpret_cast<const uint64_t*>(top - 64);
  a.op.addresses = addresses;
  REQUIRE(stacks.make_ready(&b, nullptr));  // b's first run: a's frames go out
  CHECK(b.context.stack == a.context.stack);
  CHECK(stacks.copied_out() == 1);
  CHECK(a.op.addresses != addresses);  // the runtime reads them where they are now
  CHECK(reinterpret_cast<const unsigned char*>(a.op.addresses) == a.frames.get() + 192);
  b.context.at = top - 128;  // b runs and waits
  std::fill(top - 128, top, static_cast<unsigned char>(0xee));
  CHECK_FALSE(stacks.make_ready(&a, &b));  // from b, a cannot go where b runs
  REQUIRE(stacks.make_ready(&a, nullptr));  // from the scheduler: b out, a back in
  CHECK(stacks.copied_out() == 1);
  bool same = true;
  for (int i = 0; i < 256; ++i) same = same && top[i - 256] == static_cast<unsigned char>(i);
  CHECK(same);
  CHECK(a.op.addresses == addresses);
  CHECK(stacks.release(&a));
  CHECK(stacks.release(&b));
  CHECK(stacks.copied_out() == 0);
}
