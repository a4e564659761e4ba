// The one bound on how deeply a TOML file memtopo reads may nest (engine.hpp): TOML++ and the
// readers after it recurse once per level, and a file of 50,000 levels in 350 KB overflowed the
// stack. Every TOML reader, the simulated-device description's included, scans the text first.
#include <string>
#include <string_view>

#include "memtopo/engine.hpp"

namespace memtopo::engine {

namespace {

// Index just past the string that starts at text[i] (a quote), counting its line breaks.
size_t skip_toml_string(std::string_view text, size_t i, size_t& line) {
  const char quote = text[i];
  const char triple[3] = {quote, quote, quote};  // no allocation: thousands of strings a file
  const bool multi = text.substr(i, 3) == std::string_view(triple, 3);
  const std::string_view end = multi ? std::string_view(quote == '"' ? "\"\"\"" : "'''") : std::string_view(&text[i], 1);
  for (size_t k = i + (multi ? 3 : 1); k < text.size(); ++k) {
    if (text[k] == '\n') {
      ++line;
      if (!multi) return k;  // an unterminated string: the parser says so
    }
    if (quote == '"' && text[k] == '\\') {
      ++k;
      if (k < text.size() && text[k] == '\n') ++line;
      continue;
    }
    if (text.compare(k, end.size(), end) == 0) return k + end.size();
  }
  return text.size();
}

}  // namespace

std::optional<size_t> toml_too_deep_at(std::string_view text) {
  size_t line = 1, header = 0, key = 0, brackets = 0, chain = 0;
  bool line_start = true, in_header = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '"' || c == '\'') {
      i = skip_toml_string(text, i, line) - 1;
      line_start = false;
      continue;
    }
    if (c == '#') {
      while (i + 1 < text.size() && text[i + 1] != '\n') ++i;
      continue;
    }
    if (c == '\n') {
      ++line;
      line_start = true;
      if (brackets == 0) key = 0;
      chain = 0;
      continue;
    }
    if (c == ' ' || c == '\t' || c == '\r') continue;
    if (line_start && brackets == 0 && c == '[') {  // a [table] or [[array of tables]] header
      in_header = true;
      chain = 0;
    }
    line_start = false;
    if (in_header) {
      if (c == ']') in_header = false, header = chain + 1, chain = 0;
      if (c == '.') ++chain;
    } else if (c == '[' || c == '{') {
      ++brackets, chain = 0;
    } else if (c == ']' || c == '}') {
      brackets -= brackets > 0, chain = 0;
    } else if (c == '=' || c == ',') {
      if (brackets == 0) key = chain + 1;
      chain = 0;
    } else if (c == '.') {
      ++chain;
    }
    if (header + key + brackets + chain > kMaxNesting) return line;
  }
  return std::nullopt;
}

std::string toml_too_deep_message(const std::string& file, size_t line) {
  return file + ":" + std::to_string(line) + ": nested deeper than " + std::to_string(kMaxNesting) +
         " levels (tables, dotted keys or arrays); no file memtopo reads nests so deep: name a file memtopo wrote";
}

}  // namespace memtopo::engine
