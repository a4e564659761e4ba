// The steady state of streams on the simulated GPU: where every thread of a launch waits in a
// sweep (MT_PROGRAM_SWEEP) and the rounds of passes keep one pace, the passes still to come but
// the last are priced at that pace, as a model prices a streaming pass, instead of sector by
// sector: every clock, queue and booking moves on by their time, the counts grow by each
// sweep's last pass, and memory and folds end as the passes would leave them. A GPU's window
// of hundreds of passes then costs the simulator tens (docs/simulator.md, "Steady streams").
#include <algorithm>
#include <cmath>

#include "sim/kernel/kernel_runtime.hpp"

namespace memtopo::sim::kernel {

namespace {

// The pace (cycles of one sweep's pass) of the first and of the second half of the rounds
// measured must agree this closely before the next passes are priced from it, after at least
// 2 x kFirstSpan rounds; after kMostRounds, the pace of all of them stands (the cost of a
// launch stays bounded).
constexpr double kPaceAgreement = 0.01;
constexpr size_t kFirstSpan = 2, kMostRounds = 256;
// How much further apart (in passes) the sweeps may drift over the second half of the rounds;
// after kDriftRounds rounds the sweeps are taken to drift on as they did.
constexpr double kDriftPasses = 1;
constexpr size_t kDriftRounds = 32;
// Fewer passes than this skipped: simulated, the fast-forward would save little.
constexpr double kLeastSkipped = 2;

// xor of 0..n.
uint64_t xor_upto(uint64_t n) {
  switch (n % 4) {
    case 0: return n;
    case 1: return 1;
    case 2: return n + 1;
    default: return 0;
  }
}

// xor of the 32-bit words a, a + 1, ..., a + n - 1 (mod 2^32).
uint32_t xor_run(uint32_t a, uint64_t n) {
  uint32_t out = 0;
  uint64_t from = a;
  while (n > 0) {
    const uint64_t take = std::min<uint64_t>(n, (uint64_t(1) << 32) - from);
    const uint64_t last = from + take - 1;
    out ^= uint32_t(xor_upto(last) ^ (from ? xor_upto(from - 1) : 0));
    n -= take;
    from = 0;
  }
  return out;
}

// What `passes` whole passes of one lane's sweep leave: its loads' fold, and (an update) its
// counters moved on.
void skip_passes(WarpProgram::Sweep& x, uint32_t& fold, uint32_t op, uint32_t w, uint32_t ilp, uint64_t passes) {
  x.passes_left -= uint32_t(std::min<uint64_t>(passes, x.passes_left));
  x.value += uint32_t(passes);
  if (op == MT_SWEEP_WRITE) return;
  const bool odd = passes % 2 == 1;
  if (!odd && op != MT_SWEEP_UPDATE) return;  // an even number of passes folds each word away
  uint32_t f = fold;  // in a register: the words may alias the fold
  for (uint64_t i = x.first; i < x.end; i += x.step)
    for (uint32_t k = 0; k < ilp; ++k) {
      uint32_t* words = reinterpret_cast<uint32_t*>(x.src + (i + k * x.spread) * w);
      for (uint32_t j = op == MT_SWEEP_UPDATE ? 1 : 0; j < w / 4; ++j) f ^= odd ? words[j] : 0;
      if (op == MT_SWEEP_UPDATE) {
        f ^= xor_run(words[0], passes);
        words[0] += uint32_t(passes);
      }
    }
  fold = f;
}

Gpu::Counts counts_between(const Gpu::Counts& a, const Gpu::Counts& b) {
  Gpu::Counts d;
  d.l1_load = b.l1_load - a.l1_load;
  d.l1_load_hit = b.l1_load_hit - a.l1_load_hit;
  d.l2_read = b.l2_read - a.l2_read;
  d.l2_read_hit = b.l2_read_hit - a.l2_read_hit;
  d.l2_write = b.l2_write - a.l2_write;
  d.dram_read_bytes = b.dram_read_bytes - a.dram_read_bytes;
  d.dram_write_bytes = b.dram_write_bytes - a.dram_write_bytes;
  return d;
}

Gpu::Counts times(const Gpu::Counts& c, uint64_t n) {
  return {c.l1_load * n, c.l1_load_hit * n, c.l2_read * n, c.l2_read_hit * n, c.l2_write * n,
          c.dram_read_bytes * n, c.dram_write_bytes * n};
}

}  // namespace

void KernelRuntime::count_step(WarpProgram* p, const Gpu::Counts& before) {
  gpu_.add_to(p->passes.counting, counts_between(before, gpu_.counts()));
}

void KernelRuntime::new_epoch() {
  ++rounds_.epoch;
  rounds_.at_pass.assign(1, rounds_.sweeps);
  rounds_.round = 0;
  rounds_.marks.clear();
}

void KernelRuntime::sweep_started(WarpProgram* p) {
  ++rounds_.sweeps;
  new_epoch();
  p->passes.epoch = rounds_.epoch;
}

void KernelRuntime::sweep_ended(WarpProgram*) {
  --rounds_.sweeps;
  new_epoch();
}

void KernelRuntime::sweep_passed(WarpProgram* p) {
  WarpProgram::Passes& q = p->passes;
  if (q.epoch != rounds_.epoch) {  // its passes so far were of another epoch
    q.epoch = rounds_.epoch;
    q.begun = 0;
  }
  q.last = q.counting;
  q.counting = {};
  const uint32_t k = q.begun++;
  if (rounds_.at_pass.size() <= k + 1) rounds_.at_pass.resize(k + 2, 0);
  --rounds_.at_pass[k];
  ++rounds_.at_pass[k + 1];
  if (k != rounds_.round || rounds_.at_pass[k] > 0) return;
  ++rounds_.round;  // the last sweep of the round began its next pass
  // What every sweep has done, in passes and the part of its pass under way: the sweeps that
  // are not at a pass's start count as far as they are.
  double progress = 0;
  for (const auto& q : programs_) {
    if (q->finished) continue;
    const WarpProgram::Sweep& x = q->sweeps.front();
    const double whole = double(q->d.passes) - 1 - double(x.passes_left);
    const double done = whole + (x.end > x.first ? double(std::min(x.place, x.end) - x.first) / double(x.end - x.first) : 0);
    std::vector<double>& marked = q->passes.marked;
    if (q->passes.marked_epoch != rounds_.epoch) {
      q->passes.marked_epoch = rounds_.epoch;
      marked.clear();
    }
    marked.push_back(done);
    progress += done;
  }
  rounds_.marks.push_back({p->time, progress, std::max(0.0, drain_ - p->time)});
  try_fast_forward();
}

void KernelRuntime::try_fast_forward() {
  // The rounds from the second on: the first has cold caches and blocks that start apart.
  const std::vector<SweepRounds::Mark>& m = rounds_.marks;
  if (m.size() < 2 * kFirstSpan + 1) return;
  // Every thread of the launch in a sweep: nothing else may need the time that is skipped.
  if (rounds_.others > 0 || program_lanes_ != live_threads_ || next_block_ < total_blocks_ || !open_.members.empty())
    return;
  // The pace: cycles of one sweep's pass, from what all sweeps did between two marks.
  const double sweeps = double(rounds_.sweeps);
  auto pace = [&](size_t from, size_t to) {
    return sweeps * (m[to].time - m[from].time) / std::max(m[to].progress - m[from].progress, 1e-9);
  };
  // Steady where the pace of the first half of the rounds measured and of the second agree
  // (the halves grow until they do): a noisy pace is then that of all rounds, interruptions
  // included, not that of a few rounds that happened to agree.
  const size_t n = m.size() - 1;
  if (n < kMostRounds && std::fabs(pace(0, n / 2) - pace(n / 2, n)) > kPaceAgreement * pace(n / 2, n)) return;
  const double all = pace(0, n);
  // Stores still to drain that grow round by round (more in flight than the L2 takes): no
  // steady state.
  if (std::fabs(m[n].backlog - m[n - 1].backlog) > kPaceAgreement * all) return;
  // Sweeps that drift apart (a scheduler that favours some) leave a tail that skipping the same
  // passes of each would drop: how far apart they are must not grow over the second half
  // (sweeps that drift apart for a while and then keep their distance are steady). Sweeps that
  // still drift after kDriftRounds skip at the pace of all, as if they kept their level as busy
  // to the end: each at its own pace leaves a tail of sweeps ending one by one that costs as
  // much as the passes, and all at the slowest one's pace follow a sweep that interruptions
  // held back (docs/simulator.md, "Steady streams").
  double lo_then = 1e300, hi_then = -1e300, lo_now = 1e300, hi_now = -1e300;
  uint32_t least_left = UINT32_MAX;
  for (const auto& p : programs_) {
    if (p->finished) continue;
    const std::vector<double>& marked = p->passes.marked;
    lo_then = std::min(lo_then, marked[n / 2]), hi_then = std::max(hi_then, marked[n / 2]);
    lo_now = std::min(lo_now, marked[n]), hi_now = std::max(hi_now, marked[n]);
    least_left = std::min(least_left, p->sweeps.front().passes_left);
  }
  if (n < kDriftRounds && hi_now - lo_now > hi_then - lo_then + kDriftPasses) return;
  // Each sweep keeps its pass under way and one more: the launch's end is simulated. A sweep
  // behind the others skips as many more passes as it is behind, so that the sweeps end
  // together, and the time skipped is that of all passes skipped at the pace of all.
  if (least_left == UINT32_MAX || double(least_left) < kLeastSkipped + 1) return;
  double skipped = 0;
  for (const auto& p : programs_)
    if (!p->finished) skipped += double(p->sweeps.front().passes_left - 1);
  const double bucket = Server::bucket_cycles();
  fast_forward(std::round(skipped / sweeps * all / bucket) * bucket);
}

void KernelRuntime::fast_forward(double cycles) {
  for (const auto& p : programs_) {
    if (p->finished) continue;
    const mt_access_program& d = p->d;
    const uint32_t passes = p->sweeps.front().passes_left - 1;
    p->time += cycles;
    for (size_t l = 0; l < p->sweeps.size(); ++l) skip_passes(p->sweeps[l], p->folds[l], d.op, d.width, d.ilp, passes);
    gpu_.add_counts(times(p->passes.last, passes));
  }
  // Every key waiting is a sweep's step: all move on alike, so their order stays.
  std::vector<Key> keys;
  for (; !ready_.empty(); ready_.pop()) keys.push_back(ready_.top());
  for (Key& k : keys) {
    k.clock += cycles;
    ready_.push(k);
  }
  for (auto* servers : {&issue_, &l1_, &cluster_port_})
    for (Server& s : *servers) s.shift(cycles);
  for (Server* s : {&l2_port_, &dram_port_}) s->shift(cycles);
  for (auto* limits : {&l2_in_flight_, &dram_in_flight_})
    for (InFlight& f : *limits) f.shift(cycles);
  if (drain_ > now_) drain_ += cycles;
  now_ += cycles;
  forgotten_ += cycles;
  new_epoch();
}

}  // namespace memtopo::sim::kernel
