// Launches on the simulated GPU: where blocks go, the scheduler that runs threads in the
// order of their clocks, barriers, and the end of a thread and of a block.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstddef>
#include <cstring>

#include "memtopo/errors.hpp"
#include "sim/kernel/kernel_runtime.hpp"

namespace memtopo::sim::kernel {

namespace {

// Static shared arrays of a block (CUDA's limit for them).
constexpr uint32_t kStaticSharedBytes = 48 * 1024;
// How far the clock moves before the servers drop their past bookings (advance_to).
constexpr double kForgetCycles = 65536;
// The most blocks of one cluster: 8 portably, 16 with the non-portable size allowed.
constexpr uint32_t kMaxPortableClusterBlocks = 8, kMaxClusterBlocks = 16;
// Cycles from the last thread at a barrier to the first one past it.
constexpr double kBarrierCycles = 1;

thread_local KernelRuntime* tl_runtime = nullptr;

std::string dims(const mt_dim3& d) {
  return std::to_string(d.x) + "x" + std::to_string(d.y) + "x" + std::to_string(d.z);
}
uint64_t count(const mt_dim3& d) { return uint64_t(d.x) * d.y * d.z; }

}  // namespace

Placement KernelRuntime::placement(const mt_kernel_launch& l) const {
  const mt_device_info& d = gpu_.model().info;
  const uint64_t threads = count(l.block);
  if (threads == 0 || count(l.grid) == 0)
    throw Refused("a grid of " + dims(l.grid) + " blocks of " + dims(l.block) + " threads launches nothing");
  if (d.max_threads_per_block > 0 && threads > uint64_t(d.max_threads_per_block))
    throw Refused("blocks of " + std::to_string(threads) + " threads: the device takes at most " +
                  std::to_string(d.max_threads_per_block));
  const int64_t optin = std::max(d.shared_per_block_optin_bytes, d.shared_per_block_bytes);
  if (optin > 0 && int64_t(l.dynamic_shared_bytes) > optin)
    throw Refused(std::to_string(l.dynamic_shared_bytes) + " B of dynamic shared memory: a block takes at most " +
                  std::to_string(optin));
  Placement p;
  uint64_t fit = d.max_blocks_per_sm > 0 ? uint64_t(d.max_blocks_per_sm) : 32;
  if (d.max_threads_per_sm > 0) fit = std::min<uint64_t>(fit, uint64_t(d.max_threads_per_sm) / threads);
  if (l.dynamic_shared_bytes > 0 && d.shared_per_sm_bytes > 0)
    fit = std::min<uint64_t>(fit, uint64_t(d.shared_per_sm_bytes) / l.dynamic_shared_bytes);
  p.blocks_per_sm = uint32_t(fit);
  const uint64_t cluster = count(l.cluster);
  if (cluster > 1) {
    if (d.cc_major < 9)
      throw Refused("clusters of blocks need compute capability 9.0; the simulated device has " +
                    std::to_string(d.cc_major) + "." + std::to_string(d.cc_minor));
    if (l.grid.x % std::max(1u, l.cluster.x) || l.grid.y % std::max(1u, l.cluster.y) ||
        l.grid.z % std::max(1u, l.cluster.z))
      throw Refused("a grid of " + dims(l.grid) + " is no whole number of clusters of " + dims(l.cluster));
    const bool non_portable = l.struct_size > offsetof(mt_kernel_launch, flags) && (l.flags & MT_LAUNCH_NON_PORTABLE_CLUSTER);
    if (cluster > (non_portable ? kMaxClusterBlocks : kMaxPortableClusterBlocks))
      throw Refused("a cluster of " + std::to_string(cluster) + " blocks: at most " +
                    std::to_string(kMaxPortableClusterBlocks) + ", or " + std::to_string(kMaxClusterBlocks) +
                    " with the non-portable size allowed");
  }
  return p;
}

uint32_t KernelRuntime::max_active_clusters(const mt_kernel_launch& l) const {
  Placement p;
  try {
    p = placement(l);
  } catch (const Refused&) {
    return 0;
  }
  const uint32_t size = uint32_t(std::max<uint64_t>(count(l.cluster), 1));
  if (size > kMaxClusterBlocks) return 0;
  uint32_t clusters = 0;
  for (const auto& gpc : gpu_.model().gpcs) clusters += uint32_t(gpc.size()) * p.blocks_per_sm / size;
  return clusters;
}

uint32_t KernelRuntime::largest_gpc() const {
  size_t most = 0;
  for (const auto& gpc : gpu_.model().gpcs) most = std::max(most, gpc.size());
  return uint32_t(most);
}

Block* KernelRuntime::start_block(uint32_t linear, uint32_t sm, Cluster* cluster, uint32_t rank, double now) {
  const mt_kernel_launch& l = *launch_;
  auto b = std::make_unique<Block>();
  b->linear = linear;
  b->idx = {linear % l.grid.x, linear / l.grid.x % l.grid.y, uint32_t(linear / (uint64_t(l.grid.x) * l.grid.y))};
  b->sm = sm;
  b->cluster = cluster;
  b->rank = rank;
  b->dynamic_bytes = l.dynamic_shared_bytes;
  b->shared_bytes = l.dynamic_shared_bytes + kStaticSharedBytes;
  b->shared = static_cast<char*>(std::calloc(b->shared_bytes, 1));  // untouched pages cost nothing
  if (!b->shared) throw Error("no host memory for a simulated block's shared memory");
  const uint32_t n = uint32_t(count(l.block));
  const uint64_t warps = (n + 31) / 32;
  b->threads.resize(n);
  b->live = n;
  live_threads_ += n;
  for (uint32_t i = 0; i < n; ++i) {
    Thread& t = b->threads[i];
    t.block = b.get();
    t.linear = i;
    t.idx = {i % l.block.x, i / l.block.x % l.block.y, i / (l.block.x * l.block.y)};
    t.lane = i % 32;
    t.warp = i / 32;
    t.warp_key = uint64_t(linear) * warps + t.warp;
    t.clock = now;
    t.context.fn = &KernelRuntime::thread_entry;  // its stack when it first runs (switch_to)
    t.context.arg = &t;
    ready_.push(Key::of(&t));
  }
  if (cluster) {
    cluster->blocks[rank] = b.get();
    cluster->live += n;
  }
  --free_slots_[sm];
  blocks_.push_back(std::move(b));
  return blocks_.back().get();
}

void KernelRuntime::place_waiting_blocks(double now) {
  const uint32_t sms = uint32_t(free_slots_.size());
  while (next_block_ < total_blocks_) {
    if (cluster_size_ <= 1) {
      // Round robin from the SM after the last one used, as a GPU spreads a grid.
      uint32_t sm = UINT32_MAX;
      for (uint32_t k = 0; k < sms && sm == UINT32_MAX; ++k)
        if (free_slots_[(next_block_ + k) % sms] > 0) sm = (next_block_ + k) % sms;
      if (sm == UINT32_MAX) return;
      start_block(next_block_++, sm, nullptr, 0, now);
      continue;
    }
    // A cluster: all its blocks at once, on the SMs of one GPC, each on the SM with most room.
    bool placed = false;
    for (const auto& gpc : gpu_.model().gpcs) {
      if (placed) break;
      uint32_t room = 0;
      for (uint32_t s : gpc) room += free_slots_[s];
      if (room < cluster_size_) continue;
      clusters_.push_back(std::make_unique<Cluster>());
      Cluster* c = clusters_.back().get();
      c->blocks.resize(cluster_size_);
      for (uint32_t r = 0; r < cluster_size_; ++r) {
        uint32_t best = gpc.front();
        for (uint32_t s : gpc)
          if (free_slots_[s] > free_slots_[best]) best = s;
        start_block(next_block_++, best, c, r, now);
      }
      placed = true;
    }
    if (!placed) return;
  }
}

void KernelRuntime::thread_entry(void* arg) {
  auto* t = static_cast<Thread*>(arg);
  KernelRuntime* rt = tl_runtime;
  rt->launch_->thread_main(rt->launch_->args);  // the plugin's side catches its own errors
  try {
    rt->thread_done(t);
  } catch (const std::exception& e) {
    if (rt->failure_.empty()) rt->failure_ = e.what();
  }
  rt->finished_ = t;
  rt->switch_to(t, nullptr);  // never comes back
}

void KernelRuntime::thread_done(Thread* t) {
  t->done = true;
  --live_threads_;
  end_ = std::max(end_, t->clock);
  Block* b = t->block;
  --b->live;
  // Threads that ended are no longer waited for at a barrier.
  if (b->barrier.arrived > 0 && b->barrier.arrived >= b->live) release(b->barrier);
  if (Cluster* c = b->cluster) {
    --c->live;
    if (c->barrier.arrived > 0 && c->barrier.arrived >= c->live) release(c->barrier);
  }
  if (b->live == 0) {
    ++free_slots_[b->sm];
    place_waiting_blocks(t->clock);
  }
}

void KernelRuntime::arrive(Barrier& b, uint32_t live, Thread* t) {
  ++b.arrived;
  b.latest = std::max(b.latest, t->clock);
  b.waiting.push_back(t);
  if (b.arrived >= live) release(b);
}

void KernelRuntime::release(Barrier& b) {
  for (Thread* w : b.waiting) {
    w->clock = b.latest + kBarrierCycles;
    ready_.push(Key::of(w));
  }
  b = Barrier{};
}

void KernelRuntime::op_barrier(uint32_t scope) {
  Thread* t = current_;
  if (!open_.members.empty()) resolve_open();
  if (scope == MT_BARRIER_CLUSTER && t->block->cluster)
    arrive(t->block->cluster->barrier, t->block->cluster->live, t);
  else
    arrive(t->block->barrier, t->block->live, t);
  switch_to(t, nullptr);
}

void KernelRuntime::advance_to(double t) {
  if (t <= now_) return;
  gpu_.advance(t - now_);  // other clients' lines come in as time passes
  // Bookings before now are past: no request comes for then. Dropped every kForgetCycles, not
  // at each step: where few warps wait out long latencies the clock moves far at nearly every
  // step, and each drop walks every SM's servers.
  if (t - forgotten_ > kForgetCycles) {
    for (auto* servers : {&issue_, &l1_, &cluster_port_})
      for (Server& s : *servers) s.forget_before(t);
    for (Server* s : {&l2_port_, &dram_port_}) s->forget_before(t);
    forgotten_ = t;
  }
  now_ = t;
}

Thread* KernelRuntime::pop_ready() {
  Thread* t = ready_.top().thread();
  ready_.pop();
  advance_to(t->clock);
  return t;
}

void KernelRuntime::switch_to(Thread* from, Thread* to) {
  // A thread takes its stack when it first runs, not when its block starts: one that returns
  // at once (a block on an SM the kernel does not time) hands the page it touched to the next.
  if (to && !to->done && !stacks_.make_ready(to, from)) {
    deferred_ = to;  // its frames go where `from` runs: copied in from the scheduler
    to = nullptr;
  }
  current_ = to;
  Switcher::switch_to(from ? from->context : scheduler_, to ? to->context : scheduler_);
  current_ = from;
}

void KernelRuntime::run_from_scheduler(Thread* t) {
  switch_to(nullptr, t);
  if (finished_) {
    if (!stacks_.release(finished_))
      failure_ = "a kernel thread ran past the end of its " + std::to_string(stacks_.bytes() / 1024) +
                 " KiB stack (large local arrays or deep recursion in the probe's kernel)";
    finished_ = nullptr;
  }
}

void KernelRuntime::run_scheduler() {
  now_ = forgotten_ = device_clock_;
  while (failure_.empty()) {
    if (deferred_) {
      Thread* t = deferred_;
      deferred_ = nullptr;
      run_from_scheduler(t);
      continue;
    }
    if (!open_.members.empty() &&
        (ready_.empty() || ready_.top().clock != open_.clock || ready_.top().warp != open_.warp)) {
      resolve_open();
      continue;
    }
    if (ready_.empty()) break;
    if (ready_.top().is_program) {
      WarpProgram* p = ready_.top().program();
      ready_.pop();
      advance_to(p->time);
      run_program(p);
      continue;
    }
    run_from_scheduler(pop_ready());
  }
  if (!failure_.empty()) return;
  size_t waiting = 0;
  for (const auto& b : blocks_)
    for (const Thread& t : b->threads) waiting += t.done ? 0 : 1;
  if (waiting > 0)
    failure_ = std::to_string(waiting) + " thread(s) wait at a barrier that the other threads of their block or "
               "cluster never reach";
  else if (next_block_ < total_blocks_)
    failure_ = "blocks " + std::to_string(next_block_) + ".." + std::to_string(total_blocks_ - 1) + " found no SM";
}

void KernelRuntime::abandon_launch() {
  // Contexts that did not end are dropped with their stacks: kernel threads own nothing else.
  for (auto& b : blocks_)
    for (Thread& t : b->threads) stacks_.release(&t);
  deferred_ = nullptr;
}

void KernelRuntime::check_shape(const mt_kernel_launch& l) const {
  const Placement p = placement(l);
  if (p.blocks_per_sm == 0)
    throw Refused("a block of " + dims(l.block) + " threads with " + std::to_string(l.dynamic_shared_bytes) +
                  " B of dynamic shared memory does not fit an SM");
  if (count(l.cluster) > 1 && max_active_clusters(l) == 0)
    throw Refused("a cluster of " + dims(l.cluster) + " blocks does not fit a GPC of the simulated device (" +
                  std::to_string(largest_gpc()) + " SMs of " + std::to_string(p.blocks_per_sm) + " blocks)");
}

void KernelRuntime::launch(const mt_kernel_launch& l, mt_kernel_report& report) {
  const Model& m = gpu_.model();
  const uint32_t sms = uint32_t(std::max(m.info.sm_count, 1));
  check_shape(l);
  placement_ = placement(l);
  cluster_size_ = uint32_t(std::max<uint64_t>(count(l.cluster), 1));
  struct Active {
    KernelRuntime* rt;
    explicit Active(KernelRuntime* r) : rt(r) { tl_runtime = r; }
    ~Active() {
      tl_runtime = nullptr;
      rt->launch_ = nullptr;
      rt->blocks_.clear();
      rt->clusters_.clear();
      rt->programs_.clear();
      rt->ready_.clear();
      rt->open_ = {};
    }
  } active(this);
  launch_ = &l;
  failure_.clear();
  gpu_.begin_launch();
  gpu_.track_l2_evictions(true);
  for (uint32_t s = 0; s < sms; ++s) gpu_.set_carveout(s, l.shared_carveout_percent);
  const double start = device_clock_;
  end_ = drain_ = start;
  for (auto* servers : {&issue_, &l1_, &cluster_port_})
    for (Server& s : *servers) s.reset(start);
  for (Server* s : {&l2_port_, &dram_port_}) s->reset(start);
  dram_write_share_ = 0;
  for (auto* limits : {&l2_in_flight_, &dram_in_flight_})
    for (InFlight& f : *limits) f.reset();
  free_slots_.assign(sms, placement_.blocks_per_sm);
  next_block_ = 0;
  total_blocks_ = uint32_t(count(l.grid));
  rounds_ = SweepRounds{};
  live_threads_ = program_lanes_ = 0;
  try {
    place_waiting_blocks(start);
    run_scheduler();
  } catch (const std::exception& e) {
    if (failure_.empty()) failure_ = e.what();
  }
  gpu_.track_l2_evictions(false);
  for (auto& b : blocks_) std::free(b->shared);
  if (!failure_.empty()) {
    abandon_launch();
    throw Error(failure_);
  }
  const double end = std::max(end_, drain_);
  const double ghz = m.info.sm_clock_khz > 0 ? double(m.info.sm_clock_khz) / 1e6 : 1.0;
  report.cycles = uint64_t(std::llround(end - start));
  report.elapsed_ns = (end - start) / ghz;
  report.blocks_per_sm = placement_.blocks_per_sm;
  device_clock_ = std::ceil(end);
}

}  // namespace memtopo::sim::kernel
