#include "sim/sim_reader.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "memtopo/errors.hpp"
#include "sim/sim_limits.hpp"

namespace memtopo::sim {

const char* type_name(const toml::node& n) {
  switch (n.type()) {
    case toml::node_type::table: return "a table";
    case toml::node_type::array: return "an array";
    case toml::node_type::string: return "a string";
    case toml::node_type::integer: return "an integer";
    case toml::node_type::floating_point: return "a float";
    case toml::node_type::boolean: return "a boolean";
    default: return "a date/time";
  }
}

void Reader::fail(const char* key, const std::string& what) const {
  std::ostringstream m;
  const toml::node* n = (table_ && key) ? table_->get(key) : nullptr;
  const auto& src = n ? n->source() : (table_ ? table_->source() : toml::source_region{});
  // A table the file lacks has no place: its first line, where it could be added, not "line 0".
  m << *file_ << ":" << std::max<toml::source_index>(src.begin.line, 1) << ": " << path_ << (key ? std::string(".") + key : "") << ": " << what;
  throw Error(m.str());
}

std::optional<int64_t> Reader::integer(const char* key) {
  const toml::node* n = node(key);
  if (!n) return std::nullopt;
  if (auto v = n->value_exact<int64_t>()) return *v;
  fail(key, std::string("must be an integer, not ") + type_name(*n));
}

namespace {

std::string number_text(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

}  // namespace

std::optional<int64_t> Reader::cycles(const char* key) {
  const toml::node* n = node(key);
  if (!n) return std::nullopt;
  double v = 0;
  if (auto i = n->value_exact<int64_t>()) v = double(*i);
  else if (auto f = n->value_exact<double>()) v = *f;
  else fail(key, std::string("must be a number of cycles, not ") + type_name(*n));
  // Checked before rounding: llround of nan or 1e300 is undefined (it came out "negative").
  if (!std::isfinite(v)) fail(key, number_text(v) + " is not a finite number of cycles; give a number of cycles");
  if (std::fabs(v) > kMaxCycles)
    fail(key, number_text(v) + " cycles is out of range: a cycle count must be within -" +
                  std::to_string(int64_t(kMaxCycles)) + ".." + std::to_string(int64_t(kMaxCycles)) + "; check the value");
  return static_cast<int64_t>(std::llround(v));
}

std::optional<double> Reader::number(const char* key) {
  const toml::node* n = node(key);
  if (!n) return std::nullopt;
  if (auto v = n->value_exact<double>()) {
    if (!std::isfinite(*v)) fail(key, number_text(*v) + " is not a finite number; give a number");
    return *v;
  }
  if (auto v = n->value_exact<int64_t>()) return static_cast<double>(*v);
  fail(key, std::string("must be a number, not ") + type_name(*n));
}

std::optional<bool> Reader::boolean(const char* key) {
  const toml::node* n = node(key);
  if (!n) return std::nullopt;
  if (auto v = n->value_exact<bool>()) return *v;
  fail(key, std::string("must be true or false, not ") + type_name(*n));
}

std::optional<std::string> Reader::string(const char* key) {
  const toml::node* n = node(key);
  if (!n) return std::nullopt;
  if (auto v = n->value_exact<std::string>()) return *v;
  fail(key, std::string("must be a string, not ") + type_name(*n));
}

std::optional<std::vector<int64_t>> Reader::integers(const char* key) {
  const toml::node* n = node(key);
  if (!n) return std::nullopt;
  const toml::array* a = n->as_array();
  if (!a) fail(key, std::string("must be an array of integers, not ") + type_name(*n));
  std::vector<int64_t> out;
  for (const toml::node& e : *a) {
    auto v = e.value_exact<int64_t>();
    if (!v) fail(key, std::string("must be an array of integers; it holds ") + type_name(e));
    out.push_back(*v);
  }
  return out;
}

std::optional<std::vector<double>> Reader::numbers(const char* key) {
  const toml::node* n = node(key);
  if (!n) return std::nullopt;
  const toml::array* a = n->as_array();
  if (!a) fail(key, std::string("must be an array of numbers, not ") + type_name(*n));
  std::vector<double> out;
  for (const toml::node& e : *a) {
    if (auto v = e.value_exact<double>()) {
      if (!std::isfinite(*v)) fail(key, "must hold finite numbers; it holds " + number_text(*v));
      out.push_back(*v);
    } else if (auto i = e.value_exact<int64_t>()) out.push_back(double(*i));
    else fail(key, std::string("must be an array of numbers; it holds ") + type_name(e));
  }
  return out;
}

std::optional<std::vector<int64_t>> Reader::integer_or_integers(const char* key) {
  const toml::node* n = node(key);
  if (!n) return std::nullopt;
  if (auto v = n->value_exact<int64_t>()) return std::vector<int64_t>{*v};
  if (n->is_array()) {
    auto v = integers(key);
    if (v->empty()) fail(key, "must not be an empty array");
    return v;
  }
  fail(key, std::string("must be an integer or an array of integers, not ") + type_name(*n));
}

Reader Reader::sub(const char* key) {
  const toml::node* n = node(key);
  if (n && !n->is_table()) fail(key, std::string("must be a table, not ") + type_name(*n));
  return Reader(n ? n->as_table() : nullptr, path_ + "." + key, *file_);
}

void Reader::finish() const {
  if (!table_) return;
  for (const auto& [k, v] : *table_) {
    if (used_.count(std::string(k.str()))) continue;
    if (const toml::table* by = measured_ ? (*measured_)[k.str()].as_table() : nullptr; by && by->contains("probe"))
      continue;
    std::ostringstream known;
    for (const auto& u : used_) known << (known.tellp() ? ", " : "") << u;
    std::ostringstream m;
    m << *file_ << ":" << v.source().begin.line << ": " << path_ << "." << k.str()
      << ": unknown key (known keys here: " << known.str() << ")";
    throw Error(m.str());
  }
}

int64_t positive(Reader& r, const char* key, std::optional<int64_t> v, int64_t def) {
  if (!v) return def;
  if (*v <= 0) r.fail(key, "must be positive, got " + std::to_string(*v));
  return *v;
}

uint32_t power_of_two(Reader& r, const char* key, std::optional<int64_t> v, int64_t def) {
  int64_t x = positive(r, key, v, def);
  if (!std::has_single_bit(uint64_t(x)) || x > (int64_t(1) << 31))
    r.fail(key, "must be a power of two (bytes), got " + std::to_string(x));
  return static_cast<uint32_t>(x);
}

Policy read_policy(Reader& r, const char* key) {
  auto s = r.string(key);
  if (!s || *s == "lru") return Policy::Lru;
  if (*s == "fifo") return Policy::Fifo;
  if (*s == "random") return Policy::Random;
  if (*s == "non_uniform") return Policy::NonUniform;
  if (*s == "srrip") return Policy::Srrip;
  r.fail(key, "\"" + *s + "\" is not a replacement policy; use \"lru\", \"fifo\", \"random\", \"non_uniform\" or \"srrip\"");
}

std::string geometry_text(uint64_t sets, uint64_t ways, uint32_t line) {
  const std::string factors =
      std::to_string(sets) + " sets x " + std::to_string(ways) + " ways x " + std::to_string(line) + " B = ";
  uint64_t lines = 0, bytes = 0;
  if (__builtin_mul_overflow(sets, ways, &lines) || __builtin_mul_overflow(lines, uint64_t(line), &bytes))
    return factors + "more than 2^64 B";
  return factors + std::to_string(bytes) + " B";
}

}  // namespace memtopo::sim
