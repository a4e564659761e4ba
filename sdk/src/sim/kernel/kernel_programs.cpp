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

bool global_path(uint32_t path) {
  return path == MT_SPACE_GLOBAL_CA || path == MT_SPACE_GLOBAL_CG || path == MT_SPACE_READONLY;
}

// The largest place of a sweep below `end`, or `end` when there is none.
uint64_t last_place(const mt_access_program& p) {
  if (p.first >= p.end || p.step == 0) return p.end;
  return p.first + (p.end - 1 - p.first) / p.step * p.step;
}

}  // namespace

void KernelRuntime::op_program(const mt_access_program* p, mt_program_result* r) {
  Thread* t = current_;
  if (!p || !r) op_fail("an access program without a description or a result");
  if (!global_path(p->path)) op_fail("access programs read through a global path, not path " + std::to_string(p->path));
  if (p->width != 4 && p->width != 8 && p->width != 16) op_fail("accesses of 4, 8 or 16 bytes");
  if (p->kind == MT_PROGRAM_SWEEP) {
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
  t->op.signature = uint64_t(p->kind) | uint64_t(p->op) << 8 | uint64_t(p->ilp) << 16 | uint64_t(p->chains) << 24;
  submit(t);
}

void KernelRuntime::start_program(Group& g) {
  auto p = std::make_unique<WarpProgram>();
  p->lanes = g.members;
  p->time = g.clock;
  p->sm = g.members.front()->block->sm;
  p->chains.resize(g.members.size());
  p->place.resize(g.members.size());
  for (size_t l = 0; l < g.members.size(); ++l) {
    const mt_access_program& d = *g.members[l]->op.program;
    p->place[l] = d.first;
    std::copy(d.states, d.states + 8, p->chains[l].x);
  }
  ready_.push({p->time, g.warp, 0, nullptr, p.get()});
  programs_.push_back(std::move(p));
}

void KernelRuntime::finish_program(WarpProgram* p) {
  for (size_t l = 0; l < p->lanes.size(); ++l) {
    Thread* t = p->lanes[l];
    mt_program_result& r = *t->op.program_result;
    const ChainState& c = p->chains[l];
    r.fold = c.fold;
    r.cycles = c.cycles;
    r.outliers = c.outliers;
    r.first = c.first;
    r.last = uint64_t(p->time);
    std::copy(c.x, c.x + 8, r.states);
    t->clock = p->time;
    ready_.push({t->clock, t->warp_key, t->lane, t});
  }
  end_ = std::max(end_, p->time);
}

void KernelRuntime::run_program(WarpProgram* p) {
  const Thread* first = p->lanes.front();
  const mt_access_program& d0 = *first->op.program;
  const Model& m = gpu_.model();
  const uint64_t sector = std::max<uint32_t>(m.l2.geometry.sector_bytes, 4);
  const double overhead = double(m.timing_overhead_cycles);
  if (d0.kind == MT_PROGRAM_RANDOM) {
    if (p->step == d0.warmup + d0.steps) return finish_program(p);
    const double t0 = p->time;
    if (p->step == d0.warmup)
      for (ChainState& c : p->chains) c.first = uint64_t(t0);
    sectors_.clear();
    for (size_t l = 0; l < p->lanes.size(); ++l) {
      const mt_access_program& d = *p->lanes[l]->op.program;
      for (uint32_t c = 0; c < d.chains; ++c) {
        device::RandomPlaces places{p->chains[l].x[c], d.candidates, d.stride};
        const uint64_t a = d.src + places.next();
        p->chains[l].x[c] = places.x;
        sectors_.push_back(a / sector * sector);
      }
    }
    std::sort(sectors_.begin(), sectors_.end());
    sectors_.erase(std::unique(sectors_.begin(), sectors_.end()), sectors_.end());
    const double issued = issue_[p->sm].serve(t0, d0.chains);
    request_lines(p->sm, first->linear, mt_space(d0.path), issued);
    double done = issued;
    for (const auto& [line, at] : line_done_) done = std::max(done, at);
    // The store of each value and the clock read after it: a timed step's own cost.
    const double cycles = done - t0 + overhead;
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
    ready_.push({p->time, first->warp_key, 0, nullptr, p});
    return;
  }
  // MT_PROGRAM_SWEEP: the lanes still inside their range take one place each.
  const uint32_t w = d0.width, ilp = d0.ilp;
  sectors_.clear();
  bool any = false;
  for (size_t l = 0; l < p->lanes.size(); ++l) {
    const mt_access_program& d = *p->lanes[l]->op.program;
    if (p->place[l] >= d.end) continue;
    any = true;
    if (d.op == MT_SWEEP_WRITE) continue;
    for (uint32_t k = 0; k < ilp; ++k) {
      const uint64_t a = d.src + (p->place[l] + k * d.spread) * w;
      for (uint64_t s = a / sector; s <= (a + w - 1) / sector; ++s) sectors_.push_back(s * sector);
      uint32_t words[4] = {0, 0, 0, 0};
      std::memcpy(words, reinterpret_cast<const void*>(a), w);
      for (uint32_t i = 0; i < w / 4; ++i) p->chains[l].fold ^= words[i];
    }
  }
  if (!any) return finish_program(p);
  double done = p->time;
  if (d0.op != MT_SWEEP_WRITE) {
    std::sort(sectors_.begin(), sectors_.end());
    sectors_.erase(std::unique(sectors_.begin(), sectors_.end()), sectors_.end());
    const double issued = issue_[p->sm].serve(p->time, ilp);
    request_lines(p->sm, first->linear, mt_space(d0.path), issued);
    for (const auto& [line, at] : line_done_) done = std::max(done, at);
  }
  if (d0.op != MT_SWEEP_READ) {
    // The stores, once the values they write are in.
    sectors_.clear();
    for (size_t l = 0; l < p->lanes.size(); ++l) {
      const mt_access_program& d = *p->lanes[l]->op.program;
      if (p->place[l] >= d.end) continue;
      const uint64_t dst = d.op == MT_SWEEP_UPDATE ? d.src : d.dst;
      for (uint32_t k = 0; k < ilp; ++k) {
        const uint64_t i = p->place[l] + k * d.spread, a = dst + i * w;
        uint32_t words[4] = {0, 0, 0, 0};
        if (d.op == MT_SWEEP_WRITE) {
          for (uint32_t j = 0; j < w / 4; ++j) words[j] = uint32_t(i) + d.value;
        } else {
          std::memcpy(words, reinterpret_cast<const void*>(d.src + i * w), w);
          if (d.op == MT_SWEEP_UPDATE) ++words[0];
        }
        std::memcpy(reinterpret_cast<void*>(a), words, w);
        for (uint64_t s = a / sector; s <= (a + w - 1) / sector; ++s) sectors_.push_back(s * sector);
      }
    }
    std::sort(sectors_.begin(), sectors_.end());
    sectors_.erase(std::unique(sectors_.begin(), sectors_.end()), sectors_.end());
    const double issued = issue_[p->sm].serve(done, ilp);
    store_sectors(p->sm, first->linear, issued);
    done = std::max(done, issued + 1);
  }
  for (size_t l = 0; l < p->lanes.size(); ++l) p->place[l] += p->lanes[l]->op.program->step;
  p->time = done;
  ready_.push({p->time, first->warp_key, 0, nullptr, p});
}

}  // namespace memtopo::sim::kernel
