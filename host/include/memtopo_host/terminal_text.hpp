// Text from a device, a plugin or a file on its way to a terminal: control characters are
// shown as escapes, so a device name or a note cannot move the cursor, clear the screen or
// forge a line (docs/host.md, "Guarantees").
#pragma once

#include <string>

namespace memtopo::host {

// `text` with every C0 control character (line breaks and tabs included), DEL and every C1
// control (U+0080..U+009F) replaced by \xNN or \uNNNN: one line, as printed in a table.
std::string terminal_text(const std::string& text);
// The same, but line breaks stay: for a message or a block of lines.
std::string terminal_lines(const std::string& text);

}  // namespace memtopo::host
