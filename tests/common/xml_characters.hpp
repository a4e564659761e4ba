// The tests' own reading of XML 1.0's characters, apart from the writer's (xml_escaped): every
// code point is valid UTF-8 and one XML allows (tab, line feed, carriage return, no other
// control; not U+FFFE or U+FFFF). Shared by the hostile-input test and the fleet fuzzer.
#pragma once

#include <string>

#include "topology/base/text_encoding.hpp"

namespace test {

inline bool xml_characters_allowed(const std::string& xml) {
  for (size_t i = 0; i < xml.size();) {
    const memtopo::host::CodePoint cp = memtopo::host::utf8_at(xml, i);
    const char32_t c = cp.value;
    if (cp.length == 0 || (c < 0x20 && c != '\t' && c != '\n' && c != '\r') || c == 0xFFFE || c == 0xFFFF) return false;
    i += cp.length;
  }
  return true;
}

}  // namespace test
