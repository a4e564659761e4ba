// Access programs (mt_access_program) on the simulated GPU: a warp's sweep or random chains,
// run by the runtime itself one step at a time in the order of simulated time, each step's
// loads priced as warp instructions on the hierarchy and its queues like any other load.
#include <algorithm>
#include <cstring>

#include "memtopo/device/random.hpp"
#include "memtopo/errors.hpp"
#include "sim/kernel/kernel_runtime.hpp"

namespace memtopo::sim::kernel {

namespace {

// The xor of n words, in a register: folding into a lane's fold in memory made every word a
// load and a store that the next one waited for (the words may alias the fold).
uint32_t fold_words(const uint32_t* words, uint32_t n) {
  uint32_t out = 0;
  for (uint32_t i = 0; i < n; ++i) out ^= words[i];
  return out;
}

bool global_path(uint32_t path) {
  return path == MT_SPACE_GLOBAL_CA || path == MT_SPACE_GLOBAL_CG || path == MT_SPACE_READONLY;
}

// The largest place of a sweep below `end`, or `end` when there is none.
uint64_t last_place(const mt_access_program& p) {
  if (p.first >= p.end || p.step == 0) return p.end;
  return p.first + (p.end - 1 - p.first) / p.step * p.step;
}

// A sweep that reads shared memory or another block's of the cluster: priced as shared loads,
// and never skipped as a steady stream (its places are state-space addresses).
bool shared_sweep(const mt_access_program& p) {
  return p.kind == MT_PROGRAM_SWEEP && (p.path == MT_SPACE_SHARED || p.path == MT_OP_PATH_CLUSTER);
}

// A sweep the steady state of streams may skip passes of (kernel_fast_forward.cpp).
bool global_sweep(const mt_access_program& p) { return p.kind == MT_PROGRAM_SWEEP && global_path(p.path); }

}  // namespace

void KernelRuntime::op_program(const mt_access_program* p, mt_program_result* r) {
  Thread* t = current_;
  if (!p || !r) op_fail("an access program without a description or a result");
  if (p->kind == MT_PROGRAM_FOLLOW) {
    const bool shared = p->path == MT_SPACE_SHARED;
    if (!(global_path(p->path) && p->width == 8) && !(shared && p->width == 4))
      op_fail("pointer chains follow 8-byte pointers on a global path or 4-byte ones in shared memory");
    if (p->chains < 1 || p->chains > 8) op_fail("pointer chains need 1 to 8 chains a lane");
  } else if (shared_sweep(*p)) {
    check_shared_sweep(t, *p);
  } else if (!global_path(p->path)) {
    op_fail("access programs read through a global path (sweeps that read: shared memory and the cluster's too), "
            "not path " + std::to_string(p->path));
  } else if (p->width != 4 && p->width != 8 && p->width != 16) {
    op_fail("accesses of 4, 8 or 16 bytes");
  } else if (p->kind == MT_PROGRAM_SWEEP) {
    if (p->step == 0 || p->ilp == 0 || p->ilp > 8 || p->op < MT_SWEEP_READ || p->op > MT_SWEEP_UPDATE)
      op_fail("a sweep needs a step above 0, ILP 1 to 8 and an operation MT_SWEEP_*");
    const uint64_t last = last_place(*p);
    if (last < p->end) {
      const uint64_t bytes = (last + (p->ilp - 1) * p->spread + 1 - p->first) * p->width;
      if (p->op != MT_SWEEP_WRITE && !global_bytes(p->src + p->first * p->width, bytes))
        op_fail("a sweep reads past the end of its buffer, or outside every buffer");
      const uint64_t dst = p->op == MT_SWEEP_UPDATE ? p->src : p->dst;
      if (p->op != MT_SWEEP_READ && !global_bytes(dst + p->first * p->width, bytes))
        op_fail("a sweep writes past the end of its buffer, or outside every buffer");
    }
  } else if (p->kind == MT_PROGRAM_RANDOM) {
    if (p->chains < 1 || p->chains > 8 || p->candidates == 0)
      op_fail("random chains need 1 to 8 chains and at least one candidate place");
    if (!global_bytes(p->src, uint64_t(p->candidates - 1) * p->stride + 4))
      op_fail("random chains draw places past the end of their buffer, or outside every buffer");
  } else {
    op_fail("access program kind " + std::to_string(p->kind) + " is not one of MT_PROGRAM_*");
  }
  t->op = PendingOp{};
  t->op.kind = OpKind::Program;
  t->op.program = p;
  t->op.program_result = r;
  t->op.path = p->path;
  t->op.bytes = p->width;
  // Lanes run as one warp program only with the same program shape and length.
  t->op.signature = (uint64_t(p->kind) | uint64_t(p->op) << 8 | uint64_t(p->ilp) << 16 | uint64_t(p->chains) << 24 |
                     uint64_t(p->passes) << 32) ^
                    (p->warmup + p->steps) * 0x9E3779B97F4A7C15ull ^ uint64_t(p->path) * 0xC2B2AE3D27D4EB4Full;
  submit(t);
}

void KernelRuntime::check_shared_sweep(Thread* t, const mt_access_program& p) {
  if (p.op != MT_SWEEP_READ) op_fail("sweeps of shared memory read (MT_SWEEP_READ), they do not write");
  if (p.width != 4 && p.width != 8 && p.width != 16) op_fail("accesses of 4, 8 or 16 bytes");
  if (p.step == 0 || p.ilp == 0 || p.ilp > 8) op_fail("a sweep needs a step above 0 and ILP 1 to 8");
  const uint64_t last = last_place(p);
  if (last >= p.end) return;
  // Places rise with the step: the first and the last access bound the rest.
  shared_bytes(t, p.path, p.src + p.first * p.width, p.width);
  shared_bytes(t, p.path, p.src + (last + (p.ilp - 1) * p.spread) * p.width, p.width);
}

void KernelRuntime::start_program(Group& g) {
  auto p = std::make_unique<WarpProgram>();
  p->lanes = g.members;
  p->time = g.clock;
  const Thread* first = g.members.front();
  p->d = *first->op.program;  // the lanes' stacks hold it: each look there is a cache miss
  p->warp_key = first->warp_key;
  p->linear = first->linear;
  p->block = first->block;
  p->sm = first->block->sm;
  p->chains.resize(g.members.size());
  if (p->d.kind == MT_PROGRAM_SWEEP) p->folds.assign(g.members.size(), 0);
  for (size_t l = 0; l < g.members.size(); ++l) {
    const mt_access_program& d = *g.members[l]->op.program;
    const uint32_t passes = d.passes ? d.passes : 1;
    p->sweeps.push_back(
        {d.src, d.op == MT_SWEEP_UPDATE ? d.src : d.dst, d.first, d.end, d.step, d.spread, d.value, passes - 1, d.first});
    std::copy(d.states, d.states + 8, p->chains[l].x);
  }
  program_lanes_ += uint32_t(p->lanes.size());
  if (global_sweep(p->d))
    sweep_started(p.get());
  else
    ++rounds_.others;
  ready_.push(Key::of(p.get(), g.warp));
  programs_.push_back(std::move(p));
}

void KernelRuntime::finish_program(WarpProgram* p) {
  for (size_t l = 0; l < p->lanes.size(); ++l) {
    Thread* t = p->lanes[l];
    mt_program_result& r = *t->op.program_result;
    const ChainState& c = p->chains[l];
    r.fold = l < p->folds.size() ? p->folds[l] : c.fold;
    r.cycles = c.cycles;
    r.outliers = c.outliers;
    r.first = c.first;
    r.last = uint64_t(p->time);
    std::copy(c.x, c.x + 8, r.states);
    t->clock = p->time;
    ready_.push(Key::of(t));
  }
  end_ = std::max(end_, p->time);
  p->finished = true;
  program_lanes_ -= uint32_t(p->lanes.size());
  if (global_sweep(p->d))
    sweep_ended(p);
  else
    --rounds_.others;
}

void KernelRuntime::run_follow(WarpProgram* p) {
  const mt_access_program& d0 = p->d;
  if (p->step == d0.steps) return finish_program(p);
  const Model& m = gpu_.model();
  const uint32_t chains = d0.chains;
  const bool shared = d0.path == MT_SPACE_SHARED;
  const double issued = issue_[p->sm].serve(p->time, chains);
  double done = issued;
  // Each lane's chains load their pointers: the values become the next step's addresses.
  if (shared) {
    int64_t turns = 0;
    for (uint32_t c = 0; c < chains; ++c) {
      lane_addresses_.clear();
      for (size_t l = 0; l < p->lanes.size(); ++l) {
        uint64_t& x = p->chains[l].x[c];
        lane_addresses_.push_back(x);
        const char* at = program_bytes(p->lanes[l], d0.path, x, 4);
        if (!at) return;
        uint32_t next;
        std::memcpy(&next, at, 4);
        x = next;
      }
      turns = std::max(turns, bank_turns(lane_addresses_, 1, 4));
    }
    const Gpu::Noise n = gpu_.noise_parts();
    done = issued + double(m.shared_latency_cycles + std::max<int64_t>(turns - 1, 0) * m.shared_conflict_cycles +
                           n.jitter + n.interruption);
  } else {
    // The pointers lie in host memory as large as the device's: every chain's words are asked
    // for at once, so that their cache misses overlap (the loop below waits on each in turn).
    for (size_t l = 0; l < p->lanes.size(); ++l)
      for (uint32_t c = 0; c < chains; ++c) __builtin_prefetch(reinterpret_cast<const void*>(p->chains[l].x[c]));
    sectors_.clear();
    for (size_t l = 0; l < p->lanes.size(); ++l)
      for (uint32_t c = 0; c < chains; ++c) {
        uint64_t& x = p->chains[l].x[c];
        const char* at = program_bytes(p->lanes[l], d0.path, x, 8);
        if (!at) return;
        push_sectors(x, 8);
        std::memcpy(&x, at, 8);
      }
    sorted_distinct_sectors();
    request_lines(p->sm, p->linear, mt_space(d0.path), issued);
    for (const auto& [line, at] : line_done_) done = std::max(done, at);
    done += away_;
  }
  ++p->step;
  p->time = done;
  ready_.push(Key::of(p, p->warp_key));
}

const char* KernelRuntime::program_bytes(Thread* t, uint32_t path, uint64_t address, uint32_t bytes) {
  if (path == MT_SPACE_SHARED) {
    if (address + bytes <= t->block->shared_bytes) return t->block->shared + address;
  } else if (const char* at = global_bytes(address, bytes)) {
    return at;
  }
  const mt_dim3 b = t->block->idx, i = t->idx;
  if (failure_.empty())
    failure_ = "block (" + std::to_string(b.x) + "," + std::to_string(b.y) + "," + std::to_string(b.z) + ") thread (" +
               std::to_string(i.x) + "," + std::to_string(i.y) + "," + std::to_string(i.z) + "): a pointer chain loads " +
               std::to_string(bytes) + " B at " + std::to_string(address) +
               (path == MT_SPACE_SHARED ? ", past the block's shared memory" : ", which lies in no buffer of the backend");
  return nullptr;
}

void KernelRuntime::run_program(WarpProgram* p) {
  const mt_access_program& d0 = p->d;
  if (d0.kind == MT_PROGRAM_FOLLOW) return run_follow(p);
  if (d0.kind == MT_PROGRAM_RANDOM) return run_random(p);
  run_sweep(p);
}

void KernelRuntime::run_random(WarpProgram* p) {
  const mt_access_program& d0 = p->d;
  const double overhead = double(gpu_.model().timing_overhead_cycles);
  if (p->step == d0.warmup + d0.steps) return finish_program(p);
  const double t0 = p->time;
  if (p->step == d0.warmup)
    for (ChainState& c : p->chains) c.first = uint64_t(t0);
  sectors_.clear();
  for (size_t l = 0; l < p->lanes.size(); ++l) {
    const mt_access_program& d = *p->lanes[l]->op.program;
    for (uint32_t c = 0; c < d.chains; ++c) {
      device::RandomPlaces places{p->chains[l].x[c], d.candidates, d.stride};
      const uint64_t a = device_address(d.src + places.next());
      p->chains[l].x[c] = places.x;
      sectors_.push_back(a >> sector_shift_ << sector_shift_);
    }
  }
  sorted_distinct_sectors();
  const double issued = issue_[p->sm].serve(t0, d0.chains);
  request_lines(p->sm, p->linear, mt_space(d0.path), issued);
  double done = issued;
  for (const auto& [line, at] : line_done_) done = std::max(done, at);
  // The store of each value and the clock read after it: a timed step's own cost; and an
  // interruption, if one came, while the lanes waited.
  const double cycles = done + away_ - t0 + overhead;
  if (p->step >= d0.warmup) {
    const bool outlier = d0.ceiling && cycles > double(d0.ceiling);
    for (size_t l = 0; l < p->lanes.size(); ++l) {
      const uint32_t k = p->lanes[l]->op.program->chains;
      if (outlier)
        p->chains[l].outliers += k;
      else
        p->chains[l].cycles += uint64_t(k) * uint64_t(cycles);
    }
  }
  ++p->step;
  p->time = t0 + cycles;
  ready_.push(Key::of(p, p->warp_key));
}

void KernelRuntime::run_sweep(WarpProgram* p) {
  const mt_access_program& d0 = p->d;
  // MT_PROGRAM_SWEEP: the lanes still inside their range take one place each; loads are issued
  // in order of ILP slot, then lane (a warp instruction per slot), so a warp's sectors come
  // sorted where its lanes are adjacent.
  const uint32_t w = d0.width, ilp = d0.ilp, op = d0.op;
  bool any = false;
  const bool next_pass = p->sweeps.front().place >= p->sweeps.front().end && p->sweeps.front().passes_left > 0;
  for (WarpProgram::Sweep& x : p->sweeps) {
    if (x.place >= x.end && x.passes_left > 0) {  // the next pass
      --x.passes_left;
      ++x.value;
      x.place = x.first;
    }
    any = any || x.place < x.end;
  }
  if (!any) return finish_program(p);
  if (shared_sweep(d0)) return shared_sweep_step(p);
  if (next_pass) sweep_passed(p);  // may price the steady state's passes at once
  const Gpu::Counts before = gpu_.counts();
  double done = p->time;
  // Lanes at consecutive places of one array (a stream's warp): each slot's accesses are one
  // range, its sectors in order.
  const WarpProgram::Sweep& x0 = p->sweeps.front();
  bool adjacent = x0.place < x0.end;
  for (size_t l = 1; l < p->sweeps.size() && adjacent; ++l) {
    const WarpProgram::Sweep& x = p->sweeps[l];
    adjacent = x.place == x0.place + l && x.place < x.end && x.src == x0.src && x.dst == x0.dst && x.spread == x0.spread;
  }
  // The sectors of ILP slot k of every lane still in its range, from `base` (src or dst).
  auto slot_sectors = [&](bool to_dst, uint32_t k) {
    if (adjacent) {
      push_sectors((to_dst ? x0.dst : x0.src) + (x0.place + k * x0.spread) * w, uint32_t(p->sweeps.size() * w));
      return;
    }
    for (const WarpProgram::Sweep& x : p->sweeps)
      if (x.place < x.end) push_sectors((to_dst ? x.dst : x.src) + (x.place + k * x.spread) * w, w);
  };
  if (op != MT_SWEEP_WRITE) {
    sectors_.clear();
    for (uint32_t k = 0; k < ilp; ++k) {
      slot_sectors(false, k);
      for (size_t l = 0; l < p->sweeps.size(); ++l) {
        const WarpProgram::Sweep& x = p->sweeps[l];
        if (x.place >= x.end) continue;
        const uint32_t* words = reinterpret_cast<const uint32_t*>(x.src + (x.place + k * x.spread) * w);
        p->folds[l] ^= fold_words(words, w / 4);
      }
    }
    sorted_distinct_sectors();
    const double issued = issue_[p->sm].serve(p->time, ilp);
    request_lines(p->sm, p->linear, mt_space(d0.path), issued);
    for (const auto& [line, at] : line_done_) done = std::max(done, at);
    done += away_;
  }
  if (op != MT_SWEEP_READ) {
    ++writes_;
    // The stores, once the values they write are in.
    sectors_.clear();
    for (uint32_t k = 0; k < ilp; ++k) {
      slot_sectors(true, k);
      for (WarpProgram::Sweep& x : p->sweeps) {
        if (x.place >= x.end) continue;
        const uint64_t i = x.place + k * x.spread;
        uint32_t* words = reinterpret_cast<uint32_t*>(x.dst + i * w);
        if (op == MT_SWEEP_WRITE) {
          for (uint32_t j = 0; j < w / 4; ++j) words[j] = uint32_t(i) + x.value;
        } else {
          if (op == MT_SWEEP_COPY) std::memcpy(words, reinterpret_cast<const void*>(x.src + i * w), w);
          if (op == MT_SWEEP_UPDATE) ++words[0];
        }
      }
    }
    sorted_distinct_sectors();
    const double issued = issue_[p->sm].serve(done, ilp);
    done = std::max(issued + 1, store_sectors(p->sm, issued));
  }
  for (WarpProgram::Sweep& x : p->sweeps) x.place += x.step;
  count_step(p, before);
  p->time = done;
  ready_.push(Key::of(p, p->warp_key));
}

void KernelRuntime::shared_sweep_step(WarpProgram* p) {
  const mt_access_program& d0 = p->d;
  const uint32_t w = d0.width, ilp = d0.ilp;
  lane_addresses_.clear();
  for (size_t l = 0; l < p->sweeps.size(); ++l) {
    WarpProgram::Sweep& x = p->sweeps[l];
    if (x.place >= x.end) continue;
    for (uint32_t k = 0; k < ilp; ++k) {
      const uint64_t a = x.src + (x.place + k * x.spread) * w;
      lane_addresses_.push_back(a);
      uint32_t words[4] = {0, 0, 0, 0};
      std::memcpy(words, shared_bytes(p->lanes[l], d0.path, a, w), w);  // within bounds: checked at the call
      p->folds[l] ^= fold_words(words, w / 4);
    }
    x.place += x.step;
  }
  const double issued = issue_[p->sm].serve(p->time, ilp);
  p->time = shared_loads_done(*p->block, d0.path, ilp, w, issued);
  ready_.push(Key::of(p, p->warp_key));
}

}  // namespace memtopo::sim::kernel
