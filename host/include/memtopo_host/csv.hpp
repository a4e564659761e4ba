// CSV as memtopo writes it (raw series, `export --format csv`).
#pragma once

#include <string>

namespace memtopo::host {

// One CSV field of text (RFC 4180): quoted when it holds a comma, a quote or a line break,
// quotes doubled; a leading = + - @ (which a spreadsheet would run as a formula) gets a '
// before it. Numbers are written as they are, not through this.
std::string csv_field(const std::string& text);

}  // namespace memtopo::host
