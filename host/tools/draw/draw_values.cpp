// Reading and writing the values `memtopo draw` shows (draw_internal.hpp): a topology's values
// by role, with their bounds and confidence, and short texts of sizes, rates and cycles.
#include <cstdio>
#include <map>

#include "topology/document/summary.hpp"
#include "topology/base/terminal_text.hpp"
#include "tools/draw/draw_internal.hpp"

namespace memtopo::host::draw {

namespace {

std::pair<std::string, std::string> split(const std::string& k) {
  const auto dot = k.find('.');
  return {k.substr(0, dot), dot == std::string::npos ? "" : k.substr(dot + 1)};
}

}  // namespace

std::string Doc::element(const std::string& subject) const {
  return split(cache(subject, "size_bytes")).first;
}

std::string cache_label(const std::string& subject) {
  static const std::map<std::string, std::string> labels = {
      {"l1_cache", "L1 data"}, {"readonly_cache", "read-only"}, {"constant_cache", "constant L1"}};
  if (const auto it = labels.find(subject); it != labels.end()) return it->second;
  const std::string stem = "_cache";  // "texture_cache": "texture"
  const bool ends = subject.size() > stem.size() && subject.compare(subject.size() - stem.size(), stem.size(), stem) == 0;
  return ends ? subject.substr(0, subject.size() - stem.size()) : subject;
}

const toml::node* Doc::node(const std::string& k) const {
  const auto [el, part] = split(k);
  return t[el][part].node();
}

std::string Doc::bound(const std::string& k) const {
  const auto [el, part] = split(k);
  const auto b = t["provenance"][el][part]["bound"].value<std::string>();
  return b == "at_least" ? ">= " : b == "at_most" ? "<= " : "";
}

double Doc::confidence(const std::string& k) const {
  const auto [el, part] = split(k);
  return t["provenance"][el][part]["confidence"].value<double>().value_or(1.0);
}

std::string Doc::mark(const std::string& k) const {
  return bound(k) + (confidence(k) < kUncertain ? "~" : "");
}

std::optional<double> Doc::num(const std::string& k) const {
  const toml::node* n = node(k);
  if (!n) return std::nullopt;
  // Only an integer node is read as one: toml++'s value<int64_t>() of a float past the
  // integers (1e308) is undefined behaviour.
  if (const auto* i = n->as_integer()) return double(i->get());
  return n->value<double>();
}

std::vector<int64_t> Doc::ints(const std::string& k) const {
  std::vector<int64_t> out;
  if (const toml::node* n = node(k); const toml::array* a = n ? n->as_array() : nullptr)
    for (const auto& v : *a)
      if (const auto* i = v.as_integer()) out.push_back(i->get());
  return out;
}

std::vector<double> Doc::nums(const std::string& k) const {
  std::vector<double> out;
  if (const toml::node* n = node(k); const toml::array* a = n ? n->as_array() : nullptr)
    for (const auto& v : *a)
      if (auto x = v.value<double>()) out.push_back(*x);
  return out;
}

std::string Doc::text(const std::string& k) const {
  const toml::node* n = node(k);
  return terminal_text(n ? n->value_or(std::string()) : std::string());
}

std::string printf_text(const char* fmt, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, fmt, v);
  return buf;
}

// Whole units where the size has them (241 KiB, 25 MiB), else one decimal (79.2 GiB).
std::string bytes_text(double b) {
  const auto i = int64_t(b);
  const int64_t gib = int64_t(1) << 30;
  if (double(i) == b && (i < 1024 || (i % 1024 == 0 && (i < gib || i % gib == 0)))) return format_bytes(i);
  return b >= double(gib) ? printf_text("%.1f GiB", b / double(gib)) : printf_text("%.1f MiB", b / 1048576.0);
}

std::string rate_text(double bytes_per_second) {
  return bytes_per_second >= 1e12 ? printf_text("%.2f TB/s", bytes_per_second / 1e12)
                                   : printf_text("%.0f GB/s", bytes_per_second / 1e9);
}

std::string count_text(double n, const char* one, const char* many) {
  return printf_text("%.0f ", n) + (n == 1 ? one : many);
}

std::string joined(const std::vector<int64_t>& v, const char* sep) {
  std::string out;
  for (size_t i = 0; i < v.size() && i < kListedCounts; ++i) out += (i ? sep : "") + std::to_string(v[i]);
  if (v.size() > kListedCounts) out += std::string(sep) + "... (" + std::to_string(v.size()) + " in all)";
  return out;
}

std::string cycles_text(double cycles) { return format_cycles(cycles); }

std::string sm_list(const std::vector<int64_t>& sms) {
  if (sms.empty()) return "";
  const bool run = sms.back() - sms.front() == int64_t(sms.size()) - 1;
  return run && sms.size() > 2 ? std::to_string(sms.front()) + "-" + std::to_string(sms.back()) : joined(sms, ", ");
}

}  // namespace memtopo::host::draw

namespace memtopo::host::draw {

// "241 KiB, line 128 B, sector 32 B, 8 sets x 4 ways, hit 32.0 cyc, miss +235.5 cyc" of a cache
// element, each value with its mark (a bound, "~" where the probe was unsure).
std::vector<std::string> cache_parts(const Doc& d, const std::string& subject, bool with_size) {
  const auto k = [&](const char* quantity) { return d.cache(subject, quantity); };
  Parts p;
  if (auto v = d.num(k("size_bytes")); v && with_size) p.add(d.mark(k("size_bytes")) + bytes_text(*v));
  if (auto v = d.num(k("line_bytes"))) p.add("line " + d.mark(k("line_bytes")) + bytes_text(*v));
  if (auto v = d.num(k("fetch_granularity_bytes"))) p.add("sector " + d.mark(k("fetch_granularity_bytes")) + bytes_text(*v));
  if (auto s = d.num(k("sets")), w = d.num(k("ways")); s && w)
    p.add(printf_text("%.0f sets", *s) + " x " + printf_text("%.0f ways", *w));
  if (auto v = d.num(k("latency_cycles"))) p.add("hit " + d.mark(k("latency_cycles")) + cycles_text(*v));
  if (auto v = d.num(k("miss_penalty_cycles"))) p.add("miss +" + d.mark(k("miss_penalty_cycles")) + cycles_text(*v));
  return p.v;
}

}  // namespace memtopo::host::draw
