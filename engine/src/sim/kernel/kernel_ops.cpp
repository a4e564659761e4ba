// The toolkit's operations inside a simulated thread (mt_kernel_ops): each memory operation
// joins its warp's open group, and a group, once no other lane can join it, is priced as one
// warp instruction: global loads coalesce into lines that walk the hierarchy and queue at the
// SM's issue, its miss queues and the L1, L2 and DRAM rates; shared-memory words take bank
// turns; another block's shared memory costs the cluster latency.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <unordered_map>

#include "memtopo/errors.hpp"
#include "sim/kernel/kernel_runtime.hpp"

namespace memtopo::sim::kernel {

namespace {

// Stack of each simulated thread; sanitizers need much more.
#if defined(__SANITIZE_ADDRESS__)
constexpr size_t kStackBytes = 512 * 1024;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr size_t kStackBytes = 512 * 1024;
#else
constexpr size_t kStackBytes = 64 * 1024;
#endif
#else
constexpr size_t kStackBytes = 64 * 1024;
#endif

KernelRuntime* rt(void* self) { return static_cast<KernelRuntime*>(self); }

// Each entry point turns an engine error into the launch's failure: nothing is thrown into the
// plugin's kernel code.
// The message leaves the catch block before the thread's stack is dropped: an exception still
// being handled there would never be freed.
template <class F>
auto guarded(void* self, F&& f) -> decltype(f()) {
  std::string what;
  try {
    return f();
  } catch (const std::exception& e) {
    what = e.what();
  }
  rt(self)->op_fail(std::move(what));
}

}  // namespace

KernelRuntime::KernelRuntime(Gpu& gpu) : gpu_(gpu), stacks_(kStackBytes) {
  ops_.struct_size = sizeof ops_;
  ops_.self = this;
  ops_.place = [](void* self, mt_thread_place* out) { rt(self)->op_place(out); };
  ops_.clock = [](void* self) { return rt(self)->op_clock(); };
  ops_.globaltimer_ns = [](void* self) { return guarded(self, [&] { return rt(self)->op_globaltimer_ns(); }); };
  ops_.load = [](void* self, uint32_t path, const uint64_t* a, uint32_t n, uint32_t bytes, void* out) {
    guarded(self, [&] { rt(self)->op_load(path, a, n, bytes, out); });
  };
  ops_.store = [](void* self, uint32_t path, uint64_t a, uint32_t bytes, const void* v) {
    guarded(self, [&] { rt(self)->op_store(path, a, bytes, v); });
  };
  ops_.atomic = [](void* self, uint32_t op, uint32_t, uint64_t a, uint32_t bytes, uint64_t operand, uint64_t cmp) {
    return guarded(self, [&] { return rt(self)->op_atomic(op, a, bytes, operand, cmp); });
  };
  ops_.barrier = [](void* self, uint32_t scope) { guarded(self, [&] { rt(self)->op_barrier(scope); }); };
  ops_.shared_base = [](void* self, uint32_t* size) { return rt(self)->op_shared_base(size); };
  ops_.shared_static = [](void* self, uint32_t bytes, uint32_t align) {
    return guarded(self, [&] { return rt(self)->op_shared_static(bytes, align); });
  };
  ops_.spend = [](void* self, uint64_t cycles) { guarded(self, [&] { rt(self)->op_spend(cycles); }); };
  ops_.fail = [](void* self, const char* message) { rt(self)->op_fail(message ? message : "failed"); };
  ops_.program = [](void* self, const mt_access_program* p, mt_program_result* r) {
    guarded(self, [&] { rt(self)->op_program(p, r); });
  };

  const Model& m = gpu.model();
  const size_t sms = size_t(std::max(m.info.sm_count, 1));
  auto log2 = [](uint64_t v) { return uint32_t(63 - __builtin_clzll(std::max<uint64_t>(v, 1))); };
  sector_shift_ = log2(std::max<uint32_t>(m.l2.geometry.sector_bytes, 4));
  line_shift_ = std::max(log2(m.l2.geometry.line_bytes), sector_shift_);
  counted_sectors_ = std::max<uint32_t>(1, (uint32_t(1) << sector_shift_) / Gpu::kCountedSectorBytes);
  request_shift_ = std::max(line_shift_, 7u);
  const double ghz = m.info.sm_clock_khz > 0 ? double(m.info.sm_clock_khz) / 1e6 : 1.0;
  issue_.assign(sms, Server(double(std::max(m.warp_schedulers, 1u))));  // a warp instruction per scheduler and cycle
  l1_.assign(sms, Server(m.stream_peaks.l1_read_bytes_per_cycle_per_sm));
  cluster_port_.assign(sms, Server(m.cluster_bytes_per_cycle_per_sm));
  l2_in_flight_.assign(sms, InFlight(m.l2_loads_in_flight));
  dram_in_flight_.assign(sms, InFlight(m.dram_loads_in_flight));
  l2_read_rate_ = m.stream_peaks.l2_read_bytes_per_cycle;
  l2_write_rate_ = m.stream_peaks.l2_write_bytes_per_cycle;
  dram_read_rate_ = m.stream_peaks.dram_read_bytes_per_second / 1e9 / ghz;
  dram_write_rate_ = m.stream_peaks.dram_write_bytes_per_second / 1e9 / ghz;
  // What the turns between reads and writes leave of each direction's rate: a copy's bytes over
  // the harmonic mean of the two rates (reads and writes of a copy share the port).
  const StreamPeaks& s = m.stream_peaks;
  dram_turn_factor_ = 1;
  if (s.dram_copy_bytes_per_second > 0 && s.dram_read_bytes_per_second > 0 && s.dram_write_bytes_per_second > 0) {
    const double mean = 2 / (1 / s.dram_read_bytes_per_second + 1 / s.dram_write_bytes_per_second);
    dram_turn_factor_ = std::min(1.0, s.dram_copy_bytes_per_second / mean);
  }
}

void KernelRuntime::op_place(mt_thread_place* out) const {
  const Thread* t = current_;
  const mt_kernel_launch& l = *launch_;
  const uint32_t size = out->struct_size;
  mt_thread_place p{};
  p.struct_size = sizeof p;
  p.thread = t->idx;
  p.block = t->block->idx;
  p.block_dim = l.block;
  p.grid_dim = l.grid;
  p.cluster_rank = t->block->rank;
  p.cluster_blocks = cluster_size_;
  p.sm = t->block->sm;
  p.sm_count = uint32_t(std::max(gpu_.model().info.sm_count, 1));
  p.lane = t->lane;
  p.warp = t->warp;
  std::memcpy(out, &p, std::min<size_t>(size, sizeof p));
  out->struct_size = size;
}

uint64_t KernelRuntime::op_clock() const { return uint64_t(current_->clock); }

uint64_t KernelRuntime::op_globaltimer_ns() {
  Thread* t = current_;
  const double khz = double(gpu_.model().info.sm_clock_khz), cycles_per_ns = khz > 0 ? khz / 1e6 : 1.0;
  // A read of the global timer takes its tick's worth of cycles: a kernel that waits on the
  // timer (a spin) moves on, as on the GPU. A wait that no write anywhere has ended for 64 us
  // (a timeout running out, a block holding its SM) reads the timer ever less often: at most an
  // eighth of the wait so far later than a read each tick would, and in a few dozen reads where
  // milliseconds of ticks would take seconds to simulate.
  if (t->quiet_writes != writes_) {
    t->quiet_writes = writes_;
    t->quiet_since = t->clock;
  }
  const double quiet = t->clock - t->quiet_since;
  op_spend(quiet > 64'000.0 * cycles_per_ns ? uint64_t(quiet / 8) : 32);
  return uint64_t(double(op_clock()) / cycles_per_ns);
}

void* KernelRuntime::op_shared_base(uint32_t* size) const {
  if (size) *size = current_->block->shared_bytes;
  return current_->block->shared;
}

void* KernelRuntime::op_shared_static(uint32_t bytes, uint32_t align) {
  Thread* t = current_;
  Block* b = t->block;
  const uint32_t a = std::max(align, 1u);
  const uint32_t at = (b->dynamic_bytes + t->static_shared + a - 1) / a * a;
  if (uint64_t(at) + bytes > b->shared_bytes)
    op_fail("the kernel's static shared arrays pass 48 KiB (the most a block declares statically)");
  t->static_shared = at + bytes - b->dynamic_bytes;
  return b->shared + at;
}

void KernelRuntime::op_spend(uint64_t cycles) {
  Thread* t = current_;
  if (!open_.members.empty()) resolve_open();
  t->clock += double(cycles);
  ready_.push(Key::of(t));
  wait_here(t);
}

void KernelRuntime::op_fail(std::string message) {
  Thread* t = current_;
  const mt_dim3 b = t->block->idx, i = t->idx;
  if (failure_.empty())
    failure_ = "block (" + std::to_string(b.x) + "," + std::to_string(b.y) + "," + std::to_string(b.z) + ") thread (" +
               std::to_string(i.x) + "," + std::to_string(i.y) + "," + std::to_string(i.z) + "): " + message;
  // This frame and its caller's are dropped with the stack, never unwound: free what they hold.
  std::string().swap(message);
  finished_ = nullptr;  // its stack is dropped with the launch
  switch_to(t, nullptr);
  __builtin_unreachable();
}

void KernelRuntime::op_load(uint32_t path, const uint64_t* addresses, uint32_t count, uint32_t bytes, void* out) {
  Thread* t = current_;
  if (count == 0) return;
  if (bytes != 4 && bytes != 8 && bytes != 16) op_fail("a load of " + std::to_string(bytes) + " bytes (4, 8 or 16)");
  const uint32_t p = path & 0xffu;
  if (p != MT_OP_PATH_REGISTER)
    for (uint32_t i = 0; i < count; ++i)
      std::memcpy(static_cast<char*>(out) + size_t(i) * bytes, bytes_at(t, p, addresses[i], bytes), bytes);
  t->op = PendingOp{};
  t->op.kind = OpKind::Load;
  t->op.path = p;
  t->op.timed = (path & MT_OP_TIMED) != 0;
  t->op.addresses = addresses;
  t->op.count = count;
  t->op.bytes = bytes;
  t->op.out = out;
  submit(t);
}

void KernelRuntime::op_store(uint32_t path, uint64_t address, uint32_t bytes, const void* value) {
  Thread* t = current_;
  const uint32_t p = path & 0xffu;
  std::memcpy(bytes_at(t, p, address, bytes), value, bytes);
  ++writes_;
  t->op = PendingOp{};
  t->op.kind = OpKind::Store;
  t->op.path = p;
  t->op.address = address;
  t->op.addresses = &t->op.address;
  t->op.count = 1;
  t->op.bytes = bytes;
  submit(t);
}

uint64_t KernelRuntime::op_atomic(uint32_t op, uint64_t address, uint32_t bytes, uint64_t operand, uint64_t compare) {
  Thread* t = current_;
  if (bytes != 4 && bytes != 8) op_fail("an atomic of " + std::to_string(bytes) + " bytes (4 or 8)");
  // A generic address: the block's shared memory or a buffer.
  const char* p = reinterpret_cast<const char*>(address);
  const Block* b = t->block;
  char* at = p >= b->shared && p + bytes <= b->shared + b->shared_bytes ? const_cast<char*>(p) : global_bytes(address, bytes);
  if (!at) op_fail("an atomic on an address in no buffer and not in the block's shared memory");
  uint64_t old = 0, now = 0;
  std::memcpy(&old, at, bytes);
  const uint64_t mask = bytes == 4 ? 0xffffffffull : ~0ull;
  switch (op) {
    case MT_ATOMIC_ADD: now = (old + operand) & mask; break;
    case MT_ATOMIC_CAS: now = old == (compare & mask) ? operand & mask : old; break;
    case MT_ATOMIC_EXCH: now = operand & mask; break;
    case MT_ATOMIC_MAX: now = std::max(old, operand & mask); break;
    default: op_fail("atomic operation " + std::to_string(op) + " is not one of MT_ATOMIC_*");
  }
  std::memcpy(at, &now, bytes);
  if (now != old) ++writes_;
  t->op = PendingOp{};
  t->op.kind = OpKind::Atomic;
  t->op.atomic_op = op;
  t->op.address = address;
  t->op.addresses = &t->op.address;
  t->op.count = 1;
  t->op.bytes = bytes;
  submit(t);
  return old;
}

bool KernelRuntime::earliest(const Thread* t) const {
  return !ready_.empty() && ready_.top().item == t;
}

void KernelRuntime::wait_here(Thread* t) {
  if (earliest(t)) {
    pop_ready();  // still the earliest: go on without a switch
    return;
  }
  // The earliest thread may run at once, unless a group must be priced or a program's step
  // taken first (the scheduler does those).
  const Key& top = ready_.top();
  if (!top.is_program && (open_.members.empty() || (top.clock == open_.clock && top.warp == open_.warp)))
    switch_to(t, pop_ready());
  else
    switch_to(t, nullptr);
}

void KernelRuntime::submit(Thread* t) {
  const PendingOp& op = t->op;
  if (!open_.members.empty() && (open_.clock != t->clock || open_.warp != t->warp_key || open_.kind != op.kind ||
                                 open_.path != op.path || open_.bytes != op.bytes || open_.signature != op.signature))
    resolve_open();
  if (open_.members.empty()) {
    open_.clock = t->clock;
    open_.warp = t->warp_key;
    open_.kind = op.kind;
    open_.path = op.path;
    open_.bytes = op.bytes;
    open_.signature = op.signature;
  }
  open_.members.push_back(t);
  // Another lane of this warp at this cycle may still issue the same instruction: it runs next.
  if (!ready_.empty() && !ready_.top().is_program && ready_.top().clock == t->clock && ready_.top().warp == t->warp_key) {
    switch_to(t, pop_ready());
    return;
  }
  const bool parked = op.kind == OpKind::Program;  // the warp's program runs the lanes on
  resolve_open();
  if (parked)
    switch_to(t, nullptr);
  else
    wait_here(t);
}

void KernelRuntime::resolve_open() {
  if (open_.members.empty()) return;
  Group g = std::move(open_);
  open_ = Group{};
  open_.members.swap(spare_members_);  // the last group's list, emptied: no allocation per group
  // Its list goes back to spare_members_ once priced.
  struct Spare {
    std::vector<Thread*>& members;
    std::vector<Thread*>& spare;
    ~Spare() {
      members.clear();
      spare.swap(members);
    }
  } keep{g.members, spare_members_};
  if (g.kind == OpKind::Program) return start_program(g);  // its lanes wait for the program
  switch (g.kind) {
    case OpKind::Load:
      if (g.path == MT_SPACE_SHARED || g.path == MT_OP_PATH_CLUSTER)
        price_shared(g);
      else
        price_global_loads(g);
      break;
    case OpKind::Store: price_store(g); break;
    case OpKind::Atomic: price_atomic(g); break;
    default: break;
  }
  for (Thread* m : g.members) ready_.push(Key::of(m));
}

}  // namespace memtopo::sim::kernel
