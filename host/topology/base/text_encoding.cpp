#include "topology/base/text_encoding.hpp"

#include <cstdio>

#include <nlohmann/json.hpp>

namespace memtopo::host {

CodePoint utf8_at(const std::string& text, size_t i) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char lead = byte(i);
  if (lead < 0x80) return {lead, 1};
  size_t length = 0;
  char32_t value = 0, least = 0;
  if (lead >= 0xC2 && lead <= 0xDF) length = 2, value = lead & 0x1F, least = 0x80;
  else if (lead >= 0xE0 && lead <= 0xEF) length = 3, value = lead & 0x0F, least = 0x800;
  else if (lead >= 0xF0 && lead <= 0xF4) length = 4, value = lead & 0x07, least = 0x10000;
  else return {};
  if (i + length > text.size()) return {};
  for (size_t k = 1; k < length; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) return {};
    value = value << 6 | (byte(i + k) & 0x3F);
  }
  if (value < least || value > 0x10FFFF || (value >= 0xD800 && value <= 0xDFFF)) return {};
  return {value, length};
}

namespace {

// Wide: the East Asian Wide and Fullwidth blocks and emoji; zero: combining marks, zero-width
// spaces and joiners, variation selectors. Unicode's tables in short: a name drawn in a
// terminal lines up within a column or two.
size_t columns_of(char32_t c) {
  if ((c >= 0x0300 && c <= 0x036F) || (c >= 0x200B && c <= 0x200F) || (c >= 0xFE00 && c <= 0xFE0F)) return 0;
  const bool wide = (c >= 0x1100 && c <= 0x115F) || (c >= 0x2E80 && c <= 0xA4CF) || (c >= 0xAC00 && c <= 0xD7A3) ||
                    (c >= 0xF900 && c <= 0xFAFF) || (c >= 0xFE30 && c <= 0xFE4F) || (c >= 0xFF00 && c <= 0xFF60) ||
                    (c >= 0xFFE0 && c <= 0xFFE6) || (c >= 0x1F300 && c <= 0x1F64F) || (c >= 0x1F900 && c <= 0x1F9FF) ||
                    (c >= 0x20000 && c <= 0x3FFFD);
  return wide ? 2 : 1;
}

}  // namespace

size_t display_columns(const std::string& text) {
  size_t columns = 0;
  for (size_t i = 0; i < text.size();) {
    const CodePoint cp = utf8_at(text, i);
    columns += cp.length == 0 ? 1 : columns_of(cp.value);
    i += cp.length == 0 ? 1 : cp.length;
  }
  return columns;
}

size_t prefix_fitting(const std::string& text, size_t columns) {
  size_t used = 0, i = 0;
  while (i < text.size()) {
    const CodePoint cp = utf8_at(text, i);
    const size_t len = cp.length == 0 ? 1 : cp.length, w = cp.length == 0 ? 1 : columns_of(cp.value);
    if (i > 0 && used + w > columns) break;
    used += w;
    i += len;
  }
  return i;
}

std::string utf8_escaped(const std::string& text) {
  std::string out;
  for (size_t i = 0; i < text.size();) {
    const CodePoint cp = utf8_at(text, i);
    if (cp.length == 0) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", static_cast<unsigned char>(text[i]));
      out += buf;
      ++i;
      continue;
    }
    out.append(text, i, cp.length);
    i += cp.length;
  }
  return out;
}

std::string xml_escaped(const std::string& text) {
  static const std::string kReplacement = "\xEF\xBF\xBD";  // U+FFFD
  std::string out;
  for (size_t i = 0; i < text.size();) {
    const CodePoint cp = utf8_at(text, i);
    const char32_t c = cp.value;
    const bool allowed = cp.length > 0 && (c >= 0x20 || c == '\t' || c == '\n' || c == '\r') && c != 0xFFFE &&
                         c != 0xFFFF;
    if (!allowed) out += kReplacement;
    else if (c == '&') out += "&amp;";
    else if (c == '<') out += "&lt;";
    else if (c == '>') out += "&gt;";
    else if (c == '"') out += "&quot;";
    else out.append(text, i, cp.length);
    i += cp.length > 0 ? cp.length : 1;
  }
  return out;
}

bool is_valid_utf8(const std::string& s) {
  try {
    (void)nlohmann::json(s).dump();  // nlohmann's strict mode checks every sequence
    return true;
  } catch (const nlohmann::json::type_error&) {
    return false;
  }
}

std::string valid_utf8(const std::string& s) {
  if (is_valid_utf8(s)) return s;
  const std::string quoted = nlohmann::json(s).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  return nlohmann::json::parse(quoted).get<std::string>();
}

}  // namespace memtopo::host
