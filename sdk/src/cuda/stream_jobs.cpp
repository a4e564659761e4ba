// A bandwidth stream on the GPU (mt_job::stream_op, ABI 2.4): untimed warm-up passes in one
// launch, the timed passes in a second between two events; every block's SM-clock cycles.
#include <algorithm>
#include <numeric>
#include <vector>

#include "cuda_engine.hpp"
#include "cuda_util.hpp"
#include "stream_kernels.hpp"

namespace memtopo::cuda {
namespace {

// Events around the timed launch, freed on every path.
struct EventPair {
  cudaEvent_t start = nullptr, stop = nullptr;
  EventPair() {
    check(cudaEventCreate(&start), "cudaEventCreate");
    check(cudaEventCreate(&stop), "cudaEventCreate");
  }
  ~EventPair() {
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
  }
  EventPair(const EventPair&) = delete;
  EventPair& operator=(const EventPair&) = delete;
};

}  // namespace

void CudaEngine::run_stream(engine::JobCall& call) {
  mt_job& j = call.jobs[0];
  StreamLaunch l;
  l.op = j.stream_op;
  l.width = j.load_bytes ? j.load_bytes : 4;
  l.ilp = j.stream_ilp ? j.stream_ilp : 1;
  l.cg = j.space == MT_SPACE_GLOBAL_CG;
  l.blocks = engine::stream_blocks_of(j, info_);
  l.threads = j.stream_threads ? j.stream_threads : 256;
  l.carveout_percent = j.shared_carveout_percent;
  l.shape = j.stream_shape;
  l.slice_bytes = engine::stream_slice_bytes(j, info_);
  uint64_t bytes = l.slice_bytes * l.blocks;
  if (l.shape != MT_STREAM_ROUNDS) {
    bytes = engine::stream_rounds(j) * engine::stream_round_bytes(j);
    l.slice_bytes = engine::stream_rounds(j);
    if (l.shape == MT_STREAM_GRID) l.blocks = uint32_t(engine::stream_rounds(j));
  }
  PooledBuffer src(pool_, bytes);
  check(cudaMemset(src.data(), 0, bytes), "cudaMemset");
  std::vector<PooledBuffer> extra;
  if (j.stream_op == MT_STREAM_COPY) extra.emplace_back(pool_, bytes);
  PooledBuffer out(pool_, 8 * uint64_t(l.shape == MT_STREAM_GRID ? 1 : l.blocks) + 64);
  l.src = src.data();
  l.dst = extra.empty() ? nullptr : extra[0].data();
  l.block_cycles = reinterpret_cast<unsigned long long*>(out.data());
  l.sink = out.data() + 2 * (l.shape == MT_STREAM_GRID ? 1 : l.blocks);
  if (j.warmup_steps > 0) {
    l.passes = uint32_t(std::min<uint64_t>(j.warmup_steps, UINT32_MAX));
    check(launch_stream(l), "launching the stream's warm-up");
    check(cudaDeviceSynchronize(), "the stream's warm-up");
  }
  l.passes = uint32_t(std::min<uint64_t>(j.steps, UINT32_MAX));
  EventPair ev;
  check(cudaEventRecord(ev.start), "cudaEventRecord");
  check(launch_stream(l), "launching the stream");
  check(cudaEventRecord(ev.stop), "cudaEventRecord");
  check(cudaEventSynchronize(ev.stop), "the stream");
  float ms = 0;
  check(cudaEventElapsedTime(&ms, ev.start, ev.stop), "cudaEventElapsedTime");
  if (l.shape != MT_STREAM_GRID) {
    std::vector<unsigned long long> cycles(l.blocks);
    check(cudaMemcpy(cycles.data(), l.block_cycles, 8 * cycles.size(), cudaMemcpyDeviceToHost), "reading the cycles");
    j.out.cycles = *std::max_element(cycles.begin(), cycles.end());
    j.out.average_cycles = double(std::accumulate(cycles.begin(), cycles.end(), 0.0)) / double(cycles.size());
  }
  j.out.sm = -1;
  int resident = 0;
  check(stream_blocks_per_sm(l, &resident), "cudaOccupancyMaxActiveBlocksPerMultiprocessor");
  j.out_stream_blocks_per_sm = uint32_t(resident);
  j.out_stream_bytes = engine::stream_bytes_moved(j, info_);
  j.out_stream_elapsed_ns = uint64_t(double(ms) * 1e6);
}

}  // namespace memtopo::cuda
