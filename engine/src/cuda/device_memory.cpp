#include "device_memory.hpp"

#include <algorithm>
#include <numeric>
#include <thread>

#include "cuda_util.hpp"

namespace memtopo::cuda {
namespace {

// Buffers kept for reuse beyond this are freed when given back.
constexpr uint64_t kMaxCachedBytes = uint64_t(8) << 30;
// The pointer form of an array is written by up to this many host threads, each at least this
// many element pairs (a few MiB of footprint).
constexpr uint64_t kMaxFormThreads = 8;
constexpr uint64_t kPairsPerThread = uint64_t(1) << 20;

}  // namespace

DevicePool::~DevicePool() { trim(); }

void DevicePool::PinnedFree::operator()(uint32_t* p) const { cudaFreeHost(p); }

uint32_t* DevicePool::staging(uint64_t words) {
  if (words > staging_words_) {
    // Headroom, so that a sweep of growing arrays pins memory a few times, not for each.
    const uint64_t want = std::max(words + words / 2, 2 * staging_words_);
    staging_.reset();
    staging_words_ = 0;
    void* p = nullptr;
    check(cudaMallocHost(&p, want * 4), "cudaMallocHost");
    staging_.reset(static_cast<uint32_t*>(p));
    staging_words_ = want;
  }
  return staging_.get();
}

DeviceBuffer DevicePool::take(uint64_t bytes) {
  const uint64_t capacity = round_up(bytes ? bytes : 1, kArrayAlignment);
  // Reuse a free buffer of the same size class (at most twice as large, so a small request
  // does not tie up a huge buffer).
  auto it = free_.lower_bound(capacity);
  if (it != free_.end() && it->first <= 2 * capacity) {
    DeviceBuffer b = it->second;
    free_.erase(it);
    cached_bytes_ -= b.capacity;
    return b;
  }
  std::optional<MappedMemory> mapped = map_device_memory(capacity);
  if (!mapped) {  // out of memory: free the cache and try once more
    trim();
    mapped = map_device_memory(capacity);
  }
  if (mapped) {
    DeviceBuffer b;
    b.data = static_cast<uint32_t*>(mapped->data);
    b.capacity = capacity;
    b.mapped = *mapped;
    return b;
  }
  void* raw = nullptr;  // no virtual memory management: cudaMalloc, 2 MiB aligned by hand
  cudaError_t e = cudaMalloc(&raw, capacity + kArrayAlignment);
  if (e == cudaErrorMemoryAllocation) {  // not sticky: free the cache and try once more
    cudaGetLastError();
    trim();
    e = cudaMalloc(&raw, capacity + kArrayAlignment);
  }
  if (e != cudaSuccess) {
    cudaGetLastError();
    throw Error("cudaMalloc of " + std::to_string(capacity + kArrayAlignment) + " bytes: " + cudaGetErrorString(e));
  }
  DeviceBuffer b;
  b.raw = raw;
  b.data = reinterpret_cast<uint32_t*>(round_up(reinterpret_cast<uintptr_t>(raw), kArrayAlignment));
  b.capacity = capacity;
  return b;
}

void release(const DeviceBuffer& b) {
  if (b.mapped.data)
    unmap_device_memory(b.mapped);
  else
    cudaFree(b.raw);  // errors ignored: nothing to do about them here
}

void DevicePool::give_back(DeviceBuffer b) {
  if (b.capacity > kMaxCachedBytes) {
    release(b);
    return;
  }
  // Room by freeing the buffers given back longest ago, not this one: a probe's buffers are
  // kept for its next call while an earlier probe's sizes are gone. Releasing the newest
  // instead mapped a stream's 1.6 GiB buffers anew for every launch once earlier probes had
  // filled the cache, and DRAM streams after that churn were 16 % slower on an H100
  // (docs/results/log/h100.md, "What l1d-geometry leaves behind").
  while (cached_bytes_ + b.capacity > kMaxCachedBytes && !free_.empty()) {
    auto oldest = free_.begin();
    for (auto it = free_.begin(); it != free_.end(); ++it)
      if (it->second.returned < oldest->second.returned) oldest = it;
    cached_bytes_ -= oldest->second.capacity;
    release(oldest->second);
    free_.erase(oldest);
  }
  b.returned = ++give_backs_;
  cached_bytes_ += b.capacity;
  free_.emplace(b.capacity, b);
}

bool DevicePool::holds(const void* data) const {
  return std::any_of(free_.begin(), free_.end(), [&](const auto& e) { return e.second.data == data; });
}

void DevicePool::trim() {
  for (auto& [cap, b] : free_) release(b);
  free_.clear();
  cached_bytes_ = 0;
}

uint64_t pointer_form_words(const mt_chase_array& a) { return a.elems + a.elems % 2; }

uint64_t pointer_form(const mt_chase_array& a, const uint32_t* device_base, uint32_t* out) {
  // Each even element's 64-bit address of its next element, in sequential passes over parts
  // of the array on several host threads (on one thread, writing and checking the forms took
  // a sixth of an L2 footprint sweep's time on an H100; docs/results/log/h100.md).
  // Visited elements are even (engine/jobs.cpp), so the odd element a pointer's upper half
  // covers is never read; an odd length lets the last pointer's upper half pass the array,
  // into the buffer's 4 spare bytes.
  const uint64_t pairs = (a.elems + 1) / 2;
  const uint64_t parts = std::clamp<uint64_t>(pairs / kPairsPerThread, 1, kMaxFormThreads);
  std::vector<uint64_t> first_bad(parts, a.elems);
  auto form = [&](uint64_t part) {
    const uint64_t end = std::min(a.elems, 2 * (pairs * (part + 1) / parts));
    for (uint64_t i = 2 * (pairs * part / parts); i < end; i += 2) {
      const uint32_t next = a.next[i];
      if (next >= a.elems && first_bad[part] == a.elems) first_bad[part] = i;
      const uint64_t address = reinterpret_cast<uint64_t>(device_base + next);
      out[i] = uint32_t(address);
      out[i + 1] = uint32_t(address >> 32);
    }
  };
  std::vector<std::thread> helpers;
  for (uint64_t part = 1; part < parts; ++part) helpers.emplace_back(form, part);
  form(0);
  for (std::thread& t : helpers) t.join();
  return *std::min_element(first_bad.begin(), first_bad.end());
}

std::vector<uint32_t> expand_stride(const mt_chase_array& a) {
  std::vector<uint32_t> v(a.elems);
  const uint64_t stride = a.stride_elems % a.elems;
  for (uint64_t i = 0; i < a.elems; ++i) v[i] = uint32_t((i + stride) % a.elems);
  return v;
}

CallArrays::~CallArrays() {
  for (Entry& e : entries_) {
    if (e.texture_object) cudaDestroyTextureObject(e.texture_object);
    if (e.buffer.data) pool_.give_back(e.buffer);
  }
}

CallArrays::Entry& CallArrays::entry(const mt_chase_array* a, const std::string& where) {
  for (Entry& e : entries_)
    if (e.array == a) return e;
  Entry e;
  e.array = a;
  e.where = where;
  entries_.push_back(e);
  return entries_.back();
}

void CallArrays::need(const mt_chase_array* a, mt_space space, uint32_t start, uint64_t loads,
                      const std::string& where, bool pointers) {
  Entry& e = entry(a, where);
  // One buffer holds one form: indices or addresses. A texture fetch takes indices either way.
  const bool addresses = pointers && space != MT_SPACE_TEXTURE;
  if (e.pointers >= 0 && e.pointers != int(addresses))
    throw Error(where + ": the array is chased by index and by address (MT_PATTERN_POINTERS) in one call; "
                "run them in separate calls or give each its own array");
  e.pointers = int(addresses);
  if (addresses && space == MT_SPACE_CONSTANT && a->elems > limits_.constant_elems)
    throw Error(where + ": a constant pointer chase must fit the " + std::to_string(limits_.constant_elems * 4) +
                "-byte constant buffer");
  if (addresses && space == MT_SPACE_CONSTANT && limits_.constant_base + 4 * limits_.constant_elems > UINT32_MAX)
    throw Error(where + ": the constant buffer's addresses do not fit 32 bits on this device; no constant pointer chase");
  if (addresses && (space == MT_SPACE_GLOBAL_CA || space == MT_SPACE_GLOBAL_CG || space == MT_SPACE_READONLY))
    e.global_pointers = true;
  switch (space) {
    case MT_SPACE_TEXTURE:
      if (limits_.texture_1d_linear_elems && a->elems > limits_.texture_1d_linear_elems)
        throw Error(where + ": the texture path reads at most " + std::to_string(limits_.texture_1d_linear_elems) +
                    " elements (cudaDevAttrMaxTexture1DLinearWidth) but the array has " + std::to_string(a->elems) +
                    "; use a smaller footprint or the read-only path (MT_SPACE_READONLY)");
      e.texture = true;
      e.global = true;
      break;
    case MT_SPACE_CONSTANT:
      if (!e.constant) {
        const std::string buffer = std::to_string(limits_.constant_elems * 4) + "-byte constant buffer";
        if (a->elems > limits_.constant_elems) {
          // Past the buffer: the rest goes to the kernel-parameter bank, so the array must
          // start at element 0 of the buffer and be the call's only constant array.
          const uint64_t reach = limits_.constant_elems + limits_.param_bank_elems;
          if (a->elems > reach)
            throw Error(where + ": the array takes " + std::to_string(a->elems * 4) +
                        " bytes, more than the constant path reaches (" + std::to_string(reach * 4) + " bytes: the " +
                        buffer + " and " + std::to_string(limits_.param_bank_elems * 4) +
                        " bytes of kernel parameters)");
          if (constant_used_ > 0)
            throw Error(where + ": an array longer than the " + buffer +
                        " must be the only array a call reads through constant memory; run the others in "
                        "another call");
          wide_ = true;
          constant_used_ = limits_.constant_elems;
          e.wide = true;
        } else {
          if (constant_used_ + a->elems > limits_.constant_elems)
            throw Error(where + ": the arrays read through constant memory take " +
                        std::to_string((constant_used_ + a->elems) * 4) +
                        " bytes together, more than the " + buffer +
                        (wide_ ? "; an array longer than the buffer is in this call, and it must be the only array a call "
                                 "reads through constant memory"
                               : ""));
          e.constant_offset = uint32_t(constant_used_);
          constant_used_ += a->elems;
        }
      }
      e.constant = true;
      break;
    default:  // the global paths, and SHARED (copied from global memory into shared memory)
      e.global = true;
      break;
  }
  if (a->kind == MT_ARRAY_STRIDE) {
    uint64_t& n = e.starts[start];
    n = std::max(n, loads);
  }
}

void CallArrays::upload() {
  for (Entry& e : entries_) {
    const mt_chase_array& a = *e.array;
    // An index past the end would make the kernel read outside its buffer (and a fault
    // poisons the whole CUDA context), so refuse it here. Where the array is only chased by
    // address on a global path, its pointer form checks the elements it reads.
    auto refuse = [&](uint64_t i) {
      throw Error(e.where + ": element " + std::to_string(i) + " of the array holds " + std::to_string(a.next[i]) +
                  ", past its " + std::to_string(a.elems) + " elements");
    };
    const bool pointers_only = e.global_pointers && !e.texture && !e.constant;
    if (a.kind == MT_ARRAY_EXPLICIT && !pointers_only)
      for (uint64_t i = 0; i < a.elems; ++i)
        if (a.next[i] >= a.elems) refuse(i);
    if (e.global) {
      // A pointer at the last element reaches 4 bytes past the array.
      e.buffer = pool_.take(a.elems * 4 + (e.global_pointers ? 4 : 0));
      if (a.kind == MT_ARRAY_EXPLICIT && e.global_pointers) {
        // The pointer form is written from the host like the index form, so that both leave
        // the same lines in the caches (a kernel's writes would leave them dirty in the L2).
        const uint64_t words = pointer_form_words(a);
        uint32_t* staged = pool_.staging(words);
        if (const uint64_t bad = pointer_form(a, e.buffer.data, staged); bad < a.elems) refuse(bad);
        check(cudaMemcpy(e.buffer.data, staged, words * 4, cudaMemcpyHostToDevice), "cudaMemcpy");
      } else if (a.kind == MT_ARRAY_EXPLICIT) {
        check(cudaMemcpy(e.buffer.data, a.next, a.elems * 4, cudaMemcpyHostToDevice), "cudaMemcpy");
      }
      if (a.kind == MT_ARRAY_STRIDE) {
        // next[i] = (i + stride) % elems at the visited positions only: the cycle from each
        // start, as far as the chase goes.
        const uint64_t stride = a.stride_elems % a.elems;
        const uint64_t cycle = a.elems / std::gcd(a.elems, stride);
        for (const auto& [start, loads] : e.starts) {
          const uint64_t count = std::min(cycle, loads);
          check(e.global_pointers ? launch_stride_pointer_fill(e.buffer.data, a.elems, stride, start, count)
                                  : launch_stride_fill(e.buffer.data, a.elems, stride, start, count),
                "stride fill: cudaLaunchKernel");
        }
      }
    }
    if (e.texture) {
      cudaResourceDesc res{};
      res.resType = cudaResourceTypeLinear;
      res.res.linear.devPtr = e.buffer.data;
      res.res.linear.desc = cudaCreateChannelDesc<unsigned int>();
      res.res.linear.sizeInBytes = a.elems * 4;
      cudaTextureDesc tex{};
      tex.readMode = cudaReadModeElementType;
      cudaTextureObject_t t = 0;
      check(cudaCreateTextureObject(&t, &res, &tex, nullptr), "cudaCreateTextureObject");
      e.texture_object = t;
    }
    if (e.constant) {  // at most about 95 KiB: a stride array is simply expanded
      std::vector<uint32_t> expanded = a.kind == MT_ARRAY_STRIDE ? expand_stride(a) : std::vector<uint32_t>{};
      if (e.pointers == 1) {  // const-space addresses of the next elements (32 bits, checked in need())
        if (expanded.empty()) expanded.assign(a.next, a.next + a.elems);
        for (uint32_t& v : expanded) v = uint32_t(limits_.constant_base + 4 * (uint64_t(e.constant_offset) + v));
      }
      const uint32_t* data = expanded.empty() ? a.next : expanded.data();
      const uint64_t in_buffer = e.wide ? limits_.constant_elems : a.elems;
      check(upload_constant(data, in_buffer, e.constant_offset), "cudaMemcpyToSymbol");
      if (e.wide) {
        bank_ = std::make_unique<ParamBank>();  // value-initialized: zeros past the array
        std::copy(data + in_buffer, data + a.elems, bank_->next);
      }
    }
  }
}

ChaseSource CallArrays::source(const mt_chase_array* a, uint32_t shared_offset) const {
  ChaseSource s;
  for (const Entry& e : entries_) {
    if (e.array != a) continue;
    s.global = e.buffer.data;
    s.texture = e.texture_object;
    s.constant_offset = e.constant_offset;
    s.constant_split = e.wide ? uint32_t(limits_.constant_elems) : 0xffffffffu;
    s.elems = a->elems;
    s.shared_offset = shared_offset;
    return s;
  }
  throw Error("internal: array not placed");
}

}  // namespace memtopo::cuda
