// What the parts of `memtopo draw`'s model share (draw_model.cpp and the draw_*.cpp beside it):
// reading a topology's values by role (docs/roles.md) and writing them short.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <toml++/toml.h>

#include "tools/draw/draw.hpp"
#include "topology/document/role_index.hpp"
#include "topology/base/terminal_text.hpp"

namespace memtopo::host::draw {

// A topology's values, each by its key ("meta.host"); the drawing finds plugins' keys by their
// role (docs/roles.md) through key() and cache().
struct Doc {
  explicit Doc(const toml::table& doc) : t(doc), roles(doc) {}
  const toml::table& t;
  RoleIndex roles;
  // The key of a role ("cache.partitions@l2_cache"); "" where no key has it.
  const std::string& key(const std::string& role) const { return roles.key(role); }
  // The key of a cache's quantity: cache("l1_cache", "size_bytes") has the role
  // cache.size_bytes@l1_cache.
  const std::string& cache(const std::string& subject, const std::string& quantity) const {
    return roles.key("cache." + quantity + "@" + subject);
  }
  // The element of a cache ("l1d" for "l1_cache"): what a storage value names.
  std::string element(const std::string& subject) const;
  const toml::node* node(const std::string& k) const;
  bool has(const std::string& k) const { return node(k) != nullptr; }
  // ">= " or "<= " for a bound, else "".
  std::string bound(const std::string& k) const;
  // The probe's confidence (1 where the provenance lacks it).
  double confidence(const std::string& k) const;
  // The mark of a value: its bound, and "~" for a confidence under kUncertain.
  std::string mark(const std::string& k) const;
  std::optional<double> num(const std::string& k) const;
  std::vector<int64_t> ints(const std::string& k) const;
  std::vector<double> nums(const std::string& k) const;
  std::string text(const std::string& k) const;  // terminal-safe
};

// What the drawing calls a per-SM cache by its subject (docs/roles.md): "l1_cache" is "L1 data",
// "texture_cache" "texture".
std::string cache_label(const std::string& subject);

// Under this confidence a value is drawn with "~" (docs/host.md, "memtopo draw").
constexpr double kUncertain = 0.8;
// The first counts of a list, and how many there are beyond: a file of 20,000 GPCs gives a
// line, not 100 KB (the picture caps its boxes the same way, gpu_picture.py).
constexpr size_t kListedCounts = 32;
// SMs of the strips: a hostile file of a million SMs draws the first ones and says so.
constexpr size_t kStripCells = 1024;

std::string printf_text(const char* fmt, double v);
std::string bytes_text(double bytes);
std::string rate_text(double bytes_per_second);
std::string count_text(double n, const char* one, const char* many);  // "1 group", "8 groups"
std::string joined(const std::vector<int64_t>& v, const char* sep = "/");
std::string cycles_text(double cycles);  // "280.4 cyc"
std::string sm_list(const std::vector<int64_t>& sms);  // "124-131", or "3, 7, 9"

// The parts of one level, built in order; an absent value adds nothing.
// A fact's parts, each shown as terminal_text: a driver string or a throttle reason from the
// file reaches the terminal and the picture with its control characters as escapes.
struct Parts {
  std::vector<std::string> v;
  void add(const std::string& s) { v.push_back(terminal_text(s)); }
};

// The cache procedure's values of a cache by its subject ("l1_cache"; size unless with_size is
// false).
std::vector<std::string> cache_parts(const Doc& d, const std::string& subject, bool with_size = true);

// The sections of the model, each from its own file.
void add_facts(const Doc& d, GpuDrawing& g);          // draw_identity.cpp
void add_sm_map(const Doc& d, GpuDrawing& g);         // draw_strip.cpp
void add_per_sm(const Doc& d, GpuDrawing& g);         // draw_sm_levels.cpp
void add_shared(const Doc& d, GpuDrawing& g);         // draw_chip_levels.cpp
void add_ladder(const Doc& d, GpuDrawing& g);         // draw_ladder.cpp
void add_rates(const Doc& d, GpuDrawing& g);          // draw_rates.cpp: rates, compute, clusters
void add_attachment(const Doc& d, GpuDrawing& g);     // draw_attachment.cpp: the GPU in its host
void add_sm_resources(const Doc& d, GpuDrawing& g);   // draw_rates.cpp, after add_per_sm
void add_not_measured(const Doc& d, GpuDrawing& g);   // draw_identity.cpp, after the levels

}  // namespace memtopo::host::draw
