// occupancy-roofline/instructions and /loads: Lemeire's occupancy roofline and pipeline
// latencies (paper 004) per compute instruction type and per load type. Every thread runs `ilp` independent chains of one instruction type,
// each step depending on the last; one block per SM (two of up to 32 warps each past 32 warps),
// every warp timed by %clock64 from a block barrier to its chains' last results. An adaptive
// sweep (roofline_analysis.cpp) picks the points. docs/occupancy-roofline.md.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <memtopo/device/kernel.hpp>
#include <memtopo/probe.hpp>

#include "chains.hpp"
#include "launch_point.hpp"
#include "probes.hpp"
#include "roofline_analysis.hpp"

namespace occupancy_roofline {
namespace {

namespace md = memtopo::device;

// `trips` trips of Unroll steps of every chain: the loads' pointer chains (follow_chains), or
// the compute type's instruction, the Ilp chains' steps interleaved.
template <class O, int Ilp, int Unroll>
MEMTOPO_INLINE void run_steps(typename O::T (&x)[Ilp], const ChainArgs& a, unsigned trips) {
  if constexpr (O::kSimulated) {
    (void)a;
    md::follow_chains<O::kPath, Ilp, Unroll>(x, trips);
  } else {
    for (unsigned i = 0; i < trips; ++i) {
#pragma unroll
      for (int u = 0; u < Unroll; ++u)
#pragma unroll
        for (int c = 0; c < Ilp; ++c) x[c] = O::step(x[c], a);
    }
  }
}

// `Ilp` chains per thread of kBodyOps / Ilp steps each per loop trip, interleaved so that the
// steps of one trip are Ilp independent instructions at a time.
template <class O, int Ilp>
MEMTOPO_KERNEL void chain_kernel(ChainArgs a) {
  static_assert(kBodyOps % Ilp == 0, "whole steps per chain");
  MEMTOPO_SHARED_VAR(uint32_t, slot_word);
  if constexpr (O::kSharedRing) {
    MEMTOPO_SHARED(uint32_t, ring_words, kSharedRingWords);
    a.shared_ring = ring_words;
  }
  if (a.sms && md::smid() >= a.sms) return;  // the whole block: no barrier waits for it
  const unsigned warp = md::thread_index() / kWarpSize, lane = md::thread_index() % kWarpSize;
  O::prepare(a);
  typename O::T x[Ilp];
#pragma unroll
  for (int c = 0; c < Ilp; ++c) x[c] = O::start(a, warp, lane, c);
  md::sync_block();
  if constexpr (O::kWarmSteps > 0) run_steps<O, Ilp, 1>(x, a, O::kWarmSteps);
  md::sync_block();  // every warp starts together: the SM's span is the warps' common time
  const unsigned long long t0 = md::clock_now();
  run_steps<O, Ilp, int(kBodyOps) / Ilp>(x, a, a.iterations);
  uint32_t folded = 0;
#pragma unroll
  for (int c = 0; c < Ilp; ++c) folded ^= O::bits(x[c]);
  // The store inside clock_after needs every chain's last value: the clock waits for them.
  const unsigned long long t1 = md::clock_after(folded, md::shared_address(&slot_word));
  if (lane == 0) write_record(a, warp, t0, t1);
  md::keep_if(folded, a.sink, a.flag);
}

// One point of instruction type O at `ilp` chains per thread.
template <class O>
std::optional<PooledRate> run_op_point(const memtopo::Context& ctx, const std::string& name, int ilp,
                                       const ChainArgs& args, const Records& records, int warps, double ops_per_thread,
                                       DramWindows* dram) {
  switch (ilp) {
    case 1: return run_point<chain_kernel<O, 1>>(ctx, name, args, records, warps, ops_per_thread, dram);
    case 2: return run_point<chain_kernel<O, 2>>(ctx, name, args, records, warps, ops_per_thread, dram);
    case 4: return run_point<chain_kernel<O, 4>>(ctx, name, args, records, warps, ops_per_thread, dram);
    case 8: return run_point<chain_kernel<O, 8>>(ctx, name, args, records, warps, ops_per_thread, dram);
    default: throw memtopo::Error("kernel " + name + ": ILP " + std::to_string(ilp) + "; 1, 2, 4 or 8");
  }
}

template <class O>
struct Kind {
  using type = O;
};

// Calls f(Kind<O>{}) with the chain type of `op`.
template <class F>
decltype(auto) with_chain(Op op, F&& f) {
  switch (op) {
    case Op::Ffma: return f(Kind<Ffma>{});
    case Op::Dfma: return f(Kind<Dfma>{});
    case Op::Imad: return f(Kind<Imad>{});
    case Op::Sfu: return f(Kind<Sfu>{});
    case Op::Hfma2: return f(Kind<Hfma2>{});
    case Op::Hfma2Bf16: return f(Kind<Hfma2Bf16>{});
    case Op::Cvt: return f(Kind<Cvt>{});
    case Op::SharedLoad: return f(Kind<SharedLoad>{});
    case Op::GlobalLoadL1: return f(Kind<GlobalLoadL1>{});
    case Op::GlobalLoadL2: return f(Kind<GlobalLoadL2>{});
    case Op::GlobalLoadDram: break;
  }
  return f(Kind<GlobalLoadDram>{});
}

// The ring of the L1 chains: row r's pointer of lane l points at lane l of row r + 1.
std::vector<unsigned long long> global_ring(const unsigned long long* device_base) {
  std::vector<unsigned long long> ring(size_t(kGlobalRingRows) * 32);
  for (unsigned r = 0; r < kGlobalRingRows; ++r)
    for (unsigned l = 0; l < 32; ++l)
      ring[r * 32 + l] = reinterpret_cast<unsigned long long>(device_base + ((r + 1) % kGlobalRingRows) * 32 + l);
  return ring;
}

// A ring of `rows` rows of 32 pointers past the L1: row r's lane l points at lane l of row
// r + 0.618 rows (odd, so the ring visits every row). A jump near a simple fraction of the
// ring (a third) brings the chain back beside a row it loaded a few steps before, and the
// L2 then answers it.
std::vector<unsigned long long> far_ring(const unsigned long long* device_base, unsigned rows) {
  std::vector<unsigned long long> ring(size_t(rows) * 32);
  const unsigned jump = unsigned(double(rows) * 0.6180339887) | 1u;
  for (size_t r = 0; r < rows; ++r)
    for (size_t l = 0; l < 32; ++l)
      ring[r * 32 + l] = reinterpret_cast<unsigned long long>(device_base + (r + jump) % rows * 32 + l);
  return ring;
}

// The power of two at or above n: any odd jump then visits every row.
unsigned power_of_two_at_least(uint64_t n) {
  unsigned p = 1;
  while (p < n && p < (1u << 30)) p *= 2;
  return p;
}

// Shared memory and the L1 are each SM's own: their rate per SM is the same on 16 SMs as on
// all, and 16 time them on every GPU (on the simulated GPU, which prices every warp, an H100
// replay's 132 SMs ran past the probe's time limit). The L2 and DRAM, which all SMs share,
// keep every SM.
constexpr unsigned kOwnResourceSms = 16;

// Loads per thread of a DRAM point: each needs a row of its own (DramWindows), and 128 dependent
// loads of ~700 cycles already time one warp for ~90k cycles.
constexpr unsigned kDramLoadsPerThread = kBodyOps;

// The DRAM chains' windows when global_load_dram is chosen and the device has four times their
// size; otherwise none, and the type is left out with the reason.
std::unique_ptr<DramWindows> dram_windows(const memtopo::Context& ctx, const std::vector<const OpInfo*>& chosen) {
  if (std::none_of(chosen.begin(), chosen.end(), [](const OpInfo* o) { return o->op == Op::GlobalLoadDram; }))
    return nullptr;
  const uint64_t need = DramWindows::bytes_needed(ctx.device(), kDramLoadsPerThread);
  if (uint64_t(ctx.device().global_memory_bytes) < 4 * need) {
    ctx.info("global_load_dram left out: its rows take " + std::to_string(need >> 20) +
             " MiB, more than a quarter of the device memory");
    return nullptr;
  }
  return std::make_unique<DramWindows>(ctx, kDramLoadsPerThread);
}

// The types the `ops` option names, each of this probe's family (loads or compute types).
std::vector<const OpInfo*> selected_ops(const memtopo::Context& ctx, bool loads) {
  std::vector<const OpInfo*> out;
  for (const std::string& name : ctx.option<std::vector<std::string>>("ops")) {
    const OpInfo* o = find_op(name);
    if (!o || is_load(o->op) != loads) {
      std::string known;
      for (const OpInfo& k : ops())
        if (is_load(k.op) == loads) known += (known.empty() ? "" : ", ") + std::string(k.name);
      const std::string other = !o ? "" : loads ? " (a compute type: occupancy-roofline/instructions measures it)"
                                                : " (a load type: occupancy-roofline/loads measures it)";
      throw memtopo::Error("option ops: unknown instruction type '" + name + "'" + other + " (known: " + known + ")");
    }
    out.push_back(o);
  }
  return out;
}

// Every key of a type not measured in this run, with the reason.
void absent_type(memtopo::Context& ctx, const OpInfo& o, const std::string& why) {
  for (const std::string& suffix : key_suffixes()) ctx.absent(std::string("roofline.") + o.name + "_" + suffix, why);
}

std::string percent_text(double fraction) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f %%", 100 * fraction);
  return text;
}

std::string ridge_ilp_note(const Summary& s) {
  const std::string at = "ILP " + std::to_string(s.ridge_ilp) + " (" + percent_text(s.ridge_at_fraction) + ")";
  const std::string where = "where " + std::to_string(s.ridge_warps) + " warps per SM cross 95 % of the peak: ";
  if (s.ridge_ilp_below == 0) return where + "already at " + at;
  return where + "between ILP " + std::to_string(s.ridge_ilp_below) + " (" + percent_text(s.ridge_below_fraction) +
         ") and " + at + ", interpolated in log2 of the ILP";
}

void store_summary(memtopo::Context& ctx, const OpInfo& o, const Summary& s) {
  const std::string k = std::string("roofline.") + o.name + "_", sass = std::string(o.sass) + " (" + o.ptx + ")";
  const std::string ridge = std::to_string(s.ridge_warps) + " warps per SM at ILP " + std::to_string(s.ridge_ilp);
  ctx.result(k + "peak_ops_per_cycle_per_sm", s.peak_ops_per_cycle,
             {0.9, memtopo::Bound::Exact,
              sass + ": thread instructions per cycle per SM, the mean of the points within 3 % of the most"});
  ctx.result(k + "ridge_warps_per_sm", int64_t(s.ridge_warps),
             {0.9, memtopo::Bound::Exact, "fewest warps per SM reaching 95 % of the peak at ILP 1, 2, 4 or 8: " + ridge});
  ctx.result(k + "ridge_ilp", s.ridge_ilp_crossing, {0.9, memtopo::Bound::Exact, ridge_ilp_note(s)});
  if (s.ilp1_ridge_warps)
    ctx.result(k + "ilp1_ridge_warps_per_sm", int64_t(*s.ilp1_ridge_warps),
               {0.9, memtopo::Bound::Exact, "fewest warps per SM reaching 95 % of the peak with one chain per thread"});
  else
    ctx.absent(k + "ilp1_ridge_warps_per_sm",
               "one chain per thread reaches 95 % of the peak at no warp count measured (the peak needs ILP " +
                   std::to_string(s.ridge_ilp) + ")");
  ctx.result(k + "completion_latency_cycles", s.completion_latency_cycles,
             {0.9, memtopo::Bound::Exact, sass + ": cycles per dependent instruction, one warp, one chain"});
  const std::string issue_bound = !s.issue_latency_at_most ? ""
                                  : s.issue_wider_ilp_slower
                                      ? "; ILP " + std::to_string(2 * s.issue_ilp) +
                                            " was slower (the warp's instructions in flight bind, not the issue): at most this"
                                      : "; still latency-bound (twice the chains, half the cycles): at most this";
  ctx.result(k + "issue_latency_cycles", s.issue_latency_cycles,
             {0.9, s.issue_latency_at_most ? memtopo::Bound::AtMost : memtopo::Bound::Exact,
              sass + ": cycles between independent instructions of one warp alone, ILP " + std::to_string(s.issue_ilp) +
                  issue_bound});
}

// The sweep of every chosen type of one family: the compute types (a GPU only: the probe
// declares so) or the load types (a GPU or the simulated GPU).
void measure_family(memtopo::Context& ctx, bool loads) {
  const mt_device_info& dev = ctx.device();
  // 0: 32 loop trips of kBodyOps (4096) where the clock's noise needs averaging, as the
  // framework counts repeats (one trip where it has none).
  const int64_t configured = ctx.option<int64_t>("instructions_per_thread");
  const int64_t trips = md::noise_repeats(ctx, 4096 / int64_t(kBodyOps));
  const int ops_per_thread_option = int(configured ? configured : trips * int64_t(kBodyOps));
  const unsigned iterations = unsigned(std::max<int64_t>(1, ops_per_thread_option / int64_t(kBodyOps)));
  const double ops_per_thread = double(iterations) * kBodyOps;
  const std::vector<const OpInfo*> chosen = selected_ops(ctx, loads);
  for (const OpInfo& o : ops())
    if (is_load(o.op) == loads && std::find(chosen.begin(), chosen.end(), &o) == chosen.end())
      absent_type(ctx, o, "not among the types the ops option names");

  md::Buffer<unsigned long long> ring(ctx, size_t(kGlobalRingRows) * 32);
  ring.upload(global_ring(ring.get()));
  // The L2 ring: a sixteenth to an eighth of the L2 (both partitions' lines stay). Rows of
  // 256 B, a power of two of them.
  const uint64_t l2 = uint64_t(std::max<int64_t>(dev.l2_bytes, 1 << 20));
  const unsigned l2_rows = power_of_two_at_least(l2 / 16 / 256);
  md::Buffer<unsigned long long> l2_ring(ctx, size_t(l2_rows) * 32);
  l2_ring.upload(far_ring(l2_ring.get(), l2_rows));
  md::Buffer<uint32_t> sink(ctx, 1);
  const Records records(ctx);
  const std::unique_ptr<DramWindows> dram = dram_windows(ctx, chosen);
  ChainArgs args;
  args.iterations = iterations;
  args.h_mul = args.h_add = 0x38003800u;  // half2 (0.5, 0.5): the chains tend to 1
  args.b_mul = args.b_add = 0x3f003f00u;  // bfloat162 (0.5, 0.5)
  args.ring = ring.get();
  args.l2_ring = l2_ring.get();
  args.l2_rows = l2_rows;
  args.sink = sink.get();

  SweepSettings settings;
  settings.max_warps = dev.max_threads_per_sm / kWarpSize;
  std::vector<double> rows;
  std::map<std::pair<int, int>, double> sms_of;  // (warps, ilp) -> the SMs the last launch's rate pooled
  std::vector<std::string> undetermined;
  for (size_t n = 0; n < chosen.size() && !ctx.cancelled(); ++n) {
    const OpInfo& o = *chosen[n];
    ctx.progress(double(n) / double(chosen.size()), o.name);
    if (dev.cc_major < o.min_cc_major) {
      const std::string why = std::string(o.ptx) + " needs compute capability " + std::to_string(o.min_cc_major) + ".0";
      ctx.info(std::string(o.name) + " left out: " + why);
      absent_type(ctx, o, why);
      continue;
    }
    const bool from_dram = o.op == Op::GlobalLoadDram;
    if (from_dram && !dram) {
      absent_type(ctx, o, "its rows take more than a quarter of the device memory");
      continue;
    }
    ChainArgs op_args = args;
    if (from_dram) op_args.iterations = kDramLoadsPerThread / kBodyOps;
    const double op_ops_per_thread = double(op_args.iterations) * kBodyOps;
    const Measure measure = [&](int warps, int ilp) -> std::optional<double> {
      const std::string name = std::string("chain_") + o.name + "_ilp" + std::to_string(ilp);
      ChainArgs point_args = op_args;
      point_args.ilp = unsigned(ilp);
      const bool own = o.op == Op::SharedLoad || o.op == Op::GlobalLoadL1;
      if (own && dev.sm_count > int(kOwnResourceSms)) point_args.sms = kOwnResourceSms;
      const auto r = with_chain(o.op, [&](auto kind) {
        return run_op_point<typename decltype(kind)::type>(ctx, name, ilp, point_args, records, warps,
                                                            op_ops_per_thread, from_dram ? dram.get() : nullptr);
      });
      if (!r) return std::nullopt;
      sms_of[{warps, ilp}] = r->sms;
      return r->ops_per_cycle;
    };
    sms_of.clear();
    const std::vector<Point> points = sweep(measure, settings);
    for (const Point& p : points)
      rows.insert(rows.end(), {double(int(o.op)), double(p.warps), double(p.ilp), p.ops_per_cycle, cycles_per_op(p),
                               double(sms_of[{p.warps, p.ilp}]), double(p.launches)});
    const auto summary = summarize(points, settings);
    if (!summary) {
      undetermined.push_back(std::string(o.name) + ": one warp of one chain did not launch");
      absent_type(ctx, o, "one warp of one chain did not launch");
      continue;
    }
    store_summary(ctx, o, *summary);
  }
  // op: the Op number (roofline_analysis.hpp); sms: the SMs whose median the rate is; launches:
  // the measurements the rate settles (near the ridge mark: SweepSettings).
  ctx.raw("instructions", {"op", "warps", "ilp", "ops_per_cycle_per_sm", "cycles_per_op", "sms", "launches"}, rows);
  ctx.raw("device", {"max_warps_per_sm", "sm_count", "instructions_per_thread"},
          {double(settings.max_warps), double(dev.sm_count), ops_per_thread});
  if (!undetermined.empty()) {
    std::string why;
    for (const std::string& u : undetermined) why += (why.empty() ? "" : "; ") + u;
    throw memtopo::NotDeterminable(why);
  }
}

}  // namespace

void measure_instructions(memtopo::Context& ctx) { measure_family(ctx, false); }
void measure_loads(memtopo::Context& ctx) { measure_family(ctx, true); }

}  // namespace occupancy_roofline
