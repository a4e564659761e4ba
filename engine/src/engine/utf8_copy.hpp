// Copies text into a fixed-size C string (mt_device_info::name) without cutting a UTF-8
// character in half: a name cut mid-character is invalid UTF-8 and no TOML or JSON reader
// accepts it.
#pragma once

#include <cstddef>
#include <cstring>
#include <string_view>

namespace memtopo::engine {

// Writes at most `size - 1` bytes of `text` and a terminating NUL; when `text` is longer, the
// cut moves back to the start of the character it would split.
inline void copy_utf8_truncated(char* dst, size_t size, std::string_view text) {
  if (size == 0) return;
  size_t n = text.size() < size - 1 ? text.size() : size - 1;
  if (n < text.size()) {
    // Continuation bytes are 10xxxxxx: step back over them to the lead byte, then drop it.
    while (n > 0 && (static_cast<unsigned char>(text[n]) & 0xC0) == 0x80) --n;
  }
  std::memcpy(dst, text.data(), n);
  dst[n] = '\0';
}

}  // namespace memtopo::engine
