// Device memory of the CUDA backend: a pool of 2 MiB-aligned buffers (allocation is slow,
// so buffers are kept and reused across calls) and the placement of one call's chase
// arrays in global, texture, constant and shared memory.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "kernels.cuh"
#include "mapped_memory.hpp"
#include "memtopo/measure.h"

namespace memtopo::cuda {

constexpr uint64_t kArrayAlignment = uint64_t(2) << 20;  // 2 MiB: one large page

struct DeviceBuffer {
  void* raw = nullptr;      // what cudaMalloc returned (nullptr when mapped)
  uint32_t* data = nullptr;  // raw rounded up to kArrayAlignment
  uint64_t capacity = 0;    // usable bytes from data
  MappedMemory mapped;      // the mapping, when the memory came from map_device_memory
  uint64_t returned = 0;    // when it was last given back (the pool's count of give-backs)
};

class DevicePool {
 public:
  DevicePool() = default;
  DevicePool(const DevicePool&) = delete;
  DevicePool& operator=(const DevicePool&) = delete;
  ~DevicePool();

  // A buffer of at least `bytes`, aligned to 2 MiB. Throws memtopo::Error on failure.
  DeviceBuffer take(uint64_t bytes);
  void give_back(DeviceBuffer b);
  // Frees every buffer not in use.
  void trim();
  // Whether the buffer at `data` is kept for reuse; the bytes kept.
  bool holds(const void* data) const;
  uint64_t cached_bytes() const { return cached_bytes_; }
  // Pinned host memory of at least `words` 32-bit words for writing an array before its copy
  // to the device, kept for the next call (valid until the next staging() call).
  uint32_t* staging(uint64_t words);

 private:
  struct PinnedFree {
    void operator()(uint32_t* p) const;
  };
  std::unique_ptr<uint32_t, PinnedFree> staging_;
  uint64_t staging_words_ = 0;
  std::multimap<uint64_t, DeviceBuffer> free_;  // by capacity
  uint64_t cached_bytes_ = 0;
  uint64_t give_backs_ = 0;
};

// A buffer borrowed from the pool for one call.
class PooledBuffer {
 public:
  PooledBuffer(DevicePool& pool, uint64_t bytes) : pool_(&pool), b_(pool.take(bytes)) {}
  PooledBuffer(const PooledBuffer&) = delete;
  PooledBuffer& operator=(const PooledBuffer&) = delete;
  PooledBuffer(PooledBuffer&& o) noexcept : pool_(o.pool_), b_(o.b_) { o.b_ = DeviceBuffer{}; }
  ~PooledBuffer() {
    if (b_.data) pool_->give_back(b_);
  }
  uint32_t* data() const { return b_.data; }

 private:
  DevicePool* pool_;
  DeviceBuffer b_;
};

struct DeviceLimits {
  uint64_t texture_1d_linear_elems = 0;  // cudaDevAttrMaxTexture1DLinearWidth
  uint64_t constant_elems = kConstantElems;
  uint64_t param_bank_elems = 0;  // elements a constant array may add in the ParamBank
  uint64_t constant_base = 0;     // const-space address of the chase buffer (constant pointer chases)
};

// The arrays of one call. Each distinct mt_chase_array (by address) gets one device buffer;
// jobs that share the pointer share the buffer. Usage: need() for every (array, path) a
// job reads, then upload(), then source() for each job.
class CallArrays {
 public:
  CallArrays(DevicePool& pool, const DeviceLimits& limits) : pool_(pool), limits_(limits) {}
  CallArrays(const CallArrays&) = delete;
  CallArrays& operator=(const CallArrays&) = delete;
  ~CallArrays();

  // `a` is chased through `space` from `start` for `loads` loads (warm-up included), by
  // index or (`pointers`, MT_PATTERN_POINTERS) by address. `where` names the job in error
  // messages ("job 3").
  void need(const mt_chase_array* a, mt_space space, uint32_t start, uint64_t loads, const std::string& where,
            bool pointers = false);
  // Allocates and writes every array. Throws memtopo::Error with the CUDA message.
  void upload();
  // Where a job finds its array; shared_offset is the element offset of the array in the
  // block's shared-memory area (SHARED only).
  ChaseSource source(const mt_chase_array* a, uint32_t shared_offset = 0) const;
  // The call's kernel-parameter bank (a constant array past the constant buffer), or null.
  const ParamBank* param_bank() const { return bank_.get(); }

 private:
  struct Entry {
    const mt_chase_array* array = nullptr;
    std::string where;
    bool global = false;    // global buffer (global paths, texture, copy source of SHARED)
    bool texture = false;
    bool constant = false;
    bool wide = false;      // CONSTANT, continues in the ParamBank
    int pointers = -1;      // -1: not yet known; 0: indices; 1: addresses (MT_PATTERN_POINTERS)
    bool global_pointers = false;  // the global buffer holds 64-bit addresses
    std::map<uint32_t, uint64_t> starts;  // STRIDE: loads needed from each start
    DeviceBuffer buffer;
    unsigned long long texture_object = 0;
    uint32_t constant_offset = 0;
  };
  Entry& entry(const mt_chase_array* a, const std::string& where);

  DevicePool& pool_;
  DeviceLimits limits_;
  std::vector<Entry> entries_;
  uint64_t constant_used_ = 0;
  bool wide_ = false;  // one array takes the whole constant buffer and the ParamBank
  std::unique_ptr<ParamBank> bank_;
};

// The full contents of a STRIDE array (for the small constant and shared paths).
std::vector<uint32_t> expand_stride(const mt_chase_array& a);
// The pointer form of an EXPLICIT array placed at `device_base` (MT_PATTERN_POINTERS on a
// global path): the 64-bit address of the next element at each even element, written to
// `out` (pointer_form_words(a) words). Returns the first even element whose index is past the
// array, or a.elems where there is none (odd elements are never chased in this form).
uint64_t pointer_form_words(const mt_chase_array& a);
uint64_t pointer_form(const mt_chase_array& a, const uint32_t* device_base, uint32_t* out);

}  // namespace memtopo::cuda
