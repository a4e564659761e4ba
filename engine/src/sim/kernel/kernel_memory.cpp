// The simulated GPU's device memory for probe kernels: host memory in 2 MiB-aligned buffers
// that the simulator knows by address, so that a kernel's pointers are plain pointers. Every
// operation's bytes are checked to lie in a buffer (or in a block's shared memory) before
// anything is read or written. What the caches see is each buffer's simulated address, placed
// first-fit from kDeviceBase in the order of allocation: the host's addresses change from run
// to run (address-space randomization), and hashed sets, partitions and TLB sets would make a
// kernel's timing change with them.
#include <algorithm>
#include <bit>
#include <cstdlib>
#include <cstring>

#include <sys/mman.h>
#include <unistd.h>

#include "memtopo/errors.hpp"
#include "sim/kernel/kernel_runtime.hpp"

namespace memtopo::sim::kernel {

namespace {

constexpr uint64_t kAlign = uint64_t(2) << 20;
constexpr uint64_t kMostAlign = uint64_t(1) << 30;
// Host memory the simulated GPU lends at most, whatever its description says it has.
constexpr uint64_t kMostHostBytes = uint64_t(16) << 30;
// Where probe kernels' buffers lie on the simulated GPU: far above the engine's chase arrays,
// which are placed from 0 on in each call (sim_runner.cpp).
constexpr uint64_t kDeviceBase = uint64_t(1) << 44;

std::string hex(uint64_t v) {
  char b[32];
  std::snprintf(b, sizeof b, "0x%llx", static_cast<unsigned long long>(v));
  return b;
}

}  // namespace

KernelRuntime::~KernelRuntime() {
  for (auto& [base, placed] : buffers_) std::free(reinterpret_cast<void*>(base));
}

void* KernelRuntime::alloc(uint64_t bytes) {
  const uint64_t rounded = std::max<uint64_t>((bytes + kAlign - 1) / kAlign * kAlign, kAlign);
  const int64_t device = gpu_.model().info.global_memory_bytes;
  const uint64_t most = std::min<uint64_t>(device > 0 ? uint64_t(device) : kMostHostBytes, kMostHostBytes);
  if (buffer_bytes_ + rounded > most)
    throw Error("the simulated GPU lends probe kernels at most " + std::to_string(most >> 20) + " MiB; " +
                std::to_string(buffer_bytes_ >> 20) + " MiB are lent and " + std::to_string(rounded >> 20) +
                " MiB more were asked for");
  // Host and simulated addresses share their alignment up to the buffer's size (1 GiB at most),
  // so that a probe aligning a pointer within its buffer lands on the same simulated address in
  // every run (the host's addresses change from run to run). Large aligned blocks come from
  // fresh zero pages: untouched parts cost no host memory.
  const uint64_t align = std::clamp<uint64_t>(std::bit_floor(rounded), kAlign, kMostAlign);
  void* p = nullptr;
  if (posix_memalign(&p, align, rounded) != 0) p = nullptr;
  if (!p) throw Error("no host memory for a simulated buffer of " + std::to_string(rounded >> 20) + " MiB");
  std::memset(p, 0, std::min<uint64_t>(rounded, kAlign));
  // The lowest simulated range free for it: the same sequence of allocations and frees gives
  // the same addresses in every run.
  auto aligned = [&](uint64_t a) { return (a + align - 1) / align * align; };
  uint64_t place = kDeviceBase;
  for (const auto& [base, bytes] : devices_) {
    if (place + rounded <= base) break;
    place = aligned(std::max(place, base + bytes));
  }
  devices_[place] = rounded;
  buffers_[reinterpret_cast<uint64_t>(p)] = {rounded, place};
  buffer_bytes_ += rounded;
  return p;
}

void KernelRuntime::free(void* p) {
  auto it = buffers_.find(reinterpret_cast<uint64_t>(p));
  if (it == buffers_.end()) return;
  buffer_bytes_ -= it->second.bytes;
  devices_.erase(it->second.device);
  buffers_.erase(it);
  last_buffer_ = last_buffer_end_ = last_device_ = 0;
  std::free(p);
}

char* KernelRuntime::global_bytes(uint64_t address, uint64_t bytes) {
  if (address >= last_buffer_ && address + bytes <= last_buffer_end_) return reinterpret_cast<char*>(address);
  auto it = buffers_.upper_bound(address);
  if (it == buffers_.begin()) return nullptr;
  --it;
  if (address + bytes > it->first + it->second.bytes) return nullptr;
  last_buffer_ = it->first;
  last_buffer_end_ = it->first + it->second.bytes;
  last_device_ = it->second.device;
  return reinterpret_cast<char*>(address);
}

void KernelRuntime::copy(void* dst, const void* src, uint64_t bytes, uint32_t kind) {
  const bool dst_device = kind == MT_COPY_TO_DEVICE || kind == MT_COPY_ON_DEVICE;
  const bool src_device = kind == MT_COPY_TO_HOST || kind == MT_COPY_ON_DEVICE;
  if (kind < MT_COPY_TO_DEVICE || kind > MT_COPY_ON_DEVICE) throw Error("copy_buffer: kind " + std::to_string(kind));
  if (dst_device && !global_bytes(reinterpret_cast<uint64_t>(dst), bytes))
    throw Error("copy_buffer: " + std::to_string(bytes) + " B to " + hex(reinterpret_cast<uint64_t>(dst)) +
                " pass the end of a buffer, or lie in none");
  if (src_device && !global_bytes(reinterpret_cast<uint64_t>(src), bytes))
    throw Error("copy_buffer: " + std::to_string(bytes) + " B from " + hex(reinterpret_cast<uint64_t>(src)) +
                " pass the end of a buffer, or lie in none");
  std::memmove(dst, src, bytes);
}

void KernelRuntime::fill(void* dst, int value, uint64_t bytes) {
  if (!global_bytes(reinterpret_cast<uint64_t>(dst), bytes))
    throw Error("fill_buffer: " + std::to_string(bytes) + " B at " + hex(reinterpret_cast<uint64_t>(dst)) +
                " pass the end of a buffer, or lie in none");
  char* p = static_cast<char*>(dst);
  // Zeros over whole pages are pages handed back: they read as zeros again and hold no host
  // memory until written (a probe zeroing a DRAM buffer of 64 L2s of a replayed H100 held 1.6 GB).
  const uint64_t page = uint64_t(::sysconf(_SC_PAGESIZE));
  const uint64_t first = (reinterpret_cast<uint64_t>(p) + page - 1) / page * page;
  const uint64_t last = (reinterpret_cast<uint64_t>(p) + bytes) / page * page;
  if (value == 0 && bytes >= kAlign && last > first &&
      ::madvise(reinterpret_cast<void*>(first), last - first, MADV_DONTNEED) == 0) {
    std::memset(p, 0, first - reinterpret_cast<uint64_t>(p));
    std::memset(reinterpret_cast<char*>(last), 0, reinterpret_cast<uint64_t>(p) + bytes - last);
    return;
  }
  std::memset(dst, value, bytes);
}

char* KernelRuntime::shared_bytes(Thread* t, uint32_t path, uint64_t address, uint32_t bytes) {
  Block* target = t->block;
  uint64_t offset = address;
  if (path == MT_OP_PATH_CLUSTER && (address & 0x80000000u)) {
    const uint32_t rank = uint32_t(address >> 24) & 0x7fu;
    offset = address & 0xffffffu;
    if (!t->block->cluster ? rank != 0 : rank >= t->block->cluster->blocks.size())
      op_fail("a load of cluster rank " + std::to_string(rank) + ", but the cluster has " +
              std::to_string(t->block->cluster ? t->block->cluster->blocks.size() : 1) + " block(s)");
    if (t->block->cluster) target = t->block->cluster->blocks[rank];
  }
  if (offset + bytes > target->shared_bytes)
    op_fail("shared-memory address " + hex(offset) + " (+" + std::to_string(bytes) + " B) is past the block's " +
            std::to_string(target->shared_bytes) + " B");
  return target->shared + offset;
}

char* KernelRuntime::bytes_at(Thread* t, uint32_t path, uint64_t address, uint32_t bytes) {
  switch (path) {
    case MT_SPACE_SHARED:
    case MT_OP_PATH_CLUSTER: return shared_bytes(t, path, address, bytes);
    case MT_SPACE_GLOBAL_CA:
    case MT_SPACE_GLOBAL_CG:
    case MT_SPACE_READONLY:
      if (char* p = global_bytes(address, bytes)) return p;
      op_fail("a load or store of " + std::to_string(bytes) + " B at " + hex(address) +
              ", which lies in no buffer of the backend (memtopo::device::Buffer)");
    default:
      op_fail("path " + std::to_string(path) +
              ": the simulated GPU runs global, shared and cluster loads in probe kernels, not texture, constant or "
              "parameter loads");
  }
}

}  // namespace memtopo::sim::kernel
