// Text that reaches a strict format: a file name in JSON (which must be UTF-8), a device name in
// XML (which allows fewer characters than Unicode has). Names come from the file system and
// from devices, where anything goes.
#pragma once

#include <cstddef>
#include <string>

namespace memtopo::host {

// The code point of the UTF-8 sequence at text[i] and its length in bytes; length 0 for a byte
// that starts no valid sequence (a stray continuation byte, an overlong form, a surrogate,
// a cut-off sequence, a value above U+10FFFF).
struct CodePoint {
  char32_t value = 0;
  size_t length = 0;
};
CodePoint utf8_at(const std::string& text, size_t i);

// `text` as valid UTF-8: each byte that starts no valid sequence shown as \xNN, the rest as it
// is. A file name that is not UTF-8 ("gpu-\xff.toml") stays recognisable in JSON.
std::string utf8_escaped(const std::string& text);

// `text` for an XML 1.0 attribute or element: & < > " as entities; each character XML 1.0
// does not allow (controls but tab, line feed and carriage return; U+FFFE, U+FFFF; a byte that
// is no UTF-8) as U+FFFD, so the document stays well-formed.
std::string xml_escaped(const std::string& text);

// The columns `text` takes on a terminal: a wide (East Asian) character 2, a combining mark or
// zero-width character 0, any other character and each byte that starts no valid sequence 1.
// `memtopo draw` keeps its lines within a width by this count.
size_t display_columns(const std::string& text);
// The longest start of `text` that fits `columns`, cut between characters (at least one
// character, so that a loop over it ends).
size_t prefix_fitting(const std::string& text, size_t columns);

bool is_valid_utf8(const std::string& s);
// `s` with every invalid UTF-8 sequence replaced by U+FFFD.
std::string valid_utf8(const std::string& s);

}  // namespace memtopo::host
