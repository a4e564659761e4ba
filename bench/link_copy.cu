// memtopo-link-copy: host-to-device and device-to-host copy rates of page-locked memory
// (cudaMallocHost, wherever the allocator puts it) and of pageable memory, and peer copies,
// with none of memtopo's code: the second method for link.* (docs/links.md).
//   memtopo-link-copy [device] [MiB] [repeats]
// Prints one line per direction: the rate of the median copy, and the fastest and slowest.
#include <algorithm>
#include <cstdlib>
#include <vector>

#include "bench_common.cuh"

namespace {

template <class F>
void report(const char* what, size_t bytes, int repeats, cudaStream_t s, F&& copy) {
  cudaEvent_t a, b;
  CHECK(cudaEventCreate(&a));
  CHECK(cudaEventCreate(&b));
  copy(s);  // the first copy sets the mappings up
  CHECK(cudaStreamSynchronize(s));
  std::vector<float> ms;
  for (int i = 0; i < repeats; ++i) {
    CHECK(cudaEventRecord(a, s));
    copy(s);
    CHECK(cudaEventRecord(b, s));
    CHECK(cudaEventSynchronize(b));
    float t = 0;
    CHECK(cudaEventElapsedTime(&t, a, b));
    ms.push_back(t);
  }
  std::sort(ms.begin(), ms.end());
  auto gbps = [&](float t) { return double(bytes) / (double(t) * 1e-3) / 1e9; };
  std::printf("%-22s %8.2f GB/s median  (%.2f .. %.2f)  %zu MiB x %d\n", what, gbps(ms[ms.size() / 2]), gbps(ms.back()),
              gbps(ms.front()), bytes >> 20, repeats);
  CHECK(cudaEventDestroy(a));
  CHECK(cudaEventDestroy(b));
}

}  // namespace

int main(int argc, char** argv) {
  const int dev = argc > 1 ? std::atoi(argv[1]) : 0;
  const size_t bytes = size_t(argc > 2 ? std::atoi(argv[2]) : 64) << 20;
  const int repeats = argc > 3 ? std::atoi(argv[3]) : 10;
  CHECK(cudaSetDevice(dev));
  cudaStream_t s;
  CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  void *host = nullptr, *device = nullptr;
  CHECK(cudaMallocHost(&host, bytes));
  CHECK(cudaMalloc(&device, bytes));
  std::fill(static_cast<char*>(host), static_cast<char*>(host) + bytes, 1);
  report("host_to_device", bytes, repeats, s,
         [&](cudaStream_t st) { CHECK(cudaMemcpyAsync(device, host, bytes, cudaMemcpyHostToDevice, st)); });
  report("device_to_host", bytes, repeats, s,
         [&](cudaStream_t st) { CHECK(cudaMemcpyAsync(host, device, bytes, cudaMemcpyDeviceToHost, st)); });
  int n = 0;
  CHECK(cudaGetDeviceCount(&n));
  for (int p = 0; p < n; ++p) {
    int can = 0;
    if (p == dev || cudaDeviceCanAccessPeer(&can, dev, p) != cudaSuccess || !can) continue;
    cudaDeviceEnablePeerAccess(p, 0);
    cudaGetLastError();
    void* remote = nullptr;
    CHECK(cudaSetDevice(p));
    CHECK(cudaMalloc(&remote, bytes));
    CHECK(cudaSetDevice(dev));
    char name[32];
    std::snprintf(name, sizeof name, "peer %d", p);
    report(name, bytes, repeats, s,
           [&](cudaStream_t st) { CHECK(cudaMemcpyPeerAsync(remote, p, device, dev, bytes, st)); });
    CHECK(cudaFree(remote));
  }
  CHECK(cudaFreeHost(host));
  CHECK(cudaFree(device));
  return 0;
}
