#include "topology/base/terminal_text.hpp"

#include <cctype>
#include <cstdio>

#include "topology/base/text_encoding.hpp"

namespace memtopo::host {

namespace {

// Characters that reorder or hide what follows them on a terminal (bidirectional overrides and
// isolates, the marks, the line and paragraph separators): a name with U+202E shows its end
// reversed and can make one file's name read as another's.
bool reorders_text(char32_t c) {
  return c == 0x061C || c == 0x200E || c == 0x200F || (c >= 0x2028 && c <= 0x202E) || (c >= 0x2066 && c <= 0x2069);
}

std::string escaped(const std::string& text, bool keep_newlines) {
  std::string out;
  out.reserve(text.size());
  char buf[12];
  for (size_t i = 0; i < text.size();) {
    const CodePoint cp = utf8_at(text, i);
    const auto byte = static_cast<unsigned char>(text[i]);
    if (cp.length == 0) {  // no UTF-8: the byte as it is, readable
      std::snprintf(buf, sizeof buf, "\\x%02x", byte);
      out += buf;
      ++i;
      continue;
    }
    const char32_t c = cp.value;
    if (c == '\n' && keep_newlines) {
      out += '\n';
    } else if (c < 0x20 || c == 0x7f) {
      std::snprintf(buf, sizeof buf, "\\x%02x", unsigned(c));
      out += buf;
    } else if ((c >= 0x80 && c <= 0x9f) || reorders_text(c)) {
      std::snprintf(buf, sizeof buf, "\\u%04x", unsigned(c));
      out += buf;
    } else {
      out.append(text, i, cp.length);
    }
    i += cp.length;
  }
  return out;
}

}  // namespace

std::string terminal_text(const std::string& text) { return escaped(text, false); }
std::string terminal_lines(const std::string& text) { return escaped(text, true); }

std::string markdown_cell(const std::string& text) {
  const std::string visible = terminal_text(text);
  const auto word = [&](size_t k) { return k < visible.size() && std::isalnum(static_cast<unsigned char>(visible[k])); };
  std::string out;
  for (size_t i = 0; i < visible.size(); ++i) {
    const char c = visible[i];
    if (c == '<') out += "&lt;";
    else if (c == '>') out += "&gt;";
    else if (c == '&') out += "&amp;";
    else if (c == '|' || c == '\\' || c == '*' || c == '`' || c == '[' || c == ']' ||
             (c == '_' && !(i > 0 && word(i - 1) && word(i + 1))))
      out += std::string("\\") + c;
    else out += c;
  }
  return out;
}

}  // namespace memtopo::host
