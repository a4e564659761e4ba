// Reading one table of a device description: typed accessors that record which keys were
// read (the rest is refused as unknown by finish()), and errors worded the same way
// everywhere: "FILE:LINE: table.key: what is wrong; what to do".
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <toml++/toml.h>

#include "sim/sim_model.hpp"

namespace memtopo::sim {

const char* type_name(const toml::node& n);

class Reader {
 public:
  Reader(const toml::table* table, std::string path, const std::string& file)
      : table_(table), path_(std::move(path)), file_(&file) {}

  bool exists() const { return table_ != nullptr; }
  bool has(const char* key) const { return table_ && table_->get(key); }
  const std::string& path() const { return path_; }
  const std::string& file() const { return *file_; }
  const toml::table* table() const { return table_; }

  [[noreturn]] void fail(const char* key, const std::string& what) const;

  const toml::node* node(const char* key) {
    used_.insert(key);
    return table_ ? table_->get(key) : nullptr;
  }
  void ignore(const char* key) { used_.insert(key); }
  void ignore(const std::string& key) { used_.insert(key); }

  std::optional<int64_t> integer(const char* key);
  // Cycle counts: measured averages may be floats; they are rounded to whole cycles.
  std::optional<int64_t> cycles(const char* key);
  std::optional<double> number(const char* key);
  std::optional<bool> boolean(const char* key);
  std::optional<std::string> string(const char* key);
  std::optional<std::vector<int64_t>> integers(const char* key);
  std::optional<std::vector<double>> numbers(const char* key);
  // An integer, or an array of integers (per-set ways).
  std::optional<std::vector<int64_t>> integer_or_integers(const char* key);
  // Sub-table (e.g. [sim.l1d]); a missing one reads as empty.
  Reader sub(const char* key);

  // The element's [provenance.<element>] table of a measured topology: a key a probe wrote
  // (it names the probe) that neither the model nor an installed plugin knows was measured by
  // a probe this build lacks (a CUDA-only one in a simulator-only build), not a mistake.
  void measured_by(const toml::table* provenance) { measured_ = provenance; }

  // Every key read so far is known; any other key is a mistake, unless a probe measured it.
  void finish() const;

 private:
  const toml::table* table_;
  const toml::table* measured_ = nullptr;
  std::string path_;
  const std::string* file_;
  std::set<std::string> used_;
};

int64_t positive(Reader& r, const char* key, std::optional<int64_t> v, int64_t def);
uint32_t power_of_two(Reader& r, const char* key, std::optional<int64_t> v, int64_t def);
Policy read_policy(Reader& r, const char* key);
// "4 sets x 4 ways x 128 B = 2048 B", or "... = more than 2^64 B" where the product overflows.
std::string geometry_text(uint64_t sets, uint64_t ways, uint32_t line);

}  // namespace memtopo::sim
