// CSV as memtopo writes it (raw series, `export --format csv`).
#pragma once

#include <string>

namespace memtopo::host {

// One CSV field of text (RFC 4180): control characters (line breaks, ESC, NUL, ...) and the
// characters that reorder text shown as escapes (terminal_text), then quoted when it holds a
// comma or a quote, quotes doubled; a leading = + - @ (which a spreadsheet would run as a
// formula) gets a ' before it. Numbers are written as they are, not through this.
std::string csv_field(const std::string& text);

}  // namespace memtopo::host
