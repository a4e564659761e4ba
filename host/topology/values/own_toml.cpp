// The subset of TOML that `memtopo run` writes (topology/document/document.cpp), read straight into JSON.
// Where the text leaves the subset the reader declines and TOML++ reads it: the subset needs
// no error messages and no recovery, only the rules that make a text TOML++ would refuse.
#include "topology/values/own_toml.hpp"

#include <charconv>
#include <cmath>
#include <cstdint>
#include <set>
#include <string>

#include <toml++/toml.h>

#include "topology/values/schema.hpp"

namespace memtopo::host {
namespace {

using json = nlohmann::json;

// Thrown where the text leaves the subset.
struct Decline {};

// [a.b.c]: memtopo writes two segments, three for [probes."x/y".absent].
constexpr int kMaxHeaderSegments = 8;

enum class Within { table, array, inline_table };

class OwnTomlReader {
 public:
  explicit OwnTomlReader(std::string_view text) : s_(text) {}

  json read() {
    json root = json::object();
    json* table = &root;
    while (i_ < s_.size()) {
      skip_blank();
      if (i_ < s_.size() && s_[i_] != '\n') {
        if (s_[i_] == '[') table = header(root);
        else key_value(*table);
        skip_blank();
      }
      end_line();
    }
    return root;
  }

 private:
  std::string_view s_;
  size_t i_ = 0;
  std::set<const json*> defined_;  // tables a header named: a second header for one is an error
  std::set<const json*> inline_;   // inline tables: closed to headers

  int peek() const { return i_ < s_.size() ? static_cast<unsigned char>(s_[i_]) : -1; }
  bool digit_at(size_t k) const { return k < s_.size() && s_[k] >= '0' && s_[k] <= '9'; }
  void skip_blank() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t')) ++i_;
  }
  void expect(char c) {
    if (peek() != static_cast<unsigned char>(c)) throw Decline{};
    ++i_;
  }
  // A line ends in LF or the end of the text (CR and comments are left to TOML++).
  void end_line() {
    if (i_ >= s_.size()) return;
    expect('\n');
  }
  // What may follow a bare value: true1 or 12abc is no value.
  void value_ends() const {
    const int c = peek();
    if (!(c == -1 || c == ' ' || c == '\t' || c == ',' || c == ']' || c == '}' || c == '\n')) throw Decline{};
  }

  static bool bare_key_char(char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
  }
  std::string key() {
    if (peek() == '"') return basic_string();
    const size_t start = i_;
    while (i_ < s_.size() && bare_key_char(s_[i_])) ++i_;
    if (i_ == start) throw Decline{};
    return std::string(s_.substr(start, i_ - start));
  }

  // [a.b."c/d"]: the table it names, made where missing.
  json* header(json& root) {
    expect('[');
    if (peek() == '[') throw Decline{};  // an array of tables
    json* t = &root;
    for (int segment = 0;; ++segment) {
      if (segment == kMaxHeaderSegments || inline_.count(t)) throw Decline{};
      skip_blank();
      std::string k = key();
      skip_blank();
      auto it = t->find(k);
      if (it == t->end()) it = t->emplace(std::move(k), json::object()).first;
      else if (!it->is_object()) throw Decline{};
      t = &*it;
      if (peek() != '.') break;
      ++i_;
    }
    expect(']');
    if (inline_.count(t) || !defined_.insert(t).second) throw Decline{};
    return t;
  }

  void key_value(json& table) {
    std::string k = key();
    skip_blank();
    expect('=');  // a dotted key declines here
    skip_blank();
    json v = value(Within::table);
    if (table.contains(k)) throw Decline{};
    const auto placed = table.emplace(std::move(k), std::move(v)).first;
    if (placed->is_object()) inline_.insert(&*placed);
  }

  json value(Within within) {
    const int c = peek();
    if (c == '"') return basic_string();
    if (c == '[') {
      if (within == Within::array) throw Decline{};  // nested arrays
      return array(within);
    }
    if (c == '{') {
      if (within != Within::table) throw Decline{};
      return inline_table();
    }
    if (c == 't' || c == 'f') return boolean();
    return number_or_date();
  }

  json array(Within) {
    expect('[');
    json a = json::array();
    skip_blank();
    while (peek() != ']') {
      a.push_back(value(Within::array));
      skip_blank();
      if (peek() != ',') break;
      ++i_;
      skip_blank();
    }
    expect(']');
    return a;
  }

  json inline_table() {
    expect('{');
    json t = json::object();
    skip_blank();
    if (peek() == '}') {
      ++i_;
      return t;
    }
    for (;;) {
      std::string k = key();
      skip_blank();
      expect('=');
      skip_blank();
      json v = value(Within::inline_table);
      if (t.contains(k)) throw Decline{};
      t.emplace(std::move(k), std::move(v));
      skip_blank();
      if (peek() != ',') break;
      ++i_;
      skip_blank();  // a trailing comma: key() declines at '}'
    }
    expect('}');
    return t;
  }

  std::string basic_string() {
    expect('"');
    if (s_.compare(i_, 2, "\"\"") == 0) throw Decline{};  // a multi-line string
    std::string out;
    for (;;) {
      const size_t start = i_;
      while (i_ < s_.size()) {
        const auto c = static_cast<unsigned char>(s_[i_]);
        if (c == '"' || c == '\\' || (c < 0x20 && c != '\t') || c >= 0x7f) break;
        ++i_;
      }
      out.append(s_.substr(start, i_ - start));
      const int c = peek();
      if (c == '"') {
        ++i_;
        return out;
      }
      if (c != '\\') throw Decline{};  // the end, a control character, DEL or a byte past ASCII
      ++i_;
      escape(out);
    }
  }

  void escape(std::string& out) {
    switch (peek()) {
      case 'b': out += '\b'; break;
      case 't': out += '\t'; break;
      case 'n': out += '\n'; break;
      case 'f': out += '\f'; break;
      case 'r': out += '\r'; break;
      case '"': out += '"'; break;
      case '\\': out += '\\'; break;
      case 'u': ++i_; return unicode(out, 4);
      case 'U': ++i_; return unicode(out, 8);
      default: throw Decline{};
    }
    ++i_;
  }

  void unicode(std::string& out, int digits) {
    uint32_t cp = 0;
    for (int k = 0; k < digits; ++k) {
      const int c = peek();
      int d = -1;
      if (c >= '0' && c <= '9') d = c - '0';
      else if (c >= 'a' && c <= 'f') d = c - 'a' + 10;
      else if (c >= 'A' && c <= 'F') d = c - 'A' + 10;
      if (d < 0) throw Decline{};
      cp = cp * 16 + uint32_t(d);
      ++i_;
    }
    if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) throw Decline{};
    if (cp < 0x80) {
      out += char(cp);
    } else if (cp < 0x800) {
      out += char(0xC0 | (cp >> 6));
      out += char(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      out += char(0xE0 | (cp >> 12));
      out += char(0x80 | ((cp >> 6) & 0x3F));
      out += char(0x80 | (cp & 0x3F));
    } else {
      out += char(0xF0 | (cp >> 18));
      out += char(0x80 | ((cp >> 12) & 0x3F));
      out += char(0x80 | ((cp >> 6) & 0x3F));
      out += char(0x80 | (cp & 0x3F));
    }
  }

  json boolean() {
    bool v = false;
    if (s_.compare(i_, 4, "true") == 0) {
      i_ += 4;
      v = true;
    } else if (s_.compare(i_, 5, "false") == 0) {
      i_ += 5;
    } else {
      throw Decline{};
    }
    value_ends();
    return v;
  }

  // -12, 0, 3.5, -1e-07, 2.5e+20; a date or time goes to TOML++.
  json number_or_date() {
    const size_t start = i_;
    if ((digit_at(i_) && digit_at(i_ + 1) && digit_at(i_ + 2) && digit_at(i_ + 3) && s_.compare(i_ + 4, 1, "-") == 0) ||
        (digit_at(i_) && digit_at(i_ + 1) && s_.compare(i_ + 2, 1, ":") == 0))
      return date_time();
    if (peek() == '-') ++i_;
    const size_t whole = i_;
    while (digit_at(i_)) ++i_;
    if (i_ == whole || (i_ - whole > 1 && s_[whole] == '0')) throw Decline{};  // nan, inf, +1, .5, 012
    bool is_float = false;
    auto digits = [&] {
      const size_t from = i_;
      while (digit_at(i_)) ++i_;
      if (i_ == from) throw Decline{};
    };
    if (peek() == '.') {
      ++i_;
      digits();
      is_float = true;
    }
    if (peek() == 'e' || peek() == 'E') {
      ++i_;
      if (peek() == '+' || peek() == '-') ++i_;
      digits();
      is_float = true;
    }
    value_ends();
    const char* first = s_.data() + start;
    const char* last = s_.data() + i_;
    if (!is_float) {
      int64_t v = 0;
      const auto r = std::from_chars(first, last, v);
      if (r.ec != std::errc() || r.ptr != last) throw Decline{};  // past int64
      return v;
    }
    double d = 0;
    const auto r = std::from_chars(first, last, d);
    if (r.ec != std::errc() || r.ptr != last || !std::isfinite(d)) throw Decline{};
    return d;
  }

  // created_utc: one value, read by TOML++ as every date is (its text form for JSON).
  json date_time() {
    const size_t start = i_;
    while (i_ < s_.size() && s_[i_] != ',' && s_[i_] != ']' && s_[i_] != '}' && s_[i_] != '\n' && s_[i_] != '#') ++i_;
    while (i_ > start && (s_[i_ - 1] == ' ' || s_[i_ - 1] == '\t')) --i_;
    try {
      const toml::table t = toml::parse("v = " + std::string(s_.substr(start, i_ - start)));
      const toml::node* v = t.get("v");
      if (v == nullptr || !(v->is_date_time() || v->is_date() || v->is_time())) throw Decline{};
      return toml_to_json(*v);
    } catch (const toml::parse_error&) {
      throw Decline{};
    }
  }
};

}  // namespace

std::optional<nlohmann::json> read_own_toml(std::string_view text) {
  try {
    return OwnTomlReader(text).read();
  } catch (const Decline&) {
    return std::nullopt;
  }
}

}  // namespace memtopo::host
