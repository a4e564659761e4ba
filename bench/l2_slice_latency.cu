// memtopo-l2-slice-latency: the L2 hit latency of every SM to every line of a small buffer, the
// data of the L2 slice map (plain CUDA, no memtopo code; docs/results/log/h100.md, "L2 latency by
// SM and line"). One block per SM (the largest shared memory keeps two off one SM) measures in
// turn, so that one SM's loads meet no other's: a fine-grained pointer chase through the lines
// (.cg: L2, not L1) gives each line's latency on the first read by this SM and the least of
// three reads after it. The scripts/l2-slice-model script fits models to the CSV.
//
//     memtopo-l2-slice-latency [LINES [STRIDE_BYTES [OUT.csv]]]   (default 2048 128 slices.csv)
//
// Columns: ticket (the order the SMs measured in), sm (%smid), line, first, repeat_min (cycles).
#include <cstdio>
#include <cstdlib>
#include <cstdint>
#include <vector>
#include <cuda_runtime.h>

#include "bench_common.cuh"

__device__ __forceinline__ unsigned smid() { unsigned r; asm volatile("mov.u32 %0, %%smid;" : "=r"(r)); return r; }

// One hop of a fine-grained pointer chase (Mei and Chu): the loaded pointer is stored to shared
// memory before the second clock read, so the clock waits for the load.
__device__ __forceinline__ const uint64_t* hop(const uint64_t* p, uint64_t* slot, uint32_t& cycles) {
  uint64_t t0, t1, next;
  asm volatile("mov.u64 %0, %%clock64;" : "=l"(t0) :: "memory");
  asm volatile("ld.global.cg.u64 %0, [%1];" : "=l"(next) : "l"(p) : "memory");
  asm volatile("st.shared.u64 [%0], %1;" :: "l"(__cvta_generic_to_shared(slot)), "l"(next) : "memory");
  asm volatile("mov.u64 %0, %%clock64;" : "=l"(t1) :: "memory");
  cycles = uint32_t(t1 - t0);
  return reinterpret_cast<const uint64_t*>(next);
}

__global__ void slices(const uint64_t* buf, uint32_t lines, unsigned* arrive, volatile unsigned* turn,
                       uint32_t* first, uint32_t* repeat, uint32_t* sm_of_ticket, uint64_t* sink) {
  extern __shared__ uint64_t pad[];
  if (threadIdx.x != 0) return;
  const unsigned ticket = atomicAdd(arrive, 1);
  while (*turn != ticket) __nanosleep(20000);
  sm_of_ticket[ticket] = smid();
  const uint64_t* p = buf;
  uint32_t c;
  for (uint32_t i = 0; i < lines; ++i) { p = hop(p, pad + (i & 63), c); first[size_t(ticket) * lines + i] = c; }
  for (uint32_t i = 0; i < lines; ++i) repeat[size_t(ticket) * lines + i] = 0xffffffffu;
  for (int r = 0; r < 3; ++r) {
    p = buf;
    for (uint32_t i = 0; i < lines; ++i) {
      p = hop(p, pad + (i & 63), c);
      uint32_t& best = repeat[size_t(ticket) * lines + i];
      best = c < best ? c : best;
    }
  }
  sink[ticket] = reinterpret_cast<uint64_t>(p);
  __threadfence();
  atomicAdd((unsigned*)turn, 1);
}

int main(int argc, char** argv) {
  const uint32_t lines = argc > 1 ? atoi(argv[1]) : 2048;
  const uint32_t stride = argc > 2 ? atoi(argv[2]) : 128;  // bytes between the lines read
  const char* out = argc > 3 ? argv[3] : "slices.csv";
  int sms = 0, smem = 0;
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  CHECK(cudaDeviceGetAttribute(&smem, cudaDevAttrMaxSharedMemoryPerBlockOptin, 0));
  uint64_t *buf, *sink; uint32_t *first, *repeat, *sm_of; unsigned *arrive, *turn;
  const size_t bytes = size_t(lines) * stride + 4096;
  CHECK(cudaMalloc(&buf, bytes));
  std::vector<uint64_t> host(bytes / 8, 0);
  for (uint32_t i = 0; i < lines; ++i)  // line i points at line i + 1, the last back to the first
    host[size_t(i) * stride / 8] = reinterpret_cast<uint64_t>(buf) + size_t((i + 1) % lines) * stride;
  CHECK(cudaMemcpy(buf, host.data(), bytes, cudaMemcpyHostToDevice));
  CHECK(cudaMalloc(&first, size_t(sms) * lines * 4)); CHECK(cudaMalloc(&repeat, size_t(sms) * lines * 4));
  CHECK(cudaMalloc(&sm_of, sms * 4)); CHECK(cudaMalloc(&sink, sms * 8));
  CHECK(cudaMalloc(&arrive, 4)); CHECK(cudaMalloc(&turn, 4));
  CHECK(cudaMemset(arrive, 0, 4)); CHECK(cudaMemset(turn, 0, 4));
  CHECK(cudaFuncSetAttribute(slices, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  slices<<<sms, 32, smem>>>(buf, lines, arrive, turn, first, repeat, sm_of, sink);
  CHECK(cudaGetLastError()); CHECK(cudaDeviceSynchronize());
  std::vector<uint32_t> f(size_t(sms) * lines), r(size_t(sms) * lines), s(sms);
  CHECK(cudaMemcpy(f.data(), first, f.size() * 4, cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(r.data(), repeat, r.size() * 4, cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(s.data(), sm_of, s.size() * 4, cudaMemcpyDeviceToHost));
  FILE* o = fopen(out, "w");
  if (!o) { fprintf(stderr, "cannot write %s\n", out); return 1; }
  fprintf(o, "ticket,sm,line,first,repeat_min\n");
  for (int t = 0; t < sms; ++t)
    for (uint32_t i = 0; i < lines; ++i) fprintf(o, "%d,%u,%u,%u,%u\n", t, s[t], i, f[size_t(t) * lines + i], r[size_t(t) * lines + i]);
  fclose(o);
  printf("%d SMs x %u lines (%u B apart) -> %s\n", sms, lines, stride, out);
  return 0;
}
