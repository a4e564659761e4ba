#include "sim/sim_gpu.hpp"

#include <bit>

namespace memtopo::sim {
namespace {

struct Level {
  int64_t latency;
  bool has_penalty;
  int64_t penalty;
};

Level level_of(const CacheElement& e) { return {e.latency_cycles, e.has_miss_penalty, e.miss_penalty_cycles}; }

// Latency through a chain of levels: a miss of level k costs its miss_penalty_cycles when
// given, else the next level's latency_cycles minus its own (docs/simulator.md).
std::vector<int64_t> via(const std::vector<Level>& levels) {
  std::vector<int64_t> out{levels[0].latency};
  for (size_t k = 0; k + 1 < levels.size(); ++k)
    out.push_back(out.back() + (levels[k].has_penalty ? levels[k].penalty : levels[k + 1].latency - levels[k].latency));
  return out;
}

const CacheElement* element_of(const Model& m, Storage s) {
  switch (s) {
    case Storage::L1d: return &m.l1d;
    case Storage::Texture: return &m.texture;
    case Storage::Readonly: return &m.readonly;
    default: return nullptr;
  }
}

}  // namespace

Gpu::Gpu(const Model& model) : model_(model) {
  restart_randomness();
  noisy_ = model_.noise_cycles > 0 || (model_.outlier_probability > 0 && model_.outlier_cycles > 0);
  // The instances below are what check_simulator_memory counts (sim_description_limits.cpp).
  const uint32_t sms = uint32_t(model_.info.sm_count);
  auto make_per_sm = [&](PerSmCaches& c, const CacheElement& e) {
    if (!e.geometry.present) return;
    c.partitions = e.partitions_per_sm;
    for (uint32_t i = 0; i < sms * c.partitions; ++i) c.caches.push_back(std::make_unique<Cache>(e.geometry, &replacement_rng_));
  };
  make_per_sm(l1d_, model_.l1d);
  if (model_.texture_storage == Storage::Texture) make_per_sm(tex_cache_, model_.texture);
  if (model_.readonly_storage == Storage::Readonly) make_per_sm(ro_cache_, model_.readonly);
  l1d_storage_ = model_.l1d.geometry.present ? Storage::L1d : Storage::None;
  if (model_.constant_l1.geometry.present)
    for (uint32_t i = 0; i < sms; ++i) c1_.push_back(std::make_unique<Cache>(model_.constant_l1.geometry, &replacement_rng_));
  if (model_.constant_l15.geometry.present)
    for (uint32_t i = 0; i < model_.l15_instances(); ++i)
      c15_.push_back(std::make_unique<Cache>(model_.constant_l15.geometry, &replacement_rng_));
  if (model_.l2.geometry.present)
    for (uint32_t i = 0; i < model_.l2_partitions; ++i) l2_.push_back(std::make_unique<Cache>(model_.l2.geometry, &replacement_rng_));
  interleave_shift_ = uint32_t(std::countr_zero(model_.l2_interleave_bytes));
  partitions_pow2_ = !l2_.empty() && std::has_single_bit(l2_.size());
  partitions_shift_ = partitions_pow2_ ? uint32_t(std::countr_zero(l2_.size())) : 0;
  if (model_.tlb_present && model_.tlb_l1.geometry.present)
    for (uint32_t i = 0; i < (model_.tlb_l1_per_sm ? sms : 1); ++i)
      tlb1_.push_back(std::make_unique<Cache>(model_.tlb_l1.geometry, &replacement_rng_));
  if (model_.tlb_present && model_.tlb_l2.geometry.present)
    tlb2_ = std::make_unique<Cache>(model_.tlb_l2.geometry, &replacement_rng_);

  // Latencies of every path, level by level.
  const bool has_l2 = model_.l2.geometry.present;
  const int64_t far_extra = model_.l2_far_latency_cycles - model_.l2.latency_cycles;
  auto build = [&](std::vector<const CacheElement*> sm_levels, PathLatency& p) {
    std::vector<Level> levels;
    for (const CacheElement* e : sm_levels) levels.push_back(level_of(*e));
    if (has_l2) levels.push_back(level_of(model_.l2));
    levels.push_back({model_.dram_latency_cycles, false, 0});
    const std::vector<int64_t> v = via(levels);
    if (sm_levels.size() >= 1) p.first = v[0];
    if (sm_levels.size() >= 2) p.second = v[1];
    p.dram_near = v.back();
    p.dram_far = p.dram_near + (!has_l2 ? 0 : model_.dram_far_extra_cycles >= 0 ? model_.dram_far_extra_cycles : far_extra);
    if (has_l2) {
      p.l2_near = v[sm_levels.size()];
      // A pooled penalty was measured over near and far hits alike (sim_model.hpp).
      const bool pooled = !sm_levels.empty() && sm_levels.back()->has_miss_penalty && sm_levels.back()->miss_penalty_pooled;
      p.l2_far = p.l2_near + (pooled ? 0 : far_extra);
    }
  };
  build({}, cg_);
  build(model_.l1d.geometry.present ? std::vector<const CacheElement*>{&model_.l1d} : std::vector<const CacheElement*>{}, ca_);
  // Texture and read-only loads see their own latencies even when they share a storage.
  const CacheElement* tex_el = model_.texture.geometry.present ? &model_.texture : element_of(model_, model_.texture_storage);
  build(model_.texture_storage != Storage::None ? std::vector<const CacheElement*>{tex_el} : std::vector<const CacheElement*>{}, tex_);
  const CacheElement* ro_el = model_.readonly.geometry.present ? &model_.readonly
                              : model_.readonly_storage == Storage::Texture ? tex_el
                                                                            : element_of(model_, model_.readonly_storage);
  build(model_.readonly_storage != Storage::None ? std::vector<const CacheElement*>{ro_el} : std::vector<const CacheElement*>{}, ro_);
  // A path with a line of its own longer than its shared storage's takes whole lines of its own.
  auto unit_of = [&](const CacheElement* own, Storage storage, Storage own_storage) -> uint32_t {
    const CacheElement* kept = element_of(model_, storage);
    if (storage == own_storage || !own || !kept || !own->geometry.present || !kept->geometry.present) return 0;
    return own->geometry.line_bytes > kept->geometry.line_bytes ? own->geometry.line_bytes : 0;
  };
  tex_unit_bytes_ = unit_of(model_.texture.geometry.present ? &model_.texture : nullptr, model_.texture_storage, Storage::Texture);
  ro_unit_bytes_ = unit_of(model_.readonly.geometry.present ? &model_.readonly : nullptr, model_.readonly_storage, Storage::Readonly);
  std::vector<const CacheElement*> constant;
  if (model_.constant_l1.geometry.present) constant.push_back(&model_.constant_l1);
  if (model_.constant_l15.geometry.present) constant.push_back(&model_.constant_l15);
  build(constant, const_);
  if (!model_.constant_l1.geometry.present) const_.second = const_.first;  // L1.5 hits read first
}

void Gpu::restart_randomness() {
  replacement_rng_.reseed(model_.seed ^ 0x5eed5eedull);
  noise_rng_.reseed(model_.seed);
  traffic_rng_.reseed(model_.seed ^ 0x7aff1cull);
  stray_rng_.reseed(model_.seed ^ 0x57a4ull);
  foreign_due_ = 0;
}

void Gpu::restart() {
  restart_randomness();
  served_ = Served::Sm;
  track_evictions_ = false;
  l2_evicted_.clear();
  for (PerSmCaches* c : {&l1d_, &tex_cache_, &ro_cache_})
    for (auto& x : c->caches) x->restart();
  for (auto* v : {&c1_, &c15_, &l2_, &tlb1_})
    for (auto& x : *v) x->restart();
  if (tlb2_) tlb2_->restart();
}

void Gpu::begin_call() {
  for (PerSmCaches* c : {&l1d_, &tex_cache_, &ro_cache_})
    for (auto& x : c->caches) {
      x->reset();
      x->limit_lines(0);
      const bool stray = model_.stray_line_probability > 0 && stray_rng_.uniform() < model_.stray_line_probability;
      x->lose_way_of(stray ? uint32_t(stray_rng_.below(x->sets())) : UINT32_MAX);
    }
  for (auto* v : {&c1_, &c15_, &l2_, &tlb1_})
    for (auto& x : *v) x->reset();
  if (tlb2_) tlb2_->reset();
}

void Gpu::begin_launch() {
  for (PerSmCaches* c : {&l1d_, &tex_cache_, &ro_cache_})
    for (auto& x : c->caches) {
      x->reset();
      x->limit_lines(0);
    }
  for (auto& x : c1_) x->reset();
}

uint64_t Model::carveout_shared_bytes(int32_t percent) const {
  if (percent < 0) percent = default_carveout_percent;
  if (!carveout_percents.empty()) {  // the last level whose smallest percent is reached
    size_t level = 0;
    for (size_t i = 0; i < carveout_percents.size(); ++i)
      if (percent >= carveout_percents[i]) level = i;
    return shared_sizes_bytes[level];
  }
  const uint64_t asked = uint64_t(info.shared_per_sm_bytes) * uint64_t(percent) / 100;
  for (uint64_t s : shared_sizes_bytes)
    if (s >= asked) return s;
  return shared_sizes_bytes.empty() ? asked : shared_sizes_bytes.back();
}

uint64_t Model::l1_bytes_at(int32_t percent) const {
  const uint64_t whole = l1d.geometry.size_bytes * l1d.partitions_per_sm;
  if (!l1_shared_total_bytes) return whole;
  const uint64_t shared = carveout_shared_bytes(percent);
  return std::min(whole, l1_shared_total_bytes > shared ? l1_shared_total_bytes - shared : 0);
}

void Gpu::set_carveout(uint32_t sm, int32_t percent) {
  if (!model_.l1_shared_total_bytes || l1d_.caches.empty()) return;
  const CacheGeometry& g = model_.l1d.geometry;
  const uint64_t shared = model_.carveout_shared_bytes(percent);
  const uint64_t left = model_.l1_shared_total_bytes > shared ? model_.l1_shared_total_bytes - shared : 0;
  const uint64_t per_partition = std::min<uint64_t>(left / l1d_.partitions, g.size_bytes);
  const uint64_t lines = std::max<uint64_t>(1, per_partition / g.line_bytes);
  for (uint32_t p = 0; p < l1d_.partitions; ++p) l1d_.caches[size_t(sm) * l1d_.partitions + p]->limit_lines(lines);
}

const PathLatency& Gpu::path(mt_space s) const {
  switch (s) {
    case MT_SPACE_GLOBAL_CA: return ca_;
    case MT_SPACE_READONLY: return ro_;
    case MT_SPACE_TEXTURE: return tex_;
    case MT_SPACE_CONSTANT: return const_;
    default: return cg_;
  }
}

}  // namespace memtopo::sim
